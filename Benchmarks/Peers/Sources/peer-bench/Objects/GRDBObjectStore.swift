// The object-level GRDB side: a DatabasePool (always WAL) with the same schema as the
// SQLite side, Person as a FetchableRecord + PersistableRecord, and each operation
// written as a GRDB user writes it — records fetched and decoded, the query
// interface for predicates, one `write` per save. Two choices keep GRDB at its best:
// the record decodes columns by index and encodes by hand (GRDB's documented fast
// path, not Codable), and synchronous is set to FULL on the writer (GRDB sets NORMAL
// for WAL), so its commits promise what the other sides' do. Every connection gets the
// page cache size the SQLite side gets (SQLiteSettings).
import Foundation
import GRDB

extension Person: FetchableRecord, PersistableRecord {
    static let databaseTableName = "person"

    init(row: Row) throws {
        self.init(
            id: row[0],
            firstName: row[1],
            lastName: row[2],
            age: row[3],
            email: row[4],
            dateOfBirth: Date(timeIntervalSinceReferenceDate: row[5]),
            isActive: row[6])
    }

    func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id
        container["firstName"] = firstName
        container["lastName"] = lastName
        container["age"] = age
        container["email"] = email
        container["dateOfBirth"] = dateOfBirth.timeIntervalSinceReferenceDate
        container["isActive"] = isActive
    }
}

final class GRDBObjectStore: ObjectStore {
    static let sideName = "GRDB"

    static func files(at path: String) -> [String] { [path, path + "-wal"] }

    private let pool: DatabasePool
    private let age = Column("age")

    init(path: String) throws {
        var configuration = Configuration()
        let cachePragma = SQLiteSettings.cachePragma
        configuration.prepareDatabase { db in
            if let cachePragma { try db.execute(sql: cachePragma) }
        }
        pool = try DatabasePool(path: path, configuration: configuration)
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            guard try Int.fetchOne(db, sql: "PRAGMA synchronous") == 2 else {
                throw BenchError(message: "GRDB: synchronous = FULL refused")
            }
            try db.execute(sql: personSchema)
        }
    }

    func insert(_ people: [Person]) throws {
        try pool.write { db in
            for person in people { try person.insert(db) }
        }
    }

    func save(_ person: Person) throws {
        try pool.write { db in try person.insert(db) }
    }

    func fetch(id: Int64) throws -> Person? {
        try pool.read { db in try Person.fetchOne(db, key: id) }
    }

    func fetch(ageFrom lower: Int16, below upper: Int16, limit: Int) throws -> [Person] {
        try pool.read { db in
            try Person.filter(age >= lower && age < upper)
                .order(age, Column("id"))
                .limit(limit)
                .fetchAll(db)
        }
    }

    func fetch(lastNameContaining text: String) throws -> [Person] {
        try pool.read { db in
            try Person.filter(Column("lastName").like("%\(likeEscaped(text))%", escape: "\\")).fetchAll(db)
        }
    }

    func count(ageFrom lower: Int16, below upper: Int16) throws -> Int {
        try pool.read { db in try Person.filter(age >= lower && age < upper).fetchCount(db) }
    }

    func update(ids: [Int64]) throws -> Int {
        try pool.write { db in
            var changed = 0
            for id in ids {
                guard var person = try Person.fetchOne(db, key: id) else { continue }
                person.age += 1
                person.email = "updated\(id)@example.com"
                try person.update(db)
                changed += 1
            }
            return changed
        }
    }

    func delete(ids: [Int64]) throws -> Int {
        try pool.write { db in
            var deleted = 0
            for id in ids where try Person.deleteOne(db, key: id) { deleted += 1 }
            return deleted
        }
    }

    func batchInput(_ people: [Person]) -> [Person] { people }

    /// GRDB has no batch insert API: its users insert records in one write.
    func batchInsert(_ people: [Person]) throws {
        try pool.write { db in
            for person in people { try person.insert(db) }
        }
    }

    func batchUpdate(ageFrom lower: Int16, below upper: Int16) throws -> Int {
        try pool.write { db in
            try Person.filter(age >= lower && age < upper)
                .updateAll(db, Column("isActive").set(to: false), age.set(to: age + 100))
        }
    }

    func batchDelete(ageFrom lower: Int16, below upper: Int16) throws -> Int {
        try pool.write { db in try Person.filter(age >= lower && age < upper).deleteAll(db) }
    }

    func close() throws { try pool.close() }
}
