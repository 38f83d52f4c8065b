// The soak's rollback writers in miniature, deterministic: one context owns the owners
// and their ordered item lists (adds at random places, moves by list or by to-one,
// reorders, deletes items and owners), two others edit the same owners' notes and tags
// (links, deletes, upserts), one of them through a second coordinator on the same file;
// every context saves under NSRollbackMergePolicy, and only the second merges the others'
// saves. After every save: no item is gone that no save deleted, every item's to-one and
// its owner's list agree in the store, and the owning context sees each list as stored.
// (Seed 19 lost an item before the merge policy stopped running a store-deleted owner's
// cascade over the list the context last read.)
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

@Suite struct RollbackRandomOwnersTests {
    private struct Round {
        var random: SeededRandom
        var serial = 0
        var alive: Set<String> = []
        var log: [String] = []
        var deleted: [String] = []

        mutating func below(_ count: Int) -> Int { Int(random.next() % UInt64(max(count, 1))) }

        mutating func newName(_ prefix: String) -> String {
            serial += 1
            return "\(prefix)\(serial)"
        }
    }

    private static func name(_ object: Any?) -> String {
        (object as? NSManagedObject)?.value(forKey: "name") as? String ?? "-"
    }

    private static func list(_ owner: NSManagedObject) -> [NSManagedObject] {
        (owner.value(forKey: "items") as? NSOrderedSet)?.array.compactMap { $0 as? NSManagedObject } ?? []
    }

    private static func all(_ entity: String, in context: NSManagedObjectContext) throws -> [NSManagedObject] {
        try context.fetch(NSFetchRequest<NSManagedObject>(entityName: entity)).sorted { name($0) < name($1) }
    }

    @discardableResult
    private static func insert(_ entity: String, _ name: String, into context: NSManagedObjectContext)
        -> NSManagedObject
    { RollbackOrderedListTests.insert(entity, name, into: context) }

    /// One operation of the owning context (`owning`) or of another one on `owner`.
    private static func operate(
        on owner: NSManagedObject, owners: [NSManagedObject], tags: [NSManagedObject], owning: Bool,
        in context: NSManagedObjectContext, _ round: inout Round
    ) {
        let items = owner.mutableOrderedSetValue(forKey: "items")
        let operation = owning ? round.below(11) : [4, 5, 8, 9][round.below(4)]
        switch operation {
        case 0:
            let item = insert("Item", round.newName("i"), into: context)
            round.alive.insert(name(item))
            items.insert(item, at: round.below(items.count + 1))
            round.log.append("add \(name(item)) to \(name(owner))")
        case 1, 2:
            let source = owners[round.below(owners.count)]
            guard source !== owner, !source.isDeleted, let item = list(source).last else { return }
            if operation == 1 { item.setValue(owner, forKey: "owner") } else { items.insert(item, at: 0) }
            round.log.append("move \(name(item)) to \(name(owner)) by \(operation == 1 ? "to-one" : "list")")
        case 3:
            guard items.count >= 2 else { return }
            let item = items.object(at: round.below(items.count))
            items.remove(item)
            items.insert(item, at: round.below(items.count + 1))
            round.log.append("reorder \(name(owner))")
        case 4:
            guard !tags.isEmpty else { return }
            let tag = tags[round.below(tags.count)]
            guard !tag.isDeleted else { return }
            let linked = owner.mutableSetValue(forKey: "tags")
            if linked.contains(tag) { linked.remove(tag) } else { linked.add(tag) }
            round.log.append("link \(name(tag)) to \(name(owner))")
        case 6:
            guard let item = list(owner).last else { return }
            context.delete(item)
            round.deleted.append(name(item))
            round.log.append("delete \(name(item))")
        case 7:
            guard owners.count > 2 else { return }
            round.deleted += list(owner).map { name($0) }
            context.delete(owner)
            insert("Owner", round.newName("o"), into: context)
            round.log.append("delete \(name(owner))")
        case 8:
            guard !tags.isEmpty else { return }
            let tag = tags[round.below(tags.count)]
            guard !tag.isDeleted else { return }
            context.delete(tag)
            round.log.append("delete \(name(tag))")
        case 10:
            let fresh = insert("Owner", name(owner), into: context)
            fresh.setValue("upsert", forKey: "note")
            round.log.append("upsert \(name(owner))")
        case 9:
            let tag = insert("Tag", "t\(round.below(3))", into: context)
            owner.mutableSetValue(forKey: "tags").add(tag)
            round.log.append("upsert \(name(tag)) to \(name(owner))")
        default:
            owner.setValue(round.log.joined(), forKey: "note")
            round.log.append("note \(name(owner))")
        }
    }

