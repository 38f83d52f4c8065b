// allowsExternalBinaryDataStorage on the default store (SPEC.md §3.8): large values live
// in the `blobs` tree, rows keep a reference, updates and deletes free old blobs in the
// same transaction, counts and scans do not read blobs, verify() checks both directions,
// migration keeps them. The in-memory and binary stores keep the Data as it is.
import Foundation
import OpenCoreData
import StorageEngine
import TestSupport
import Testing

enum BlobFixtures {
    /// Photo: title (unique), data (external storage allowed), thumbnail (inline).
    static func makeModel(extra: Bool = false, keepsData: Bool = true) -> NSManagedObjectModel {
        let photo = NSEntityDescription()
        photo.name = "Photo"
        let data = PageFileFixtures.attribute("data", .binaryDataAttributeType)
        data.allowsExternalBinaryDataStorage = true
        photo.properties =
            [PageFileFixtures.attribute("title", .stringAttributeType)] + (keepsData ? [data] : [])
            + [PageFileFixtures.attribute("thumbnail", .binaryDataAttributeType)]
            + (extra ? [PageFileFixtures.attribute("caption", .stringAttributeType)] : [])
        photo.uniquenessConstraints = [["title"]]
        let model = NSManagedObjectModel()
        model.entities = [photo]
        return model
    }

    static let model = makeModel()

    static func bytes(_ random: inout SeededRandom, _ count: Int) -> Data { Data(random.bytes(count)) }

    @discardableResult
    static func photo(_ context: NSManagedObjectContext, _ title: String, _ data: Data?, thumbnail: Data? = nil)
        -> NSManagedObject
    {
        let photo = NSEntityDescription.insertNewObject(forEntityName: "Photo", into: context)
        photo.setValue(title, forKey: "title")
        photo.setValue(data, forKey: "data")
        photo.setValue(thumbnail, forKey: "thumbnail")
        return photo
    }

    static func fetch(_ context: NSManagedObjectContext, _ title: String) throws -> NSManagedObject? {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Photo")
        request.predicate = NSPredicate(format: "title == %@", title)
        return try context.fetch(request).first
    }

    static func store(_ coordinator: NSPersistentStoreCoordinator) throws -> PageFileStore {
        guard let store = coordinator.persistentStores.first as? PageFileStore else {
            throw NSError(domain: NSCocoaErrorDomain, code: NSCoreDataError)
        }
        return store
    }

    /// Entries of the blob tree of the (closed) store at `url`.
    static func blobEntries(_ url: URL) throws -> [(key: [UInt8], value: [UInt8])] {
        let database = try PageFileFixtures.openDatabase(url)
        defer { try? database.close() }
        return try database.read { try $0.tree(named: "blobs")?.entries() ?? [] }
    }
}

