import Synchronization

// The real file system: pread/pwrite/fdatasync/fsync/ftruncate/fcntl. The only file in
// the engine that calls the operating system; EINTR and short transfers are looped here.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The operating system's file system.
public struct POSIXFileSystem: StorageFileSystem {
    /// The real file system.
    public init() {}

    /// Opens (or creates) the file at `path` for reading and writing.
    /// - Throws: ``StorageError`` `readOnly` when the file system is read-only or the file
    ///   (or, to create it, its directory) is not writable; `io` (or `noSpace`) otherwise.
    public func openFile(atPath path: String, create: Bool) throws -> any StorageFile {
        let flags = O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0)
        let descriptor = retryingInterrupts { open(path, flags, 0o644) }
        guard descriptor >= 0 else {
            let code = errno
            if code == EROFS || code == EACCES || code == EPERM {
                let text = String(cString: strerror(code))
                throw StorageError(
                    .readOnly,
                    "open \(path) for writing: \(text) (errno \(code)): the file or its directory is not writable; "
                        + "open the database read-only (Database.Options.readOnly)")
            }
            throw POSIXFileSystem.error("open \(path)")
        }
        return POSIXFile(descriptor: descriptor, path: path)
    }

    /// Opens the existing file at `path` for reading only.
    /// - Throws: ``StorageError`` `io` when the file cannot be opened.
    public func openFileReadOnly(atPath path: String) throws -> any StorageFile {
        let descriptor = retryingInterrupts { open(path, O_RDONLY | O_CLOEXEC) }
        guard descriptor >= 0 else { throw POSIXFileSystem.error("open \(path) for reading") }
        return POSIXFile(descriptor: descriptor, path: path)
    }

    /// Whether a file exists at `path`.
    public func fileExists(atPath path: String) -> Bool {
        access(path, F_OK) == 0
    }

    /// Whether a directory exists at `path`.
    public func directoryExists(atPath path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
    }

    /// Removes the file at `path`, if any.
    /// - Throws: ``StorageError`` `io` when the file exists and cannot be removed.
    public func removeFile(atPath path: String) throws {
        if unlink(path) != 0 && errno != ENOENT { throw POSIXFileSystem.error("unlink \(path)") }
    }

    /// Renames `source` over `destination`.
    /// - Throws: ``StorageError`` `io` when the rename fails.
    public func renameFile(atPath source: String, toPath destination: String) throws {
        if rename(source, destination) != 0 { throw POSIXFileSystem.error("rename \(source)") }
    }

    /// Makes the directory entries durable.
    /// - Throws: ``StorageError`` `io` when the directory cannot be opened or synced.
    public func synchronizeDirectory(atPath path: String) throws {
        let descriptor = retryingInterrupts { open(path, O_RDONLY | O_CLOEXEC | O_DIRECTORY) }
        guard descriptor >= 0 else { throw POSIXFileSystem.error("open directory \(path)") }
        defer { _ = Glibc.close(descriptor) }
        if fsync(descriptor) != 0 { throw POSIXFileSystem.error("fsync directory \(path)") }
    }

    static func error(_ call: String) -> StorageError {
        let code = errno
        let text = String(cString: strerror(code))
        if code == ENOSPC { return StorageError(.noSpace, "\(call): \(text)") }
        return StorageError(.io, "\(call): \(text) (errno \(code))")
    }
}

@inline(__always)
private func retryingInterrupts(_ call: () -> Int32) -> Int32 {
    while true {
        let result = call()
        if result >= 0 || errno != EINTR { return result }
    }
}

/// An open file descriptor. The descriptor is immutable; close is idempotent.
final class POSIXFile: StorageFile, @unchecked Sendable {
    private let descriptor: Int32
    private let path: String
    private let closed = Atomic<Bool>(false)

    init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit { close() }

