// Indexes and uniqueness constraints are not in the version hashes, so a store opens with
// models that differ only in them (SPEC.md §3.1 T3). A model without an index does not
// maintain it; reopening with the index again must not answer fetches from the stale
// tree: the catalog record says which indexes the file maintains, a writable open frees
// the ones its model dropped and rebuilds the ones the record does not vouch for, and a
// read-only open scans instead of planning on an unvouched index.
import Foundation
import StorageEngine
import TestSupport
import Testing

@testable import OpenCoreData

@Suite struct IndexReconcileTests {
    /// Item: name, score (indexed), email (unique) and the compound index byNameScore;
    /// without `indexed` the same entity (same version hashes) with none of them.
    static func model(indexed: Bool) -> NSManagedObjectModel {
        let item = NSEntityDescription()
        item.name = "Item"
        let name = PageFileFixtures.attribute("name", .stringAttributeType)
        let score = PageFileFixtures.attribute("score", .integer32AttributeType, indexed: indexed)
        item.properties = [name, score, PageFileFixtures.attribute("email", .stringAttributeType)]
        if indexed {
            item.uniquenessConstraints = [["email"]]
            item.indexes = [
                NSFetchIndexDescription(
                    name: "byNameScore",
                    elements: [
                        NSFetchIndexElementDescription(property: name, collationType: .binary),
                        NSFetchIndexElementDescription(property: score, collationType: .binary),
                    ])
            ]
        }
        let model = NSManagedObjectModel()
        model.entities = [item]
        return model
    }

