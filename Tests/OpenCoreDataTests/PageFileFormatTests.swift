// Row format 2 and the compact keys (SPEC.md §3.2, §3.4): number keys keep numeric
// order across integers and doubles, primary keys keep key order and read back from
// an index key's end, rows round-trip every value kind, and a format 1 store is refused.
import Foundation
import StorageEngine
import TestSupport
import Testing

@testable import OpenCoreData

@Suite struct PageFileFormatTests {
    static func numberKey(_ number: Double) -> [UInt8] {
        var bytes: [UInt8] = []
        PageFileKey.appendNumber(number, to: &bytes)
        return bytes
    }

    @Test func numberKeysOrderLikeTheNumbersAndReadBack() {
        var random = SeededRandom(environmentOr: 0x4E_0B5)
        var numbers: [Double] = [
            0, -0.0, 1, -1, 7, 18, 89, 999, -1.4e9, 1e300, -1e300, .infinity, -.infinity, 0.1, -0.1,
            .leastNonzeroMagnitude, -.leastNonzeroMagnitude, 9_007_199_254_740_992, -9_007_199_254_740_992,
            .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
        ]
        for _ in 0..<2_000 {
            numbers.append(Double(Int64(bitPattern: random.next()) >> Int64(random.next() % 60)))
            numbers.append(Double(bitPattern: random.next()))
        }
        numbers.removeAll { $0.isNaN }
        numbers.sort()
        let keys = numbers.map(Self.numberKey)
        for index in keys.indices {
            let decoded = keys[index].withUnsafeBytes { PageFileKey.number(at: $0) }
            #expect(decoded?.value == (numbers[index] == 0 ? 0 : numbers[index]), "\(random.replayHint)")
            #expect(decoded?.length == keys[index].count)
            guard index > 0 else { continue }
            let (lower, upper) = (keys[index - 1], keys[index])
            if numbers[index - 1] == numbers[index] {
                #expect(lower == upper)
            } else {
                // Strictly ordered and prefix-free: a primary key may follow the number.
                #expect(lower.lexicographicallyPrecedes(upper), "\(numbers[index - 1]) < \(numbers[index])")
                #expect(!upper.starts(with: lower), "\(random.replayHint)")
            }
        }
        #expect(Self.numberKey(18).count == 4 && Self.numberKey(-1.4e9).count == 6)
    }

