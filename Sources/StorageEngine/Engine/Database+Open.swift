// Opening, before recovery: what open refuses before it creates any file (a missing file
// it may not create, a missing directory, a file that is not a database), the `-lock`
// file, and the locks a handle holds while open (SPEC.md §2.8, §2.12).

extension Database {
    /// The first bytes of a SQLite database file.
    static let sqliteMagic = Array("SQLite format 3\0".utf8)

    /// Refuses what open cannot use before the `-lock` file (or anything else) is
    /// created, so a failed open leaves the directory as it was.
    static func checkBeforeCreatingFiles(path: String, options: Options) throws {
        let fileSystem = options.fileSystem
        guard fileSystem.fileExists(atPath: path) else {
            if options.readOnly || !options.createIfMissing { throw missingFileError(path) }
            guard MetaSlot.isValidPageSize(options.pageSize) else {
                throw StorageError(
                    .invalidArgument, "page size \(options.pageSize): use a power of two from 512 to 65536")
            }
            let directory = directory(of: path)
            guard fileSystem.directoryExists(atPath: directory) else {
                throw StorageError(.io, "the directory \(directory) does not exist: create it before opening \(path)")
            }
            return
        }
        if fileSystem.directoryExists(atPath: path) {
            throw StorageError(.io, "\(path) is a directory, not a database file: give the path of the file")
        }
        try identify(path, fileSystem: fileSystem)
    }

    /// Reads the header of the existing file at `path` and refuses an empty file, a SQLite
    /// database, and a file with no valid meta slot. No lock is needed: a database appears
    /// at its path whole (by rename), and a checkpoint writes one slot at a time, the other
    /// staying valid.
    private static func identify(_ path: String, fileSystem: any StorageFileSystem) throws {
        let file = try fileSystem.openFileReadOnly(atPath: path)
        defer { file.close() }
        var header = [UInt8](repeating: 0, count: sqliteMagic.count)
        let read = try header.withUnsafeMutableBytes { try file.read(into: $0, at: 0) }
        guard read > 0 else {
            throw StorageError.corrupt(
                "\(path) is empty: not a database (remove the file, or choose another path, to create one)")
        }
        if header == sqliteMagic {
            throw StorageError.corrupt(
                "\(path) is a SQLite database, not an OpenCoreData one: this engine does not read SQLite files. "
                    + "Move the data with the program that wrote it (a Core Data store: fetch the objects there and "
                    + "save them into a new store here)")
        }
        _ = try readMeta(file, path: path)
    }

    static func missingFileError(_ path: String) -> StorageError {
        StorageError(
            .io,
            "there is no database at \(path): check the path (an open that may not create one, read-only or "
                + "without createIfMissing, does not)")
    }

    /// The `-lock` file: created if needed; a read-only handle opens it read-only, or
    /// stands in for it with an ``AbsentFile`` when there is none (and takes no lock).
    static func openLockFile(path: String, options: Options) throws -> any StorageFile {
        let lockPath = path + "-lock"
        guard options.readOnly else { return try options.fileSystem.openFile(atPath: lockPath, create: true) }
        guard options.fileSystem.fileExists(atPath: lockPath) else { return AbsentFile(path: lockPath) }
        return try options.fileSystem.openFileReadOnly(atPath: lockPath)
    }

    /// The locks a handle holds while open (§2.8): the open byte, exclusive for a handle
    /// that owns the database, shared otherwise; a read-only handle also holds the
    /// checkpoint byte shared, so no handle checkpoints (resets the log, overwrites page
    /// slots) under the state it read.
    static func takeOpenLocks(_ lockFile: any StorageFile, path: String, options: Options) throws {
        guard try lockFile.tryLock(byte: LockByte.open, exclusive: !options.multiProcess && !options.readOnly) else {
            if options.readOnly {
                throw StorageError(
                    .busy, "\(path) is open in another process that owns it; a read-only open waits for it to close")
            }
            throw StorageError(
                .busy,
                "\(path) is open in another process"
                    + (options.multiProcess ? " without multiProcess" : "; open both with Options.multiProcess"))
        }
        if options.readOnly {
            try acquire(lockFile, byte: LockByte.checkpoint, timeout: options.busyTimeout, exclusive: false)
        }
    }

    /// Throws `readOnly` on a handle opened with ``Options/readOnly``.
    func checkWritable() throws {
        guard !options.readOnly else {
            throw StorageError(.readOnly, "\(path) was opened read-only (Options.readOnly): it cannot be changed")
        }
    }

    /// Takes the in-process writer gate, waiting at most ``Options/busyTimeout``; the caller
    /// releases it.
    func acquireWriterGate() throws {
        guard try writerGate.acquire(timeout: options.busyTimeout) else {
            throw StorageError(.busy, "another writer held \(path) for \(options.busyTimeout) s")
        }
    }

    /// Runs `body` on a usable, writable handle holding the writer gate: the entry of the
    /// maintenance operations (checkpoint, vacuum). Usability is checked again once the
    /// gate is held, since the writer it waited for may have poisoned the handle.
    func withMaintenanceGate<T>(_ body: () throws -> T) throws -> T {
        try checkUsable()
        try checkWritable()
        try acquireWriterGate()
        defer { writerGate.release() }
        try checkUsable()
        return try body()
    }
}

/// Stands in for a file a read-only handle found absent (the log, the `-lock` file): it
/// reads as empty, grants every lock (there is no file for another handle to lock), and
/// refuses writes.
final class AbsentFile: StorageFile, @unchecked Sendable {
    let path: String

    init(path: String) { self.path = path }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int { 0 }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
        throw StorageError(.readOnly, "\(path) does not exist and this handle is read-only")
    }

    func size() throws -> UInt64 { 0 }

    func truncate(to size: UInt64) throws {
        throw StorageError(.readOnly, "\(path) does not exist and this handle is read-only")
    }

    func synchronize(_ kind: SyncKind) throws {}

    func tryLock(byte: UInt64, exclusive: Bool) throws -> Bool { true }

    func unlock(byte: UInt64) {}

    func close() {}
}