    static func coordinator(_ model: NSManagedObjectModel, _ url: URL, readOnly: Bool = false) throws
        -> NSPersistentStoreCoordinator
    {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: url,
            options: [PageFileStoreDurabilityOption: "off", NSReadOnlyPersistentStoreOption: readOnly])
        return coordinator
    }

    static func items(_ context: NSManagedObjectContext) throws -> [NSManagedObject] {
        try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item"))
    }

    static func insert(_ context: NSManagedObjectContext, _ name: String, _ score: Int32, _ email: String?) {
        let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
        item.setValue(name, forKey: "name")
        item.setValue(score, forKey: "score")
        item.setValue(email, forKey: "email")
    }

    /// The fetches planned on `score` and `byNameScore` equal a scan oracle (every row,
    /// filtered here), and the store plans them as `planned` says.
    static func expectFetchesMatchTheOracle(
        _ coordinator: NSPersistentStoreCoordinator, planned: Bool, _ note: String
    ) throws {
        let context = PageFileFixtures.context(coordinator)
        let all = try items(context).map {
            (name: $0.value(forKey: "name") as? String ?? "", score: ($0.value(forKey: "score") as? Int32) ?? -1)
        }
        let store = try #require(coordinator.persistentStores.first as? PageFileStore)
        for (format, index, oracle) in [
            (
                "score >= 5 AND score < 30", "index.Item.score",
                { (row: (name: String, score: Int32)) in
                    row.score >= 5 && row.score < 30
                }
            ),
            ("name == 'n7' AND score > 0", "index.Item.byNameScore", { $0.name == "n7" && $0.score > 0 }),
        ] as [(String, String, ((name: String, score: Int32)) -> Bool)] {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
            request.predicate = OpenCoreData.NSPredicate(format: format)
            let found = try context.fetch(request).map { "\($0.value(forKey: "name") ?? "")" }.sorted()
            #expect(found == all.filter(oracle).map(\.name).sorted(), "\(note): \(format)")
            let planRequest = NSFetchRequest<NSFetchRequestResult>(entityName: "Item")
            planRequest.entity = coordinator.managedObjectModel.entitiesByName["Item"]
            planRequest.predicate = request.predicate
            let plan = store.describePlan(for: planRequest)
            #expect(plan.contains("index \(index)") == planned, "\(note): \(format): \(plan)")
        }
    }

    /// A closed store of 20 items (score and email 0 ..< 20) saved with the indexes.
    static func indexedStore() throws -> URL {
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = try coordinator(model(indexed: true), url)
        let context = PageFileFixtures.context(coordinator)
        for number in 0..<20 { insert(context, "n\(number)", Int32(number), "e\(number)@x") }
        try context.save()
        try PageFileFixtures.close(coordinator)
        return url
    }

    /// Opens the store at `url` with the indexed model read-only (fetches scan and match
    /// the oracle), then writable (they use the rebuilt indexes, and verify() is clean).
    static func reopenWithTheIndexes(_ url: URL, _ note: String) throws -> NSPersistentStoreCoordinator {
        let readOnly = try coordinator(model(indexed: true), url, readOnly: true)
        try expectFetchesMatchTheOracle(readOnly, planned: false, "read-only, \(note)")
        try PageFileFixtures.close(readOnly)
        let coordinator = try coordinator(model(indexed: true), url)
        try expectFetchesMatchTheOracle(coordinator, planned: true, "rebuilt, \(note)")
        let store = try #require(coordinator.persistentStores.first as? PageFileStore)
        let report = try store.verify()
        #expect(report.isClean, "\(note): \(report.problems)")
        return coordinator
    }

    static func storedCatalog(_ url: URL) throws -> String {
        let database = try PageFileFixtures.openDatabase(url)
        defer { try? database.close() }
        return try database.read { transaction in
            String(
                decoding: try transaction.tree(named: "store.meta")?.value(forKey: Array("index-catalog".utf8)) ?? [],
                as: UTF8.self)
        }
    }

    /// Saved with the indexes, changed without them, reopened with them: fetches (read-only
    /// and writable), uniqueness and verify() see the rows, not the stale trees.
    @Test func indexesDroppedAndAddedAgainAreRebuiltNotTrusted() throws {
        let url = try Self.indexedStore()
        do {
            let coordinator = try Self.coordinator(Self.model(indexed: false), url)
            let context = PageFileFixtures.context(coordinator)
            for item in try Self.items(context) {
                let score = item.value(forKey: "score") as? Int32 ?? 0
                if score % 3 == 0 {
                    context.delete(item)
                } else if score % 3 == 1 {
                    item.setValue(score + 100, forKey: "score")
                    item.setValue("moved\(score)@x", forKey: "email")
                }
            }
            for number in 20..<26 { Self.insert(context, "n\(number)", Int32(number - 15), "e\(number)@x") }
            // A value another row held under the constraint, legal without it.
            Self.insert(context, "n7", 12, "e0@x")
            try context.save()
            try PageFileFixtures.close(coordinator)
        }
        // The file maintains none of the dropped indexes: no tree, no line.
        let catalog = try Self.storedCatalog(url)
        #expect(!catalog.contains("index.Item.score") && !catalog.contains("unique.Item.email"), "\(catalog)")
        #expect(catalog.contains(PageFileCatalog.maintainedLine), "\(catalog)")
        let coordinator = try Self.reopenWithTheIndexes(url, "dropped and re-added")
        // The unique tree holds today's owners: a freed value is free, a taken one is taken.
        let context = PageFileFixtures.context(coordinator)
        Self.insert(context, "again", 1, "e3@x")
        try context.save()
        Self.insert(context, "clash", 1, "e21@x")
        #expect(throws: NSError.self) { try context.save() }
        try PageFileFixtures.close(coordinator)
    }

    /// Element indexes (`spot.geo.lat`) follow the same rule.
    @Test func elementIndexesDroppedAndAddedAgainAreRebuilt() throws {
        let url = try PageFileFixtures.temporaryURL()
        func lats(_ coordinator: NSPersistentStoreCoordinator) throws -> (found: [String], oracle: [String]) {
            let context = PageFileFixtures.context(coordinator)
            let all = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Place"))
            let oracle = all.filter {
                let spot = $0.value(forKey: "spot") as? [String: Any]
                return ((spot?["geo"] as? [String: Any])?["lat"] as? Double ?? 0) > 62
            }
            let found = try CompositeElementIndexTests.names(context, "spot.geo.lat > 62")
            return (found, oracle.compactMap { $0.value(forKey: "name") as? String }.sorted())
        }
        do {
            let coordinator = try Self.coordinator(try CompositeElementIndexTests.indexedModel(), url)
            let context = PageFileFixtures.context(coordinator)
            for number in 0..<12 {
                let place = NSEntityDescription.insertNewObject(forEntityName: "Place", into: context)
                place.setValue("p\(number)", forKey: "name")
                place.setValue(
                    CompositeElementIndexTests.spot(city: "Oslo", rank: 1, lat: 58 + Double(number)), forKey: "spot")
            }
            try context.save()
            try PageFileFixtures.close(coordinator)
        }
        do {
            let coordinator = try Self.coordinator(CompositeAttributeTests.model(), url)
            let context = PageFileFixtures.context(coordinator)
            for place in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Place")) {
                let name = place.value(forKey: "name") as? String ?? ""
                if name.hasSuffix("1") {
                    context.delete(place)
                } else {
                    place.setValue(CompositeElementIndexTests.spot(city: "Oslo", rank: 1, lat: 50), forKey: "spot")
                }
            }
            try context.save()
            try PageFileFixtures.close(coordinator)
        }
        let coordinator = try Self.coordinator(try CompositeElementIndexTests.indexedModel(), url)
        let (found, oracle) = try lats(coordinator)
        #expect(found == oracle)
        let store = try #require(coordinator.persistentStores.first as? PageFileStore)
        #expect(try store.verify().isClean)
        try PageFileFixtures.close(coordinator)
    }

    /// A record written before the `maintained` line vouches for no index: read-only opens
    /// scan, the first writable open rebuilds every index from the rows.
    @Test func aRecordWithoutTheMaintainedLineIsNotTrusted() throws {
        let url = try Self.indexedStore()
        // An older build's record, and a score index it let go stale (an entry per row lost).
        let database = try PageFileFixtures.openDatabase(url)
        try database.write { transaction in
            let meta = try transaction.openTree(named: "store.meta")
            let text = String(decoding: try meta.value(forKey: Array("index-catalog".utf8)) ?? [], as: UTF8.self)
            let old = text.split(separator: "\n").filter { $0 != PageFileCatalog.maintainedLine }
            try meta.setValue(Array(old.joined(separator: "\n").utf8), forKey: Array("index-catalog".utf8))
            let index = try #require(try transaction.tree(named: "index.Item.score"))
            var keys: [[UInt8]] = []
            try index.scan { key, _ in
                keys.append(Array(key))
                return keys.count < 8
            }
            for key in keys { _ = try index.removeValue(forKey: key) }
        }
        try database.close()
        let coordinator = try Self.reopenWithTheIndexes(url, "older record")
        try PageFileFixtures.close(coordinator)
        #expect(try Self.storedCatalog(url).contains(PageFileCatalog.maintainedLine))
    }

    /// Rows that break a constraint the reopening model adds refuse the open (134111) and
    /// leave the file as it was.
    @Test func aConstraintTheRowsBreakRefusesTheOpen() throws {
        let url = try PageFileFixtures.temporaryURL()
        do {
            let coordinator = try Self.coordinator(Self.model(indexed: false), url)
            let context = PageFileFixtures.context(coordinator)
            Self.insert(context, "a", 1, "same@x")
            Self.insert(context, "b", 2, "same@x")
            try context.save()
            try PageFileFixtures.close(coordinator)
        }
        let before = try Self.storedCatalog(url)
        let error = #expect(throws: NSError.self) { _ = try Self.coordinator(Self.model(indexed: true), url) }
        #expect(error?.code == NSMigrationConstraintViolationError, "\(String(describing: error))")
        #expect(try Self.storedCatalog(url) == before)
        let coordinator = try Self.coordinator(Self.model(indexed: false), url)
        #expect(try Self.items(PageFileFixtures.context(coordinator)).count == 2)
        try PageFileFixtures.close(coordinator)
    }

    /// Two coordinators of one process whose models differ in indexes cannot share a file:
    /// the second would leave the first's indexes stale.
    @Test func aSecondCoordinatorWithOtherIndexesIsRefused() throws {
        let url = try PageFileFixtures.temporaryURL()
        let first = try Self.coordinator(Self.model(indexed: true), url)
        let error = #expect(throws: NSError.self) { _ = try Self.coordinator(Self.model(indexed: false), url) }
        #expect(error?.code == NSPersistentStoreOpenError, "\(String(describing: error))")
        let same = try Self.coordinator(Self.model(indexed: true), url)
        try PageFileFixtures.close(same)
        try PageFileFixtures.close(first)
    }
}

