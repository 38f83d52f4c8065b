// A thin layer over SQLite's C API: one connection, prepared statements, thrown errors.
// The engine-level and object-level SQLite adapters use it, so both measure SQLite the
// way a careful C caller uses it (prepared once, bound and stepped per row), not
// through any Swift wrapper's overhead.
import Foundation
import PeersSQLite3

/// An SQLite result code other than OK, ROW or DONE, with SQLite's message.
struct SQLiteError: Error, CustomStringConvertible {
    let code: Int32
    let message: String
    var description: String { "SQLite error \(code): \(message)" }
}

/// SQLite's `SQLITE_TRANSIENT`: bound text and blobs are copied before the call returns.
/// The C macro is a cast Swift cannot import.
let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// Settings every SQLite connection of the run gets (the C sides' and GRDB's alike).
enum SQLiteSettings {
    /// The page cache of each connection, in KiB; 0 keeps SQLite's default (2 MB).
    /// Defaults to our engine's default page cache (256 MiB), so both sides compare with
    /// the same memory budget. Set once from the command line before any workload runs.
    nonisolated(unsafe) static var cacheKibibytes = 256 * 1024

    /// The PRAGMA that applies `cacheKibibytes`, or nil for SQLite's default.
    static var cachePragma: String? {
        cacheKibibytes > 0 ? "PRAGMA cache_size = -\(cacheKibibytes)" : nil
    }
}

/// One SQLite connection (`sqlite3*`). Not shared between threads.
final class SQLiteConnection {
    let handle: OpaquePointer

    /// The library's version string, e.g. "3.40.1".
    static var libraryVersion: String { String(cString: sqlite3_libversion()) }

    /// Opens (creating if needed) the database at `path` in serialized-free mode: each
    /// connection stays on the thread that uses it, as the benchmarks do.
    init(path: String) throws {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(handle)
            throw SQLiteError(code: code, message: "open \(path): \(message)")
        }
        self.handle = handle
        if let pragma = SQLiteSettings.cachePragma { try execute(pragma) }
    }

    private var isClosed = false

    deinit { if !isClosed { sqlite3_close_v2(handle) } }

    /// Closes the connection. Finalize (release) every statement first: SQLite defers
    /// the close, and with it the checkpoint a last close performs, while one is live.
    func close() throws {
        guard !isClosed else { return }
        isClosed = true
        try check(sqlite3_close_v2(handle), "close")
    }

    /// Runs one or more statements that return no rows the caller needs.
    func execute(_ sql: String) throws {
        try check(sqlite3_exec(handle, sql, nil, nil, nil), sql)
    }

    /// Runs a statement that returns one integer (a PRAGMA, a count) and returns it.
    func integer(_ sql: String) throws -> Int64 {
        let statement = try prepare(sql)
        guard try statement.step() else { throw SQLiteError(code: SQLITE_ERROR, message: "no row: \(sql)") }
        return statement.int64(0)
    }

    /// Runs a statement that returns one text value (e.g. `PRAGMA journal_mode = WAL`).
    func text(_ sql: String) throws -> String {
        let statement = try prepare(sql)
        guard try statement.step() else { throw SQLiteError(code: SQLITE_ERROR, message: "no row: \(sql)") }
        return statement.text(0)
    }

    /// Compiles `sql` once, for binding and stepping many times.
    func prepare(_ sql: String) throws -> SQLiteStatement {
        var statement: OpaquePointer?
        try check(sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil), sql)
        guard let statement else { throw SQLiteError(code: SQLITE_MISUSE, message: "empty statement: \(sql)") }
        return SQLiteStatement(handle: statement, connection: self)
    }

    /// Throws unless `code` is OK.
    func check(_ code: Int32, _ context: @autoclosure () -> String) throws {
        guard code == SQLITE_OK else {
            throw SQLiteError(code: code, message: "\(String(cString: sqlite3_errmsg(handle))) (\(context()))")
        }
    }
}

/// One prepared statement. Bind indexes are 1-based and column indexes 0-based, as in C.
final class SQLiteStatement {
    let handle: OpaquePointer
    // Keeps the connection open while a statement lives: finalizing after close is misuse.
    private let connection: SQLiteConnection

    fileprivate init(handle: OpaquePointer, connection: SQLiteConnection) {
        self.handle = handle
        self.connection = connection
    }

    deinit { sqlite3_finalize(handle) }

    /// Steps once: true with a row ready, false when done. Errors throw.
    @inline(__always)
    func step() throws -> Bool {
        let code = sqlite3_step(handle)
        if code == SQLITE_ROW { return true }
        if code == SQLITE_DONE { return false }
        sqlite3_reset(handle)
        throw SQLiteError(code: code, message: String(cString: sqlite3_errmsg(connection.handle)))
    }

    /// Steps a statement that returns no rows, then resets it for the next binding.
    @inline(__always)
    func run() throws {
        defer { sqlite3_reset(handle) }
        _ = try step()
    }

    @inline(__always) func reset() { sqlite3_reset(handle) }

    @inline(__always) func bind(_ index: Int32, _ value: Int64) { sqlite3_bind_int64(handle, index, value) }
    @inline(__always) func bind(_ index: Int32, _ value: Double) { sqlite3_bind_double(handle, index, value) }
    @inline(__always) func bind(_ index: Int32, _ value: String) {
        sqlite3_bind_text(handle, index, value, -1, sqliteTransient)
    }
    @inline(__always) func bind(_ index: Int32, _ bytes: UnsafeRawBufferPointer) {
        sqlite3_bind_blob(handle, index, bytes.baseAddress, Int32(bytes.count), sqliteTransient)
    }
    /// Binds bytes without copying them (`SQLITE_STATIC`): the caller keeps `bytes`
    /// alive and unchanged until the statement is stepped and reset.
    @inline(__always) func bindWithoutCopy(_ index: Int32, _ bytes: UnsafeRawBufferPointer) {
        sqlite3_bind_blob(handle, index, bytes.baseAddress, Int32(bytes.count), nil)
    }

    @inline(__always) func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    @inline(__always) func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }
    @inline(__always) func text(_ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }
    /// The column's bytes, valid until the next step or reset.
    @inline(__always) func blob(_ column: Int32) -> UnsafeRawBufferPointer {
        let base = sqlite3_column_blob(handle, column)
        return UnsafeRawBufferPointer(start: base, count: Int(sqlite3_column_bytes(handle, column)))
    }
}