@Suite struct ExternalBinaryStorageTests {
    @Test func largeValuesLeaveTheRowAndSurviveReopening() throws {
        var random = SeededRandom(environmentOr: 0xB10B_0001)
        let url = try PageFileFixtures.temporaryURL()
        let big = BlobFixtures.bytes(&random, 600_000)
        let small = BlobFixtures.bytes(&random, 300)
        let threshold = BlobFixtures.bytes(&random, 64 * 1024)
        let inlineBig = BlobFixtures.bytes(&random, 100_000)
        do {
            let coordinator = try PageFileFixtures.coordinator(BlobFixtures.model, url)
            let context = PageFileFixtures.context(coordinator)
            BlobFixtures.photo(context, "big", big)
            BlobFixtures.photo(context, "small", small)
            BlobFixtures.photo(context, "threshold", threshold)
            BlobFixtures.photo(context, "none", nil, thumbnail: inlineBig)
            try context.save()
            #expect(try BlobFixtures.store(coordinator).verify().isClean, "seed \(random.replayHint)")
            try PageFileFixtures.close(coordinator)
        }
        let entries = try BlobFixtures.blobEntries(url)
        // One header and three 256 KiB chunks, for the one value above the threshold only.
        #expect(entries.count == 4)
        let database = try PageFileFixtures.openDatabase(url)
        let rowSizes = try database.read { transaction in
            try transaction.tree(named: "rows.Photo")?.entries().map(\.value.count) ?? []
        }
        try database.close()
        #expect(rowSizes.count == 4)
        #expect(rowSizes.filter { $0 > 100_000 }.count == 1)  // the inline thumbnail's row
        #expect(rowSizes.filter { $0 < 200 }.count == 1)  // "big": a reference only

        let coordinator = try PageFileFixtures.coordinator(BlobFixtures.model, url)
        let context = PageFileFixtures.context(coordinator)
        #expect(try BlobFixtures.fetch(context, "big")?.value(forKey: "data") as? Data == big)
        #expect(try BlobFixtures.fetch(context, "none")?.value(forKey: "thumbnail") as? Data == inlineBig)
        #expect(try BlobFixtures.fetch(context, "small")?.value(forKey: "data") as? Data == small)
        #expect(try BlobFixtures.fetch(context, "threshold")?.value(forKey: "data") as? Data == threshold)
        #expect(try BlobFixtures.fetch(context, "none")?.value(forKey: "data") == nil)
        // A predicate reading the attribute sees the values, not the references.
        let request = NSFetchRequest<NSManagedObject>(entityName: "Photo")
        request.predicate = NSPredicate(format: "data != nil AND data == %@", big as NSData)
        #expect(try context.fetch(request).map { $0.value(forKey: "title") as? String } == ["big"])
        #expect(try context.count(for: request) == 1)
        try PageFileFixtures.close(coordinator)
    }

