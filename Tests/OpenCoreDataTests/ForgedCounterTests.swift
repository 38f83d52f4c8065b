// Counters a store reads from its file and then adds to — row versions, history
// sequences, primary keys — forged at Int64.max behind valid checksums: each is refused
// as damage (259) where it is read, never a trap at the addition.
import Foundation
import StorageEngine
import TestSupport
import Testing

@testable import OpenCoreData

@Suite struct ForgedCounterTests {
    /// A saved default store with history tracking and one person, "Ada".
    private static func savedStore() throws -> URL {
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = try Self.coordinator(url)
        let context = PageFileFixtures.context(coordinator)
        PageFileFixtures.person(context, "Ada", "Lovelace", 36, "ada@x")
        try context.save()
        try PageFileFixtures.close(coordinator)
        return url
    }

    private static func coordinator(_ url: URL) throws -> NSPersistentStoreCoordinator {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: PageFileFixtures.peopleModel)
        try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: url,
            options: [PageFileStoreDurabilityOption: "off", NSPersistentHistoryTrackingKey: true as NSNumber])
        return coordinator
    }

    /// The row version is a varint in front of the row; a save stores it plus one.
    @Test(arguments: [UInt64(Int64.max), UInt64.max, UInt64(StoreCounterLimit.maximum) + 1])
    func aForgedRowVersionIsDamage(version: UInt64) throws {
        let url = try Self.savedStore()
        let database = try PageFileFixtures.openDatabase(url)
        try database.write { transaction in
            let rows = try #require(try transaction.tree(named: "rows.Person"))
            var entries: [([UInt8], [UInt8])] = []
            try rows.scan { key, value in
                entries.append((Array(key), Array(value)))
                return true
            }
            let (key, row) = try #require(entries.first)
            var rest = row
            while let first = rest.first, first & 0x80 != 0 { rest.removeFirst() }
            rest.removeFirst()  // the varint's last byte
            var forged = StoreByteWriter()
            forged.varint(version)
            try rows.setValue(forged.bytes + rest, forKey: key)
        }
        try database.close()
        let coordinator = try Self.coordinator(url)
        let context = PageFileFixtures.context(coordinator)
        let error = #expect(throws: NSError.self) {
            for person in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person")) {
                person.setValue("Augusta", forKey: "firstName")
            }
            try context.save()
        }
        #expect(error?.code == NSFileReadCorruptFileError, "\(String(describing: error))")
        #expect(error?.localizedDescription.contains("version") == true)
        try PageFileFixtures.close(coordinator)
    }

    /// A history key at Int64.max: the next save would append at `current + 1`, and
    /// deleting all history asks for `current + 1` too.
    @Test func aForgedHistorySequenceIsDamage() throws {
        let url = try Self.savedStore()
        let database = try PageFileFixtures.openDatabase(url)
        try database.write {
            try $0.openTree(named: "history").setValue([1, 0], forKey: PageFileKey.sequence(Int64.max))
        }
        try database.close()
        let coordinator = try Self.coordinator(url)
        let context = PageFileFixtures.context(coordinator)
        PageFileFixtures.person(context, "Grace", "Hopper", 40, "grace@x")
        let saveError = #expect(throws: NSError.self) { try context.save() }
        #expect(saveError?.code == NSFileReadCorruptFileError, "\(String(describing: saveError))")
        #expect(saveError?.localizedDescription.contains("history") == true)
        context.rollback()
        let deleteError = #expect(throws: NSError.self) {
            _ = try context.execute(
                NSPersistentHistoryChangeRequest.deleteHistory(before: nil as NSPersistentHistoryToken?))
        }
        #expect(deleteError?.code == NSFileReadCorruptFileError, "\(String(describing: deleteError))")
        try PageFileFixtures.close(coordinator)
    }

    /// A negative purge bound or one past the limit is damage too.
    @Test(arguments: [Int64.max, -1])
    func aForgedHistoryPurgeBoundIsDamage(bound: Int64) throws {
        let url = try PageFileFormatTests.storeWithMeta("history-purged", PageFileKey.sequence(bound))
        let coordinator = try Self.coordinator(url)
        let context = PageFileFixtures.context(coordinator)
        PageFileFixtures.person(context, "Grace", "Hopper", 40, "grace@x")
        let error = #expect(throws: NSError.self) { try context.save() }
        #expect(error?.code == NSFileReadCorruptFileError, "\(String(describing: error))")
        try PageFileFixtures.close(coordinator)
    }

    enum BinaryForgery: String, CaseIterable {
        case nextKey, rowKey, rowVersion, historySequence
    }

    /// The binary store's next key, a row's key (the store resumes after it), a row's
    /// version and the history sequence, each at Int64.max with the file's checksum
    /// recomputed: refused on open.
    @Test(arguments: BinaryForgery.allCases)
    func aForgedBinaryStoreCounterIsDamage(forgery: BinaryForgery) throws {
        let files = SimulatedFileSystem()
        let path = "/sim/Forged.binary"
        let model = PageFileFixtures.peopleModel
        func add() throws -> (NSPersistentStoreCoordinator, NSPersistentStore) {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            let store = try coordinator.addPersistentStore(
                ofType: NSBinaryStoreType, configurationName: nil, at: URL(fileURLWithPath: path),
                options: [storeFileSystemOption: files, NSPersistentHistoryTrackingKey: true as NSNumber])
            return (coordinator, store)
        }
        let (coordinator, store) = try add()
        let context = PageFileFixtures.context(coordinator)
        PageFileFixtures.person(context, "Ada", "Lovelace", 36, "ada@x")
        try context.save()
        let saved = try #require(files.contents(ofPath: path))
        var image = try BinaryStoreFile.decode(saved, path: path, store: store, model: model) { _ in }
        switch forgery {
        case .nextKey:
            image.nextKey = .max
        case .rowKey:
            image.rows = image.rows.map {
                StoreRow(
                    objectID: store.newObjectID(for: $0.objectID.entity, key: .max), version: $0.version,
                    values: $0.values)
            }
        case .rowVersion:
            image.rows = image.rows.map { StoreRow(objectID: $0.objectID, version: .max, values: $0.values) }
        case .historySequence:
            image.journal = InMemoryHistoryJournal(records: [], currentSequence: .max, purgedSequence: .max)
        }
        var rowsByEntity: [ObjectIdentifier: [Int64: StoreRow]] = [:]
        for row in image.rows {
            rowsByEntity[ObjectIdentifier(row.objectID.entity), default: [:]][row.objectID.key] = row
        }
        let forged = try BinaryStoreFile.encode(
            metadata: image.metadata, nextKey: image.nextKey, rowsByEntity: rowsByEntity, journal: image.journal,
            model: model)
        try coordinator.remove(store)
        files.setContents(forged, ofPath: path)
        let error = #expect(throws: NSError.self) { _ = try add() }
        #expect(error?.code == NSFileReadCorruptFileError, "\(forgery): \(String(describing: error))")
        #expect(error?.localizedDescription.contains("out of range") == true, "\(String(describing: error))")
    }
}
