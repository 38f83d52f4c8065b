// Several coordinators on one store file (SPEC.md §3.9). In one process they share one
// engine handle, found in a process-wide registry by the file's resolved path and
// reference counted; the last store removed closes it. Their primary keys come from one
// shared allocator. Across processes the engine's multi-process mode coordinates the
// handles, and keys are reserved in blocks by small write transactions on `next-key`.
import Foundation
import StorageEngine

/// One engine handle on a store file, shared by every ``PageFileStore`` of this process
/// open on that file, with the primary-key allocator they share.
final class PageFileSharedDatabase: @unchecked Sendable {
    /// Keys a multi-process handle reserves at a time (at least what one call asks for).
    static let keyBlock: Int64 = 256

    let database: Database
    /// The registry key: the file's path with its directory's symbolic links resolved.
    let path: String
    /// Whether the engine handle coordinates with other processes (SPEC.md §2.8).
    let isMultiProcess: Bool
    /// Whether the engine handle was opened read-only (§2.12): stores that save cannot share it.
    let isReadOnly: Bool

    private let lock = NSLock()
    private var references = 1
    private var nextKey: Int64 = 1
    /// Multi-process: the end (exclusive) of the block reserved in the file; keys below it are this handle's.
    private var reservedEnd: Int64 = 1
    /// Single process: the value `next-key` holds in the file, as far as this handle wrote it.
    private var persistedNextKey: Int64 = 1

    private init(database: Database, path: String, isMultiProcess: Bool, isReadOnly: Bool) {
        self.database = database
        self.path = path
        self.isMultiProcess = isMultiProcess
        self.isReadOnly = isReadOnly
    }

    // MARK: Registry

    private static let registryLock = NSLock()
    nonisolated(unsafe) private static var registry: [String: PageFileSharedDatabase] = [:]

    /// The registry key of `url`: the directory resolved (symbolic links, `..`), then the name.
    static func registryPath(of url: URL) -> String {
        let standardized = url.standardizedFileURL
        return standardized.deletingLastPathComponent().resolvingSymlinksInPath()
            .appendingPathComponent(standardized.lastPathComponent).path
    }

    /// The shared handle on `url`, opened with `options` if this process has none yet
    /// (an existing handle keeps the options it was opened with). A read-only request
    /// shares any handle; a writable one waits, like a busy file, while the process's
    /// handle is read-only.
    static func acquire(_ url: URL, options: Database.Options, timeout: Double) throws -> PageFileSharedDatabase {
        let path = registryPath(of: url)
        let deadline = Date().addingTimeInterval(max(0, timeout))
        while true {
            // One attempt at a time under the lock; the waits between attempts are outside
            // it, so a file held by another process delays no other file's open or close.
            let opened = try registryLock.withLock { () throws -> PageFileSharedDatabase? in
                if let shared = registry[path] {
                    if shared.isReadOnly && !options.readOnly {
                        guard Date() < deadline else {
                            throw StorageError(
                                .busy,
                                "\(path) is open read-only in this process (another coordinator added it with "
                                    + "NSReadOnlyPersistentStoreOption); remove that store first")
                        }
                        return nil
                    }
                    shared.lock.withLock { shared.references += 1 }
                    return shared
                }
                do {
                    let database = try Database.open(at: path, options: options)
                    let shared = PageFileSharedDatabase(
                        database: database, path: path, isMultiProcess: options.multiProcess,
                        isReadOnly: options.readOnly)
                    registry[path] = shared
                    return shared
                } catch let error as StorageError where error.code == .busy && Date() < deadline {
                    return nil
                }
            }
            if let opened { return opened }
            usleep(2_000)
        }
    }

    /// Whether this process has the store at `url` open.
    static func isOpen(_ url: URL) -> Bool {
        registryLock.withLock { registry[registryPath(of: url)] != nil }
    }

    /// A handle of its own on a new database in memory, in no registry: the store at
    /// `/dev/null` (Core Data's in-memory SQLite recipe), gone when the store is removed.
    static func inMemory(options: Database.Options) throws -> PageFileSharedDatabase {
        var options = options
        options.fileSystem = SimulatedFileSystem()
        options.durability = .off
        options.multiProcess = false
        // A new database has nothing to protect; a read-only store refuses saves itself.
        options.readOnly = false
        let database = try Database.open(at: "/dev/null", options: options)
        return PageFileSharedDatabase(database: database, path: "", isMultiProcess: false, isReadOnly: false)
    }

    /// Gives up one reference; the last one closes the engine handle (checkpointing it),
    /// waiting for a writer still running on it (a save of a store removed meanwhile).
    func release() {
        let last = PageFileSharedDatabase.registryLock.withLock { () -> Bool in
            let remaining = lock.withLock { () -> Int in
                references -= 1
                return references
            }
            guard remaining == 0 else { return false }
            if PageFileSharedDatabase.registry[path] === self { PageFileSharedDatabase.registry[path] = nil }
            return true
        }
        guard last else { return }
        // Outside the registry lock: an open of this file meanwhile waits as for a busy file.
        // `close()` gives up with `busy` before closing anything when a writer holds the
        // handle past its busy timeout; the files would stay open (and locked) until the
        // handle is freed, and an open right after, a migration's above all, found the store
        // busy (134090). Every other error comes after the files are closed.
        while true {
            do {
                try database.close()
                return
            } catch let error as StorageError where error.code == .busy {
                usleep(1_000)
            } catch {
                OpenCoreDataDebugLog.log(1, "closing \(path): \(error)")
                return
            }
        }
    }

