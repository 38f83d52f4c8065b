// The engine's entry point: opens (and recovers) a database, runs read and write
// transactions, hands out long-lived snapshots, checkpoints and closes.
import Foundation

/// An open storage-engine database: named ordered trees of byte keys and byte values,
/// with serializable single-writer transactions and snapshot readers.
///
/// ```swift
/// let database = try Database.open(at: "/tmp/example.db")
/// try database.write { transaction in
///     let people = try transaction.openTree(named: "people")
///     try people.setValue(Array("Ada".utf8), forKey: [0, 0, 0, 1])
/// }
/// let name = try database.read { transaction in
///     try transaction.tree(named: "people")?.value(forKey: [0, 0, 0, 1])
/// }
/// try database.close()
/// ```
///
/// A write transaction commits when its closure returns and rolls back when it throws.
/// Readers never block the writer and never see a partial transaction. The handle is
/// safe to share between threads.
public final class Database: @unchecked Sendable {
    /// How much a returned commit survives.
    public enum Durability: String, Sendable {
        /// A commit survives power loss once `write` returns (one `fdatasync` per commit,
        /// shared by concurrent committers).
        case full
        /// A commit survives a crash of the process, not of the machine.
        case normal
        /// Nothing is synced (tests and scratch data).
        case off
    }

    /// Settings for ``Database/open(at:options:)``.
    public struct Options: Sendable {
        /// Page size for a new database: a power of two from 512 to 65,536. An existing
        /// database keeps the page size it was created with.
        public var pageSize: Int = 4_096
        /// What a returned commit survives.
        public var durability: Durability = .full
        /// Bytes of pages kept in memory (at least 64 pages): pages read or committed
        /// beyond it evict others (a clock sweep), so a database of any size reads
        /// in bounded memory.
        public var cacheSize: Int = 256 << 20
        /// Log size in bytes past which a commit checkpoints.
        public var checkpointThreshold: Int = 8 << 20
        /// Bytes of changed pages a write transaction keeps in memory (at least 16 pages).
        /// Past it the transaction writes the pages it is not using into their place in
        /// the page file and reads them back when needed, so a transaction of any size
        /// runs in bounded memory; such a transaction commits straight into the page file
        /// (SPEC.md §2.4 steps 7 and 7a). `Int.max`: never.
        public var spillThreshold: Int = 32 << 20
        /// Seconds a writer waits for another writer before throwing `busy`.
        public var busyTimeout: Double = 5
        /// Creates the database when it does not exist.
        public var createIfMissing = true
        /// Checkpoints when the database is closed, so the next open reads no log.
        public var checkpointOnClose = true
        /// Lets several processes (or several handles in one process) open the database at
        /// once (SPEC.md §2.8). Off by default: a handle then owns the database and a second
        /// opener gets `busy`; on, every transaction first checks for commits made by other
        /// handles, and checkpoints wait until no other handle holds a snapshot.
        public var multiProcess = false
        /// Opens the database for reading only: nothing is created, written, truncated or
        /// locked exclusively, so a database on a read-only file system or in a directory
        /// this process may not write opens (SPEC.md §2.12). The log is recovered in memory;
        /// writes, checkpoints and vacuum throw `readOnly`. The handle reads the state
        /// committed when it opened. When the `-lock` file exists it holds shared locks
        /// while open: a handle that owns the database (the default mode) makes the open
        /// throw `busy`, and handles in ``multiProcess`` mode keep committing but do not
        /// checkpoint until it closes. Without a `-lock` file it takes no lock: open
        /// read-only only a database no writer uses. ``multiProcess`` and
        /// ``createIfMissing`` are ignored.
        public var readOnly = false
        /// Opens a database whose newest meta slot is damaged at the older slot's state,
        /// losing the transactions after it (SPEC.md §2.1 M4). Off by default: open then
        /// throws `corrupt`, naming the transactions that would be lost. A handle that
        /// may write repairs the slots at its first checkpoint (or close), after which the
        /// database opens without this option.
        public var recoverToOlderState = false
        /// Gives space back: when ``Database/checkpoint()`` or the checkpoint at
        /// ``Database/close()`` finds a fifth of the file free, it moves the pages at the
        /// end of the file into the lowest free pages and cuts the file after the last page
        /// in use (SPEC.md §2.13). Writes (their direct commits and automatic checkpoints)
        /// leave the pages they free for the next writes to reuse, and shrink only a file
        /// more than half free. Pages a snapshot can still read stay where they are until
        /// it ends. Off, free pages are only reused, and ``Database/vacuum()`` gives space
        /// back.
        public var shrinksAutomatically = true
        /// The file system (``POSIXFileSystem`` unless testing).
        public var fileSystem: any StorageFileSystem = POSIXFileSystem()