    @Test func rowReferenceAndBlobBytesArePinned() throws {
        let url = try PageFileFixtures.temporaryURL()
        let value = Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0 * 7) })
        do {
            let coordinator = try PageFileFixtures.coordinator(BlobFixtures.model, url)
            let context = PageFileFixtures.context(coordinator)
            BlobFixtures.photo(context, "a", value)
            try context.save()
            try PageFileFixtures.close(coordinator)
        }
        let database = try PageFileFixtures.openDatabase(url)
        let rows = try database.read { try $0.tree(named: "rows.Photo")?.entries() ?? [] }
        try database.close()
        let primary: [UInt8] = [0x81, 1, 0x81]
        #expect(rows.map(\.key) == [primary])
        // Row format 2: version 1, title "a" (short string tag 0x41), data external (tag 14),
        // thumbnail nil.
        #expect(rows.first?.value == [1, 0x41, 0x61, 14, 0])
        let blobs = try BlobFixtures.blobEntries(url)
        let prefix = primary + Array("data".utf8) + [0]
        #expect(blobs.map(\.key) == [prefix + [0, 0, 0, 0], prefix + [0, 0, 0, 1]])
        let checksum = StorageChecksum.xxh64([UInt8](value))
        let header: [UInt8] =
            [1, 0x70, 0x11, 0x01, 0, 0, 0, 0, 0] + (0..<8).map { UInt8(truncatingIfNeeded: checksum >> ($0 * 8)) }
        #expect(blobs.first?.value == header)
        #expect(blobs.last?.value == [UInt8](value))
    }

    @Test func updatesAndDeletesFreeOldBlobsAndFailedSavesKeepThem() throws {
        var random = SeededRandom(environmentOr: 0xB10B_0002)
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = try PageFileFixtures.coordinator(BlobFixtures.model, url)
        let store = try BlobFixtures.store(coordinator)
        let context = PageFileFixtures.context(coordinator)
        let first = BlobFixtures.bytes(&random, 200_000)
        let photo = BlobFixtures.photo(context, "a", first)
        let other = BlobFixtures.photo(context, "b", BlobFixtures.bytes(&random, 90_000))
        try context.save()
        func expectClean() throws {
            // verify() walks the blob tree: a blob not freed, or freed too early, is a problem.
            let report = try store.verify()
            #expect(report.isClean, "\(report.problems) \(random.replayHint)")
        }
        try expectClean()

        // big -> big, big -> small, small -> big, big -> nil; each checked after a reopen-free refetch.
        let steps: [Data?] = [
            BlobFixtures.bytes(&random, 300_000), BlobFixtures.bytes(&random, 10), BlobFixtures.bytes(&random, 70_000),
            nil, BlobFixtures.bytes(&random, 65_537),
        ]
        for value in steps {
            photo.setValue(value, forKey: "data")
            try context.save()
            let reader = PageFileFixtures.context(coordinator)
            #expect(
                try BlobFixtures.fetch(reader, "a")?.value(forKey: "data") as? Data == value, "\(random.replayHint)")
            try expectClean()
        }
        // Changing another attribute keeps the blob without rewriting it.
        photo.setValue(Data([1, 2, 3]), forKey: "thumbnail")
        try context.save()
        let afterThumbnail = PageFileFixtures.context(coordinator)
        #expect(try BlobFixtures.fetch(afterThumbnail, "a")?.value(forKey: "data") as? Data == steps.last ?? nil)

        // A save that fails (a uniqueness clash) commits none of its blobs.
        let kept = photo.value(forKey: "data") as? Data
        photo.setValue(BlobFixtures.bytes(&random, 150_000), forKey: "data")
        BlobFixtures.photo(context, "b", BlobFixtures.bytes(&random, 120_000))
        #expect(throws: NSError.self) { try context.save() }
        context.rollback()
        let afterRollback = PageFileFixtures.context(coordinator)
        #expect(try BlobFixtures.fetch(afterRollback, "a")?.value(forKey: "data") as? Data == kept)
        try expectClean()

        context.delete(photo)
        context.delete(other)
        try context.save()
        try PageFileFixtures.close(coordinator)
        #expect(try BlobFixtures.blobEntries(url).isEmpty)
    }

    @Test func deletesUnderHistoryTrackingFreeTheirBlobs() throws {
        // A tracked delete reads the row's blobs for its tombstone; the blobs must still go.
        var random = SeededRandom(environmentOr: 0xB10B_000A)
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: BlobFixtures.model)
        try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: url,
            options: [PageFileStoreDurabilityOption: "off", NSPersistentHistoryTrackingKey: true])
        let store = try BlobFixtures.store(coordinator)
        let context = PageFileFixtures.context(coordinator)
        let big = BlobFixtures.bytes(&random, 100_000)
        let photo = BlobFixtures.photo(context, "a", big, thumbnail: BlobFixtures.bytes(&random, 10))
        try context.save()
        context.delete(photo)
        try context.save()
        let report = try store.verify()
        #expect(report.isClean, "\(report.problems) \(random.replayHint)")
        try PageFileFixtures.close(coordinator)
        #expect(try BlobFixtures.blobEntries(url).isEmpty)
    }

    @Test func countsScansAndIDFetchesDoNotReadBlobs() throws {
        var random = SeededRandom(environmentOr: 0xB10B_0003)
        let url = try PageFileFixtures.temporaryURL()
        do {
            let coordinator = try PageFileFixtures.coordinator(BlobFixtures.model, url)
            let context = PageFileFixtures.context(coordinator)
            for index in 0..<3 { BlobFixtures.photo(context, "p\(index)", BlobFixtures.bytes(&random, 80_000)) }
            try context.save()
            try PageFileFixtures.close(coordinator)
        }
        // Damage every blob: drop its first chunk.
        let database = try PageFileFixtures.openDatabase(url)
        try database.write { transaction in
            let blobs = try transaction.openTree(named: "blobs")
            for entry in try blobs.entries() where entry.key.last == 1 { _ = try blobs.removeValue(forKey: entry.key) }
        }
        try database.close()

        let coordinator = try PageFileFixtures.coordinator(BlobFixtures.model, url)
        let context = PageFileFixtures.context(coordinator)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Photo")
        request.predicate = NSPredicate(format: "title BEGINSWITH[c] 'p'")  // not sargable: a scan
        #expect(try context.count(for: request) == 3)
        let ids = NSFetchRequest<NSManagedObjectID>(entityName: "Photo")
        ids.resultType = .managedObjectIDResultType
        ids.predicate = request.predicate
        #expect(try context.fetch(ids).count == 3)
        // Materialising a row reads its blob: the damage is reported, never trusted.
        let error = #expect(throws: NSError.self) { _ = try context.fetch(request) }
        #expect(error?.code == NSFileReadCorruptFileError)
        let report = try BlobFixtures.store(coordinator).verify()
        #expect(report.problems.contains { $0.contains("wrong length") }, "\(report.problems)")
        try PageFileFixtures.close(coordinator)
    }

    @Test func verifyCatchesOrphanAndMissingBlobs() throws {
        var random = SeededRandom(environmentOr: 0xB10B_0004)
        let url = try PageFileFixtures.temporaryURL()
        do {
            let coordinator = try PageFileFixtures.coordinator(BlobFixtures.model, url)
            let context = PageFileFixtures.context(coordinator)
            BlobFixtures.photo(context, "a", BlobFixtures.bytes(&random, 70_000))
            BlobFixtures.photo(context, "b", BlobFixtures.bytes(&random, 70_000))
            try context.save()
            try PageFileFixtures.close(coordinator)
        }
        #expect(try PageFileStore.verify(at: url).isClean)
        let entries = try BlobFixtures.blobEntries(url)
        #expect(entries.count == 4)
        let database = try PageFileFixtures.openDatabase(url)
        try database.write { transaction in
            let blobs = try transaction.openTree(named: "blobs")
            // Remove the first blob (header and chunk); copy the second under a key no row has.
            for entry in entries.prefix(2) { _ = try blobs.removeValue(forKey: entry.key) }
            for entry in entries.suffix(2) {
                var key = entry.key
                key[1] ^= 0x40  // the primary key (K1) of a row that does not exist
                try blobs.setValue(entry.value, forKey: key)
            }
        }
        try database.close()
        let report = try PageFileStore.verify(at: url)
        #expect(!report.isClean)
        #expect(report.problems.contains { $0.contains("referenced but missing") }, "\(report.problems)")
        #expect(report.problems.contains { $0.contains("without a row") }, "\(report.problems)")
    }

    @Test func migrationKeepsBlobsAndDropsThoseOfRemovedAttributes() throws {
        var random = SeededRandom(environmentOr: 0xB10B_0005)
        let url = try PageFileFixtures.temporaryURL()
        let big = BlobFixtures.bytes(&random, 100_000)
        do {
            let coordinator = try PageFileFixtures.coordinator(BlobFixtures.model, url)
            let context = PageFileFixtures.context(coordinator)
            BlobFixtures.photo(context, "a", big)
            try context.save()
            try PageFileFixtures.close(coordinator)
        }
        let options: [AnyHashable: Any] = [
            NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true,
            PageFileStoreDurabilityOption: "off",
        ]
        for (model, expected) in [
            (BlobFixtures.makeModel(extra: true), big as Data?), (BlobFixtures.makeModel(keepsData: false), nil),
        ] {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            try coordinator.addPersistentStore(
                ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: options)
            let context = PageFileFixtures.context(coordinator)
            let photo = try BlobFixtures.fetch(context, "a")
            if let expected { #expect(photo?.value(forKey: "data") as? Data == expected) }
            #expect(try BlobFixtures.store(coordinator).verify().isClean)
            try PageFileFixtures.close(coordinator)
        }
        #expect(try BlobFixtures.blobEntries(url).isEmpty)
    }

    @Test func randomSavesRollbacksAndReopensMatchAnOracle() throws {
        var random = SeededRandom(environmentOr: 0xB10B_0007)
        let url = try PageFileFixtures.temporaryURL()
        var oracle: [String: Data?] = [:]
        var coordinator = try PageFileFixtures.coordinator(BlobFixtures.model, url)
        var context = PageFileFixtures.context(coordinator)
        func value() -> Data? {
            switch random.int(in: 0...3) {
            case 0: nil
            case 1: BlobFixtures.bytes(&random, random.int(in: 0...2_000))
            default: BlobFixtures.bytes(&random, random.int(in: 65_000...200_000))
            }
        }
        for step in 0..<30 {
            var pending = oracle
            for _ in 0..<random.int(in: 1...3) {
                let title = "t\(random.int(in: 0...7))"
                let existing = try BlobFixtures.fetch(context, title)
                switch (existing, random.int(in: 0...2)) {
                case (nil, _):
                    let data = value()
                    BlobFixtures.photo(context, title, data)
                    pending[title] = data
                case (let photo?, 0):
                    context.delete(photo)
                    pending[title] = nil
                case (let photo?, _):
                    let data = value()
                    photo.setValue(data, forKey: "data")
                    pending[title] = data
                }
            }
            if random.chance(0.2) {
                context.rollback()
            } else {
                try context.save()
                oracle = pending
            }
            if random.chance(0.25) {
                try PageFileFixtures.close(coordinator)
                coordinator = try PageFileFixtures.coordinator(BlobFixtures.model, url)
                context = PageFileFixtures.context(coordinator)
            }
            let reader = PageFileFixtures.context(coordinator)
            let request = NSFetchRequest<NSManagedObject>(entityName: "Photo")
            var stored: [String: Data?] = [:]
            for photo in try reader.fetch(request) {
                if let title = photo.value(forKey: "title") as? String {
                    stored[title] = photo.value(forKey: "data") as? Data
                }
            }
            #expect(stored == oracle, "step \(step) \(random.replayHint)")
            let report = try BlobFixtures.store(coordinator).verify()
            #expect(report.isClean, "step \(step): \(report.problems) \(random.replayHint)")
            if stored != oracle || !report.isClean { break }
        }
        try PageFileFixtures.close(coordinator)
    }

    @Test func migratingToAndFromTheBinaryStoreCarriesTheValues() throws {
        var random = SeededRandom(environmentOr: 0xB10B_0008)
        let directory = try PageFileFixtures.temporaryURL().deletingLastPathComponent()
        let big = BlobFixtures.bytes(&random, 180_000)
        let coordinator = try PageFileFixtures.coordinator(
            BlobFixtures.model, directory.appendingPathComponent("a.store"))
        let context = PageFileFixtures.context(coordinator)
        BlobFixtures.photo(context, "a", big)
        try context.save()
        var store: NSPersistentStore = try BlobFixtures.store(coordinator)
        store = try coordinator.migratePersistentStore(
            store, to: directory.appendingPathComponent("b.bin"), type: NSBinaryStoreType)
        store = try coordinator.migratePersistentStore(
            store, to: directory.appendingPathComponent("c.store"),
            options: [PageFileStoreDurabilityOption: "off"], type: NSSQLiteStoreType)
        let reader = PageFileFixtures.context(coordinator)
        #expect(try BlobFixtures.fetch(reader, "a")?.value(forKey: "data") as? Data == big, "\(random.replayHint)")
        #expect(try (store as? PageFileStore)?.verify().isClean == true)
        try PageFileFixtures.close(coordinator)
        #expect(try BlobFixtures.blobEntries(directory.appendingPathComponent("c.store")).count == 2)
    }

    @Test(arguments: [NSInMemoryStoreType, NSBinaryStoreType])
    func otherStoresKeepTheData(type: String) throws {
        var random = SeededRandom(environmentOr: 0xB10B_0006)
        let url = try PageFileFixtures.temporaryURL("Test.bin")
        let big = BlobFixtures.bytes(&random, 150_000)
        let coordinator = try PageFileFixtures.coordinator(BlobFixtures.model, url, type: type)
        let context = PageFileFixtures.context(coordinator)
        BlobFixtures.photo(context, "a", big)
        try context.save()
        let reader = PageFileFixtures.context(coordinator)
        #expect(try BlobFixtures.fetch(reader, "a")?.value(forKey: "data") as? Data == big)
        if type == NSBinaryStoreType {
            try PageFileFixtures.close(coordinator)
            let reopened = try PageFileFixtures.coordinator(BlobFixtures.model, url, type: type)
            let reopenedReader = PageFileFixtures.context(reopened)
            #expect(try BlobFixtures.fetch(reopenedReader, "a")?.value(forKey: "data") as? Data == big)
        }
    }

    /// Blob references and to-manys kept outside the row both read back as placeholders
    /// from the row bytes; each must go to its own place (blob tree, join or inverse tree),
    /// and verify() must tell them apart.
    @Test func blobsAndToManysOutsideTheRowStayApart() throws {
        var random = SeededRandom(environmentOr: 0xB10B_0007)
        let album = NSEntityDescription()
        album.name = "Album"
        let photo = NSEntityDescription()
        photo.name = "Photo"
        let tag = NSEntityDescription()
        tag.name = "Tag"
        let cover = PageFileFixtures.attribute("cover", .binaryDataAttributeType)
        cover.allowsExternalBinaryDataStorage = true
        let data = PageFileFixtures.attribute("data", .binaryDataAttributeType)
        data.allowsExternalBinaryDataStorage = true
        let photos = TestStack.relationship("photos", to: photo, toMany: true, rule: .cascadeDeleteRule, ordered: true)
        let owner = TestStack.relationship("album", to: album, toMany: false)
        photos.inverseRelationship = owner
        owner.inverseRelationship = photos
        let tags = TestStack.relationship("tags", to: tag, toMany: true)
        album.properties = [PageFileFixtures.attribute("name", .stringAttributeType), cover, photos, tags]
        photo.properties = [PageFileFixtures.attribute("title", .stringAttributeType), data, owner]
        tag.properties = [PageFileFixtures.attribute("label", .stringAttributeType)]
        let model = NSManagedObjectModel()
        model.entities = [album, photo, tag]

        let url = try PageFileFixtures.temporaryURL()
        let coverBytes = BlobFixtures.bytes(&random, 200_000)
        let photoBytes = (0..<3).map { _ in BlobFixtures.bytes(&random, 70_000 + random.int(in: 0...50_000)) }
        do {
            let coordinator = try PageFileFixtures.coordinator(model, url)
            let context = PageFileFixtures.context(coordinator)
            let holiday = NSEntityDescription.insertNewObject(forEntityName: "Album", into: context)
            holiday.setValue("holiday", forKey: "name")
            holiday.setValue(coverBytes, forKey: "cover")
            var members: [NSManagedObject] = []
            for (position, bytes) in photoBytes.enumerated() {
                let member = NSEntityDescription.insertNewObject(forEntityName: "Photo", into: context)
                member.setValue("p\(position)", forKey: "title")
                member.setValue(bytes, forKey: "data")
                members.append(member)
            }
            holiday.setValue(NSOrderedSet(array: members.reversed()), forKey: "photos")
            let label = NSEntityDescription.insertNewObject(forEntityName: "Tag", into: context)
            label.setValue("sea", forKey: "label")
            holiday.setValue(Set([label]), forKey: "tags")
            try context.save()
            #expect(try BlobFixtures.store(coordinator).verify().isClean, "\(random.replayHint)")
            try PageFileFixtures.close(coordinator)
        }
        let coordinator = try PageFileFixtures.coordinator(model, url)
        let context = PageFileFixtures.context(coordinator)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Album")
        let fetched = try #require(try context.fetch(request).first)
        #expect(fetched.value(forKey: "cover") as? Data == coverBytes, "\(random.replayHint)")
        let ordered = try #require(fetched.value(forKey: "photos") as? NSOrderedSet)
        let titles = ordered.array.compactMap { ($0 as? NSManagedObject)?.value(forKey: "title") as? String }
        #expect(titles == ["p2", "p1", "p0"])
        let datas = ordered.array.compactMap { ($0 as? NSManagedObject)?.value(forKey: "data") as? Data }
        #expect(datas == photoBytes.reversed())
        #expect((fetched.value(forKey: "tags") as? Set<NSManagedObject>)?.count == 1)
        // An update of another attribute re-encodes the row: both kinds of placeholder stay.
        fetched.setValue("summer", forKey: "name")
        try context.save()
        #expect(try BlobFixtures.store(coordinator).verify().isClean)
        context.delete(fetched)
        try context.save()
        #expect(try BlobFixtures.store(coordinator).verify().isClean)
        try PageFileFixtures.close(coordinator)
        #expect(try BlobFixtures.blobEntries(url).isEmpty, "\(random.replayHint)")
    }
}
