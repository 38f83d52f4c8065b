// Batch inserts of an entity without unique indexes or blobs, which the default store
// writes on its shortest path (PageFileWriter+BatchInsert.swift): each row filled into one
// reused row, encoded into a chunk buffer, its index entries kept flat and written sorted.
// Checked against the same objects made with save(), on every store.
import Foundation
import OpenCoreData
import Testing

@Suite struct BatchPlainRowTests {
    /// Entry: title (indexed), rank (Int32, indexed, default 7), weight, done (default
    /// true), memo; a to-many to Mark kept outside the row. No uniqueness constraint.
    static let model: NSManagedObjectModel = {
        let entry = NSEntityDescription()
        entry.name = "Entry"
        let mark = NSEntityDescription()
        mark.name = "Mark"
        let marks = BatchFixtures.relationship("marks", to: mark, toMany: true)
        let owner = BatchFixtures.relationship("owner", to: entry, toMany: false)
        BatchFixtures.pair(marks, owner)
        entry.properties = [
            BatchFixtures.attribute("title", .stringAttributeType, optional: false, indexed: true),
            BatchFixtures.attribute("rank", .integer32AttributeType, optional: false, defaultValue: 7, indexed: true),
            BatchFixtures.attribute("weight", .doubleAttributeType),
            BatchFixtures.attribute("done", .booleanAttributeType, optional: false, defaultValue: true),
            BatchFixtures.attribute("memo", .stringAttributeType),
            marks,
        ]
        mark.properties = [BatchFixtures.attribute("word", .stringAttributeType), owner]
        let model = NSManagedObjectModel()
        model.entities = [entry, mark]
        return model
    }()

    /// Row `index`: every third omits `rank` (its default), every other gives `memo`, every
    /// fifth gives `done`, so a row never keeps a value the row before it was given.
    static func row(_ index: Int) -> [String: Any] {
        var row: [String: Any] = ["title": "T\((index * 7_919) % 10_007)", "weight": Double(index) / 8]
        if index % 3 != 0 { row["rank"] = Int32((index * 31) % 97) }
        if index % 2 == 0 { row["memo"] = "m\(index)" }
        if index % 5 == 0 { row["done"] = false }
        return row
    }

    /// Every Entry as text, sorted by title and weight (keys may differ between the sides).
    static func entries(_ coordinator: NSPersistentStoreCoordinator) throws -> [String] {
        let reader = BatchFixtures.context(coordinator)
        return try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Entry")).map { object in
            ["title", "rank", "weight", "done", "memo"].map { "\($0)=\(object.value(forKey: $0) ?? "nil")" }
                .joined(separator: " ")
                + " marks=\((object.value(forKey: "marks") as? Set<NSManagedObject>)?.count ?? -1)"
        }.sorted()
    }

    /// The entries of `count` rows saved as objects in a new store of `storeType`.
    static func savedEntries(_ storeType: String, count: Int) throws -> [String] {
        let saved = try BatchFixtures.coordinator(storeType, model: model)
        let context = BatchFixtures.context(saved)
        for index in 0..<count { _ = BatchFixtures.object("Entry", context, row(index)) }
        try context.save()
        return try entries(saved)
    }

    @Test(arguments: BatchFixtures.storeTypes)
    func rowsAcrossChunksMatchObjectSaves(storeType: String) throws {
        let total = 9_000
        let batched = try BatchFixtures.coordinator(storeType, model: Self.model)
        let context = BatchFixtures.context(batched)
        let request = NSBatchInsertRequest(entityName: "Entry", objects: (0..<total).map(Self.row))
        request.resultType = .objectIDs
        let ids = try #require((try context.execute(request) as? NSBatchInsertResult)?.result as? [NSManagedObjectID])
        #expect(ids.count == total && Set(ids).count == total)
        #expect(try Self.entries(batched) == Self.savedEntries(storeType, count: total))
        // The IDs come in the order of the objects.
        let fifth = try context.existingObject(with: ids[5])
        #expect(fifth.value(forKey: "title") as? String == Self.row(5)["title"] as? String)
        #expect(fifth.value(forKey: "done") as? Bool == false && fifth.value(forKey: "memo") == nil)
        #expect(fifth.value(forKey: "rank") as? Int32 == 58)
        // The indexes find every row (their entries were written sorted).
        for (format, expected) in [
            ("rank == 7", (0..<total).filter { $0 % 3 == 0 || ($0 * 31) % 97 == 7 }.count),
            ("rank >= 90", (0..<total).filter { $0 % 3 != 0 && ($0 * 31) % 97 >= 90 }.count),
            ("title BEGINSWITH 'T99'", (0..<total).filter { "\(($0 * 7_919) % 10_007)".hasPrefix("99") }.count),
        ] {
            #expect(try BatchFixtures.fetch("Entry", context, format).count == expected, "\(format)")
        }
        try BatchFixtures.verify(batched)
    }

    @Test(arguments: BatchFixtures.storeTypes)
    func handlerRowsTakeTheirOwnValuesOrTheDefaults(storeType: String) throws {
        let coordinator = try BatchFixtures.coordinator(storeType, model: Self.model)
        let context = BatchFixtures.context(coordinator)
        var next = 0
        let request = NSBatchInsertRequest(entityName: "Entry") { (dictionary: NSMutableDictionary) -> Bool in
            guard next < 40 else { return true }
            for (key, value) in Self.row(next) {
                // Numbers as a handler usually gives them.
                if let rank = value as? Int32 {
                    dictionary[key] = NSNumber(value: rank)
                } else if let weight = value as? Double {
                    dictionary[key] = NSNumber(value: weight)
                } else {
                    dictionary[key] = value
                }
            }
            next += 1
            return false
        }
        try context.execute(request)
        #expect(try Self.entries(coordinator) == Self.savedEntries(storeType, count: 40))
        try BatchFixtures.verify(coordinator)
    }
}
