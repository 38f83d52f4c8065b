// After a save under NSRollbackMergePolicy the context's graph matches what was saved: an
// object whose changes the policy discarded reads the row as the save left it, not the
// snapshot taken before the save's other objects changed its relationships. (The soak
// found the stale graph: a rollback writer moved an item to another owner while the first
// owner was in conflict; the first owner, rolled back, still listed the item, and its
// later delete cascaded to it — an acknowledged insert lost.)
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

@Suite struct RollbackGraphTests {
    typealias Fixtures = LinkedFixtures

    /// A stored shelf with book x and an empty shelf; a rollback context moves x to the
    /// second shelf while another save changes the first (a conflict the policy resolves by
    /// keeping the stored first shelf).
    private func movedUnderConflict(
        _ storeType: String, move: (NSManagedObject, NSManagedObject, NSManagedObject) -> Void
    ) throws -> (coordinator: NSPersistentStoreCoordinator, context: NSManagedObjectContext) {
        let coordinator = try Fixtures.coordinator(storeType)
        let setup = Fixtures.context(coordinator)
        let first = Fixtures.insert("Shelf", "s1", into: setup)
        Fixtures.insert("Shelf", "s2", into: setup)
        first.mutableOrderedSetValue(forKey: "books").add(Fixtures.insert("Item", "x", into: setup))
        try setup.save()
        let context = Fixtures.context(coordinator, .rollbackMergePolicyType)
        let staleFirst = try #require(try Fixtures.fetch("Shelf", "s1", in: context))
        let second = try #require(try Fixtures.fetch("Shelf", "s2", in: context))
        let book = try #require(try Fixtures.fetch("Item", "x", in: context))
        #expect(Fixtures.names(staleFirst.value(forKey: "books")) == ["x"])
        #expect(Fixtures.names(second.value(forKey: "books")) == [])
        let other = Fixtures.context(coordinator)
        let otherFirst = try #require(try Fixtures.fetch("Shelf", "s1", in: other))
        otherFirst.mutableOrderedSetValue(forKey: "books").add(Fixtures.insert("Item", "y", into: other))
        try other.save()
        move(book, staleFirst, second)
        try context.save()
        return (coordinator, context)
    }

