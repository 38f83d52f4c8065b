// A migration's exclusive open, its replacement of the store and the coordinator's
// replacement (which opens the source alone first) wait briefly for the store's lock: a child process started by this process holds copies of its lock
// descriptions between its fork and its exec, and a staged migration in CI, beside tests
// starting child processes, failed with 134090 ("another process has it open") without it.
import Foundation
import StorageEngine
import Testing

@testable import OpenCoreData

@Suite struct MigrationLockWaitTests {
    /// A closed store at a new path, and a second closed page file beside it.
    private static func closedStores() throws -> (path: String, replacement: String) {
        let url = try PageFileFixtures.temporaryURL("Locked.store")
        let replacement = url.path + "-migrating"
        for path in [url.path, replacement] {
            let database = try Database.open(at: path)
            try database.write { transaction in _ = try transaction.openTree(named: "t") }
            try database.close()
        }
        return (url.path, replacement)
    }

    /// Holds lock byte 1 shared, as an open handle (or a forked child's copy of one) does,
    /// through a description of its own; `release` after `seconds` on another thread.
    private static func holdOpenLock(of path: String, for seconds: Double?) throws -> any StorageFile {
        let file = try POSIXFileSystem().openFile(atPath: path + "-lock", create: true)
        #expect(try file.tryLock(byte: 1, exclusive: false))
        if let seconds {
            let box = UncheckedBox(file)
            Thread.detachNewThread {
                usleep(UInt32(seconds * 1_000_000))
                box.value.unlock(byte: 1)
            }
        }
        return file
    }

    @Test func replacingWaitsOutALockHeldForAMoment() throws {
        let (path, replacement) = try Self.closedStores()
        let held = try Self.holdOpenLock(of: path, for: 0.1)
        defer { held.close() }
        try PageFileStoreFiles.replace(path, with: replacement, fileSystem: POSIXFileSystem())
        #expect(!FileManager.default.fileExists(atPath: replacement))
        let reopened = try Database.open(at: path)
        let found = try reopened.read { transaction in try transaction.tree(named: "t") != nil }
        #expect(found, "the replacement's tree is in the store")
        try reopened.close()
    }

    @Test func replacingAStoreHeldOpenIsTimeoutErrorAfterTheWait() throws {
        let (path, replacement) = try Self.closedStores()
        let held = try Self.holdOpenLock(of: path, for: nil)
        defer { held.close() }
        let start = Date()
        #expect {
            try PageFileStoreFiles.replace(path, with: replacement, fileSystem: POSIXFileSystem())
        } throws: {
            ($0 as NSError).code == NSPersistentStoreTimeoutError
                && ($0 as NSError).localizedDescription.contains("another process has it open")
        }
        #expect(Date().timeIntervalSince(start) >= PageFileStoreFiles.exclusiveWait * 0.9)
        #expect(FileManager.default.fileExists(atPath: replacement), "the store is unchanged")
    }

    @Test func theMigrationsExclusiveOpenWaitsOutALockHeldForAMoment() throws {
        let (path, _) = try Self.closedStores()
        let held = try Self.holdOpenLock(of: path, for: 0.1)
        defer { held.close() }
        var options = Database.Options()
        options.createIfMissing = false
        options.busyTimeout = 0
        let database = try PageFileStore.openEngine(
            at: URL(fileURLWithPath: path), options: options, timeout: PageFileStoreFiles.exclusiveWait)
        try database.close()
    }

    /// The coordinator's replacement opens its source alone (to check it is closed cleanly)
    /// before it copies it: that open waits too (CI: StagedMigrationTests failed with 134090
    /// there, beside tests starting child processes, after the migration's own wait).
    @Test func replacingFromASourceHeldForAMomentWaitsItOut() throws {
        let (path, _) = try Self.closedStores()
        // Not `path-migrating`: the replacement builds its copy there.
        let source = path + "-source"
        try FileManager.default.copyItem(atPath: path, toPath: source)
        let held = try Self.holdOpenLock(of: source, for: 0.1)
        defer { held.close() }
        try PageFileStore.replaceStore(
            at: URL(fileURLWithPath: path), with: URL(fileURLWithPath: source), fileSystem: POSIXFileSystem())
        let reopened = try Database.open(at: path)
        let found = try reopened.read { transaction in try transaction.tree(named: "t") != nil }
        #expect(found, "the source's tree is in the store")
        try reopened.close()
    }
}