    private func checkOpen() throws {
        if closed.load(ordering: .acquiring) { throw StorageError(.closed, "\(path) is closed") }
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
        try checkOpen()
        guard let base = buffer.baseAddress else { return 0 }
        return try transferAll(buffer.count, at: offset, "pread") { done, remaining, position in
            pread(descriptor, base + done, remaining, position)
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
        try checkOpen()
        guard let base = bytes.baseAddress else { return }
        let written = try transferAll(bytes.count, at: offset, "pwrite") { done, remaining, position in
            pwrite(descriptor, base + done, remaining, position)
        }
        guard written == bytes.count else {
            throw StorageError(.io, "pwrite \(path): wrote \(written) of \(bytes.count) bytes")
        }
    }

    /// The most pieces one `pwritev` takes: `IOV_MAX` on Linux and Darwin (a macro Swift
    /// does not import).
    static let maximumVectors = 1_024

    /// One `pwritev` per at most ``maximumVectors`` pieces, resuming inside a piece after
    /// a short write.
    func write(gathering pieces: UnsafeBufferPointer<UnsafeRawBufferPointer>, at offset: UInt64) throws {
        try checkOpen()
        let total = pieces.reduce(0) { $0 + $1.count }
        try withUnsafeTemporaryAllocation(of: iovec.self, capacity: max(1, pieces.count)) { vectors in
            var used = 0
            for piece in pieces {
                guard let base = piece.baseAddress, !piece.isEmpty else { continue }
                vectors[used] = iovec(iov_base: UnsafeMutableRawPointer(mutating: base), iov_len: piece.count)
                used += 1
            }
            guard let start = vectors.baseAddress else { return }
            var first = 0
            var done = 0
            while done < total, first < used {
                let batch = Int32(min(used - first, Self.maximumVectors))
                let result = pwritev(descriptor, start + first, batch, off_t(offset) + off_t(done))
                if result < 0 {
                    if errno == EINTR { continue }
                    throw POSIXFileSystem.error("pwritev \(path)")
                }
                if result == 0 { break }
                done += result
                var consumed = result
                while consumed > 0 {
                    if consumed >= vectors[first].iov_len {
                        consumed -= vectors[first].iov_len
                        first += 1
                    } else {
                        vectors[first].iov_base = vectors[first].iov_base.map { $0 + consumed }
                        vectors[first].iov_len -= consumed
                        consumed = 0
                    }
                }
            }
            guard done == total else {
                throw StorageError(.io, "pwritev \(path): wrote \(done) of \(total) bytes")
            }
        }
    }

    /// Moves `count` bytes at `offset` with as many calls of `transfer` (given the bytes
    /// done, the bytes remaining and the file position) as short transfers need, retrying
    /// interrupted calls; a transfer of 0 (end of file) ends early. Returns the bytes moved.
    @inline(__always)
    private func transferAll(
        _ count: Int, at offset: UInt64, _ call: String, _ transfer: (Int, Int, off_t) -> Int
    ) throws -> Int {
        var done = 0
        while done < count {
            let result = transfer(done, count - done, off_t(offset) + off_t(done))
            if result < 0 {
                if errno == EINTR { continue }
                throw POSIXFileSystem.error("\(call) \(path)")
            }
            if result == 0 { break }
            done += result
        }
        return done
    }

    func size() throws -> UInt64 {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw POSIXFileSystem.error("fstat \(path)") }
        return UInt64(status.st_size)
    }

    func truncate(to size: UInt64) throws {
        guard retryingInterrupts({ ftruncate(descriptor, off_t(size)) }) == 0 else {
            throw POSIXFileSystem.error("ftruncate \(path)")
        }
    }

    func synchronize(_ kind: SyncKind) throws {
        try checkOpen()
        // Never retried on failure (SPEC.md A3): the caller poisons the handle.
        let result = kind == .data ? fdatasync(descriptor) : fsync(descriptor)
        if result != 0 { throw POSIXFileSystem.error(kind == .data ? "fdatasync \(path)" : "fsync \(path)") }
    }

    func tryLock(byte: UInt64, exclusive: Bool) throws -> Bool {
        var lock = flock()
        lock.l_type = Int16(exclusive ? F_WRLCK : F_RDLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = off_t(byte)
        lock.l_len = 1
        lock.l_pid = 0
        // F_OFD_SETLK (37): the lock belongs to this descriptor and dies with it, not with
        // the process's first close of any descriptor of the file.
        let openFileDescriptionSetLock: Int32 = 37
        let result = withUnsafeMutablePointer(to: &lock) { fcntl(descriptor, openFileDescriptionSetLock, $0) }
        if result == 0 { return true }
        if errno == EAGAIN || errno == EACCES || errno == EINTR { return false }
        throw POSIXFileSystem.error("fcntl lock \(path)")
    }

    func unlock(byte: UInt64) {
        var lock = flock()
        lock.l_type = Int16(F_UNLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = off_t(byte)
        lock.l_len = 1
        let openFileDescriptionSetLock: Int32 = 37
        _ = withUnsafeMutablePointer(to: &lock) { fcntl(descriptor, openFileDescriptionSetLock, $0) }
    }

    func close() {
        if !closed.exchange(true, ordering: .acquiringAndReleasing) { _ = Glibc.close(descriptor) }
    }
}
