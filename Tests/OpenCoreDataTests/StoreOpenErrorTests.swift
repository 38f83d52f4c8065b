// Opening what is not a usable store (SPEC.md §2.12): a missing path, a foreign file, a
// SQLite database, a missing directory. Each error names the fix, and no file is left
// behind (no `-lock`, no `-wal`).
import Foundation
import OpenCoreData
import StorageEngine
import TestSupport
import Testing

@Suite struct StoreOpenErrorTests {
    /// A fresh directory and the sorted names in it, for checking nothing was created.
    private static func directory() throws -> URL {
        try PageFileFixtures.temporaryURL().deletingLastPathComponent()
    }

    private static func listing(_ directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
    }

    private static func add(_ url: URL) throws {
        _ = try PageFileFixtures.coordinator(PageFileFixtures.peopleModel, url)
    }

    /// `storage-bench check` and `metadataForPersistentStore` on a path with no file.
    @Test func checkingAMissingPathSaysSoAndCreatesNothing() throws {
        let directory = try Self.directory()
        let url = directory.appendingPathComponent("Nowhere.store")
        for attempt in [
            { _ = try PageFileStore.verify(at: url) },
            {
                _ = try NSPersistentStoreCoordinator.metadataForPersistentStore(
                    ofType: NSSQLiteStoreType, at: url, options: nil)
            },
        ] {
            let error = #expect(throws: NSError.self) { try attempt() }
            #expect(error?.code == NSFileReadNoSuchFileError)
            #expect(error?.localizedDescription.contains("check the path") == true, "\(String(describing: error))")
        }
        #expect(try Self.listing(directory).isEmpty)
    }

    /// A file of other bytes: refused before any file is created beside it.
    @Test func aForeignFileIsRefusedAndLeavesNothingBehind() throws {
        let directory = try Self.directory()
        let url = directory.appendingPathComponent("Foreign.store")
        try Data((0..<5_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }).write(to: url)
        let error = #expect(throws: NSError.self) { try Self.add(url) }
        #expect(error?.code == NSFileReadCorruptFileError)
        #expect(error?.localizedDescription.contains("check the path") == true, "\(String(describing: error))")
        let checked = #expect(throws: NSError.self) { _ = try PageFileStore.verify(at: url) }
        #expect(checked?.code == NSFileReadCorruptFileError)
        #expect(try Self.listing(directory) == ["Foreign.store"])
    }

    /// A SQLite database (as a Core Data store from another platform is) is named as one,
    /// with the way to move its data.
    @Test func aSQLiteFileIsNamedAsOne() throws {
        let directory = try Self.directory()
        let url = directory.appendingPathComponent("Model.sqlite")
        let header = Array("SQLite format 3\0".utf8) + [0x10, 0x00, 0x01, 0x01]
        try Data(header + [UInt8](repeating: 0, count: 4_096 - header.count)).write(to: url)
        for attempt in [{ try Self.add(url) }, { _ = try PageFileStore.verify(at: url) }] {
            let error = #expect(throws: NSError.self) { try attempt() }
            #expect(error?.code == NSFileReadCorruptFileError)
            let message = error?.localizedDescription ?? ""
            #expect(message.contains("is a SQLite database"), "\(message)")
            #expect(message.contains("save them into a new store"), "\(message)")
            #expect(!message.contains("bad magic"), "\(message)")
        }
        #expect(try Self.listing(directory) == ["Model.sqlite"])
    }

    /// A store in a directory that does not exist: the error names the directory and the
    /// fix, not the `-lock` file it could not create, and creates nothing.
    @Test func aMissingDirectoryIsNamed() throws {
        let parent = try Self.directory()
        let missing = parent.appendingPathComponent("not-yet")
        let url = missing.appendingPathComponent("People.store")
        let error = #expect(throws: NSError.self) { try Self.add(url) }
        #expect(error?.code == NSPersistentStoreOpenError)
        let message = error?.localizedDescription ?? ""
        #expect(message.contains("the directory \(missing.path) does not exist: create it"), "\(message)")
        #expect(!message.contains("-lock"), "\(message)")
        #expect(try Self.listing(parent).isEmpty)
    }

    /// The engine alike: an open that may not create a missing database, and a foreign
    /// file, leave no `-lock` file.
    @Test func theEngineCreatesNoLockFileForWhatItRefuses() throws {
        let files = SimulatedFileSystem()
        var options = Database.Options(pageSize: 512, fileSystem: files)
        options.createIfMissing = false
        let missing = #expect(throws: StorageError.self) { _ = try Database.open(at: "missing.db", options: options) }
        #expect(missing?.message.contains("check the path") == true)
        options.createIfMissing = true
        files.setContents(Array("SQLite format 3\0".utf8) + [UInt8](repeating: 0, count: 1_000), ofPath: "lite.db")
        files.setContents([UInt8](repeating: 0x5A, count: 1_000), ofPath: "other.db")
        for path in ["lite.db", "other.db"] {
            #expect(throws: StorageError.self) { _ = try Database.open(at: path, options: options) }
        }
        options.pageSize = 1_000
        #expect(throws: StorageError.self) { _ = try Database.open(at: "odd.db", options: options) }
        for path in ["missing.db", "lite.db", "other.db", "odd.db"] {
            #expect(files.fileExists(atPath: path + "-lock") == false, "\(path)")
            #expect(files.fileExists(atPath: path + "-wal") == false, "\(path)")
        }
    }
}