    @Test(arguments: [NSInMemoryStoreType, NSSQLiteStoreType, NSBinaryStoreType], Array(UInt64(1)...UInt64(24)))
    func ownersListsSurviveRollbackWriters(_ storeType: String, _ seed: UInt64) throws {
        let model = RollbackOrderedListTests.model
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = try PageFileFixtures.coordinator(model, url, type: storeType)
        // Another process's view of the file: the default store only.
        let second =
            storeType == NSSQLiteStoreType ? try PageFileFixtures.coordinator(model, url, type: storeType) : coordinator
        let contexts = [coordinator, coordinator, second].enumerated().map { index, coordinator in
            let context = PageFileFixtures.context(coordinator)
            context.mergePolicy = NSRollbackMergePolicy
            // As the soak's odd writers: merges the other contexts' saves as they happen.
            context.automaticallyMergesChangesFromParent = index == 1
            return context
        }
        var round = Round(random: SeededRandom(seed: seed))
        let owning = contexts[0]
        try owning.performAndWait {
            for index in 0..<3 {
                let owner = Self.insert("Owner", "o\(index)", into: owning)
                for _ in 0..<3 {
                    let item = Self.insert("Item", round.newName("i"), into: owning)
                    round.alive.insert(Self.name(item))
                    owner.mutableOrderedSetValue(forKey: "items").add(item)
                }
                Self.insert("Tag", "t\(index)", into: owning)
            }
            try owning.save()
        }
        for number in 0..<120 {
            let which = round.below(contexts.count)
            let context = contexts[which]
            round.log = ["round \(number) c\(which)"]
            round.deleted = []
            try context.performAndWait {
                if round.below(5) == 0 { context.refreshAllObjects() }
                let owners = try Self.all("Owner", in: context)
                let tags = try Self.all("Tag", in: context)
                for _ in 0...round.below(3) {
                    let owner = owners[round.below(owners.count)]
                    guard !owner.isDeleted else { continue }
                    Self.operate(on: owner, owners: owners, tags: tags, owning: which == 0, in: context, &round)
                }
                try context.save()
                // A rollback may undo a delete: only what the context no longer finds is gone.
                for name in round.deleted {
                    let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
                    request.predicate = NSPredicate(format: "name == %@", name)
                    if try context.fetch(request).isEmpty { round.alive.remove(name) }
                }
            }
            let label = "seed \(seed) \(storeType) \(round.log)"
            let check = PageFileFixtures.context(coordinator)
            let listed = try check.performAndWait {
                let items = try Self.all("Item", in: check)
                let names = Set(items.map { Self.name($0) })
                #expect(names == round.alive, "\(label): lost \(round.alive.subtracting(names).sorted())")
                var listed: [String: String] = [:]
                for owner in try Self.all("Owner", in: check) {
                    for item in Self.list(owner) { listed[Self.name(item)] = Self.name(owner) }
                }
                for item in items {
                    let owner = Self.name(item.value(forKey: "owner"))
                    #expect(listed[Self.name(item)] ?? "-" == owner, "\(label): \(Self.name(item)) names \(owner)")
                }
                return listed
            }
            try owning.performAndWait {
                for owner in try Self.all("Owner", in: owning) {
                    let seen = Set(Self.list(owner).map { Self.name($0) })
                    let stored = Set(listed.filter { $0.value == Self.name(owner) }.keys)
                    #expect(seen == stored, "\(label): the owning context's view of \(Self.name(owner))")
                }
            }
        }
    }
}