        /// Default options; change fields as needed.
        public init() {}

        /// Options with the fields most often changed.
        public init(
            pageSize: Int = 4_096, durability: Durability = .full, fileSystem: any StorageFileSystem = POSIXFileSystem()
        ) {
            self.pageSize = pageSize
            self.durability = durability
            self.fileSystem = fileSystem
        }
    }

    /// The page file's path; the log and lock files are beside it (`-wal`, `-lock`).
    public let path: String
    let options: Options
    let fileSystem: any StorageFileSystem
    let geometry: Geometry
    /// The page size of this database.
    public var pageSize: Int { geometry.pageSize }
    /// Replaced only by vacuum, under the writer lock; readers take it under `stateLock`.
    var store: PageStore
    let log: WriteAheadLog
    var dataFile: any StorageFile
    let lockFile: any StorageFile

    // Published state, under `stateLock`. The hot fields every commit and transaction
    // touch skip the dynamic exclusivity checks: the locks already serialise access.
    let stateLock = Lock()
    @exclusivity(unchecked) var committed: CommitState
    @exclusivity(unchecked) var readers: [Int: UInt64] = [:]
    var nextReaderID = 0
    var poison: StorageError?
    var isClosed = false

    // Owned by the writer (under `writerGate`).
    let writerGate = WriterGate()
    let syncCoordinator = SyncCoordinator()
    var checkpointed: CommitState
    var metaSlot: Int
    /// What the next checkpoint owes the meta slots besides a new meta (M3, M4).
    var metaRepair = MetaRepair.none
    @exclusivity(unchecked) var freeList = FreeList()
    /// The writer state of the last write transaction, cleared, for the next one
    /// (WriterState+Reuse.swift).
    var spareWriter: WriterState?
    /// The free list as one list (checkpoints, verify); setting it resets the split.
    var freeEntries: [FreeEntry] {
        get { freeList.entries }
        set { freeList = FreeList(entries: newValue) }
    }
    var freeListPages: [UInt64]
    var loggedBytes: UInt64 = 0
    /// The state a shrink last found nothing to move in (SPEC.md §2.13).
    var shrinkDeclined: (state: UInt64, oldest: UInt64?)?
    /// Multi-process mode: the change counter this handle's state reflects.
    var knownCounter: UInt64 = 0
    /// Multi-process mode: how many changes this handle announced (under `stateLock`).
    var announcedChanges: UInt64 = 0
    /// Multi-process mode: guards `checkpointLockShared` and the reader-count transitions.
    let readerLock = Lock()
    var checkpointLockShared = false
    var sharedReaders = 0
    /// Multi-process mode, under `readerLock`: when a checkpoint last waited for other
    /// handles' snapshots in vain (L6).
    var gateFailure: Date?
    /// Catalog entries of the newest committed state, for short read transactions and the
    /// next writer.
    let catalogCache = CatalogCache()
    var saltGenerator = SystemRandomNumberGenerator()

    /// Opens the database at `url` (a file URL).
    /// - Throws: ``StorageError``: `corrupt` or `unsupportedFormat` for a damaged or foreign
    ///   file (and for a damaged newest meta slot, unless ``Options/recoverToOlderState``),
    ///   `busy` when another process has it open, `readOnly` when a file it must write
    ///   cannot be opened for writing (open with ``Options/readOnly``), `io` for a missing
    ///   file or directory and other system-call failures. A refused open creates no file.
    public static func open(at url: URL, options: Options = Options()) throws -> Database {
        try open(at: url.path, options: options)
    }

    /// Opens the database at `path`, creating it if allowed, and recovers it from its log.
    /// Recovery writes nothing; see SPEC.md §2.6.
    /// - Throws: ``StorageError`` (see ``open(at:options:)-(URL,_)``).
    /// - Complexity: O(log size) to scan the log, plus O(free-list pages).
    public static func open(at path: String, options: Options = Options()) throws -> Database {
        try Database(path: path, options: options)
    }

