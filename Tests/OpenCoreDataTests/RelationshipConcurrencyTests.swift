// Several contexts change one graph at once, under every merge policy: to-one,
// one-to-many, ordered one-to-many, many-to-many and one-to-one relationships, inserts,
// deletes and upserts (a unique code) interleaved. After every round, both sides of every
// relationship agree in every store, and the default store's verify() is clean.
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

@Suite struct RelationshipConcurrencyTests {
    typealias Fixtures = LinkedFixtures

    /// Counts of what the contexts did, so a run that saved nothing does not pass.
    final class Tally: @unchecked Sendable {
        private let lock = NSLock()
        private var saved = 0
        private var refused = 0

        func record(_ success: Bool) {
            lock.lock()
            if success { saved += 1 } else { refused += 1 }
            lock.unlock()
        }

        var counts: (saved: Int, refused: Int) {
            lock.lock()
            defer { lock.unlock() }
            return (saved, refused)
        }
    }

    static let entityNames = ["Item", "Group", "Shelf", "Tag", "Badge"]

    /// A random registered (or fetched) object of `entity` in `context`, not deleted.
    static func pick(_ entity: String, in context: NSManagedObjectContext, _ random: inout SeededRandom) throws
        -> NSManagedObject?
    {
        let registered = context.registeredObjects.filter {
            $0.entity.name == entity && !$0.isDeleted && $0.managedObjectContext === context
        }
        if !registered.isEmpty, random.chance(0.7) {
            return registered.sorted {
                $0.objectID.uriRepresentation().absoluteString < $1.objectID.uriRepresentation().absoluteString
            }[
                random.int(in: 0...(registered.count - 1))]
        }
        let objects = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: entity))
        return objects.isEmpty ? nil : objects[random.int(in: 0...(objects.count - 1))]
    }

    /// One random change of `context`'s graph.
    static func change(_ context: NSManagedObjectContext, _ random: inout SeededRandom) throws {
        switch random.int(in: 0...13) {
        case 0, 1:
            // A code from a small pool: clashes become upserts (or 133021 under the error policy).
            let item = Fixtures.insert("Item", "c\(random.int(in: 0...11))", into: context)
            if let group = try pick("Group", in: context, &random) { item.setValue(group, forKey: "group") }
            if let tag = try pick("Tag", in: context, &random) { item.mutableSetValue(forKey: "tags").add(tag) }
        case 2:
            Fixtures.insert(
                random.pick(["Group", "Shelf", "Tag", "Badge"]), "n\(random.int(in: 0...999))", into: context)
        case 13:
            // A fresh object under a stored name: an upsert of the to-many side, holding
            // some of the items itself.
            let object = Fixtures.insert(
                random.pick(["Group", "Shelf", "Tag"]), "s\(random.int(in: 0...3))", into: context)
            guard let item = try pick("Item", in: context, &random) else { return }
            switch object.entity.name {
            case "Shelf": object.mutableOrderedSetValue(forKey: "books").add(item)
            default: object.mutableSetValue(forKey: "items").add(item)
            }
        case 3:
            guard let item = try pick("Item", in: context, &random) else { return }
            item.setValue(random.chance(0.8) ? try pick("Group", in: context, &random) : nil, forKey: "group")
        case 4:
            guard let group = try pick("Group", in: context, &random), let item = try pick("Item", in: context, &random)
            else { return }
            let items = group.mutableSetValue(forKey: "items")
            if random.chance(0.6) { items.add(item) } else { items.remove(item) }
        case 5:
            guard let item = try pick("Item", in: context, &random), let tag = try pick("Tag", in: context, &random)
            else { return }
            let tags = item.mutableSetValue(forKey: "tags")
            if random.chance(0.6) { tags.add(tag) } else { tags.remove(tag) }
        case 6:
            guard let tag = try pick("Tag", in: context, &random), let item = try pick("Item", in: context, &random)
            else { return }
            let items = tag.mutableSetValue(forKey: "items")
            if random.chance(0.6) { items.add(item) } else { items.remove(item) }
        case 7:
            guard let shelf = try pick("Shelf", in: context, &random), let item = try pick("Item", in: context, &random)
            else { return }
            let books = shelf.mutableOrderedSetValue(forKey: "books")
            if books.contains(item), random.chance(0.5) {
                books.remove(item)
            } else {
                books.insert(item, at: random.int(in: 0...books.count))
            }
        case 8:
            guard let item = try pick("Item", in: context, &random) else { return }
            item.setValue(random.chance(0.8) ? try pick("Shelf", in: context, &random) : nil, forKey: "shelf")
        case 9:
            guard let item = try pick("Item", in: context, &random) else { return }
            item.setValue(random.chance(0.8) ? try pick("Badge", in: context, &random) : nil, forKey: "badge")
        case 10:
            guard let object = try pick(random.pick(entityNames), in: context, &random) else { return }
            context.delete(object)
        case 11:
            // Another property of a row others link to: their saves conflict on it.
            guard let object = try pick(random.pick(["Group", "Shelf", "Tag"]), in: context, &random) else { return }
            object.setValue("r\(random.int(in: 0...999))", forKey: "name")
        default:
            guard let item = try pick("Item", in: context, &random) else { return }
            item.setValue("note \(random.int(in: 0...99))", forKey: "note")
        }
    }

    static func run(storeType: String, seed: UInt64, rounds: Int, contexts count: Int) throws {
        var random = SeededRandom(seed: seed)
        let hint = random.replayHint
        let coordinator = try Fixtures.coordinator(storeType)
        let setup = Fixtures.context(coordinator)
        for index in 0..<4 {
            for entity in ["Group", "Shelf", "Tag", "Badge"] { Fixtures.insert(entity, "s\(index)", into: setup) }
        }
        try setup.save()
        let contexts = (0..<count).map { index in
            let context = Fixtures.context(coordinator)
            // Half merge the others' saves as they happen; half see them only as conflicts.
            context.automaticallyMergesChangesFromParent = index % 2 == 1
            return context
        }
        let tally = Tally()
        for round in 0..<rounds {
            let seeds = (0..<count).map { _ in random.next() }
            let policies = (0..<count).map { _ in random.pick(Fixtures.policies) }
            let box = UncheckedBox(contexts)
            DispatchQueue.concurrentPerform(iterations: count) { index in
                let context = box.value[index]
                context.performAndWait {
                    var local = SeededRandom(seed: seeds[index])
                    context.mergePolicy = NSMergePolicy(merge: policies[index])
                    if local.chance(0.15) { context.reset() }
                    do {
                        for _ in 0..<local.int(in: 1...6) { try change(context, &local) }
                        try context.save()
                        tally.record(true)
                    } catch {
                        // A refused save (error policy, constraint clash): start again from the store.
                        context.rollback()
                        tally.record(false)
                    }
                }
            }
            let problems = try Fixtures.problems(coordinator)
            #expect(problems == [], "\(storeType), round \(round), \(hint)")
            if !problems.isEmpty { return }
        }
        let counts = tally.counts
        #expect(
            counts.saved > rounds, "\(storeType): \(counts.saved) saves succeeded, \(counts.refused) refused, \(hint)")
    }

    @Test(arguments: LinkedFixtures.storeTypes)
    func concurrentContextsUnderEveryPolicyKeepBothSidesAgreeing(storeType: String) throws {
        let seed = SeededRandom.environmentSeed ?? 0x5EED_0A11
        let rounds = Int(ProcessInfo.processInfo.environment["OPENCOREDATA_ROUNDS"] ?? "") ?? 40
        try Self.run(storeType: storeType, seed: seed, rounds: rounds, contexts: 4)
    }
}