    @Test func primaryKeysOrderLikeTheKeysAndReadBackFromTheEnd() {
        let samples: [Int64] = [
            .min, -65_537, -257, -256, -2, -1, 0, 1, 255, 256, 65_535, 100_000, 1 << 40, .max,
        ]
        let keys = samples.map(PageFileKey.primary)
        for (index, key) in keys.enumerated() {
            #expect(key.withUnsafeBytes { PageFileKey.rowKey($0) } == samples[index])
            // After an index key's values part, it still reads back from the end.
            let entry = Self.numberKey(42) + key
            #expect(entry.withUnsafeBytes { PageFileKey.primaryKey($0) } == samples[index])
            if index > 0 { #expect(keys[index - 1].lexicographicallyPrecedes(key)) }
        }
        #expect(PageFileKey.primary(100_000).count == 5)
        #expect([UInt8]([0x83, 1, 0x83]).withUnsafeBytes { PageFileKey.rowKey($0) } == nil)
        #expect([UInt8]([0x80, 0, 0, 0, 0, 0, 0, 0, 1]).withUnsafeBytes { PageFileKey.rowKey($0) } == nil)
    }

    @Test func rowsRoundTripEveryValueKind() throws {
        let model = PageFileFixtures.goldenModel
        let entity = try #require(model.entitiesByName["Golden"])
        let codec = PageFileRowCodec(entityNamed: { model.entitiesByName[$0] }, makeObjectID: { _, _ in fatalError() })
        let samples: [[StoreValue]] = [
            [
                .string(""), .integer(0), .double(-0.5), .boolean(false),
                .date(Date(timeIntervalSinceReferenceDate: -1)),
            ],
            [.string(String(repeating: "é", count: 40)), .integer(127), .null, .boolean(true), .null],
            [
                .string("x"), .integer(128), .double(.infinity), .null,
                .date(Date(timeIntervalSinceReferenceDate: 0.25)),
            ],
            [.null, .integer(-1), .double(1), .null, .date(Date(timeIntervalSinceReferenceDate: -0.0))],
            [.string("t"), .integer(.min), .double(0), .null, .date(Date(timeIntervalSinceReferenceDate: 1e300))],
        ]
        for values in samples {
            let bytes = PageFileRowCodec.encode(values: values, version: 300, layout: entity.layout)
            let decoded = try bytes.withUnsafeBytes { try codec.decode($0, entity: entity) }
            #expect(decoded.version == 300)
            #expect(decoded.values == values)
        }
        let minusZero = PageFileRowCodec.encode(
            values: [.null, .null, .null, .null, .date(Date(timeIntervalSinceReferenceDate: -0.0))], version: 1,
            layout: entity.layout)
        let date = try minusZero.withUnsafeBytes { try codec.decode($0, entity: entity) }.values[4]
        if case .date(let value) = date { #expect(value.timeIntervalSinceReferenceDate.sign == .minus) }
        // A short string whose bytes run past the row is damage, not a trap.
        #expect(throws: NSError.self) {
            try [UInt8]([1, 0x45, 0x41]).withUnsafeBytes { try codec.decode($0, entity: entity) }
        }
    }

    @Test func aFormatOneStoreIsRefusedWithAClearError() throws {
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = try PageFileFixtures.coordinator(PageFileFixtures.goldenModel, url)
        try PageFileFixtures.close(coordinator)
        let database = try PageFileFixtures.openDatabase(url)
        try database.write { transaction in
            let meta = try transaction.openTree(named: "store.meta")
            var record = try #require(try meta.value(forKey: Array("metadata".utf8)))
            record[0] = 1
            try meta.setValue(record, forKey: Array("metadata".utf8))
        }
        try database.close()
        // Its metadata still reads (the record kept its layout), so an app can inspect it.
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: NSSQLiteStoreType, at: url, options: nil)
        #expect(metadata[NSStoreTypeKey] as? String == NSSQLiteStoreType)
        #expect {
            _ = try PageFileFixtures.coordinator(PageFileFixtures.goldenModel, url)
        } throws: { error in
            let error = error as NSError
            return error.code == NSPersistentStoreIncompatibleVersionHashError
                && error.localizedDescription.contains("format 1")
        }
    }

    /// A saved store whose `store.meta` record `key` is then replaced by `value`.
    static func storeWithMeta(_ key: String, _ value: [UInt8]) throws -> URL {
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = try PageFileFixtures.coordinator(PageFileFixtures.peopleModel, url)
        let context = PageFileFixtures.context(coordinator)
        PageFileFixtures.person(context, "Ada", "Lovelace", 36, "ada@x")
        try context.save()
        try PageFileFixtures.close(coordinator)
        let database = try PageFileFixtures.openDatabase(url)
        try database.write { try $0.openTree(named: "store.meta").setValue(value, forKey: Array(key.utf8)) }
        try database.close()
        return url
    }

    /// A `next-key` near `Int64.max` would overflow the key allocator: it is damage (259).
    @Test(arguments: [Int64.max, Int64.max - 100, 0, -5])
    func anOutOfRangeNextKeyIsRefusedNotTrusted(value: Int64) throws {
        let url = try Self.storeWithMeta("next-key", PageFileKey.sequence(value))
        let error = #expect(throws: NSError.self) {
            let coordinator = try PageFileFixtures.coordinator(PageFileFixtures.peopleModel, url)
            let context = PageFileFixtures.context(coordinator)
            PageFileFixtures.person(context, "Grace", "Hopper", 40, "grace@x")
            try context.save()
        }
        #expect(error?.code == NSFileReadCorruptFileError, "\(String(describing: error))")
    }

    /// The catalog record's bytes for the people model (SPEC.md §3.1): its lines, sorted,
    /// with one to-one line per to-one with an inverse (T8) and the line saying the file
    /// maintains the indexes listed (T3).
    @Test func catalogRecordIsPinned() throws {
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = try PageFileFixtures.coordinator(PageFileFixtures.peopleModel, url)
        try PageFileFixtures.close(coordinator)
        let database = try PageFileFixtures.openDatabase(url)
        defer { try? database.close() }
        let catalog = try database.read { transaction in
            try transaction.tree(named: "store.meta")?.value(forKey: Array("index-catalog".utf8)) ?? []
        }
        let expected = [
            "index-catalog\tmaintained\t1", "index.Person.age\tindex\t2", "index.Person.byName\tindex\t1,0",
            "rel.Person.team\treference\t4",
            "rows.Person\tto-one\t4|rows.Team", "unique.Person.email\tunique\t3",
        ].joined(separator: "\n")
        #expect(String(decoding: catalog, as: UTF8.self) == expected)
        #expect(catalog == Array(expected.utf8))
    }

    /// A damaged to-one line is reported by verify(), never trusted.
    @Test func aDamagedToOneLineIsReported() throws {
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = try PageFileFixtures.coordinator(PageFileFixtures.peopleModel, url)
        try PageFileFixtures.close(coordinator)
        let database = try PageFileFixtures.openDatabase(url)
        try database.write {
            let meta = try $0.openTree(named: "store.meta")
            let text = String(decoding: try meta.value(forKey: Array("index-catalog".utf8)) ?? [], as: UTF8.self)
            let damaged = text.replacingOccurrences(of: "\tto-one\t4|rows.Team", with: "\tto-one\tx|rows.Team")
            #expect(damaged != text)
            try meta.setValue(Array(damaged.utf8), forKey: Array("index-catalog".utf8))
        }
        try database.close()
        let report = try PageFileStore.verify(at: url)
        #expect(
            report.problems.contains { $0.contains("a to-one line of rows.Person is damaged") }, "\(report.problems)")
    }

    /// A catalog line naming a negative slot is reported by verify(), never used as an index.
    @Test func aCatalogSlotThatIsNotOneIsReported() throws {
        let url = try PageFileFixtures.temporaryURL()
        do {
            let coordinator = try PageFileFixtures.coordinator(PageFileFixtures.peopleModel, url)
            let context = PageFileFixtures.context(coordinator)
            PageFileFixtures.person(context, "Ada", "Lovelace", 36, "ada@x")
            try context.save()
            try PageFileFixtures.close(coordinator)
        }
        let database = try PageFileFixtures.openDatabase(url)
        let catalog = try database.read { transaction in
            try transaction.tree(named: "store.meta")?.value(forKey: Array("index-catalog".utf8)) ?? []
        }
        let text = String(decoding: catalog, as: UTF8.self)
        let damaged = text.split(separator: "\n").map { line -> String in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count == 3, fields[1] == "index" else { return String(line) }
            return "\(fields[0])\t\(fields[1])\t-1"
        }
        #expect(damaged.joined(separator: "\n") != text, "the people model has an ordinary index")
        try database.write {
            try $0.openTree(named: "store.meta").setValue(
                Array(damaged.joined(separator: "\n").utf8), forKey: Array("index-catalog".utf8))
        }
        try database.close()
        let report = try PageFileStore.verify(at: url)
        #expect(report.problems.contains { $0.contains("names a slot that is not one") }, "\(report.problems)")
    }
}
