// Stores on a read-only medium (SPEC.md §2.12): with NSReadOnlyPersistentStoreOption the
// default and the binary store open and read, create and change no file, and recover a
// non-empty log in memory; without it the open error says to add the store read-only.
// Simulated: a file system that refuses every write as a read-only mount does. Real: a
// directory this process cannot write (immutable when running as root, whom permissions
// do not restrict).
import Foundation
import StorageEngine
import TestSupport
import Testing

@testable import OpenCoreData

@Suite(.serialized) struct ReadOnlyStoreTests {
    private static func add(
        _ type: String, _ url: URL, files: SimulatedFileSystem? = nil, readOnly: Bool
    ) throws -> NSPersistentStoreCoordinator {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: PageFileFixtures.peopleModel)
        var options: [AnyHashable: Any] = [NSReadOnlyPersistentStoreOption: readOnly]
        if let files { options[storeFileSystemOption] = files }
        try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: url, options: options)
        return coordinator
    }

    private static func savePeople(_ coordinator: NSPersistentStoreCoordinator, _ names: [String]) throws {
        let context = PageFileFixtures.context(coordinator)
        for (index, name) in names.enumerated() {
            PageFileFixtures.person(context, name, "L", Int16(index), "\(name)@x")
        }
        try context.save()
    }

    private static func names(_ coordinator: NSPersistentStoreCoordinator) throws -> [String] {
        let context = PageFileFixtures.context(coordinator)
        return try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
            .compactMap { $0.value(forKey: "firstName") as? String }.sorted()
    }

    private static let paths = ["/ro/People.store", "/ro/People.store-wal", "/ro/People.store-lock"]

    private static func contents(_ files: SimulatedFileSystem) -> [[UInt8]?] {
        paths.map { files.contents(ofPath: $0) }
    }

    /// A default store whose log still holds its saves (the process ended without a
    /// checkpoint), on a read-only medium, with and without its `-lock` file.
    @Test(arguments: [true, false])
    func theDefaultStoreOpensReadOnlyAndRecoversItsLogInMemory(keepLockFile: Bool) throws {
        let url = URL(fileURLWithPath: Self.paths[0])
        let writer = SimulatedFileSystem()
        let coordinator = try Self.add(NSSQLiteStoreType, url, files: writer, readOnly: false)
        try Self.savePeople(coordinator, ["Ada", "Grace"])
        // The files as a killed process leaves them: the saves are in the log only.
        let files = writer.snapshotOfCurrentState()
        try PageFileFixtures.close(coordinator)
        #expect(files.contents(ofPath: Self.paths[1])?.isEmpty == false)
        if !keepLockFile { try files.removeFile(atPath: Self.paths[2]) }
        files.isReadOnly = true
        let before = Self.contents(files)

        let refused = #expect(throws: NSError.self) {
            _ = try Self.add(NSSQLiteStoreType, url, files: files, readOnly: false)
        }
        #expect(refused?.code == NSPersistentStoreOpenError, "\(String(describing: refused))")
        #expect(refused?.localizedDescription.contains("NSReadOnlyPersistentStoreOption") == true)

        let reader = try Self.add(NSSQLiteStoreType, url, files: files, readOnly: true)
        #expect(try Self.names(reader) == ["Ada", "Grace"])
        let store = try #require(reader.persistentStores.first as? PageFileStore)
        #expect(try store.verify().isClean)
        let context = PageFileFixtures.context(reader)
        PageFileFixtures.person(context, "Katherine", "L", 3, "k@x")
        let saveError = #expect(throws: NSError.self) { try context.save() }
        #expect(saveError?.code == NSPersistentStoreSaveError)
        try PageFileFixtures.close(reader)
        #expect(Self.contents(files) == before, "a read-only store changed a file")
        #expect(files.fileExists(atPath: Self.paths[2]) == keepLockFile)
    }

    /// A read-only store with no file is not created; one needing a migration is refused.
    @Test func aReadOnlyStoreIsNeitherCreatedNorMigrated() throws {
        let files = SimulatedFileSystem()
        let url = URL(fileURLWithPath: "/ro/Missing.store")
        let missing = #expect(throws: NSError.self) {
            _ = try Self.add(NSSQLiteStoreType, url, files: files, readOnly: true)
        }
        #expect(missing?.code == NSFileReadNoSuchFileError)
        #expect(files.fileExists(atPath: "/ro/Missing.store-lock") == false)
        let binaryMissing = #expect(throws: NSError.self) {
            _ = try Self.add(
                NSBinaryStoreType, URL(fileURLWithPath: "/ro/Missing.binary"), files: files, readOnly: true)
        }
        #expect(binaryMissing?.code == NSFileReadNoSuchFileError)
        #expect(files.fileExists(atPath: "/ro/Missing.binary") == false)

        let stored = try Self.add(NSSQLiteStoreType, url, files: files, readOnly: false)
        try PageFileFixtures.close(stored)
        let changed = NSPersistentStoreCoordinator(
            managedObjectModel: PageFileFixtures.makePeopleModel(extraAttribute: true))
        let error = #expect(throws: NSError.self) {
            try changed.addPersistentStore(
                ofType: NSSQLiteStoreType, configurationName: nil, at: url,
                options: [
                    storeFileSystemOption: files, NSReadOnlyPersistentStoreOption: true,
                    NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true,
                ])
        }
        #expect(error?.code == NSPersistentStoreIncompatibleVersionHashError)
        #expect(error?.localizedDescription.contains("not migrated") == true)
    }

    /// The binary store reads its file read-only too.
    @Test func theBinaryStoreOpensOnAReadOnlyMedium() throws {
        let files = SimulatedFileSystem()
        let url = URL(fileURLWithPath: "/ro/People.binary")
        let writer = try Self.add(NSBinaryStoreType, url, files: files, readOnly: false)
        try Self.savePeople(writer, ["Ada"])
        try PageFileFixtures.close(writer)
        files.isReadOnly = true
        let before = files.contents(ofPath: url.path)
        let reader = try Self.add(NSBinaryStoreType, url, files: files, readOnly: true)
        #expect(try Self.names(reader) == ["Ada"])
        try PageFileFixtures.close(reader)
        #expect(files.contents(ofPath: url.path) == before)
    }

    /// The same on the real file system: a directory this process cannot write, holding a
    /// default store (its `-lock` file removed, as after a copy) and a binary store.
    @Test func storesInAnUnwritableDirectoryOpenReadOnly() throws {
        let directory = try TestScratch.directory("ro")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("People.store")
        let binary = directory.appendingPathComponent("People.binary")
        for (type, url) in [(NSSQLiteStoreType, store), (NSBinaryStoreType, binary)] {
            let writer = try Self.add(type, url, readOnly: false)
            try Self.savePeople(writer, ["Ada", "Grace"])
            try PageFileFixtures.close(writer)
        }
        try FileManager.default.removeItem(atPath: store.path + "-lock")
        let listing = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        let restore = try UnwritableDirectory.make(directory)
        defer { restore() }
        guard !FileManager.default.createFile(atPath: directory.appendingPathComponent("probe").path, contents: nil)
        else {
            Issue.record("could not make \(directory.path) unwritable for this process")
            return
        }

        let refused = #expect(throws: NSError.self) { _ = try Self.add(NSSQLiteStoreType, store, readOnly: false) }
        #expect(refused?.code == NSPersistentStoreOpenError, "\(String(describing: refused))")
        #expect(refused?.localizedDescription.contains("NSReadOnlyPersistentStoreOption") == true)
        for (type, url) in [(NSSQLiteStoreType, store), (NSBinaryStoreType, binary)] {
            let reader = try Self.add(type, url, readOnly: true)
            #expect(try Self.names(reader) == ["Ada", "Grace"], "\(type)")
            try PageFileFixtures.close(reader)
        }
        #expect(try PageFileStore.verify(at: store).isClean)
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: NSSQLiteStoreType, at: store, options: nil)
        #expect(metadata[NSStoreTypeKey] as? String == NSSQLiteStoreType)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == listing)
    }
}

/// Makes a directory and its files unwritable for this process, honestly: with
/// permissions for an ordinary user, and with the immutable attribute for root, whom
/// permissions do not restrict.
enum UnwritableDirectory {
    /// Applies it; returns what undoes it.
    static func make(_ directory: URL) throws -> () -> Void {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).map {
            directory.appendingPathComponent($0).path
        }
        if geteuid() == 0 {
            try chattr("+i", files + [directory.path])
            return { try? chattr("-i", [directory.path] + files) }
        }
        for file in files { try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: file) }
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: directory.path)
        return {
            try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
            for file in files {
                try? FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file)
            }
        }
    }

    private static func chattr(_ flag: String, _ paths: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/chattr")
        process.arguments = [flag] + paths
        try process.run()
        process.waitUntilExit()
    }
}
