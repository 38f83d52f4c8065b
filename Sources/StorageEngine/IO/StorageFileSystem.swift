// The one seam for every system call the engine makes. The engine never calls the
// operating system directly: it asks a `StorageFileSystem` for files and a
// `StorageFile` for bytes, syncs and locks, so tests can swap in a simulated medium
// that crashes, tears writes and fails on demand (SimulatedFileSystem).

/// What a sync must make durable.
public enum SyncKind: Sendable {
    /// The file's data and the metadata needed to read it back (`fdatasync`).
    case data
    /// The data and all metadata (`fsync`).
    case full
}

/// A directory of files the engine can open, rename and remove.
///
/// ``POSIXFileSystem`` is the real implementation; ``SimulatedFileSystem`` keeps files in
/// memory with a durable and a volatile image for crash and fault testing.
public protocol StorageFileSystem: Sendable {
    /// Opens the file at `path` for reading and writing, creating an empty one when
    /// `create` is true.
    /// - Throws: ``StorageError`` with code `readOnly` when the file or its directory cannot
    ///   be written (a read-only file system, no permission), `io` for other failures.
    func openFile(atPath path: String, create: Bool) throws -> any StorageFile
    /// Opens the existing file at `path` for reading only: its writes and truncations
    /// throw, and it takes shared locks only.
    /// - Throws: ``StorageError`` with code `io` when the file cannot be opened.
    func openFileReadOnly(atPath path: String) throws -> any StorageFile
    /// Whether a file exists at `path`.
    func fileExists(atPath path: String) -> Bool
    /// Whether a directory exists at `path`.
    func directoryExists(atPath path: String) -> Bool
    /// Removes the file at `path` (no error when it does not exist).
    /// - Throws: ``StorageError`` `io` when it exists and cannot be removed.
    func removeFile(atPath path: String) throws
    /// Atomically replaces `destination` with `source`.
    /// - Throws: ``StorageError`` `io` when the rename fails.
    func renameFile(atPath source: String, toPath destination: String) throws
    /// Makes the directory's entries (creations, renames, removals) durable.
    /// - Throws: ``StorageError`` `io` when the directory cannot be synced.
    func synchronizeDirectory(atPath path: String) throws
}

/// An open file: positioned reads and writes, syncs and byte-range locks.
public protocol StorageFile: AnyObject, Sendable {
    /// Reads up to `buffer.count` bytes at `offset`, looping over short reads; returns the
    /// number read, fewer only at the end of the file.
    /// - Throws: ``StorageError`` `io`, or `closed` after ``close()``.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int
    /// Writes all of `bytes` at `offset`, looping over short writes.
    /// - Throws: ``StorageError`` `io` or `noSpace`, or `closed` after ``close()``.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws
    /// Writes the concatenation of `pieces` at `offset`, looping over short writes: one
    /// gathered write where the system has one, so the caller need not copy the pieces
    /// into one buffer first (the log's frames: headers and the pages' own bytes). The
    /// default gathers them into one buffer and calls ``write(_:at:)`` once.
    /// - Throws: ``StorageError`` `io` or `noSpace`, or `closed` after ``close()``.
    func write(gathering pieces: UnsafeBufferPointer<UnsafeRawBufferPointer>, at offset: UInt64) throws
    /// The file's size in bytes.
    /// - Throws: ``StorageError`` `io`, or `closed` after ``close()``.
    func size() throws -> UInt64
    /// Sets the file's size.
    /// - Throws: ``StorageError`` `io` or `noSpace`, or `closed` after ``close()``.
    func truncate(to size: UInt64) throws
    /// Makes written bytes durable. A failure must not be retried: the caller poisons.
    /// - Throws: ``StorageError`` `io`, or `closed` after ``close()``.
    func synchronize(_ kind: SyncKind) throws
    /// Takes a lock on one byte without waiting; returns false when another holder has it.
    /// - Throws: ``StorageError`` `io`, or `closed` after ``close()``.
    func tryLock(byte: UInt64, exclusive: Bool) throws -> Bool
    /// Releases a lock taken with ``tryLock(byte:exclusive:)``.
    func unlock(byte: UInt64)
    /// Closes the file; later calls throw.
    func close()
}

extension StorageFile {
    /// Gathers `pieces` into one buffer and writes it with ``write(_:at:)``: one write, as
    /// a simulated medium counts, tears and fails writes.
    public func write(gathering pieces: UnsafeBufferPointer<UnsafeRawBufferPointer>, at offset: UInt64) throws {
        let total = pieces.reduce(0) { $0 + $1.count }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: total, alignment: 16)
        defer { buffer.deallocate() }
        var position = 0
        for piece in pieces where !piece.isEmpty {
            UnsafeMutableRawBufferPointer(rebasing: buffer[position...]).copyMemory(from: piece)
            position += piece.count
        }
        try write(UnsafeRawBufferPointer(buffer), at: offset)
    }

    /// Reads exactly `count` bytes at `offset` into a new array, or throws `corrupt` when the
    /// file ends first.
    func readExactly(count: Int, at offset: UInt64, what: @autoclosure () -> String) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let read = try bytes.withUnsafeMutableBytes { try self.read(into: $0, at: offset) }
        guard read == count else { throw StorageError.corrupt("\(what()): file ends after \(read) of \(count) bytes") }
        return bytes
    }
}
