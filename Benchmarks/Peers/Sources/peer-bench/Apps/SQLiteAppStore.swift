// The app-level SQLite side: SQLite's C API in WAL mode, statements prepared once, the
// schema an app would write (the person's id its INTEGER PRIMARY KEY, a foreign key to
// company with the index Core Data would also create, an index on age). Fetches decode
// columns into `Person` values; the update reads the rows first, as an app changing
// objects does, then writes each back.
import Foundation
import PeersSQLite3

/// The app schema every SQL side creates.
let appSchema = """
    CREATE TABLE IF NOT EXISTS company(
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS person(
        id INTEGER PRIMARY KEY,
        firstName TEXT NOT NULL,
        lastName TEXT NOT NULL,
        age INTEGER NOT NULL,
        email TEXT NOT NULL,
        dateOfBirth REAL NOT NULL,
        isActive INTEGER NOT NULL,
        companyID INTEGER REFERENCES company(id));
    CREATE INDEX IF NOT EXISTS person_age ON person(age);
    CREATE INDEX IF NOT EXISTS person_company ON person(companyID);
    """

final class SQLiteAppStore: AppStore {
    static let sideName = "SQLite"

    static func files(at path: String) -> [String] { [path, path + "-wal"] }

    private let connection: SQLiteConnection
    private var statements: [String: SQLiteStatement] = [:]

    private static let columns = "id, firstName, lastName, age, email, dateOfBirth, isActive"

    init(path: String, durability: AppDurability) throws {
        connection = try SQLiteConnection(path: path)
        guard try connection.text("PRAGMA journal_mode = WAL") == "wal" else {
            throw SQLiteError(code: SQLITE_ERROR, message: "WAL mode refused for \(path)")
        }
        try connection.execute("PRAGMA synchronous = \(durability == .full ? "FULL" : "NORMAL")")
        try connection.execute(appSchema)
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

    private static func person(from row: SQLiteStatement, offset: Int32 = 0) -> Person {
        Person(
            id: row.int64(offset), firstName: row.text(offset + 1), lastName: row.text(offset + 2),
            age: Int16(truncatingIfNeeded: row.int64(offset + 3)), email: row.text(offset + 4),
            dateOfBirth: Date(timeIntervalSinceReferenceDate: row.double(offset + 5)),
            isActive: row.int64(offset + 6) != 0)
    }

    private func people(_ query: SQLiteStatement) throws -> [Person] {
        defer { query.reset() }
        var result: [Person] = []
        while try query.step() { result.append(Self.person(from: query)) }
        return result
    }

    private let insertSQL = "INSERT INTO person(\(SQLiteAppStore.columns), companyID) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"

    private func insert(_ employee: Employee) throws {
        let insert = try statement(insertSQL)
        let person = employee.person
        insert.bind(1, person.id)
        insert.bind(2, person.firstName)
        insert.bind(3, person.lastName)
        insert.bind(4, Int64(person.age))
        insert.bind(5, person.email)
        insert.bind(6, person.dateOfBirth.timeIntervalSinceReferenceDate)
        insert.bind(7, Int64(person.isActive ? 1 : 0))
        insert.bind(8, employee.companyID)
        try insert.run()
    }

    func load(companies: [Company], employees: [Employee]) throws {
        let insertCompany = try statement("INSERT INTO company(id, name) VALUES (?, ?)")
        try transaction {
            for company in companies {
                insertCompany.bind(1, company.id)
                insertCompany.bind(2, company.name)
                try insertCompany.run()
            }
            for employee in employees { try insert(employee) }
        }
    }

    func save(_ employee: Employee) throws {
        try transaction { try insert(employee) }
    }

    func fetch(id: Int64) throws -> Person? {
        let query = try statement("SELECT \(Self.columns) FROM person WHERE id = ?")
        query.bind(1, id)
        defer { query.reset() }
        return try query.step() ? Self.person(from: query) : nil
    }

    func fetch(ageBetween lower: Int16, and upper: Int16, limit: Int, withCompany: Bool) throws -> [(Person, String?)] {
        let sql =
            withCompany
            ? "SELECT person.id, firstName, lastName, age, email, dateOfBirth, isActive, company.name FROM person "
                + "JOIN company ON company.id = person.companyID "
                + "WHERE age BETWEEN ? AND ? ORDER BY lastName LIMIT ?"
            : "SELECT \(Self.columns) FROM person WHERE age BETWEEN ? AND ? ORDER BY lastName LIMIT ?"
        let query = try statement(sql)
        query.bind(1, Int64(lower))
        query.bind(2, Int64(upper))
        query.bind(3, Int64(limit))
        defer { query.reset() }
        var result: [(Person, String?)] = []
        while try query.step() { result.append((Self.person(from: query), withCompany ? query.text(7) : nil)) }
        return result
    }

    func fetch(firstNameContaining text: String) throws -> [Person] {
        let query = try statement("SELECT \(Self.columns) FROM person WHERE firstName LIKE ? ESCAPE '\\'")
        query.bind(1, "%\(likeEscaped(text))%")
        return try people(query)
    }

    func countActive() throws -> Int {
        let query = try statement("SELECT count(*) FROM person WHERE isActive = 1")
        defer { query.reset() }
        guard try query.step() else { return 0 }
        return Int(query.int64(0))
    }

    func updateAges(between lower: Int16, and upper: Int16) throws -> Int {
        let select = try statement("SELECT \(Self.columns) FROM person WHERE age BETWEEN ? AND ?")
        let update = try statement("UPDATE person SET age = ?, email = ? WHERE id = ?")
        return try transaction {
            select.bind(1, Int64(lower))
            select.bind(2, Int64(upper))
            var changed = 0
            for var person in try people(select) {
                person.age += 1
                person.email = "updated\(person.id)@example.com"
                update.bind(1, Int64(person.age))
                update.bind(2, person.email)
                update.bind(3, person.id)
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

    func traverseEmployees() throws -> Int64 {
        let companies = try statement("SELECT id, name FROM company")
        let employees = try statement("SELECT \(Self.columns) FROM person WHERE companyID = ?")
        var ids: [Int64] = []
        while try companies.step() {
            ids.append(companies.int64(0))
            _ = companies.text(1)
        }
        companies.reset()
        var total: Int64 = 0
        for id in ids {
            employees.bind(1, id)
            total += id * (try people(employees)).reduce(0) { $0 + Int64($1.age) }
        }
        return total
    }

    func importBatch(_ employees: [Employee]) throws {
        try transaction { for employee in employees { try insert(employee) } }
    }

    func close() throws {
        statements.removeAll()
        try connection.close()
    }
}