    /// How many stores share the handle now (tests).
    var referenceCount: Int { lock.withLock { references } }

    // MARK: Primary keys

    /// Raises the next key to at least `stored`, the `next-key` record this handle read.
    func noteStoredNextKey(_ stored: Int64) {
        lock.withLock {
            if !isMultiProcess, stored > nextKey { nextKey = stored }
            if stored > persistedNextKey { persistedNextKey = stored }
        }
    }

    /// The next key this process would hand out.
    var peekNextKey: Int64 { lock.withLock { nextKey } }

    /// `count` consecutive new keys; returns the first. A multi-process handle reserves a
    /// block in the file first when its own is used up (SPEC.md §3.9 S3).
    func allocateKeys(_ count: Int) throws -> Int64 {
        let wanted = Int64(max(count, 0))
        let local = lock.withLock { () -> Int64? in
            guard !isMultiProcess || reservedEnd - nextKey >= wanted else { return nil }
            defer { nextKey += wanted }
            return nextKey
        }
        if let local { return local }
        // Not under `lock`: the write waits for this process's other writers, which take it.
        let block = max(wanted, PageFileSharedDatabase.keyBlock)
        let start = try database.write { transaction -> Int64 in
            let meta = try transaction.openTree(named: PageFileStore.metaTreeName)
            let stored = try PageFileStore.readNextKey(meta) ?? 1
            try meta.setValue(PageFileKey.sequence(stored + block), forKey: PageFileStore.nextKeyKey)
            return stored
        }
        // The block is this handle's alone; a block another thread adopted meanwhile is abandoned.
        return lock.withLock {
            nextKey = start + wanted
            reservedEnd = start + block
            return start
        }
    }

    /// `count` consecutive new keys for rows written in `transaction`; returns the first.
    ///
    /// A single-process handle hands them out from its counter (the transaction writes
    /// `next-key` with its metadata). A multi-process handle cannot reserve a block with a
    /// write of its own while `transaction` is open, so it takes the keys from `next-key`
    /// in `transaction` itself: they are taken if and only if the transaction commits.
    func allocateKeys(_ count: Int, in transaction: WriteTransaction) throws -> Int64 {
        guard isMultiProcess else { return try allocateKeys(count) }
        let meta = try transaction.openTree(named: PageFileStore.metaTreeName)
        let stored = try PageFileStore.readNextKey(meta) ?? 1
        let next = stored + Int64(max(count, 0))
        guard next <= PageFileStore.maximumNextKey else {
            throw CoreDataError.make(NSPersistentStoreSaveError, "the store has run out of primary keys")
        }
        try meta.setValue(PageFileKey.sequence(next), forKey: PageFileStore.nextKeyKey)
        return stored
    }

    /// Whether `next-key` in the file may be behind the keys handed out.
    var needsNextKeyWrite: Bool { lock.withLock { !isMultiProcess && nextKey > persistedNextKey } }

    /// Writes `next-key`, in a save, when this handle's next key passed it: as the next key
    /// plus a block (SPEC.md §3.9 S3), so the saves that follow — most single-object
    /// saves — leave the record alone; a reopen starts after the block, never reusing a key.
    /// (A multi-process handle's keys are reserved in the file already.)
    func writeNextKey(in transaction: WriteTransaction) throws {
        guard !isMultiProcess else { return }
        let meta = try transaction.openTree(named: PageFileStore.metaTreeName)
        let stored = try PageFileStore.readNextKey(meta) ?? 1
        let next = lock.withLock { nextKey }
        var persisted = stored
        if next > stored {
            persisted = next + PageFileSharedDatabase.keyBlock
            try meta.setValue(PageFileKey.sequence(persisted), forKey: PageFileStore.nextKeyKey)
        }
        lock.withLock { persistedNextKey = max(persistedNextKey, persisted) }
    }
}

extension PageFileStore {
    /// The largest `next-key` a store accepts (``StoreCounterLimit``): handing out keys
    /// and reserving blocks cannot overflow.
    static let maximumNextKey = StoreCounterLimit.maximum

    /// The `next-key` record of `meta`; nil when absent.
    ///
    /// - Throws: `NSFileReadCorruptFileError` when it is not 8 bytes or not in
    ///   `1...maximumNextKey`.
    static func readNextKey(_ meta: Tree) throws -> Int64? {
        guard let raw = try meta.value(forKey: nextKeyKey) else { return nil }
        guard raw.count == 8, let value = raw.withUnsafeBytes({ PageFileKey.sequenceNumber($0) }),
            (1...maximumNextKey).contains(value)
        else {
            throw CoreDataError.make(NSFileReadCorruptFileError, "the store's next-key record is damaged")
        }
        return value
    }
}

/// Store option: open the default store so that other processes may open the same file at
/// once (`true`), with the engine's multi-process locking (SPEC.md §2.8, §3.9). Off by
/// default: the first process to open a file owns it, and another process waits up to
/// `NSPersistentStoreTimeoutOption` seconds and then fails with 134090. Coordinators in one
/// process share the file either way. Every process opening the file must pass it.
public let PageFileStoreMultiProcessOption = "OpenCoreDataMultiProcessOption"
