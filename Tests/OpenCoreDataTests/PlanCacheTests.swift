// A format predicate a cached template bound is planned from its template's recipe
// (PageFilePlanCache.swift); every other predicate, and the recipe's own fallback, from
// its tree. Both must give the same plan for every shape and constant, and the same
// objects in the same order whatever the request's sort, limit and result type.
import Foundation
import Testing

@testable import OpenCoreData

@Suite struct PlanCacheTests {
    /// Item: `id` and `age` indexed alone, `(group, age)` together, `name` indexed; Other:
    /// the same attribute names, only `age` indexed. `indexesID: false` drops Item's `id`
    /// index (a model change the store follows without migrating).
    static func model(indexesID: Bool = true) -> NSManagedObjectModel {
        let item = NSEntityDescription()
        item.name = "Item"
        item.properties = [
            TestStack.attribute("id", .integer64AttributeType, indexed: indexesID),
            TestStack.attribute("age", .integer16AttributeType, indexed: true),
            TestStack.attribute("group", .integer32AttributeType),
            TestStack.attribute("name", .stringAttributeType, indexed: true),
            TestStack.attribute("score", .doubleAttributeType),
        ]
        item.indexes = [
            NSFetchIndexDescription(
                name: "byGroupAge",
                elements: [
                    NSFetchIndexElementDescription(property: item.properties[2], collationType: .binary),
                    NSFetchIndexElementDescription(property: item.properties[1], collationType: .binary),
                ])
        ]
        let other = NSEntityDescription()
        other.name = "Other"
        other.properties = [
            TestStack.attribute("id", .integer64AttributeType),
            TestStack.attribute("age", .integer16AttributeType, indexed: true),
            TestStack.attribute("group", .integer32AttributeType),
            TestStack.attribute("name", .stringAttributeType),
            TestStack.attribute("score", .doubleAttributeType),
        ]
        let model = NSManagedObjectModel()
        model.entities = [item, other]
        return model
    }

    /// Formats with argument lists: the same format with constants of other values and
    /// kinds, formats differing only in an operator, in constants or in their order.
    static func cases() -> [(format: String, arguments: [[Any]])] {
        [
            ("id == %lld", [[Int64(3)], [Int64(-7)], [Int64(1) << 60], [Int64(40)]]),
            (
                "id == %@",
                [[NSNumber(value: 4)], ["four"], [NSNull()], [2.5], [Int64(1) << 60], [Date(timeIntervalSince1970: 9)]]
            ),
            ("id < %lld", [[Int64(5)], [Int64(1) << 60]]),
            ("id <= %d", [[5], [-1]]),
            ("id > %lld", [[Int64(12)]]),
            ("id >= %f", [[3.5], [12.0]]),
            ("%lld == id", [[Int64(6)]]),
            ("%lld < id", [[Int64(6)]]),
            ("%lld >= id", [[Int64(6)]]),
            ("id != %lld", [[Int64(6)]]),
            ("id IN %@", [[[NSNumber(value: 3)]], [[3, 9, 3, 14]], [[Int64(5)]], [["a", "b"]], [[] as [Int]]]),
            ("id BETWEEN %@", [[[2, 9]], [[9, 2]], [["a", 3]]]),
            ("id BETWEEN {%d, %d}", [[2, 9]]),
            ("id == 5 AND age > %d", [[3], [100]]),
            ("age > %d AND id == %lld", [[3, Int64(5)], [3, Int64(1) << 60]]),
            ("group == %d AND age < %d", [[2, 30], [2, 3]]),
            ("group == %d AND age IN %@", [[1, [3, 4]], [1, [4]]]),
            ("group == %d", [[1]]),
            ("id == %lld OR age == %d", [[Int64(3), 4]]),
            ("NOT id == %lld", [[Int64(3)]]),
            ("%K == %lld", [["id", Int64(3)], ["age", Int64(3)]]),
            ("id == %lld AND %K < %d", [[Int64(3), "age", 9]]),
            ("name == %@", [["n3"], [""], [NSNull()]]),
            ("name BEGINSWITH %@", [["n1"], [""], ["é"]]),
            ("name BEGINSWITH[c] %@", [["n1"]]),
            ("name ==[c] %@", [["N3"]]),
            ("name == %@ AND id == %lld", [["n3", Int64(3)]]),
            ("id + 1 == %d", [[4]]),
            ("score > %f AND age < %d", [[1.5, 9]]),
            ("id == $value", [[]]),
            ("TRUEPREDICATE", [[]]),
            ("id == 4", [[]]),
            ("age IN {1, 2} AND id > %d", [[3]]),
        ]
    }

