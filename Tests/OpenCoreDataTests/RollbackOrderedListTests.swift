// A save under the rollback policy whose own change to an owner in conflict is only a
// many-to-many link (and an item added elsewhere) must leave the owner's ordered list in
// the store as the other context saved it: the rollback takes the stored values, and
// nothing of the context's stale view of the list may reach the store. (The soak's
// rollback writers dropped an item from an owner's list this way, seeds 101 and 102, and
// a later delete of the owner lost it.)
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

@Suite struct RollbackOrderedListTests {
    /// Owner (name) with an ordered one-to-many `items` (cascade) <-> Item.owner and a
    /// many-to-many `tags` <-> Tag.owners, as the soak's model has them.
    static let model: NSManagedObjectModel = {
        func entity(_ name: String) -> NSEntityDescription {
            let entity = NSEntityDescription()
            entity.name = name
            return entity
        }
        let owner = entity("Owner")
        let item = entity("Item")
        let tag = entity("Tag")
        let items = TestStack.relationship("items", to: item, toMany: true, rule: .cascadeDeleteRule, ordered: true)
        let itemOwner = TestStack.relationship("owner", to: owner, toMany: false)
        let tags = TestStack.relationship("tags", to: tag, toMany: true)
        let tagOwners = TestStack.relationship("owners", to: owner, toMany: true)
        TestStack.pair(items, itemOwner)
        TestStack.pair(tags, tagOwners)
        owner.properties = [
            TestStack.attribute("name", .stringAttributeType), TestStack.attribute("note", .stringAttributeType), items,
            tags,
        ]
        item.properties = [TestStack.attribute("name", .stringAttributeType), itemOwner]
        tag.properties = [TestStack.attribute("name", .stringAttributeType), tagOwners]
        // Upserts: a fresh object under a stored name takes its row.
        for entity in [owner, tag] { entity.uniquenessConstraints = [["name"]] }
        let model = NSManagedObjectModel()
        model.entities = [owner, item, tag]
        return model
    }()

    /// What the other context does to owner o1 before the rollback writer saves.
    enum Conflict: String, CaseIterable, Sendable {
        /// Adds a new item to o1's list.
        case addItem
        /// Moves o1's item a1 to o2 by setting its to-one.
        case moveOutByToOne
        /// Moves o2's item b1 into o1's list.
        case moveIn
        /// Edits o1's note: a conflict that leaves its list alone.
        case rename
    }

    /// What the rollback writer changes besides linking a tag to o1.
    enum Extra: String, CaseIterable, Sendable {
        case none
        /// Adds an item to o2 (not in conflict).
        case addItemElsewhere
        /// Adds an item to o1 (in conflict: the rollback discards it from o1's list).
        case addItemToOwner
    }

    @discardableResult
    static func insert(_ entity: String, _ name: String, into context: NSManagedObjectContext)
        -> NSManagedObject
    {
        let object = NSEntityDescription.insertNewObject(forEntityName: entity, into: context)
        object.setValue(name, forKey: "name")
        return object
    }

    private static func fetch(_ entity: String, _ name: String, in context: NSManagedObjectContext) throws
        -> NSManagedObject?
    {
        let request = NSFetchRequest<NSManagedObject>(entityName: entity)
        request.predicate = NSPredicate(format: "name == %@", name)
        return try context.fetch(request).first
    }

    private static func names(_ value: Any?) -> [String] {
        let objects: [NSManagedObject]
        switch value {
        case let ordered as NSOrderedSet: objects = ordered.array.compactMap { $0 as? NSManagedObject }
        case let set as Set<NSManagedObject>: objects = Array(set)
        case let object as NSManagedObject: objects = [object]
        default: objects = []
        }
        return objects.map { $0.value(forKey: "name") as? String ?? "?" }
    }

