// The engine-level SQLite side: SQLite's C API in WAL mode, one rowid table
// `kv(key INTEGER PRIMARY KEY, value BLOB)` — the integer key is the B-tree key itself,
// SQLite's fastest layout for 8-byte integer keys — and statements prepared once per
// connection. Write transactions are `BEGIN IMMEDIATE`, so concurrent writers wait
// for the lock up front (with the busy timeout) instead of failing on an upgrade.
import PeersSQLite3

final class SQLiteKeyValueEngine: KeyValueEngine {
    static let sideName = "SQLite"

    static func files(at path: String) -> [String] { [path, logFile(at: path)] }

    static func logFile(at path: String) -> String { path + "-wal" }

    private let path: String
    private let options: EngineOptions
    private let connection: SQLiteConnection
    private var statements: [String: SQLiteStatement] = [:]
    // The lookup statement, kept out of the dictionary: a string hash per lookup would
    // be a visible share of a microsecond.
    private var selectStatement: SQLiteStatement?

    init(path: String, options: EngineOptions) throws {
        self.path = path
        self.options = options
        connection = try SQLiteConnection(path: path)
        try connection.execute("PRAGMA busy_timeout = 10000")
        try connection.execute(
            options.durability == .full ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL")
        guard try connection.text("PRAGMA journal_mode = WAL") == "wal" else {
            throw SQLiteError(code: SQLITE_ERROR, message: "WAL mode refused for \(path)")
        }
        if !options.checkpointsAutomatically {
            try connection.execute("PRAGMA wal_autocheckpoint = 0")
        }
        try connection.execute("CREATE TABLE IF NOT EXISTS kv(key INTEGER PRIMARY KEY, value BLOB NOT NULL)")
    }

    func openWriterForAnotherThread() throws -> SQLiteKeyValueEngine {
        try SQLiteKeyValueEngine(path: path, options: options)
    }

    func committedLogBytes() throws -> Int { totalFileSize([Self.logFile(at: path)]) }

    /// Prepares `sql` the first time it is used on this connection, so opening costs
    /// only what the first operation needs.
    private func statement(_ sql: String) throws -> SQLiteStatement {
        if let statement = statements[sql] { return statement }
        let statement = try connection.prepare(sql)
        statements[sql] = statement
        return statement
    }

    func write(_ body: (inout Writer) throws -> Void) throws {
        try statement("BEGIN IMMEDIATE").run()
        var writer = Writer(insert: try statement("INSERT OR REPLACE INTO kv(key, value) VALUES (?, ?)"))
        do {
            try body(&writer)
            try statement("COMMIT").run()
        } catch {
            try? statement("ROLLBACK").run()
            throw error
        }
    }

    func read<Result>(_ body: (inout Reader) throws -> Result) throws -> Result {
        try statement("BEGIN").run()
        var reader = Reader(
            select: try statement("SELECT value FROM kv WHERE key = ?"),
            scanStatement: try statement("SELECT value FROM kv ORDER BY key"))
        defer { try? statement("COMMIT").run() }
        return try body(&reader)
    }

    /// An autocommit SELECT: SQLite opens and ends the read transaction inside the one
    /// statement, cheaper than an explicit BEGIN/COMMIT pair.
    func get(_ key: Int64) throws -> Int? {
        let select = try selectStatement ?? statement("SELECT value FROM kv WHERE key = ?")
        selectStatement = select
        var reader = Reader(select: select, scanStatement: nil)
        return try reader.get(key)
    }

    func vacuum() throws { try connection.execute("VACUUM") }

    func close() throws {
        statements.removeAll()
        selectStatement = nil
        try connection.close()
    }

    struct Writer: KeyValueWriter {
        let insert: SQLiteStatement

        mutating func put(_ key: Int64, _ value: UnsafeRawBufferPointer) throws {
            insert.bind(1, key)
            insert.bindWithoutCopy(2, value)
            try insert.run()
        }
    }

    struct Reader: KeyValueReader {
        let select: SQLiteStatement
        let scanStatement: SQLiteStatement?

        mutating func get(_ key: Int64) throws -> Int? {
            select.bind(1, key)
            defer { select.reset() }
            guard try select.step() else { return nil }
            return valueChecksum(select.blob(0))
        }

        mutating func scan() throws -> (rows: Int, checksum: Int) {
            guard let scan = scanStatement else { throw SQLiteError(code: SQLITE_MISUSE, message: "scan outside read") }
            defer { scan.reset() }
            var rows = 0
            var checksum = 0
            while try scan.step() {
                rows += 1
                checksum &+= valueChecksum(scan.blob(0))
            }
            return (rows, checksum)
        }
    }
}
