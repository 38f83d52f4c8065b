// The files of a default store as a whole (SPEC.md §3.3 M3): replacing a closed store by
// another atomically, copying one, removing one. A store is the engine's three files,
// NAME, NAME-wal and NAME-lock (§2); a closed store's data is its page file alone (a
// clean close checkpoints), so replacing a store is replacing its page file, once the old
// log is gone.
//
//   replace(path, with: replacement)
//     1. take lock byte 1 (open) of NAME-lock exclusively: no handle has the store open
//     2. remove replacement-wal and replacement-lock (the replacement was closed cleanly)
//     3. remove NAME-wal; sync the directory       crash: NAME alone is the old store
//     4. rename replacement over NAME; sync the directory
//                                                  crash: NAME is the old or the new store,
//                                                  each complete
//     5. release the lock
import Foundation
import StorageEngine

enum PageFileStoreFiles {
    /// The engine's files of a store at `path`.
    static func files(of path: String) -> [String] { [path, path + "-wal", path + "-lock"] }

    /// Where a migration builds the new store before it replaces the old one.
    static func migrationPath(of path: String) -> String { path + "-migrating" }

    /// How long a migration waits for the store to be free before it reports another
    /// handle (134090): not zero, because a child process this process starts holds copies
    /// of its lock descriptions between its fork and its exec, for a moment, and an open
    /// or replace that meets one then must not fail (seen in CI: a staged migration beside
    /// tests that start child processes).
    static let exclusiveWait: Double = 1

    /// Replaces the closed store at `path` by the closed store at `replacement` (both
    /// checkpointed by a clean close), atomically: after a crash at any point, `path` holds
    /// the old store or the new one, each complete.
    ///
    /// - Throws: `NSPersistentStoreTimeoutError` (134090) when a handle has the store open
    ///   for longer than ``exclusiveWait``;
    ///   the file system's error (the old store is then intact, or already replaced).
    static func replace(_ path: String, with replacement: String, fileSystem: any StorageFileSystem) throws {
        let lockFile = try fileSystem.openFile(atPath: path + "-lock", create: true)
        defer { lockFile.close() }
        // Lock byte 1 (SPEC.md §2.8): held by every handle open on the store.
        do {
            try Database.acquire(lockFile, byte: 1, timeout: exclusiveWait)
        } catch let error as StorageError where error.code == .busy {
            throw CoreDataError.make(
                NSPersistentStoreTimeoutError,
                "cannot replace the store at \(path): another process has it open (the store is unchanged)")
        }
        defer { lockFile.unlock(byte: 1) }
        let directory = BinaryStoreFile.directory(of: path)
        try fileSystem.removeFile(atPath: replacement + "-wal")
        try fileSystem.removeFile(atPath: replacement + "-lock")
        // The old log holds nothing its page file lacks (it was checkpointed), and must not
        // be replayed onto the new page file: it goes, durably, before the rename.
        try fileSystem.removeFile(atPath: path + "-wal")
        try fileSystem.synchronizeDirectory(atPath: directory)
        try fileSystem.renameFile(atPath: replacement, toPath: path)
        try fileSystem.synchronizeDirectory(atPath: directory)
    }

    /// Removes the store at `path` and a migration's leftovers beside it.
    static func remove(_ path: String, fileSystem: any StorageFileSystem) throws {
        for file in files(of: path) + files(of: migrationPath(of: path)) { try fileSystem.removeFile(atPath: file) }
        try fileSystem.synchronizeDirectory(atPath: BinaryStoreFile.directory(of: path))
    }

    /// Copies the page file at `source` (a closed, checkpointed store) to `destination`
    /// and syncs it.
    static func copyPageFile(_ source: String, to destination: String, fileSystem: any StorageFileSystem) throws {
        let input = try fileSystem.openFile(atPath: source, create: false)
        defer { input.close() }
        let output = try fileSystem.openFile(atPath: destination, create: true)
        defer { output.close() }
        try output.truncate(to: 0)
        let size = try input.size()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset: UInt64 = 0
        while offset < size {
            let count = try buffer.withUnsafeMutableBytes { try input.read(into: $0, at: offset) }
            guard count > 0 else { break }
            try buffer.withUnsafeBytes { try output.write(UnsafeRawBufferPointer(rebasing: $0[..<count]), at: offset) }
            offset += UInt64(count)
        }
        try output.synchronize(.full)
    }
}
