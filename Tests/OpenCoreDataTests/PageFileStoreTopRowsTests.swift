// The default store's top-N for a sorted fetch with a limit (a bounded heap over the
// encoded sort slots, SPEC.md §3.5 Q6) answers exactly as the in-memory store does:
// ASCII strings (with NUL and CR LF) and strings beyond ASCII (which only the full path
// orders as the context does; all in NFC, as Swift's String order is not consistent on
// strings that are not, so no two stores could agree on it), ties, nulls, integers beyond Int16 read
// truncated, dates, booleans, several descriptors, both directions, with and without a
// predicate or an index range.
import Foundation
import OpenCoreData
import TestSupport
import Testing

@Suite struct PageFileStoreTopRowsTests {
    static let strings = [
        "Smith", "smith", "Sm", "Smi\u{0}th", "é", "e", "f", "K", "k", "🚀", "ab\r\nc", "ab\rc", "", "Zoë", "Zoe",
        "straße", "Ärger", "z",
    ]

    /// The ASCII strings among them: a sort by `code` is done on the encoded rows.
    static let codes = strings.filter { $0.utf8.allSatisfy { $0 < 0x80 } }

    /// Item: `uid`, `name` and `code` (strings), `age` (Int16, indexed), `rank` (Int64), `born`, `flag`.
    static let model: NSManagedObjectModel = {
        let item = NSEntityDescription()
        item.name = "Item"
        item.properties = [
            DifferentialModel.attribute("uid", .integer64AttributeType),
            DifferentialModel.attribute("name", .stringAttributeType),
            DifferentialModel.attribute("age", .integer16AttributeType, indexed: true),
            DifferentialModel.attribute("rank", .integer64AttributeType),
            DifferentialModel.attribute("born", .dateAttributeType),
            DifferentialModel.attribute("flag", .booleanAttributeType),
            DifferentialModel.attribute("code", .stringAttributeType),
        ]
        let model = NSManagedObjectModel()
        model.entities = [item]
        return model
    }()

    private func uids(_ context: NSManagedObjectContext, _ request: NSFetchRequest<NSManagedObject>) throws -> [Int64] {
        try context.performAndWait { try context.fetch(request).compactMap { $0.value(forKey: "uid") as? Int64 } }
    }

