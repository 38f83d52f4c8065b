// The object-level SQLite side: SQLite's C API in WAL mode at synchronous=FULL, the
// schema a Core Data user would get (one table, an index on age), statements prepared
// once. Fetches decode columns into `Person` values — the least a Swift caller does
// with a row; updates and deletes are single SQL statements per id, with no object
// loaded first. That is the "raw C API" the issue compares against.
import Foundation
import PeersSQLite3

/// The schema every SQL side creates, so file sizes compare like for like. Dates are
/// stored as seconds since 2001 (a REAL), as Core Data's SQLite store keeps them.
let personSchema = """
    CREATE TABLE IF NOT EXISTS person(
        id INTEGER PRIMARY KEY,
        firstName TEXT NOT NULL,
        lastName TEXT NOT NULL,
        age INTEGER NOT NULL,
        email TEXT NOT NULL,
        dateOfBirth REAL NOT NULL,
        isActive INTEGER NOT NULL);
    CREATE INDEX IF NOT EXISTS person_age ON person(age);
    """

final class SQLiteObjectStore: ObjectStore {
    static let sideName = "SQLite"

    static func files(at path: String) -> [String] { [path, path + "-wal"] }

    private let connection: SQLiteConnection
    private var statements: [String: SQLiteStatement] = [:]
    private var selectByID: SQLiteStatement?

    private static let columns = "id, firstName, lastName, age, email, dateOfBirth, isActive"

    init(path: String) throws {
        connection = try SQLiteConnection(path: path)
        guard try connection.text("PRAGMA journal_mode = WAL") == "wal" else {
            throw SQLiteError(code: SQLITE_ERROR, message: "WAL mode refused for \(path)")
        }
        try connection.execute("PRAGMA synchronous = FULL")
        try connection.execute(personSchema)
    }

    private func statement(_ sql: String) throws -> SQLiteStatement {
        if let statement = statements[sql] { return statement }
        let statement = try connection.prepare(sql)
        statements[sql] = statement
        return statement
    }

    private func transaction<Result>(_ body: () throws -> Result) throws -> Result {
        try statement("BEGIN IMMEDIATE").run()
        do {
            let result = try body()
            try statement("COMMIT").run()
            return result
        } catch {
            try? statement("ROLLBACK").run()
            throw error
        }
    }

    private func bind(_ person: Person, to insert: SQLiteStatement) {
        insert.bind(1, person.id)
        insert.bind(2, person.firstName)
        insert.bind(3, person.lastName)
        insert.bind(4, Int64(person.age))
        insert.bind(5, person.email)
        insert.bind(6, person.dateOfBirth.timeIntervalSinceReferenceDate)
        insert.bind(7, Int64(person.isActive ? 1 : 0))
    }

    private static func person(from row: SQLiteStatement) -> Person {
        Person(
            id: row.int64(0),
            firstName: row.text(1),
            lastName: row.text(2),
            age: Int16(truncatingIfNeeded: row.int64(3)),
            email: row.text(4),
            dateOfBirth: Date(timeIntervalSinceReferenceDate: row.double(5)),
            isActive: row.int64(6) != 0)
    }

    private func people(_ query: SQLiteStatement) throws -> [Person] {
        defer { query.reset() }
        var result: [Person] = []
        while try query.step() { result.append(Self.person(from: query)) }
        return result
    }

    private let insertSQL = "INSERT INTO person(\(SQLiteObjectStore.columns)) VALUES (?, ?, ?, ?, ?, ?, ?)"

    func insert(_ people: [Person]) throws {
        let insert = try statement(insertSQL)
        try transaction {
            for person in people {
                bind(person, to: insert)
                try insert.run()
            }
        }
    }

    func save(_ person: Person) throws {
        let insert = try statement(insertSQL)
        try transaction {
            bind(person, to: insert)
            try insert.run()
        }
    }

    func fetch(id: Int64) throws -> Person? {
        let query = try selectByID ?? statement("SELECT \(Self.columns) FROM person WHERE id = ?")
        selectByID = query
        query.bind(1, id)
        defer { query.reset() }
        return try query.step() ? Self.person(from: query) : nil
    }