    /// Each owner's list and each item's owner, as a fresh context reads them.
    private static func graph(_ coordinator: NSPersistentStoreCoordinator) throws -> (
        lists: [String: [String]], owners: [String: String]
    ) {
        let context = PageFileFixtures.context(coordinator)
        return try context.performAndWait {
            var lists: [String: [String]] = [:]
            for owner in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Owner")) {
                lists[owner.value(forKey: "name") as? String ?? "?"] = names(owner.value(forKey: "items"))
            }
            var owners: [String: String] = [:]
            for item in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item")) {
                owners[item.value(forKey: "name") as? String ?? "?"] = names(item.value(forKey: "owner")).first ?? "-"
            }
            return (lists, owners)
        }
    }

    /// A store holding o1 [a1, a2], o2 [b1] and tag t, and a writer context under rollback.
    private static func stack(_ storeType: String) throws -> (NSPersistentStoreCoordinator, NSManagedObjectContext) {
        let coordinator = try PageFileFixtures.coordinator(model, try PageFileFixtures.temporaryURL(), type: storeType)
        let setup = PageFileFixtures.context(coordinator)
        try setup.performAndWait {
            let first = insert("Owner", "o1", into: setup)
            let second = insert("Owner", "o2", into: setup)
            for name in ["a1", "a2"] {
                first.mutableOrderedSetValue(forKey: "items").add(insert("Item", name, into: setup))
            }
            second.mutableOrderedSetValue(forKey: "items").add(insert("Item", "b1", into: setup))
            insert("Tag", "t", into: setup)
            try setup.save()
        }
        let writer = PageFileFixtures.context(coordinator)
        writer.mergePolicy = NSRollbackMergePolicy
        return (coordinator, writer)
    }

    @Test(arguments: [NSInMemoryStoreType, NSSQLiteStoreType, NSBinaryStoreType], Conflict.allCases)
    func aRollbackOfAnOwnerKeepsTheStoresOrderedList(_ storeType: String, _ conflict: Conflict) throws {
        for extra in Extra.allCases {
            for (loadList, movedInFirst) in [(true, false), (false, false), (true, true)] {
                let label =
                    "\(storeType) \(conflict) \(extra) list loaded \(loadList) moved in first \(movedInFirst)"
                let (coordinator, writer) = try Self.stack(storeType)
                try writer.performAndWait {
                    let first = try #require(try Self.fetch("Owner", "o1", in: writer))
                    if loadList { _ = (first.value(forKey: "items") as? NSOrderedSet)?.count }
                    _ = try Self.fetch("Owner", "o2", in: writer)
                    _ = try Self.fetch("Tag", "t", in: writer)
                    for name in ["a1", "a2", "b1"] { _ = try Self.fetch("Item", name, in: writer) }
                    if movedInFirst {
                        // As the soak's writer: an item moved to the front of o1's list, saved.
                        let second = try #require(try Self.fetch("Owner", "o2", in: writer))
                        let moved = try #require(try Self.fetch("Item", "b1", in: writer))
                        _ = (second.value(forKey: "items") as? NSOrderedSet)?.count
                        first.mutableOrderedSetValue(forKey: "items").insert(moved, at: 0)
                        try writer.save()
                    }
                }
                if movedInFirst {
                    let (lists, _) = try Self.graph(coordinator)
                    #expect(lists["o1"] == ["b1", "a1", "a2"], "\(label): o1's list after the move to its front")
                }
                let other = PageFileFixtures.context(coordinator)
                try other.performAndWait {
                    let first = try #require(try Self.fetch("Owner", "o1", in: other))
                    let second = try #require(try Self.fetch("Owner", "o2", in: other))
                    switch conflict {
                    case .addItem:
                        first.mutableOrderedSetValue(forKey: "items").add(Self.insert("Item", "n1", into: other))
                    case .moveOutByToOne:
                        try #require(try Self.fetch("Item", "a1", in: other)).setValue(second, forKey: "owner")
                    case .moveIn:
                        let moved = try #require(try Self.fetch("Item", "b1", in: other))
                        first.mutableOrderedSetValue(forKey: "items").insert(moved, at: 0)
                    case .rename:
                        first.setValue("renamed", forKey: "note")
                        _ = second
                    }
                    try other.save()
                }
                let expected = try Self.graph(coordinator)
                try writer.performAndWait {
                    let first = try #require(try Self.fetch("Owner", "o1", in: writer))
                    let tag = try #require(try Self.fetch("Tag", "t", in: writer))
                    first.mutableSetValue(forKey: "tags").add(tag)
                    switch extra {
                    case .none: break
                    case .addItemElsewhere:
                        let second = try #require(try Self.fetch("Owner", "o2", in: writer))
                        second.mutableOrderedSetValue(forKey: "items").add(Self.insert("Item", "w1", into: writer))
                    case .addItemToOwner:
                        first.mutableOrderedSetValue(forKey: "items").add(Self.insert("Item", "w1", into: writer))
                    }
                    try writer.save()
                }
                let (lists, owners) = try Self.graph(coordinator)
                // The rollback keeps o1's stored list; the inserted item names o1 and joins it at the end.
                let kept = (expected.lists["o1"] ?? []) + (extra == .addItemToOwner ? ["w1"] : [])
                #expect(lists["o1"] == kept, "\(label): o1's list in the store")
                for (owner, list) in lists {
                    for item in list {
                        #expect(
                            owners[item] == owner,
                            "\(label): \(item) is in \(owner)'s list, its owner is \(owners[item] ?? "nil")")
                    }
                }
                for (item, owner) in owners where owner != "-" {
                    #expect(
                        lists[owner]?.contains(item) == true, "\(label): \(item) names \(owner), missing from its list")
                }
                for name in expected.owners.keys {
                    #expect(owners[name] != nil, "\(label): item \(name) is gone")
                }
                // The writer's view agrees with the store's once the save is done.
                try writer.performAndWait {
                    let first = try #require(try Self.fetch("Owner", "o1", in: writer))
                    let seen = Self.names(first.value(forKey: "items"))
                    #expect(seen == lists["o1"], "\(label): the writer's view of o1's list")
                }
            }
        }
    }

    /// The soak's sequence (seed 101): the writer moves an item to the front of an owner's
    /// list while another context edits the owner, so the rollback keeps the stored list
    /// and the item's to-one adds it at the end; then the writer links a tag to the owner
    /// while the owner conflicts again. No save may drop the item from the stored list.
    @Test(arguments: [NSInMemoryStoreType, NSSQLiteStoreType, NSBinaryStoreType])
    func anItemMovedUnderRollbackStaysInItsOwnersList(_ storeType: String) throws {
        let (coordinator, writer) = try Self.stack(storeType)
        func editNote(_ note: String) throws {
            let other = PageFileFixtures.context(coordinator)
            try other.performAndWait {
                try #require(try Self.fetch("Owner", "o1", in: other)).setValue(note, forKey: "note")
                try other.save()
            }
        }
        func check(_ step: String) throws {
            let (lists, owners) = try Self.graph(coordinator)
            #expect(Set(owners.keys) == ["a1", "a2", "b1"], "\(storeType) \(step): items \(owners)")
            #expect(Set(lists["o1"] ?? []) == ["a1", "a2", "b1"], "\(storeType) \(step): o1's list \(lists)")
            #expect(owners["b1"] == "o1", "\(storeType) \(step): b1's owner")
            try writer.performAndWait {
                let first = try #require(try Self.fetch("Owner", "o1", in: writer))
                #expect(
                    Self.names(first.value(forKey: "items")) == lists["o1"],
                    "\(storeType) \(step): the writer's view of o1's list")
            }
        }
        try writer.performAndWait {
            let first = try #require(try Self.fetch("Owner", "o1", in: writer))
            let second = try #require(try Self.fetch("Owner", "o2", in: writer))
            _ = (first.value(forKey: "items") as? NSOrderedSet)?.count
            _ = (second.value(forKey: "items") as? NSOrderedSet)?.count
            _ = try Self.fetch("Tag", "t", in: writer)
        }
        try editNote("first")
        try writer.performAndWait {
            let first = try #require(try Self.fetch("Owner", "o1", in: writer))
            let moved = try #require(try Self.fetch("Item", "b1", in: writer))
            first.mutableOrderedSetValue(forKey: "items").insert(moved, at: 0)
            try writer.save()
        }
        try check("after the move")
        try editNote("second")
        try writer.performAndWait {
            let first = try #require(try Self.fetch("Owner", "o1", in: writer))
            let tag = try #require(try Self.fetch("Tag", "t", in: writer))
            first.mutableSetValue(forKey: "tags").add(tag)
            try writer.save()
        }
        try check("after the tag link")
    }

    /// The cause of the soak's losses: a context still holding an owner another context
    /// deleted (after moving one of its items to another owner) links a tag to it. The
    /// save finds the row gone; the store's state wins and the owner is deleted here too,
    /// but its cascade must not run over the list this context last read: the moved item
    /// lives on under its new owner.
    @Test(arguments: [NSInMemoryStoreType, NSSQLiteStoreType, NSBinaryStoreType])
    func anOwnerDeletedInTheStoreDoesNotCascadeOverItsStaleList(_ storeType: String) throws {
        for policy in [NSRollbackMergePolicy, NSMergeByPropertyStoreTrumpMergePolicy] {
            let label = "\(storeType) \(policy.mergeType.rawValue)"
            let (coordinator, stale) = try Self.stack(storeType)
            stale.mergePolicy = policy
            try stale.performAndWait {
                let first = try #require(try Self.fetch("Owner", "o1", in: stale))
                #expect(Self.names(first.value(forKey: "items")) == ["a1", "a2"])
                _ = try Self.fetch("Tag", "t", in: stale)
            }
            let owning = PageFileFixtures.context(coordinator)
            try owning.performAndWait {
                let moved = try #require(try Self.fetch("Item", "a1", in: owning))
                moved.setValue(try Self.fetch("Owner", "o2", in: owning), forKey: "owner")
                try owning.save()
                owning.delete(try #require(try Self.fetch("Owner", "o1", in: owning)))
                try owning.save()
            }
            try stale.performAndWait {
                let first = try #require(stale.registeredObjects.first { $0.value(forKey: "name") as? String == "o1" })
                let tag = try #require(try Self.fetch("Tag", "t", in: stale))
                first.mutableSetValue(forKey: "tags").add(tag)
                try stale.save()
            }
            let (lists, owners) = try Self.graph(coordinator)
            #expect(lists == ["o2": ["b1", "a1"]], "\(label): the owners' lists")
            #expect(owners == ["a1": "o2", "b1": "o2"], "\(label): the items' owners")
        }
    }
}