    @Test func sortedLimitedFetchesMatchTheInMemoryStore() throws {
        var random = SeededRandom(environmentOr: 0x70B_0011)
        let hint = random.replayHint
        let url = try PageFileFixtures.temporaryURL()
        let sides = try [NSInMemoryStoreType, NSSQLiteStoreType].map { type in
            PageFileFixtures.context(try PageFileFixtures.coordinator(Self.model, url, type: type))
        }
        var objects: [[NSManagedObject]] = [[], []]
        for uid in Int64(1)...300 {
            var name: String? = random.pick(Self.strings)
            if random.chance(0.3) { name = (name ?? "") + random.pick(Self.strings) }
            if random.chance(0.08) { name = nil }
            let age: Int16? = random.chance(0.05) ? nil : Int16(random.int(in: 0...9))
            let rank = Int64(random.pick([0, 1, -5, 1 << 40, 1 << 60, Int(Int64.min)]))
            let born: Date? =
                random.chance(0.1) ? nil : Date(timeIntervalSinceReferenceDate: Double(random.int(in: -3...3)) * 0.5)
            let flag: Bool? = random.chance(0.1) ? nil : random.chance(0.5)
            var code: String? = random.pick(Self.codes)
            if random.chance(0.3) { code = (code ?? "") + random.pick(Self.codes) }
            if random.chance(0.08) { code = nil }
            for (offset, context) in sides.enumerated() {
                try context.performAndWait {
                    let object = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
                    object.setValue(uid, forKey: "uid")
                    object.setValue(name, forKey: "name")
                    object.setValue(age.map { NSNumber(value: $0) }, forKey: "age")
                    object.setValue(rank, forKey: "rank")
                    object.setValue(born, forKey: "born")
                    object.setValue(flag.map { NSNumber(value: $0) }, forKey: "flag")
                    object.setValue(code, forKey: "code")
                    objects[offset].append(object)
                    // One insert per save gives both stores the same primary-key order, their tie order.
                    try context.save()
                }
            }
        }
        let predicates: [OpenCoreData.NSPredicate?] = [
            nil, NSPredicate(format: "age BETWEEN {2, 5}"), NSPredicate(format: "age >= 3 AND flag == YES"),
            NSPredicate(format: "name CONTAINS[c] 'm'"), NSPredicate(format: "rank > 0 OR name == nil"),
            NSPredicate(format: "age == 4"),
        ]
        let keys = ["code", "code", "code", "name", "age", "rank", "born", "flag"]
        var checked = 0
        for _ in 0..<150 {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
            request.predicate = random.pick(predicates)
            request.sortDescriptors = (0..<random.int(in: 1...3)).map { _ in
                NSSortDescriptor(key: random.pick(keys), ascending: random.chance(0.5))
            }
            request.fetchLimit = random.pick([1, 3, 10, 40, 500])
            request.fetchOffset = random.chance(0.7) ? 0 : random.int(in: 1...30)
            // From an empty context the store answers the leading rows already sorted.
            if random.chance(0.7) { for context in sides { context.performAndWait { context.reset() } } }
            let expected = try uids(sides[0], request)
            let actual = try uids(sides[1], request)
            #expect(
                actual == expected,
                Comment(
                    rawValue: "\(request.predicate?.predicateFormat ?? "all") by \(request.sortDescriptors ?? []) "
                        + "limit \(request.fetchLimit) offset \(request.fetchOffset) (\(hint))"))
            if !expected.isEmpty { checked += 1 }
        }
        #expect(checked > 100, "too few queries returned rows (\(hint))")
    }

    /// Rows offered best last, so each replaces the worst kept one: the heap's buffer of
    /// kept bytes fills with replaced rows and is compacted many times over.
    @Test func rowsThatKeepReplacingTheWorstMatchTheInMemoryStore() throws {
        let url = try PageFileFixtures.temporaryURL()
        let sides = try [NSInMemoryStoreType, NSSQLiteStoreType].map { type in
            PageFileFixtures.context(try PageFileFixtures.coordinator(Self.model, url, type: type))
        }
        let padding = String(repeating: "x", count: 200)
        for context in sides {
            try context.performAndWait {
                for uid in Int64(0)..<3_000 {
                    let object = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
                    object.setValue(uid, forKey: "uid")
                    // Unique (one save gives the two stores' keys different orders, so ties
                    // could order differently), descending as rows are inserted.
                    object.setValue("c\(String(format: "%05d", 3_000 - uid))\(padding)", forKey: "code")
                    object.setValue(NSNumber(value: Int16(uid % 7)), forKey: "age")
                    // Keys grow from save to save, whatever order one save gives them.
                    if uid % 100 == 99 { try context.save() }
                }
                context.reset()
            }
        }
        for (keys, limit) in [(["code"], 10), (["code"], 700), (["age", "code"], 25)] {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
            request.sortDescriptors = keys.map { NSSortDescriptor(key: $0, ascending: true) }
            request.fetchLimit = limit
            let expected = try uids(sides[0], request)
            #expect(expected.count == limit)
            #expect(try uids(sides[1], request) == expected, "by \(keys) limit \(limit)")
        }
    }

    @Test func aSortTheHeapCannotDoTakesTheFullPath() throws {
        let url = try PageFileFixtures.temporaryURL()
        let context = PageFileFixtures.context(try PageFileFixtures.coordinator(Self.model, url))
        try context.performAndWait {
            for (uid, name) in ["b", "A", "a", "B", "é", "E"].enumerated() {
                let object = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
                object.setValue(Int64(uid), forKey: "uid")
                object.setValue(name, forKey: "name")
            }
            try context.save()
            context.reset()
            let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
            request.fetchLimit = 4
            request.sortDescriptors = [
                NSSortDescriptor(key: "name", ascending: true, comparison: .caseInsensitiveCompare),
                NSSortDescriptor(key: "uid", ascending: false),
            ]
            let names = try context.fetch(request).compactMap { $0.value(forKey: "name") as? String }
            #expect(names == ["a", "A", "B", "b"])
            request.sortDescriptors = [
                NSSortDescriptor(key: "name", ascending: false) { a, b in
                    "\(a)".count == "\(b)".count
                        ? .orderedSame : ("\(a)".count < "\(b)".count ? .orderedAscending : .orderedDescending)
                }
            ]
            #expect(try context.fetch(request).compactMap { $0.value(forKey: "uid") as? Int64 } == [0, 1, 2, 3])
        }
    }
}
