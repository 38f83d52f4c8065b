// The engine-level "ours" side: the project's StorageEngine, used as its API
// documents. Rows live in one named tree, "kv"; the 8-byte key is stored big-endian so
// byte order is key order (the keys are non-negative). Values are passed and read as
// raw buffers, without intermediate arrays, as SQLite's side binds and reads them.
import StorageEngine

final class OursKeyValueEngine: KeyValueEngine {
    static let sideName = "ours"

    static func files(at path: String) -> [String] { [path, logFile(at: path)] }

    static func logFile(at path: String) -> String { path + "-wal" }

    private static let treeName = "kv"

    private let database: Database
    // False for handles that share another's database (group commit): only the owner
    // closes it.
    private let ownsDatabase: Bool

    init(path: String, options: EngineOptions) throws {
        var engineOptions = Database.Options()
        engineOptions.durability = options.durability == .full ? .full : .normal
        if !options.checkpointsAutomatically {
            engineOptions.checkpointThreshold = .max
        }
        database = try Database.open(at: path, options: engineOptions)
        ownsDatabase = true
    }

    private init(sharing database: Database) {
        self.database = database
        ownsDatabase = false
    }

    /// The same handle: a `Database` is safe to share between threads, and its commits
    /// share syncs (group commit) only within one handle, which is how an application
    /// with several writer threads uses it. SQLite's side needs one connection per
    /// thread instead.
    func openWriterForAnotherThread() throws -> OursKeyValueEngine {
        OursKeyValueEngine(sharing: database)
    }

    func write(_ body: (inout Writer) throws -> Void) throws {
        try database.write { transaction in
            var writer = Writer(tree: try transaction.openTree(named: Self.treeName))
            try body(&writer)
        }
    }

    func read<Result>(_ body: (inout Reader) throws -> Result) throws -> Result {
        try database.read { transaction in
            var reader = Reader(tree: try transaction.tree(named: Self.treeName))
            return try body(&reader)
        }
    }

    func vacuum() throws { try database.vacuum() }

    func committedLogBytes() throws -> Int { Int(try database.committedLogBytes()) }

    func close() throws {
        if ownsDatabase { try database.close() }
    }

    struct Writer: KeyValueWriter {
        let tree: Tree

        mutating func put(_ key: Int64, _ value: UnsafeRawBufferPointer) throws {
            try withUnsafeBytes(of: key.bigEndian) { try tree.setValue(value, forKey: $0) }
        }
    }

    struct Reader: KeyValueReader {
        /// Nil when the store has no "kv" tree yet (nothing was ever written).
        let tree: Tree?

        mutating func get(_ key: Int64) throws -> Int? {
            guard let tree else { return nil }
            return try withUnsafeBytes(of: key.bigEndian) { try tree.withValue(forKey: $0, valueChecksum) }
        }

        mutating func scan() throws -> (rows: Int, checksum: Int) {
            guard let tree else { return (0, 0) }
            var rows = 0
            var checksum = 0
            try tree.scan { _, value in
                rows += 1
                checksum &+= valueChecksum(value)
                return true
            }
            return (rows, checksum)
        }
    }
}
