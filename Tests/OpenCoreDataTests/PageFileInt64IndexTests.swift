// An index on a 64-bit integer attribute answers a term exactly — with no row read to
// check it — when its constants are integers within ±2^53: values beyond share Float64
// keys with their neighbours, but never with such a constant. Fetches and counts of
// `==`, IN, orderings and BETWEEN, with constants inside and beyond 2^53, floating-point
// ones and nil, over values at and around ±2^53 and the type's ends, must be exactly
// what `evaluate(with:)` over every object gives.
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

@Suite struct PageFileInt64IndexTests {
    static let model: NSManagedObjectModel = {
        let item = NSEntityDescription()
        item.name = "Item"
        item.properties = [
            PageFileFixtures.attribute("uid", .integer64AttributeType, indexed: true),
            PageFileFixtures.attribute("rank", .integer16AttributeType),
        ]
        let model = NSManagedObjectModel()
        model.entities = [item]
        return model
    }()

    static let edge: Int64 = 1 << 53
    static let values: [Int64] = [
        -5, -1, 0, 1, 2, 3, 5, 42, edge - 1, edge, edge + 1, edge + 2, -edge + 1, -edge, -edge - 1, -edge - 2,
        .max, .min, .max - 1,
    ]

    @Test func int64IndexTermsAgreeWithTheEvaluator() throws {
        var random = SeededRandom(environmentOr: 0x1_6464)
        let hint = random.replayHint
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = try PageFileFixtures.coordinator(Self.model, url)
        let context = PageFileFixtures.context(coordinator)
        // Fetches and counts run from an empty context, so the store answers them.
        let reader = PageFileFixtures.context(coordinator)
        try context.performAndWait {
            for index in 0..<160 {
                let object = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
                let uid: Int64? = random.chance(0.08) ? nil : random.pick(Self.values)
                object.setValue(uid.map { NSNumber(value: $0) }, forKey: "uid")
                object.setValue(NSNumber(value: Int16(index)), forKey: "rank")
            }
            try context.save()
            let everyone = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item"))
            let constants: [Any] =
                Self.values.map { NSNumber(value: $0) } + [
                    NSNumber(value: 2.5), NSNumber(value: 3.0), NSNumber(value: Double(Self.edge)),
                    NSNumber(value: true), 7, Int64(Self.edge + 1),
                ]
            var matched = 0
            for _ in 0..<300 {
                let predicate: OpenCoreData.NSPredicate
                switch random.int(in: 0...3) {
                case 0:
                    let op = random.pick(["==", "!=", "<", "<=", ">", ">="])
                    predicate = NSPredicate(format: "uid \(op) %@", argumentArray: [random.pick(constants)])
                case 1:
                    let members = (0..<random.int(in: 1...4)).map { _ in random.pick(constants) }
                    predicate = NSPredicate(format: "uid IN %@", argumentArray: [members])
                case 2:
                    let bounds = [random.pick(constants), random.pick(constants)]
                    predicate = NSPredicate(format: "uid BETWEEN %@", argumentArray: [bounds])
                default:
                    let id = random.pick(Self.values)
                    predicate =
                        random.chance(0.5)
                        ? NSPredicate(format: "uid == %lld", id) : NSPredicate(format: "uid == nil OR uid == %lld", id)
                }
                let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
                request.predicate = predicate
                let format = predicate.predicateFormat
                let expected = Result {
                    try everyone.filter { try predicate.evaluateThrowing(with: $0) }
                        .compactMap { $0.value(forKey: "rank") as? Int16 }.sorted()
                }
                let (fetched, counted) = reader.performAndWait {
                    reader.reset()
                    let fetched = Result {
                        try reader.fetch(request).compactMap { $0.value(forKey: "rank") as? Int16 }.sorted()
                    }
                    reader.reset()
                    return (fetched, Result { try reader.count(for: request) })
                }
                switch (expected, fetched, counted) {
                case (.success(let a), .success(let b), .success(let c)):
                    #expect(a == b, "fetch of \(format) (\(hint))")
                    #expect(a.count == c, "count of \(format) (\(hint))")
                    if !a.isEmpty { matched += 1 }
                case (.failure, .failure, .failure): break
                default:
                    Issue.record("\(format): evaluation \(expected), fetch \(fetched), count \(counted) (\(hint))")
                }
            }
            #expect(matched > 100, "too few predicates matched rows (\(hint))")
        }
    }
}
