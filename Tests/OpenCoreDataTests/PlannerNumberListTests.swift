// An `IN %@` list given as `[NSNumber]` is planned by its own path (each number read
// once, PageFileQueryPlanner.numberPoints); the same numbers as Swift values take the
// general path. Both must give the same plan and the same objects.
import Foundation
import Testing

@testable import OpenCoreData

@Suite struct PlannerNumberListTests {
    static func model() -> NSManagedObjectModel {
        let item = NSEntityDescription()
        item.name = "Item"
        item.properties = [
            TestStack.attribute("id", .integer64AttributeType, indexed: true),
            TestStack.attribute("score", .doubleAttributeType, indexed: true),
            TestStack.attribute("rank", .integer16AttributeType, indexed: true),
        ]
        let model = NSManagedObjectModel()
        model.entities = [item]
        return model
    }

    /// Lists as NSNumbers and the same values as Swift numbers: duplicates, absent values,
    /// negatives, a fraction, a Bool, integers past 2^53 (which no index plan takes).
    static func lists() -> [(numbers: [NSNumber], values: [Any])] {
        [
            (
                [5, 3, 5, 40, 7, 3].map { NSNumber(value: Int64($0)) },
                [Int64(5), Int64(3), Int64(5), Int64(40), Int64(7), 3]
            ),
            ([NSNumber(value: -2), NSNumber(value: 0), NSNumber(value: 19)], [-2, 0, 19]),
            ([NSNumber(value: 2.5), NSNumber(value: 4)], [2.5, 4]),
            ([NSNumber(value: true), NSNumber(value: 6)], [true, 6]),
            ([NSNumber(value: Int64(1) << 60), NSNumber(value: 1)], [Int64(1) << 60, 1]),
            ([NSNumber(value: Double.infinity), NSNumber(value: 8)], [Double.infinity, 8]),
        ]
    }

    @Test func aListOfNSNumbersPlansAndFetchesAsTheSameSwiftNumbers() throws {
        let model = Self.model()
        let directory = try TestStack.scratchDirectory("planner-number-list")
        defer { try? FileManager.default.removeItem(at: directory) }
        let coordinator = try TestStack.coordinator(NSSQLiteStoreType, model: model, in: directory)
        let context = TestStack.context(coordinator)
        for index in -3..<20 {
            let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
            item.setValue(Int64(index), forKey: "id")
            item.setValue(Double(index) / 2, forKey: "score")
            item.setValue(Int16(index % 7), forKey: "rank")
        }
        try context.save()
        let store = try #require(coordinator.persistentStores.first as? PageFileStore)
        for (numbers, values) in Self.lists() {
            for key in ["id", "score", "rank"] {
                let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Item")
                request.entity = model.entitiesByName["Item"]
                request.predicate = OpenCoreData.NSPredicate(format: "%K IN %@", key, numbers)
                let numberPlan = store.describePlan(for: request)
                let numberIDs = try ids(context, request.predicate)
                request.predicate = OpenCoreData.NSPredicate(format: "%K IN %@", key, values)
                #expect(numberPlan == store.describePlan(for: request), "\(key) IN \(numbers)")
                let valueIDs = try ids(context, request.predicate)
                #expect(numberIDs == valueIDs, "\(key) IN \(numbers)")
                // And what evaluating the predicate on every object gives.
                let all = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item"))
                let evaluated = all.filter { request.predicate?.evaluate(with: $0) == true }
                #expect(numberIDs == evaluated.map { $0.value(forKey: "id") as? Int64 ?? 0 }.sorted())
            }
        }
        // The plan of a plain id list is exact: the index answers alone.
        let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Item")
        request.entity = model.entitiesByName["Item"]
        request.predicate = OpenCoreData.NSPredicate(format: "id IN %@", [3, 1, 3].map { NSNumber(value: Int64($0)) })
        #expect(
            store.describePlan(for: request).hasSuffix("2 key ranges (2 entries examined, exact: no row evaluated)"))
    }

    private func ids(_ context: NSManagedObjectContext, _ predicate: OpenCoreData.NSPredicate?) throws -> [Int64] {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
        request.predicate = predicate
        return try context.fetch(request).map { $0.value(forKey: "id") as? Int64 ?? 0 }.sorted()
    }
}