    private init(path: String, options requested: Options) throws {
        self.path = path
        var options = requested
        // A read-only handle takes its own shared locks (Database+Open.swift) and never
        // joins the multi-process protocol, which writes the lock file.
        if options.readOnly { options.multiProcess = false }
        self.options = options
        fileSystem = options.fileSystem
        try Database.checkBeforeCreatingFiles(path: path, options: options)
        let lockFile = try Database.openLockFile(path: path, options: options)
        self.lockFile = lockFile
        do {
            try Database.takeOpenLocks(lockFile, path: path, options: options)
            if options.multiProcess {
                try Database.acquire(lockFile, byte: LockByte.writer, timeout: options.busyTimeout)
            }
            defer { if options.multiProcess { lockFile.unlock(byte: LockByte.writer) } }
            if !options.readOnly && !fileSystem.fileExists(atPath: path) {
                guard options.createIfMissing else { throw Database.missingFileError(path) }
                try Database.create(path: path, options: options)
            }
            dataFile =
                options.readOnly
                ? try fileSystem.openFileReadOnly(atPath: path) : try fileSystem.openFile(atPath: path, create: false)
            let choice = try Database.readMeta(dataFile, path: path)
            let meta = choice.state
            geometry = Geometry(pageSize: choice.pageSize)
            log = WriteAheadLog(
                file: try Database.openLogFile(path: path, options: options), pageSize: choice.pageSize,
                checkpointThreshold: options.checkpointThreshold)
            store = PageStore(dataFile: dataFile, log: log, pageSize: choice.pageSize, cacheBytes: options.cacheSize)
            let recovery = try log.recover(from: meta)
            metaRepair = try Database.checkRecoveredState(choice, recovery, path: path, options: options)
            try Database.checkPageCount(meta: meta, recovered: recovery.state, dataFile: dataFile, log: log)
            store.installLogIndex(recovery.index)
            committed = recovery.state
            checkpointed = meta
            metaSlot = choice.slot
            freeListPages = []
            (freeEntries, freeListPages) = try Database.rebuildFreeList(
                store, geometry: geometry, meta: meta, recovery: recovery)
            if options.multiProcess {
                // A state recovered but never announced (its writer died first) is announced (L4).
                let start = try Database.counterAtOpen(lockFile, recovered: recovery.state.transaction)
                knownCounter = start.counter
                announcedChanges = start.announced ? 1 : 0
            }
        } catch {
            lockFile.close()
            throw error
        }
    }

    /// Opens (creating it when writable) the log file.
    private static func openLogFile(path: String, options: Options) throws -> any StorageFile {
        let fileSystem = options.fileSystem
        let logPath = path + "-wal"
        let logExisted = fileSystem.fileExists(atPath: logPath)
        if options.readOnly {
            return logExisted ? try fileSystem.openFileReadOnly(atPath: logPath) : AbsentFile(path: logPath)
        }
        let logFile = try fileSystem.openFile(atPath: logPath, create: true)
        if !logExisted && options.durability != .off {
            // A new file's directory entry is durable only after the directory is synced (A4).
            try fileSystem.synchronizeDirectory(atPath: Database.directory(of: path))
        }
        return logFile
    }

