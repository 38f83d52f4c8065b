// The default store's page cache is bounded by PageFileStoreCacheSizeOption (32 MiB when
// absent): reading a store larger than the cache keeps at most that many pages, and a
// value that is not a number of bytes is refused when the store is added.
import Foundation
import StorageEngine
import TestSupport
import Testing

@testable import OpenCoreData

@Suite struct PageFileCacheSizeTests {
    /// A store of `count` Golden rows (each with a 600-byte name, so it spans many
    /// pages) added with `options`; every row fetched once.
    private static func filledStore(_ count: Int, options: [String: Any]) throws -> (
        NSPersistentStoreCoordinator, PageFileStore
    ) {
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: PageFileFixtures.goldenModel)
        let added = try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: url,
            options: options.merging([PageFileStoreDurabilityOption: "off"]) { mine, _ in mine })
        let store = try #require(added as? PageFileStore)
        let context = PageFileFixtures.context(coordinator)
        try context.performAndWait {
            for index in 0..<count {
                let golden = NSEntityDescription.insertNewObject(forEntityName: "Golden", into: context)
                golden.setValue(String(repeating: "n", count: 600) + "\(index)", forKey: "name")
                golden.setValue(Int32(index), forKey: "count")
            }
            try context.save()
            context.reset()
            let fetched = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Golden"))
            #expect(fetched.count == count)
        }
        return (coordinator, store)
    }

    @Test func theOptionBoundsThePagesKeptInMemory() throws {
        // 64 pages is the engine's floor; 2,000 rows of ~610 bytes need ~300 pages.
        let (small, smallStore) = try Self.filledStore(2_000, options: [PageFileStoreCacheSizeOption: 64 * 4_096])
        defer { try? PageFileFixtures.close(small) }
        let smallCache = try smallStore.openDatabase().cachedPageCount
        #expect(smallCache > 0)
        #expect(smallCache <= 64)
        // Without the option the same store keeps every page it read.
        let (large, largeStore) = try Self.filledStore(2_000, options: [:])
        defer { try? PageFileFixtures.close(large) }
        #expect(try largeStore.openDatabase().cachedPageCount > 200)
        // An NSNumber is accepted as well as an Int.
        let (number, numberStore) = try Self.filledStore(
            300, options: [PageFileStoreCacheSizeOption: NSNumber(value: 64 * 4_096)])
        defer { try? PageFileFixtures.close(number) }
        #expect(try numberStore.openDatabase().cachedPageCount <= 64)
    }

    @Test func theDefaultIsThirtyTwoMebibytes() throws {
        #expect(PageFileStore.defaultCacheSize == 32 << 20)
        #expect(try PageFileStore.cacheSize(nil) == 32 << 20)
        #expect(try PageFileStore.cacheSize(8 << 20) == 8 << 20)
    }

    @Test(arguments: ["lots", "0", 0, -4_096, 1.5] as [any Sendable])
    func aValueThatIsNotANumberOfBytesIsRefused(_ value: any Sendable) throws {
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: PageFileFixtures.goldenModel)
        let error = #expect(throws: NSError.self) {
            try coordinator.addPersistentStore(
                ofType: NSSQLiteStoreType, configurationName: nil, at: url,
                options: [PageFileStoreCacheSizeOption: value, PageFileStoreDurabilityOption: "off"])
        }
        #expect(error?.code == NSPersistentStoreOpenError)
        #expect(error?.localizedDescription.contains(PageFileStoreCacheSizeOption) == true)
        #expect(coordinator.persistentStores.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: url.path))
    }
}
