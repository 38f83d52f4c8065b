// The object-level workload protocol (issue 5's "Performance" rows): a store of Person
// records with six attributes, as a Core Data user's model has them, and the
// operations a Core Data user performs on it. Each side implements it the way that
// side's users write it: SQLite's C API with prepared statements, GRDB with its record
// protocols, and ours with NSManagedObjects on the default on-disk store.
import Foundation

/// One Person: the six attributes plus the primary key every side keys records by.
struct Person: Sendable, Equatable {
    var id: Int64
    var firstName: String
    var lastName: String
    var age: Int16
    var email: String
    var dateOfBirth: Date
    var isActive: Bool

    private static let firstNames = [
        "Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "John", "Margaret", "Ken",
        "Radia", "Dennis", "Sophie", "Tim", "Hedy", "Linus", "Karen", "Niklaus", "Jean", "Bjarne",
    ]
    private static let lastNames = [
        "Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Backus", "Hamilton",
        "Thompson", "Perlman", "Ritchie", "Wilson", "Berners-Lee", "Lamarr", "Torvalds", "Jones",
        "Wirth", "Sammet", "Stroustrup", "Johnson", "Anderson", "Jackson", "Harrison", "Nakamura",
    ]

    /// The Person with `id`, made from a seeded generator so every side stores the
    /// same records. Ages are uniform in 18...89; about a fifth of last names contain
    /// "son".
    static func make(id: Int64, using random: inout SplitMix64) -> Person {
        let first = firstNames[Int(random.next() % UInt64(firstNames.count))]
        let last = lastNames[Int(random.next() % UInt64(lastNames.count))]
        return Person(
            id: id,
            firstName: first,
            lastName: last,
            age: Int16(18 + random.next() % 72),
            email: "\(first.lowercased()).\(last.lowercased())\(id)@example.com",
            dateOfBirth: Date(timeIntervalSinceReferenceDate: -Double(random.next() % 2_800_000_000)),
            isActive: random.next() % 4 != 0)
    }
}

/// One side of the object-level comparison. A value is one open store; all calls come
/// from one thread. Every store is in WAL mode (ours: the engine's log) and commits
/// at full durability.
protocol ObjectStore: AnyObject {
    /// The column name in the result table ("SQLite", "GRDB", "ours").
    static var sideName: String { get }

    /// The files that make up a closed store at `path`, in a fixed order.
    static func files(at path: String) -> [String]

    /// Opens the store at `path`, creating the schema (Person, with an index on age)
    /// when the store is new.
    init(path: String) throws

    /// Inserts `people` in one transaction (one save).
    func insert(_ people: [Person]) throws

    /// Inserts one new person in a transaction of its own, durably (one save).
    func save(_ person: Person) throws

    /// The person with `id`, or nil.
    func fetch(id: Int64) throws -> Person?

    /// People with `lower <= age < upper`, sorted by age then id, at most `limit`.
    func fetch(ageFrom lower: Int16, below upper: Int16, limit: Int) throws -> [Person]

    /// People whose lastName contains `text`, ignoring ASCII case (CONTAINS[c]).
    func fetch(lastNameContaining text: String) throws -> [Person]

    /// How many people have `lower <= age < upper`.
    func count(ageFrom lower: Int16, below upper: Int16) throws -> Int

    /// For each id, in one transaction: age += 1 and a new email. Returns how many
    /// existed.
    func update(ids: [Int64]) throws -> Int

    /// Deletes each id in one transaction. Returns how many existed.
    func delete(ids: [Int64]) throws -> Int

    /// What `batchInsert(_:)` takes: the people in the form the side's batch API wants,
    /// made before the clock starts (as `ObjectInsert` makes its objects first).
    associatedtype BatchInput

    /// `people` as `batchInsert(_:)` takes them.
    func batchInput(_ people: [Person]) -> BatchInput

    /// Inserts the prepared people with the side's set-based API, in one transaction:
    /// SQLite's multi-row `INSERT`, GRDB's inserts in one write, ours' NSBatchInsertRequest.
    func batchInsert(_ input: BatchInput) throws

    /// In one statement or batch request: `isActive = false, age = age + 100` for the people
    /// with `lower <= age < upper`. Returns how many rows it changed.
    func batchUpdate(ageFrom lower: Int16, below upper: Int16) throws -> Int

    /// In one statement or batch request: deletes the people with `lower <= age < upper`.
    /// Returns how many rows it deleted.
    func batchDelete(ageFrom lower: Int16, below upper: Int16) throws -> Int

    /// Closes the store; a closed store is complete without a log to replay.
    func close() throws
}