    /// Writes a new, empty database: header page to a temporary file, synced, renamed into
    /// place, directory synced — so `path` is either absent or complete.
    private static func create(path: String, options: Options) throws {
        guard MetaSlot.isValidPageSize(options.pageSize) else {
            throw StorageError(.invalidArgument, "page size \(options.pageSize): use a power of two from 512 to 65536")
        }
        let fileSystem = options.fileSystem
        let temporary = path + "-new"
        try fileSystem.removeFile(atPath: temporary)
        let file = try fileSystem.openFile(atPath: temporary, create: true)
        defer { file.close() }
        var header = [UInt8](repeating: 0, count: options.pageSize)
        let state = CommitState(transaction: 0, catalogRoot: 0, freeListHead: 0, pageCount: 1)
        header.replaceSubrange(0..<MetaSlot.size, with: MetaSlot.encode(state, pageSize: options.pageSize, slot: 0))
        try header.withUnsafeBytes { try file.write($0, at: 0) }
        if options.durability != .off { try file.synchronize(.full) }
        try fileSystem.removeFile(atPath: path + "-wal")
        try fileSystem.openFile(atPath: path + "-wal", create: true).close()
        try fileSystem.renameFile(atPath: temporary, toPath: path)
        if options.durability != .off { try fileSystem.synchronizeDirectory(atPath: directory(of: path)) }
    }

    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Pages that are neither in the page file nor in the log are free, and are listed in a
    /// free-list chain page (256 entries each) or implied by at most `implicitGrowthLimit`
    /// pages per logged transaction (SPEC.md §5); a larger page count is damage, and is
    /// refused before anything allocates or loops by it.
    static func checkPageCount(meta: CommitState, recovered: CommitState, dataFile: any StorageFile, log: WriteAheadLog)
        throws
    {
        let pageSize = UInt64(log.pageSize)
        let filePages = try dataFile.size() / pageSize
        let logFrames = log.committedFrames
        let limit = 1 + filePages * 256 + logFrames * UInt64(implicitGrowthLimit + 1)
        guard meta.pageCount <= 1 + filePages * 256, recovered.pageCount <= limit else {
            throw StorageError.corrupt(
                "page count \(recovered.pageCount) is impossible for a \(filePages)-page file and \(logFrames)-frame log"
            )
        }
    }

    /// The most pages one logged transaction may add without writing them (allocated and
    /// freed within it); a transaction past this commits directly, writing a free-list chain.
    static let implicitGrowthLimit = 4_096

    /// The free list of the recovered state: the chain the meta names, then each replayed
    /// transaction's allocations (its frames), file growth and free records (SPEC.md §2.6).
    static func rebuildFreeList(
        _ store: PageStore, geometry: Geometry, meta: CommitState, recovery: WriteAheadLog.Recovery
    ) throws -> ([FreeEntry], [UInt64]) {
        let core = TransactionCore(store: store, snapshot: meta, geometry: geometry, writer: nil)
        var (entries, chain) = try loadFreeList(core)
        var pageCount = meta.pageCount
        for transaction in recovery.transactions {
            let written = Set(transaction.written)
            if !written.isEmpty { entries.removeAll { written.contains($0.page) } }
            if transaction.state.pageCount > pageCount {
                for page in pageCount..<transaction.state.pageCount where !written.contains(page) {
                    entries.append(FreeEntry(page: page, freedAt: 0))
                }
            }
            for page in transaction.freed {
                entries.append(FreeEntry(page: page, freedAt: transaction.state.transaction))
            }
            pageCount = max(pageCount, transaction.state.pageCount)
        }
        return (entries, chain)
    }

    /// Reads the free-list chain of the committed state.
    static func loadFreeList(_ core: TransactionCore) throws -> ([FreeEntry], [UInt64]) {
        var entries: [FreeEntry] = []
        var pages: [UInt64] = []
        var next = core.snapshot.freeListHead
        while next != 0 {
            guard UInt64(pages.count) < core.snapshot.pageCount else {
                throw StorageError.corrupt("free list has a cycle")
            }
            let page = try core.page(next)
            guard page.kindByte == PageKind.freeList.rawValue else {
                throw StorageError.corrupt("page \(next): expected a free-list page, found kind \(page.kindByte)")
            }
            for index in 0..<page.count {
                let (freePage, freedAt) = page.freeListEntry(index)
                let entry = FreeEntry(page: freePage, freedAt: freedAt)
                guard entry.page >= 1, entry.page < core.snapshot.pageCount, entry.freedAt <= core.snapshot.transaction
                else {
                    throw StorageError.corrupt("page \(next): free-list entry \(index) out of range")
                }
                entries.append(entry)
            }
            pages.append(next)
            next = page.link
        }
        return (entries, pages)
    }

    // MARK: State

    /// Throws when the handle is closed or poisoned.
    func checkUsable() throws {
        try stateLock.withLock {
            if isClosed { throw StorageError(.closed, "the database is closed") }
            if let poison { throw poison }
        }
    }

    /// Makes the handle unusable after an I/O failure in a commit or checkpoint.
    func poisonHandle(_ error: Error) -> StorageError {
        let reason = (error as? StorageError)?.description ?? "\(error)"
        let poisoned = StorageError(
            .poisoned, "an I/O error made this handle unusable; reopen the database (\(reason))")
        stateLock.withLock { if poison == nil { poison = poisoned } }
        return poisoned
    }