    func fetch(ageFrom lower: Int16, below upper: Int16, limit: Int) throws -> [Person] {
        let query = try statement(
            "SELECT \(Self.columns) FROM person WHERE age >= ? AND age < ? ORDER BY age, id LIMIT ?")
        query.bind(1, Int64(lower))
        query.bind(2, Int64(upper))
        query.bind(3, Int64(limit))
        return try people(query)
    }

    func fetch(lastNameContaining text: String) throws -> [Person] {
        let query = try statement("SELECT \(Self.columns) FROM person WHERE lastName LIKE ? ESCAPE '\\'")
        query.bind(1, "%\(likeEscaped(text))%")
        return try people(query)
    }

    func count(ageFrom lower: Int16, below upper: Int16) throws -> Int {
        let query = try statement("SELECT count(*) FROM person WHERE age >= ? AND age < ?")
        query.bind(1, Int64(lower))
        query.bind(2, Int64(upper))
        defer { query.reset() }
        guard try query.step() else { return 0 }
        return Int(query.int64(0))
    }

    func update(ids: [Int64]) throws -> Int {
        let update = try statement("UPDATE person SET age = age + 1, email = ? WHERE id = ?")
        return try transaction {
            var changed = 0
            for id in ids {
                update.bind(1, "updated\(id)@example.com")
                update.bind(2, id)
                try update.run()
                changed += Int(sqlite3_changes(connection.handle))
            }
            return changed
        }
    }

    func delete(ids: [Int64]) throws -> Int {
        let delete = try statement("DELETE FROM person WHERE id = ?")
        return try transaction {
            var deleted = 0
            for id in ids {
                delete.bind(1, id)
                try delete.run()
                deleted += Int(sqlite3_changes(connection.handle))
            }
            return deleted
        }
    }

    /// Rows per multi-row `INSERT` (7 parameters each, under SQLite's 999-parameter floor).
    private static let rowsPerInsert = 128

    func batchInput(_ people: [Person]) -> [Person] { people }

    /// Multi-row `INSERT ... VALUES (...), (...), ...` statements, prepared once per row count.
    func batchInsert(_ people: [Person]) throws {
        let row = "(?, ?, ?, ?, ?, ?, ?)"
        try transaction {
            var start = 0
            while start < people.count {
                let chunk = people[start..<min(start + Self.rowsPerInsert, people.count)]
                let insert = try statement(
                    "INSERT INTO person(\(Self.columns)) VALUES "
                        + Array(repeating: row, count: chunk.count).joined(separator: ", "))
                for (offset, person) in chunk.enumerated() {
                    let base = Int32(offset * 7)
                    insert.bind(base + 1, person.id)
                    insert.bind(base + 2, person.firstName)
                    insert.bind(base + 3, person.lastName)
                    insert.bind(base + 4, Int64(person.age))
                    insert.bind(base + 5, person.email)
                    insert.bind(base + 6, person.dateOfBirth.timeIntervalSinceReferenceDate)
                    insert.bind(base + 7, Int64(person.isActive ? 1 : 0))
                }
                try insert.run()
                start += chunk.count
            }
        }
    }

    func batchUpdate(ageFrom lower: Int16, below upper: Int16) throws -> Int {
        let update = try statement("UPDATE person SET isActive = 0, age = age + 100 WHERE age >= ? AND age < ?")
        return try transaction {
            update.bind(1, Int64(lower))
            update.bind(2, Int64(upper))
            try update.run()
            return Int(sqlite3_changes(connection.handle))
        }
    }

    func batchDelete(ageFrom lower: Int16, below upper: Int16) throws -> Int {
        let delete = try statement("DELETE FROM person WHERE age >= ? AND age < ?")
        return try transaction {
            delete.bind(1, Int64(lower))
            delete.bind(2, Int64(upper))
            try delete.run()
            return Int(sqlite3_changes(connection.handle))
        }
    }

    func close() throws {
        statements.removeAll()
        selectByID = nil
        try connection.close()
    }
}

/// `text` with LIKE's wildcards escaped by a backslash, so it matches literally.
func likeEscaped(_ text: String) -> String {
    var escaped = ""
    for character in text {
        if character == "%" || character == "_" || character == "\\" { escaped.append("\\") }
        escaped.append(character)
    }
    return escaped
}