    @Test func aRecipePlansAsTheTreeDoes() throws {
        let directory = try TestStack.scratchDirectory("plan-cache")
        defer { try? FileManager.default.removeItem(at: directory) }
        for indexesID in [true, false] {
            let model = Self.model(indexesID: indexesID)
            let coordinator = try TestStack.coordinator(NSSQLiteStoreType, model: model, in: directory)
            let store = try #require(coordinator.persistentStores.first as? PageFileStore)
            var boundCount = 0
            for name in ["Item", "Other"] {
                let entity = try #require(model.entitiesByName[name])
                let info = try store.info(for: entity)
                for (format, argumentLists) in Self.cases() {
                    for arguments in argumentLists {
                        let predicate = OpenCoreData.NSPredicate(format: format, argumentArray: arguments)
                        if predicate.binding != nil { boundCount += 1 }
                        // Twice: the first makes the recipe, the second reads it.
                        for _ in 0..<2 {
                            let cached = PageFileQueryPlanner.plan(predicate, info: info)
                            let fromTree = PageFileQueryPlanner.plan(
                                predicate, layout: entity.layout, indexes: info.indexes)
                            #expect(
                                Self.describe(cached) == Self.describe(fromTree),
                                "\(name) \(format) \(arguments) indexesID: \(indexesID)")
                        }
                    }
                }
                #expect(info.planCache.count > 0)
            }
            // Nearly every case is bound from a template: the recipe path is what ran.
            #expect(boundCount > 2 * (Self.cases().count - 5))
        }
    }

    /// A predicate's template is kept by the predicate, and the cache's recipe holds the
    /// template's tree: the recipe found is always the predicate's own template's.
    @Test func aRecipeIsFoundOnlyForItsOwnTemplate() throws {
        let model = Self.model()
        let directory = try TestStack.scratchDirectory("plan-cache-identity")
        defer { try? FileManager.default.removeItem(at: directory) }
        let coordinator = try TestStack.coordinator(NSSQLiteStoreType, model: model, in: directory)
        let store = try #require(coordinator.persistentStores.first as? PageFileStore)
        let entity = try #require(model.entitiesByName["Item"])
        let info = try store.info(for: entity)
        // Enough formats to empty the format cache and the recipe cache several times, so
        // templates are freed and new ones made while older predicates still live.
        var kept: [(OpenCoreData.NSPredicate, String)] = []
        for round in 0..<3 {
            for index in 0..<300 {
                let operators = ["==", "<", ">=", "!="]
                let format = "id \(operators[index % 4]) %lld AND age >= \(index % 7 + round)"
                let predicate = OpenCoreData.NSPredicate(format: format, Int64(index))
                let binding = try #require(predicate.binding)
                let recipe = info.planCache.recipe(for: binding.template, layout: entity.layout)
                #expect(recipe.template === binding.template.tree)
                if index % 50 == 0 { kept.append((predicate, format)) }
            }
        }
        for (predicate, format) in kept {
            let cached = PageFileQueryPlanner.plan(predicate, info: info)
            let fromTree = PageFileQueryPlanner.plan(predicate, layout: entity.layout, indexes: info.indexes)
            #expect(Self.describe(cached) == Self.describe(fromTree), "\(format)")
        }
        #expect(info.planCache.count <= PageFilePlanCache.limit)
    }

    /// Fetches with bound predicates return what the same trees without a binding return,
    /// under every sort, limit, offset and result type, and in a reopened store whose model
    /// dropped an index.
    @Test func fetchesMatchTheUncachedPath() throws {
        let directory = try TestStack.scratchDirectory("plan-cache-fetch")
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let coordinator = try TestStack.coordinator(NSSQLiteStoreType, model: Self.model(), in: directory)
            let context = TestStack.context(coordinator)
            for index in 0..<40 {
                for name in ["Item", "Other"] {
                    let object = NSEntityDescription.insertNewObject(forEntityName: name, into: context)
                    object.setValue(Int64(index % 30), forKey: "id")
                    object.setValue(Int16(index % 9), forKey: "age")
                    object.setValue(Int32(index % 3), forKey: "group")
                    object.setValue("n\(index % 11)", forKey: "name")
                    object.setValue(Double(index) / 4, forKey: "score")
                }
            }
            try context.save()
        }
        for indexesID in [true, false] {
            let coordinator = try TestStack.coordinator(
                NSSQLiteStoreType, model: Self.model(indexesID: indexesID), in: directory)
            let context = TestStack.context(coordinator)
            for name in ["Item", "Other"] {
                for (format, argumentLists) in Self.cases() where !format.contains("$") {
                    for arguments in argumentLists {
                        let bound = OpenCoreData.NSPredicate(format: format, argumentArray: arguments)
                        let unbound = OpenCoreData.NSPredicate(content: .parsed(bound.resolved))
                        #expect(unbound.binding == nil)
                        for shape in Self.shapes {
                            let label = "\(name) \(format) \(arguments) \(shape) indexesID: \(indexesID)"
                            #expect(
                                Self.results(context, name, bound, shape)
                                    == Self.results(context, name, unbound, shape),
                                "\(label)")
                        }
                    }
                }
            }
        }
    }

    /// Sort, limit, offset and result type of a request.
    static let shapes: [(sort: String?, ascending: Bool, limit: Int, offset: Int, ids: Bool)] = [
        (nil, true, 0, 0, false), ("age", true, 3, 0, false), ("age", false, 2, 1, false),
        ("id", true, 0, 2, true), ("name", true, 4, 0, true), ("id", false, 1, 0, false),
    ]

    private static func results(
        _ context: NSManagedObjectContext, _ name: String, _ predicate: OpenCoreData.NSPredicate,
        _ shape: (sort: String?, ascending: Bool, limit: Int, offset: Int, ids: Bool)
    ) -> [String] {
        do {
            if shape.ids {
                let request = NSFetchRequest<NSManagedObjectID>(entityName: name)
                configure(request, predicate, shape)
                request.resultType = .managedObjectIDResultType
                return try context.fetch(request).map { $0.uriRepresentation().absoluteString }
            }
            let request = NSFetchRequest<NSManagedObject>(entityName: name)
            configure(request, predicate, shape)
            return try context.fetch(request).map { $0.objectID.uriRepresentation().absoluteString }
        } catch {
            // A predicate the store refuses (a date compared with a number) fails alike.
            return ["error: \(error)"]
        }
    }

    private static func configure<T>(
        _ request: NSFetchRequest<T>, _ predicate: OpenCoreData.NSPredicate,
        _ shape: (sort: String?, ascending: Bool, limit: Int, offset: Int, ids: Bool)
    ) {
        request.predicate = predicate
        if let sort = shape.sort {
            request.sortDescriptors = [NSSortDescriptor(key: sort, ascending: shape.ascending)]
        }
        request.fetchLimit = shape.limit
        request.fetchOffset = shape.offset
    }

    /// A plan in comparable form: its index, ranges and exactness.
    static func describe(_ plan: PageFilePlan?) -> String {
        guard let plan else { return "scan" }
        let ranges = plan.ranges.map { "\($0.lower.map { "\($0)" } ?? "-")..\($0.upper.map { "\($0)" } ?? "-")" }
        return "\(plan.index.treeName) \(ranges.joined(separator: " ")) exact: \(plan.isExact)"
    }
}