    /// How many pages the page cache holds now: at most ``Options/cacheSize`` over the
    /// page size (64 at least).
    public var cachedPageCount: Int { stateLock.withLock { store }.cachedPageCount }

    /// The id of the newest committed transaction.
    public var lastCommittedTransaction: UInt64 { stateLock.withLock { committed.transaction } }

    /// Bytes of committed frames in the current log generation: what recovery would scan
    /// if the process died now. The log file can be larger, since it is preallocated and
    /// reused across checkpoints (SPEC.md §2.3 W3), so its size does not measure this.
    /// - Throws: ``StorageError``: `busy` when a writer holds the database past
    ///   ``Options/busyTimeout``, `closed`, `poisoned`.
    public func committedLogBytes() throws -> UInt64 {
        try checkUsable()
        try acquireWriterGate()
        defer { writerGate.release() }
        return log.committedBytes
    }

    // MARK: Reading

    /// Runs `body` in a read transaction on the newest committed state.
    ///
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws, or ``StorageError`` (`closed`, `poisoned`, `corrupt`).
    public func read<T>(_ body: (ReadTransaction) throws -> T) throws -> T {
        let transaction = try beginRead()
        defer { transaction.close() }
        return try body(transaction)
    }

    /// A read transaction that keeps its snapshot until ``ReadTransaction/close()`` (or
    /// until it is deallocated): Core Data's query generation. Pages it reaches are not
    /// reused while it is open, so close it when done.
    /// - Throws: ``StorageError``: `closed`, `poisoned`; in multi-process mode `busy` when
    ///   another handle holds the database past ``Options/busyTimeout``, `io`.
    public func snapshot() throws -> ReadTransaction {
        try beginRead()
    }

    func beginRead() throws -> ReadTransaction {
        if options.multiProcess { try beginSharedRead() }
        let (state, id, store) = try stateLock.withLock { () throws -> (CommitState, Int, PageStore) in
            if isClosed || poison != nil {
                if options.multiProcess { endSharedRead() }
                if let poison { throw poison }
                throw StorageError(.closed, "the database is closed")
            }
            let id = nextReaderID
            nextReaderID += 1
            readers[id] = committed.transaction
            return (committed, id, self.store)
        }
        let core = TransactionCore(
            store: store, snapshot: state, geometry: geometry, writer: nil, catalogCache: catalogCache)
        return ReadTransaction(database: self, core: core, readerID: id)
    }

    func endRead(_ id: Int) {
        stateLock.withLock { _ = readers.removeValue(forKey: id) }
        if options.multiProcess { endSharedRead() }
    }

    // MARK: Writing

    /// Runs `body` in the write transaction, then commits; rolls back if `body` throws.
    ///
    /// Writers run one at a time; a second waits up to ``Options/busyTimeout``. With
    /// ``Durability/full`` the commit is durable when this returns.
    ///
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws (nothing is committed), or ``StorageError``: `busy`,
    ///   `poisoned`, `io`/`noSpace` (the handle is then poisoned), `corrupt`, `readOnly` on
    ///   a handle opened with ``Options/readOnly``.
    public func write<T>(_ body: (WriteTransaction) throws -> T) throws -> T {
        try checkUsable()
        try checkWritable()
        let gathering = options.durability == .full
        if gathering { syncCoordinator.committerStarted() }
        var finished = false
        defer { if gathering && !finished { syncCoordinator.committerFinished() } }
        try acquireWriterGate()
        var sequence: UInt64?
        let result: T
        do {
            defer {
                writerGate.release()
                if gathering {
                    finished = true
                    syncCoordinator.committerFinished()
                }
            }
            try checkUsable()
            if options.multiProcess {
                try Database.acquire(lockFile, byte: LockByte.writer, timeout: options.busyTimeout)
                try refreshLocked()
            }
            defer { if options.multiProcess { lockFile.unlock(byte: LockByte.writer) } }
            // Kept for the next transaction once this one's objects are gone (the inner scope).
            var finishedWriter: WriterState?
            defer { recycle(&finishedWriter) }
            do {
                let transaction = try beginWrite()
                finishedWriter = transaction.core.writer
                defer { endWrite(transaction.core) }
                result = try body(transaction)
                sequence = try commit(transaction.core)
            }
            let checkpointIsDue = log.committedBytes >= UInt64(options.checkpointThreshold)
            if checkpointIsDue || shrinkIsDue(.write), try beginExclusiveCheckpoint() {
                defer { endExclusiveCheckpoint() }
                if checkpointIsDue { try checkpointLocked() }
                try shrinkIfDue(.write)
            }
        }
        if let sequence, options.durability == .full {
            do {
                try syncCoordinator.waitDurable(sequence) { try log.file.synchronize(.data) }
            } catch {
                throw poisonHandle(error)
            }
        }
        return result
    }

