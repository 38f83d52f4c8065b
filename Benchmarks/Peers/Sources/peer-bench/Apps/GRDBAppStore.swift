// The app-level GRDB side: a DatabasePool with the app schema, Person and Company as
// records with a belongsTo/hasMany association, each operation written as a GRDB user
// writes it (the query interface, associations for the join and the to-many, one
// `write` per save). Records decode columns by index (GRDB's fast path, not Codable).
// synchronous follows --durability (GRDB's own default for WAL is NORMAL).
import Foundation
import GRDB

/// Person as a GRDB record of the app schema (with its company's id).
struct EmployeeRecord: FetchableRecord, PersistableRecord {
    static let databaseTableName = "person"
    static let company = belongsTo(CompanyRecord.self, using: ForeignKey(["companyID"]))

    var person: Person
    var companyID: Int64

    init(_ employee: Employee) {
        person = employee.person
        companyID = employee.companyID
    }

    init(row: Row) throws {
        person = Person(
            id: row[0], firstName: row[1], lastName: row[2], age: row[3], email: row[4],
            dateOfBirth: Date(timeIntervalSinceReferenceDate: row[5]), isActive: row[6])
        companyID = row[7]
    }

    func encode(to container: inout PersistenceContainer) throws {
        container["id"] = person.id
        container["firstName"] = person.firstName
        container["lastName"] = person.lastName
        container["age"] = person.age
        container["email"] = person.email
        container["dateOfBirth"] = person.dateOfBirth.timeIntervalSinceReferenceDate
        container["isActive"] = person.isActive
        container["companyID"] = companyID
    }
}

/// Company as a GRDB record.
struct CompanyRecord: FetchableRecord, PersistableRecord {
    static let databaseTableName = "company"
    static let employees = hasMany(EmployeeRecord.self, using: ForeignKey(["companyID"]))

    var id: Int64
    var name: String

    init(_ company: Company) {
        id = company.id
        name = company.name
    }

    init(row: Row) throws {
        id = row[0]
        name = row[1]
    }

    func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id
        container["name"] = name
    }
}

/// A person with their company's record, decoded from a joined row.
struct EmployeeWithCompany: FetchableRecord {
    var employee: EmployeeRecord
    var company: CompanyRecord

    init(row: Row) throws {
        employee = try EmployeeRecord(row: row)
        guard let scope = row.scopes["company"] else { throw BenchError(message: "GRDB: no company scope") }
        company = try CompanyRecord(row: scope)
    }
}

final class GRDBAppStore: AppStore {
    static let sideName = "GRDB"

    static func files(at path: String) -> [String] { [path, path + "-wal"] }

    private let pool: DatabasePool
    private let age = Column("age")

    init(path: String, durability: AppDurability) throws {
        var configuration = Configuration()
        let cachePragma = SQLiteSettings.cachePragma
        configuration.prepareDatabase { db in
            if let cachePragma { try db.execute(sql: cachePragma) }
        }
        pool = try DatabasePool(path: path, configuration: configuration)
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = \(durability == .full ? "FULL" : "NORMAL")")
            try db.execute(sql: appSchema)
        }
    }

    func load(companies: [Company], employees: [Employee]) throws {
        try pool.write { db in
            for company in companies { try CompanyRecord(company).insert(db) }
            for employee in employees { try EmployeeRecord(employee).insert(db) }
        }
    }

    func save(_ employee: Employee) throws {
        try pool.write { db in try EmployeeRecord(employee).insert(db) }
    }

    func fetch(id: Int64) throws -> Person? {
        try pool.read { db in try EmployeeRecord.fetchOne(db, key: id)?.person }
    }

    func fetch(ageBetween lower: Int16, and upper: Int16, limit: Int, withCompany: Bool) throws -> [(Person, String?)] {
        try pool.read { db in
            let request = EmployeeRecord.filter((lower...upper).contains(age)).order(Column("lastName")).limit(limit)
            if withCompany {
                return try request.including(required: EmployeeRecord.company).asRequest(of: EmployeeWithCompany.self)
                    .fetchAll(db).map { ($0.employee.person, $0.company.name) }
            }
            return try request.fetchAll(db).map { ($0.person, nil) }
        }
    }

    func fetch(firstNameContaining text: String) throws -> [Person] {
        try pool.read { db in
            try EmployeeRecord.filter(Column("firstName").like("%\(likeEscaped(text))%", escape: "\\")).fetchAll(db)
                .map(\.person)
        }
    }

    func countActive() throws -> Int {
        try pool.read { db in try EmployeeRecord.filter(Column("isActive") == true).fetchCount(db) }
    }

    func updateAges(between lower: Int16, and upper: Int16) throws -> Int {
        try pool.write { db in
            let records = try EmployeeRecord.filter((lower...upper).contains(age)).fetchAll(db)
            for var record in records {
                record.person.age += 1
                record.person.email = "updated\(record.person.id)@example.com"
                try record.update(db)
            }
            return records.count
        }
    }

    func delete(ids: [Int64]) throws -> Int {
        try pool.write { db in try EmployeeRecord.deleteAll(db, keys: ids) }
    }

    func traverseEmployees() throws -> Int64 {
        try pool.read { db in
            var total: Int64 = 0
            for company in try CompanyRecord.fetchAll(db) {
                let employees = try company.request(for: CompanyRecord.employees).fetchAll(db)
                total += company.id * employees.reduce(0) { $0 + Int64($1.person.age) }
            }
            return total
        }
    }

    func importBatch(_ employees: [Employee]) throws {
        try pool.write { db in for employee in employees { try EmployeeRecord(employee).insert(db) } }
    }

    func close() throws { try pool.close() }
}
