// One damaged byte in the newest meta slot of a cleanly closed store (SPEC.md §2.1 M3,
// M4): refused with 259 naming the loss, never opened as an older (or empty) store; the
// recover option opens the previous checkpoint's state explicitly.
import Foundation
import OpenCoreData
import StorageEngine
import TestSupport
import Testing

@Suite struct DamagedMetaSlotStoreTests {
    private static func add(_ url: URL, recover: Bool = false) throws -> NSPersistentStoreCoordinator {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: PageFileFixtures.peopleModel)
        var options: [AnyHashable: Any] = [PageFileStoreDurabilityOption: "off"]
        if recover { options[PageFileStoreRecoverToOlderStateOption] = true }
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: options)
        return coordinator
    }

    /// Saves `count` people numbered from `first` in one save, then closes the store.
    private static func session(_ url: URL, first: Int, count: Int) throws {
        let coordinator = try add(url)
        let context = PageFileFixtures.context(coordinator)
        for index in first..<(first + count) {
            PageFileFixtures.person(context, "F\(index)", "L\(index % 7)", Int16(index % 100), "p\(index)@x")
        }
        try context.save()
        try PageFileFixtures.close(coordinator)
    }

    private static func people(_ coordinator: NSPersistentStoreCoordinator) throws -> Int {
        try PageFileFixtures.context(coordinator).count(for: NSFetchRequest<NSManagedObject>(entityName: "Person"))
    }

    /// The position of the slot holding the higher transaction id.
    private static func newestSlot(_ data: Data) -> Int {
        let transaction = { (slot: Int) -> UInt64 in
            (0..<8).reduce(UInt64(0)) { $0 | UInt64(data[slot * 256 + 24 + $1]) << (8 * UInt64($1)) }
        }
        return transaction(1) > transaction(0) ? 1 : 0
    }

    /// The case: a store saved once (594 objects) and closed. Every byte of the
    /// newest slot, damaged, is refused; the option opens the state before the save.
    @Test func everyDamagedByteOfTheNewestSlotIsRefusedWith259() throws {
        let url = try PageFileFixtures.temporaryURL()
        try Self.session(url, first: 0, count: 594)
        let saved = try Data(contentsOf: url)
        let slot = Self.newestSlot(saved)
        for offset in 0..<256 {
            var damaged = saved
            damaged[slot * 256 + offset] ^= [0x01, 0x80, 0xFF][offset % 3]
            try damaged.write(to: url)
            let error = #expect(throws: NSError.self, "byte \(offset)") { _ = try Self.add(url) }
            #expect(error?.code == NSFileReadCorruptFileError, "byte \(offset): \(String(describing: error))")
            let message = error?.localizedDescription ?? ""
            #expect(message.contains("would lose transactions"), "byte \(offset): \(message)")
            #expect(message.contains("PageFileStoreRecoverToOlderStateOption"), "byte \(offset): \(message)")
        }
        // Reading the metadata or checking the file refuses it too (read-only handles).
        #expect(throws: NSError.self) {
            _ = try NSPersistentStoreCoordinator.metadataForPersistentStore(
                ofType: NSSQLiteStoreType, at: url, options: nil)
        }
        // Asked explicitly: the state before the only save (no store yet, so a new one).
        let recovered = try Self.add(url, recover: true)
        #expect(try Self.people(recovered) == 0)
        try PageFileFixtures.close(recovered)
        let reopened = try Self.add(url)
        #expect(try Self.people(reopened) == 0)
        try PageFileFixtures.close(reopened)
    }

    /// Two sessions: the option opens the first session's 100 people, the store takes saves
    /// again, and after the repair it opens without the option.
    @Test func theRecoverOptionOpensThePreviousCheckpoint() throws {
        let url = try PageFileFixtures.temporaryURL()
        try Self.session(url, first: 0, count: 100)
        try Self.session(url, first: 100, count: 50)
        var data = try Data(contentsOf: url)
        data[Self.newestSlot(data) * 256 + 33] ^= 0x20
        try data.write(to: url)
        #expect(throws: NSError.self) { _ = try Self.add(url) }
        let recovered = try Self.add(url, recover: true)
        #expect(try Self.people(recovered) == 100)
        let context = PageFileFixtures.context(recovered)
        PageFileFixtures.person(context, "After", "Recovery", 1, "after@x")
        try context.save()
        try PageFileFixtures.close(recovered)
        let reopened = try Self.add(url)
        #expect(try Self.people(reopened) == 101)
        let report = try #require(reopened.persistentStores.first as? PageFileStore).verify()
        #expect(report.isClean, "\(report.problems)")
        try PageFileFixtures.close(reopened)
    }
}