extension IndexReconcileTests {
    /// A binary attribute allowing external storage, indexed or not (same version hashes).
    static func photoModel(indexed: Bool) -> NSManagedObjectModel {
        let item = NSEntityDescription()
        item.name = "Item"
        let photo = PageFileFixtures.attribute("photo", .binaryDataAttributeType, indexed: indexed)
        photo.allowsExternalBinaryDataStorage = true
        item.properties = [PageFileFixtures.attribute("name", .stringAttributeType), photo]
        let model = NSManagedObjectModel()
        model.entities = [item]
        return model
    }

    /// A value the file keeps outside its row stays readable when the attribute becomes
    /// indexed (indexed values live in the row): the open brings it back into the row.
    @Test func anExternalValueOfANewlyIndexedAttributeStaysReadable() throws {
        let url = try PageFileFixtures.temporaryURL()
        let photo = Data((0..<(100 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        do {
            let coordinator = try Self.coordinator(Self.photoModel(indexed: false), url)
            let context = PageFileFixtures.context(coordinator)
            let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
            item.setValue("big", forKey: "name")
            item.setValue(photo, forKey: "photo")
            try context.save()
            try PageFileFixtures.close(coordinator)
        }
        do {
            let readOnly = try Self.coordinator(Self.photoModel(indexed: true), url, readOnly: true)
            let readOnlyContext = PageFileFixtures.context(readOnly)
            let items = try Self.items(readOnlyContext)
            #expect(items.first?.value(forKey: "photo") as? Data == photo, "read-only")
            try PageFileFixtures.close(readOnly)
        }
        let coordinator = try Self.coordinator(Self.photoModel(indexed: true), url)
        let context = PageFileFixtures.context(coordinator)
        let items = try Self.items(context)
        #expect(items.first?.value(forKey: "photo") as? Data == photo)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
        request.predicate = OpenCoreData.NSPredicate(format: "photo == %@", photo as NSData)
        #expect(try context.fetch(request).count == 1)
        let store = try #require(coordinator.persistentStores.first as? PageFileStore)
        let report = try store.verify()
        #expect(report.isClean, "\(report.problems)")
        try PageFileFixtures.close(coordinator)
        let blobs = try PageFileFixtures.openDatabase(url)
        #expect(try blobs.read { try $0.tree(named: "blobs")?.count ?? 0 } == 0, "the value is back in its row")
        try blobs.close()
    }
}