    @Test(arguments: LinkedFixtures.storeTypes)
    func aRolledBackListReadsWhatTheSaveLeft(storeType: String) throws {
        let moves: [(String, (NSManagedObject, NSManagedObject, NSManagedObject) -> Void)] = [
            ("to-one", { book, _, second in book.setValue(second, forKey: "shelf") }),
            ("list", { book, _, second in second.mutableOrderedSetValue(forKey: "books").add(book) }),
        ]
        for (how, move) in moves {
            let (coordinator, context) = try movedUnderConflict(storeType, move: move)
            let first = try #require(try Fixtures.fetch("Shelf", "s1", in: context))
            let second = try #require(try Fixtures.fetch("Shelf", "s2", in: context))
            let book = try #require(try Fixtures.fetch("Item", "x", in: context))
            #expect((book.value(forKey: "shelf") as? NSManagedObject) === second, "\(storeType), \(how)")
            #expect(Fixtures.names(second.value(forKey: "books")) == ["x"], "\(storeType), \(how)")
            #expect(Fixtures.names(first.value(forKey: "books")) == ["y"], "\(storeType), \(how)")
            // The first shelf's delete cascades to what it holds, not to the moved book.
            context.delete(first)
            try context.save()
            let reader = Fixtures.context(coordinator)
            let stored = try #require(try Fixtures.fetch("Item", "x", in: reader), "\(storeType), \(how): x lost")
            #expect(
                (stored.value(forKey: "shelf") as? NSManagedObject)?.value(forKey: "name") as? String == "s2",
                "\(storeType), \(how)")
            #expect(try Fixtures.fetch("Item", "y", in: reader) == nil, "\(storeType), \(how)")
            #expect(try Fixtures.problems(coordinator) == [], "\(storeType), \(how)")
        }
    }

    /// The item side in conflict: rollback, and store trump for a to-one the store changed,
    /// keep the stored group (or ordered shelf); the one the context put the item in reads
    /// the row the save left (without the item), so the item is in one list only and that
    /// list's nullifying delete leaves the item where the store put it.
    @Test(arguments: LinkedFixtures.storeTypes)
    func anItemTheResolutionKeptIsInOneListOnly(storeType: String) throws {
        let lists: [(entity: String, toOne: String, toMany: String)] = [
            ("Group", "group", "items"), ("Shelf", "shelf", "books"),
        ]
        for policy in [NSMergePolicyType.rollbackMergePolicyType, .mergeByPropertyStoreTrumpMergePolicyType] {
            for list in lists {
                let coordinator = try Fixtures.coordinator(storeType)
                let setup = Fixtures.context(coordinator)
                let item = Fixtures.insert("Item", "x", into: setup)
                item.setValue(Fixtures.insert(list.entity, "g0", into: setup), forKey: list.toOne)
                Fixtures.insert(list.entity, "g1", into: setup)
                Fixtures.insert(list.entity, "g2", into: setup)
                try setup.save()
                let context = Fixtures.context(coordinator, policy)
                let staleItem = try #require(try Fixtures.fetch("Item", "x", in: context))
                let first = try #require(try Fixtures.fetch(list.entity, "g1", in: context))
                #expect(Fixtures.names(first.value(forKey: list.toMany)) == [])
                let other = Fixtures.context(coordinator)
                try #require(try Fixtures.fetch("Item", "x", in: other)).setValue(
                    try Fixtures.fetch(list.entity, "g2", in: other), forKey: list.toOne)
                try other.save()
                staleItem.setValue(first, forKey: list.toOne)
                try context.save()
                let label = "\(storeType), policy \(policy.rawValue), \(list.entity)"
                #expect(
                    (staleItem.value(forKey: list.toOne) as? NSManagedObject)?.value(forKey: "name") as? String
                        == "g2", "\(label)")
                #expect(Fixtures.names(first.value(forKey: list.toMany)) == [], "\(label)")
                let reader = Fixtures.context(coordinator)
                for name in ["g0", "g1", "g2"] {
                    let stored = try #require(try Fixtures.fetch(list.entity, name, in: reader))
                    #expect(
                        Fixtures.names(stored.value(forKey: list.toMany)) == (name == "g2" ? ["x"] : []),
                        "\(label), \(name)")
                }
                context.delete(first)
                try context.save()
                let stored = try #require(try Fixtures.fetch("Item", "x", in: reader))
                reader.refresh(stored, mergeChanges: false)
                #expect(
                    (stored.value(forKey: list.toOne) as? NSManagedObject)?.value(forKey: "name") as? String == "g2",
                    "\(label)")
                #expect(try Fixtures.problems(coordinator) == [], "\(label)")
            }
        }
    }

    /// A context deletes an item whose tags it read before another save tagged it again:
    /// under every policy that saves the delete, no tag names the deleted item; under
    /// rollback the context's item reads what the save left of its tags.
    @Test(arguments: LinkedFixtures.storeTypes)
    func aStaleDeleteLeavesNoTagNamingTheRow(storeType: String) throws {
        for policy in Fixtures.policies {
            let coordinator = try Fixtures.coordinator(storeType)
            let setup = Fixtures.context(coordinator)
            let item = Fixtures.insert("Item", "x", into: setup)
            item.mutableSetValue(forKey: "tags").add(Fixtures.insert("Tag", "t1", into: setup))
            Fixtures.insert("Tag", "t2", into: setup)
            try setup.save()
            let context = Fixtures.context(coordinator, policy)
            let staleItem = try #require(try Fixtures.fetch("Item", "x", in: context))
            #expect(Fixtures.names(staleItem.value(forKey: "tags")) == ["t1"])
            let other = Fixtures.context(coordinator)
            let tag = try #require(try Fixtures.fetch("Tag", "t2", in: other))
            tag.mutableSetValue(forKey: "items").add(try #require(try Fixtures.fetch("Item", "x", in: other)))
            try other.save()
            context.delete(staleItem)
            let label = "\(storeType), policy \(policy.rawValue)"
            do {
                try context.save()
            } catch {
                #expect(policy == .errorMergePolicyType, "\(label): \(error)")
                continue
            }
            let reader = Fixtures.context(coordinator)
            let kept = try Fixtures.fetch("Item", "x", in: reader) != nil
            #expect(kept == (policy == .rollbackMergePolicyType), "\(label)")
            // Rollback keeps the item (its row is in conflict) but not what its delete rules
            // did to t1, in no conflict: the item keeps only the tag another save gave it.
            for name in ["t1", "t2"] {
                let stored = try #require(try Fixtures.fetch("Tag", name, in: reader))
                #expect(
                    Fixtures.names(stored.value(forKey: "items")) == (kept && name == "t2" ? ["x"] : []),
                    "\(label), \(name)")
            }
            if kept { #expect(Fixtures.names(staleItem.value(forKey: "tags")) == ["t2"], "\(label)") }
            #expect(try Fixtures.problems(coordinator) == [], "\(label)")
        }
    }

    /// A rollback context deletes a book of a shelf another save changed meanwhile: the
    /// shelf's change (the nullify) is discarded with the conflict, the book's delete is
    /// not, and no entry of the stored list names the deleted book.
    @Test(arguments: LinkedFixtures.storeTypes)
    func aDeletedBookOfARolledBackShelfLeavesTheList(storeType: String) throws {
        let coordinator = try Fixtures.coordinator(storeType)
        let setup = Fixtures.context(coordinator)
        let shelf = Fixtures.insert("Shelf", "s", into: setup)
        for name in ["x", "z"] {
            shelf.mutableOrderedSetValue(forKey: "books").add(Fixtures.insert("Item", name, into: setup))
        }
        try setup.save()
        let context = Fixtures.context(coordinator, .rollbackMergePolicyType)
        let staleShelf = try #require(try Fixtures.fetch("Shelf", "s", in: context))
        #expect(Fixtures.names(staleShelf.value(forKey: "books")) == ["x", "z"])
        let other = Fixtures.context(coordinator)
        try #require(try Fixtures.fetch("Shelf", "s", in: other)).mutableOrderedSetValue(forKey: "books").add(
            Fixtures.insert("Item", "y", into: other))
        try other.save()
        context.delete(try #require(try Fixtures.fetch("Item", "x", in: context)))
        try context.save()
        #expect(Fixtures.names(staleShelf.value(forKey: "books")) == ["z", "y"], "\(storeType)")
        let reader = Fixtures.context(coordinator)
        #expect(try Fixtures.fetch("Item", "x", in: reader) == nil, "\(storeType)")
        let stored = try #require(try Fixtures.fetch("Shelf", "s", in: reader))
        #expect(Fixtures.names(stored.value(forKey: "books")) == ["z", "y"], "\(storeType)")
        #expect(try Fixtures.problems(coordinator) == [], "\(storeType)")
    }
}
