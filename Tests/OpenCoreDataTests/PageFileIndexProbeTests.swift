// A fetch through an index walks one cursor over all of the plan's ranges (an IN list's
// thousands of points, each found by a search of the leaf the last one ended on) and
// another over the sorted candidate rows; a save deleting many rows removes them in one
// walk of the row tree. On a store of many leaves, random IN lists (unsorted, repeated,
// absent members) must fetch and count what the evaluator selects, a delete of 15% must
// leave exactly the other rows with a clean `verify()`, and an index entry whose row is
// gone must still be reported as damage.
import Foundation
import StorageEngine
import TestSupport
import Testing

@testable import OpenCoreData

@Suite struct PageFileIndexProbeTests {
    static let model: NSManagedObjectModel = {
        let item = NSEntityDescription()
        item.name = "Item"
        item.properties = [
            PageFileFixtures.attribute("uid", .integer64AttributeType, indexed: true),
            PageFileFixtures.attribute("label", .stringAttributeType),
        ]
        let model = NSManagedObjectModel()
        model.entities = [item]
        return model
    }()

    static let rowCount = 4_000

    /// A store of `rowCount` items, uid `3 * index`, saved.
    static func loaded(_ url: URL) throws -> NSPersistentStoreCoordinator {
        let coordinator = try PageFileFixtures.coordinator(model, url)
        let context = PageFileFixtures.context(coordinator)
        try context.performAndWait {
            for index in 0..<rowCount {
                let object = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
                object.setValue(NSNumber(value: Int64(index * 3)), forKey: "uid")
                object.setValue("item \(index)", forKey: "label")
            }
            try context.save()
        }
        return coordinator
    }

    @Test func longInListsFetchWhatTheEvaluatorSelects() throws {
        var random = SeededRandom(environmentOr: 0x1_5EED)
        let hint = random.replayHint
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = try Self.loaded(url)
        let context = PageFileFixtures.context(coordinator)
        try context.performAndWait {
            for _ in 0..<12 {
                let size = random.int(in: 0...2_500)
                let members = (0..<size).map { _ in
                    NSNumber(value: Int64(random.int(in: -10...(Self.rowCount * 3 + 10))))
                }
                let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
                request.predicate = NSPredicate(format: "uid IN %@", members)
                let limit = Int64(Self.rowCount * 3)
                let wanted = Set(
                    members.map(\.int64Value).filter { (uid: Int64) -> Bool in
                        uid >= 0 && uid % 3 == 0 && uid < limit
                    })
                context.reset()
                let fetched = try context.fetch(request).compactMap {
                    ($0.value(forKey: "uid") as? NSNumber)?.int64Value
                }
                #expect(fetched.count == wanted.count, "\(size) members (\(hint))")
                #expect(Set(fetched) == wanted, "\(size) members (\(hint))")
                #expect(try context.count(for: request) == wanted.count, "\(size) members (\(hint))")
            }
        }
        try PageFileFixtures.close(coordinator)
    }

    @Test func deletingFifteenPercentLeavesExactlyTheOthers() throws {
        var random = SeededRandom(environmentOr: 0xDE1E7E)
        let hint = random.replayHint
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = try Self.loaded(url)
        let context = PageFileFixtures.context(coordinator)
        var doomed = Set<Int64>()
        while doomed.count < Self.rowCount * 15 / 100 {
            doomed.insert(Int64(random.int(in: 0...(Self.rowCount - 1)) * 3))
        }
        try context.performAndWait {
            context.reset()
            let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
            request.predicate = NSPredicate(format: "uid IN %@", doomed.shuffled().map { NSNumber(value: $0) })
            let victims = try context.fetch(request)
            #expect(victims.count == doomed.count, "\(hint)")
            for victim in victims { context.delete(victim) }
            try context.save()
            context.reset()
            let left = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item"))
                .compactMap { ($0.value(forKey: "uid") as? NSNumber)?.int64Value }
            let expected = Set((0..<Int64(Self.rowCount)).map { $0 * 3 }).subtracting(doomed)
            #expect(left.count == expected.count, "\(hint)")
            #expect(Set(left) == expected, "\(hint)")
            let again = NSFetchRequest<NSManagedObject>(entityName: "Item")
            again.predicate = NSPredicate(format: "uid IN %@", doomed.map { NSNumber(value: $0) })
            #expect(try context.count(for: again) == 0, "\(hint)")
            #expect(try context.fetch(again).isEmpty, "\(hint)")
        }
        let store = try #require(coordinator.persistentStores.first as? PageFileStore)
        let report = try store.verify()
        #expect(report.isClean, "\(report.problems) (\(hint))")
        try PageFileFixtures.close(coordinator)
    }

    @Test func anIndexEntryWithoutItsRowIsDamage() throws {
        let url = try PageFileFixtures.temporaryURL()
        try PageFileFixtures.close(try Self.loaded(url))
        // One row goes from the row tree; its index entry stays.
        let database = try PageFileFixtures.openDatabase(url)
        try database.write { transaction in
            let rows = try transaction.openTree(named: "rows.Item")
            let keys = try rows.entries().map(\.key)
            #expect(keys.count == Self.rowCount)
            try rows.removeValue(forKey: keys[999])
        }
        try database.close()
        let coordinator = try PageFileFixtures.coordinator(Self.model, url)
        let context = PageFileFixtures.context(coordinator)
        context.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
            request.predicate = NSPredicate(
                format: "uid IN %@", (0..<Self.rowCount).map { NSNumber(value: Int64($0 * 3)) })
            let error = #expect(throws: NSError.self) { try context.fetch(request) }
            #expect(error?.code == NSFileReadCorruptFileError, "\(String(describing: error))")
            #expect(error?.localizedDescription.contains("does not exist") == true, "\(String(describing: error))")
        }
        try PageFileFixtures.close(coordinator)
    }
}