    func beginWrite() throws -> WriteTransaction {
        let (state, oldestReader) = stateLock.withLock { () -> (CommitState, UInt64) in
            (committed, readers.values.min() ?? committed.transaction)
        }
        // Only a damaged (forged) meta or log gets here: 2^63 transactions never happen.
        guard state.transaction + 1 < MetaSlot.transactionLimit else {
            throw StorageError.corrupt(
                "transaction id \(state.transaction) is at the limit of 2^63 (SPEC.md §5): the meta is damaged")
        }
        freeList.release(
            threshold: min(oldestReader, checkpointed.transaction), snapshotThreshold: oldestReader,
            reuseLogBorn: !options.multiProcess)
        let reusable = freeList.reusable
        freeList.reusable = []
        let writer = makeWriter(transaction: state.transaction + 1, pageCount: state.pageCount, reusable: reusable)
        let core = TransactionCore(
            store: store, snapshot: state, geometry: geometry, writer: writer, catalogCache: catalogCache)
        swap(&core.trees, &writer.spareTrees)
        return WriteTransaction(database: self, core: core)
    }

    /// Ends a write transaction, committed or not: closes it, gives back its free pages if it
    /// did not commit, and hands its tree table's storage to its writer for the next one.
    func endWrite(_ core: TransactionCore) {
        core.isOpen = false
        guard let writer = core.writer else { return }
        restoreFreeList(writer)
        swap(&core.trees, &writer.spareTrees)
    }

    /// After a write transaction that did not commit: gives back the reusable pages it was
    /// handed (those it took included, pages past its starting count excluded).
    func restoreFreeList(_ writer: WriterState) {
        guard !writer.freeListReturned else { return }
        writer.freeListReturned = true
        var pages = Set(writer.reusable)
        pages.formUnion(writer.taken)
        freeList.reusable = pages.filter { $0 < writer.basePageCount }.sorted(by: >)
    }

    // MARK: Closing

    /// Checkpoints (unless disabled or poisoned) and closes the files. Open snapshots fail
    /// afterwards. Calling it again does nothing.
    /// - Throws: ``StorageError``: `busy` when a writer holds the database past
    ///   ``Options/busyTimeout``; what the closing checkpoint throws (the files are closed
    ///   anyway, and the next open recovers).
    public func close() throws {
        let alreadyClosed = stateLock.withLock { isClosed }
        if alreadyClosed { return }
        guard try writerGate.acquire(timeout: options.busyTimeout) else {
            throw StorageError(.busy, "a writer is still running on \(path)")
        }
        defer { writerGate.release() }
        var failure: Error?
        if options.checkpointOnClose && !options.readOnly && stateLock.withLock({ poison == nil }) {
            do {
                if options.multiProcess {
                    if try lockFile.tryLock(byte: LockByte.writer, exclusive: true) {
                        defer { lockFile.unlock(byte: LockByte.writer) }
                        try refreshLocked()
                        if try beginExclusiveCheckpoint() {
                            defer { endExclusiveCheckpoint() }
                            try checkpointLocked()
                            try shrinkIfDue(.checkpoint)
                        }
                    }
                } else {
                    try checkpointLocked()
                    try shrinkIfDue(.checkpoint)
                    // A closed database is its page file alone, as SQLite's is; the next
                    // session's commits preallocate the log again (SPEC.md §2.3 W3).
                    try log.truncateAfterCheckpoint()
                }
            } catch {
                failure = error
            }
        }
        stateLock.withLock { isClosed = true }
        log.file.close()
        dataFile.close()
        lockFile.close()
        if let failure { throw failure }
    }

    deinit {
        log.file.close()
        dataFile.close()
        lockFile.close()
    }
}
