// The default store's sort+limit window (an index walk that stops after limit+offset rows)
// answers exactly as the in-memory store does when most rows tie on the sort key.
import Foundation
import OpenCoreData
import TestSupport
import Testing

@Suite struct PageFileStoreWindowTests {
    /// Item: `uid`, `age` (Int16, indexed, few distinct values), `big` (Int64, indexed,
    /// values beyond 2^53 that share a Float64 index key), `tag` (plain).
    static let model: NSManagedObjectModel = {
        let item = NSEntityDescription()
        item.name = "Item"
        item.properties = [
            DifferentialModel.attribute("uid", .integer64AttributeType),
            DifferentialModel.attribute("age", .integer16AttributeType, indexed: true),
            DifferentialModel.attribute("big", .integer64AttributeType, indexed: true),
            DifferentialModel.attribute("tag", .integer32AttributeType),
        ]
        let model = NSManagedObjectModel()
        model.entities = [item]
        return model
    }()

    private func side(_ type: String, _ url: URL) throws -> (NSPersistentStoreCoordinator, NSManagedObjectContext) {
        let coordinator = try PageFileFixtures.coordinator(Self.model, url, type: type)
        return (coordinator, PageFileFixtures.context(coordinator))
    }

    private func uids(_ context: NSManagedObjectContext, _ request: NSFetchRequest<NSManagedObject>) throws -> [Int64] {
        try context.fetch(request).compactMap { $0.value(forKey: "uid") as? Int64 }
    }

    @Test func tiedSortKeysWithLimitAndOffsetMatchTheInMemoryStore() throws {
        var random = SeededRandom(environmentOr: 0x5EED_0107)
        let hint = random.replayHint
        let url = try PageFileFixtures.temporaryURL()
        let sides = [try side(NSInMemoryStoreType, url), try side(NSSQLiteStoreType, url)]
        let huge: Int64 = 1 << 60
        var objects: [[NSManagedObject]] = [[], []]
        for uid in Int64(1)...250 {
            let age: Int16? = random.chance(0.05) ? nil : Int16(random.int(in: 0...6))
            let big = huge + Int64(random.int(in: 0...3))
            let tag = random.int(in: 0...9)
            for (offset, (_, context)) in sides.enumerated() {
                let object = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
                object.setValue(uid, forKey: "uid")
                object.setValue(age.map { NSNumber(value: $0) }, forKey: "age")
                object.setValue(big, forKey: "big")
                object.setValue(tag, forKey: "tag")
                objects[offset].append(object)
                // One insert per save gives both stores the same primary-key order, which is their tie order.
                try context.save()
            }
        }
        // Later updates move rows between tie groups, so a group is no longer in insertion order.
        for index in 0..<objects[0].count where random.chance(0.2) {
            let age = Int16(random.int(in: 0...6))
            for offset in sides.indices { objects[offset][index].setValue(age, forKey: "age") }
        }
        for (_, context) in sides { try context.save() }

        let predicates: [OpenCoreData.NSPredicate?] = [
            nil, NSPredicate(format: "age >= 2 AND age < 5"), NSPredicate(format: "age > 1 AND tag < 5"),
            NSPredicate(format: "age <= 3"), NSPredicate(format: "age == nil OR age > 4"),
            NSPredicate(format: "big >= %lld", huge),
        ]
        var checked = 0
        for _ in 0..<120 {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
            request.predicate = random.pick(predicates)
            let key = random.chance(0.2) ? "big" : "age"
            request.sortDescriptors = [NSSortDescriptor(key: key, ascending: random.chance(0.5))]
            request.fetchLimit = random.int(in: 1...60)
            request.fetchOffset = random.chance(0.5) ? 0 : random.int(in: 1...120)
            // From an empty context the store may hand back its rows already sorted.
            if random.chance(0.5) { for (_, context) in sides { context.reset() } }
            let expected = try uids(sides[0].1, request)
            let actual = try uids(sides[1].1, request)
            #expect(
                actual == expected,
                Comment(
                    rawValue: "\(request.predicate?.predicateFormat ?? "all") by \(key) "
                        + "\(request.sortDescriptors?.first?.ascending == true ? "asc" : "desc") "
                        + "limit \(request.fetchLimit) offset \(request.fetchOffset) (\(hint))"))
            if !expected.isEmpty { checked += 1 }
        }
        #expect(checked > 60, "too few queries returned rows (\(hint))")
    }
}
