// The engine-level workload protocol: what every side (our StorageEngine, SQLite's C
// API) implements so the same workload code drives each of them. The shape is the
// smallest common one: an ordered map from 8-byte integer keys to byte-string values,
// write transactions committed at the handle's durability, read transactions, a full
// scan in key order, vacuum, and the list of files that make up a store.

/// How a commit must survive: `full` survives power loss (SQLite `synchronous=FULL`,
/// our full durability: an fdatasync per commit); `normal` survives a process crash
/// (SQLite `synchronous=NORMAL` in WAL mode: no sync per commit).
enum Durability: Sendable {
    case full
    case normal
}

/// How a workload wants a store opened.
struct EngineOptions: Sendable {
    /// What every commit through this handle survives.
    var durability = Durability.full
    /// False keeps every commit in the write-ahead log (SQLite `wal_autocheckpoint=0`),
    /// so the recovery workload can copy a store with an uncheckpointed log.
    var checkpointsAutomatically = true
}

/// Puts rows inside one write transaction.
protocol KeyValueWriter: SendableMetatype {
    /// Inserts or replaces the value stored under `key`.
    mutating func put(_ key: Int64, _ value: UnsafeRawBufferPointer) throws
}

/// Reads rows inside one read transaction (one snapshot).
protocol KeyValueReader: SendableMetatype {
    /// A checksum of the value stored under `key` (its length plus its first and last
    /// bytes, so the value is really read), or nil when the key is absent.
    mutating func get(_ key: Int64) throws -> Int?
    /// Visits every row in key order and returns how many rows it saw and a checksum of
    /// their values, computed the same way as `get`'s.
    mutating func scan() throws -> (rows: Int, checksum: Int)
}

/// One side of the engine-level comparison. A value is one open handle on one store;
/// it is used by one thread at a time (the group-commit workload hands each writer
/// thread its own handle, hence the sendable metatype).
protocol KeyValueEngine: AnyObject, SendableMetatype {
    associatedtype Writer: KeyValueWriter
    associatedtype Reader: KeyValueReader

    /// The column name in the result table ("ours", "SQLite").
    static var sideName: String { get }

    /// The files that make up a closed store at `path` and must be copied to copy it
    /// (the data file first, then the log); shared-memory and lock files, which an open
    /// rebuilds, are not among them. Some may not exist.
    static func files(at path: String) -> [String]

    /// The write-ahead log among `files(at:)`.
    static func logFile(at path: String) -> String

    /// Bytes of committed transactions in the write-ahead log, which the recovery
    /// workload grows: SQLite's log file size (a fresh WAL holds only frames); ours
    /// asks the engine, whose log file is preallocated ahead of its frames.
    func committedLogBytes() throws -> Int

    /// Opens the store at `path`, creating an empty one when there is none.
    init(path: String, options: EngineOptions) throws

    /// Opens another handle on the same store for another thread's writes (SQLite:
    /// another connection, waiting on a busy store with a busy timeout).
    func openWriterForAnotherThread() throws -> Self

    /// Runs `body` in one write transaction and commits it at the handle's durability;
    /// returns once the commit is as durable as that promises.
    func write(_ body: (inout Writer) throws -> Void) throws

    /// Runs `body` in one read transaction.
    func read<Result>(_ body: (inout Reader) throws -> Result) throws -> Result

    /// Looks one key up in a read transaction of its own, as a caller that wants one
    /// row does.
    func get(_ key: Int64) throws -> Int?

    /// Rewrites the store to its smallest size.
    func vacuum() throws

    /// Closes the handle; the store on disk is then complete without a log to replay
    /// (SQLite checkpoints on the last close).
    func close() throws
}

extension KeyValueEngine {
    func get(_ key: Int64) throws -> Int? { try read { try $0.get(key) } }
}

/// The ~100-byte value stored under `key`: the same bytes on every side, different per
/// key (so nothing compresses or deduplicates them away), made without allocating.
struct ValueBytes {
    static let count = 100
    private var storage = [UInt8](repeating: 0, count: ValueBytes.count)

    /// Fills the buffer for `key` and hands it to `body`.
    mutating func withValue<Result>(
        for key: Int64, _ body: (UnsafeRawBufferPointer) throws -> Result
    ) rethrows -> Result {
        var state = UInt64(bitPattern: key) &* 0x9E37_79B9_7F4A_7C15
        for index in storage.indices {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            storage[index] = UInt8(truncatingIfNeeded: state >> 56)
        }
        return try storage.withUnsafeBytes(body)
    }
}

/// The checksum `KeyValueReader` promises for a value's bytes.
@inline(__always)
func valueChecksum(_ bytes: UnsafeRawBufferPointer) -> Int {
    guard let first = bytes.first, let last = bytes.last else { return 0 }
    return bytes.count + Int(first) + Int(last)
}
