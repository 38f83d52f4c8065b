// An `IN` list becomes the points of an index (PageFileQueryPlanner, KeyPrefixes): in one
// buffer, in key order without repeats, behind the equal elements of a composite index
// that lead it. The objects fetched must be those evaluating the predicate on every object
// picks, for lists with repeats, negatives, mixed numbers, strings and a single value.
import Foundation
import Testing

@testable import OpenCoreData

@Suite struct PlannerPointsTests {
    /// Item: `id` and `name` indexed alone, `(group, rank)` together.
    static func model() -> NSManagedObjectModel {
        let item = NSEntityDescription()
        item.name = "Item"
        item.properties = [
            TestStack.attribute("id", .integer64AttributeType, indexed: true),
            TestStack.attribute("group", .integer32AttributeType),
            TestStack.attribute("rank", .integer16AttributeType),
            TestStack.attribute("name", .stringAttributeType, indexed: true),
        ]
        item.indexes = [
            NSFetchIndexDescription(
                name: "byGroupRank",
                elements: [
                    NSFetchIndexElementDescription(property: item.properties[1], collationType: .binary),
                    NSFetchIndexElementDescription(property: item.properties[2], collationType: .binary),
                ])
        ]
        let model = NSManagedObjectModel()
        model.entities = [item]
        return model
    }

    static func numbers(_ values: [Int64]) -> [NSNumber] { values.map { NSNumber(value: $0) } }

    /// Formats with their arguments, each expected to use an index.
    static func cases() -> [(format: String, arguments: [Any])] {
        [
            ("id IN %@", [numbers([40, 3, 3, -2, 17, 40, 999])]),
            ("id IN %@", [numbers([5])]),
            ("id IN %@", [[Int64(9), 2, 9, -1] as [Any]]),
            ("id IN %@", [[NSNumber(value: 2.0), NSNumber(value: 0), NSNumber(value: -0.0), NSNumber(value: 6.5)]]),
            ("group == %d AND rank IN %@", [2, numbers([4, 1, 4, 6, 30])]),
            ("group == %d AND rank IN %@", [3, [5, 0, 5] as [Any]]),
            ("rank IN %@ AND group == %d", [numbers([2, 3]), 1]),
            ("group IN %@", [numbers([1, 3, 1])]),
            ("name IN %@", [["n7", "n3", "n7", "absent"]]),
            ("id IN %@ AND name IN %@", [numbers([3, 4, 7]), ["n7", "n4"]]),
        ]
    }

    @Test func anInListFetchesWhatEvaluationPicks() throws {
        let model = Self.model()
        let directory = try TestStack.scratchDirectory("planner-points")
        defer { try? FileManager.default.removeItem(at: directory) }
        let coordinator = try TestStack.coordinator(NSSQLiteStoreType, model: model, in: directory)
        let context = TestStack.context(coordinator)
        for index in -5..<60 {
            let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
            item.setValue(Int64(index), forKey: "id")
            item.setValue(Int32(index % 4), forKey: "group")
            item.setValue(Int16(index % 7), forKey: "rank")
            item.setValue("n\(index % 11)", forKey: "name")
        }
        try context.save()
        let store = try #require(coordinator.persistentStores.first as? PageFileStore)
        let all = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item"))
        for (format, arguments) in Self.cases() {
            let predicate = OpenCoreData.NSPredicate(format: format, argumentArray: arguments)
            let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Item")
            request.entity = model.entitiesByName["Item"]
            request.predicate = predicate
            #expect(store.describePlan(for: request).contains("key ranges"), "\(format) \(arguments)")
            let fetched = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item").with(predicate))
            let expected = all.filter { predicate.evaluate(with: $0) }
            #expect(ids(fetched) == ids(expected), "\(format) \(arguments)")
            #expect(
                try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Item").with(predicate))
                    == expected.count, "\(format) \(arguments)")
        }
        // A list's repeats are one point each: `id IN {3, 1, 3}` reads two entries.
        let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Item")
        request.entity = model.entitiesByName["Item"]
        request.predicate = OpenCoreData.NSPredicate(format: "id IN %@", Self.numbers([3, 1, 3]))
        #expect(store.describePlan(for: request).contains("2 key ranges (2 entries examined"))
    }

    private func ids(_ objects: [NSManagedObject]) -> [Int64] {
        objects.map { $0.value(forKey: "id") as? Int64 ?? 0 }.sorted()
    }
}

extension NSFetchRequest {
    fileprivate func with(_ predicate: OpenCoreData.NSPredicate) -> NSFetchRequest {
        self.predicate = predicate
        return self
    }
}
