// The app-shaped workload protocol (issue 11): Person objects that belong to a Company
// (`person.company = company`, the inverse to-many `company.employees`), queried the way
// an app queries them — a predicate built per call, objects materialised, a relationship
// read. Each side implements it the way that side's users write it: SQLite's C API with
// prepared statements, GRDB with records and associations, ours with NSManagedObjects
// through the public Core Data API only.
import Foundation

/// One Person of the app model: the object-level Person plus the company it works for.
struct Employee: Sendable, Equatable {
    var person: Person
    /// The id of the person's company (1...companyCount).
    var companyID: Int64
}

/// One Company: an id and a name; its employees are the inverse of `Employee.companyID`.
struct Company: Sendable, Equatable {
    var id: Int64
    var name: String
}

/// How every side commits in the app group: "normal" (SQLite and GRDB: WAL with
/// synchronous = NORMAL; ours: PageFileStoreDurabilityOption "normal", a save survives a
/// process crash) or "full" (synchronous = FULL; ours "full", a save survives power loss).
enum AppDurability: String, Sendable {
    case normal
    case full

    /// The durability the app group's stores open with (`--durability`).
    nonisolated(unsafe) static var current = AppDurability.normal
}

/// One side of the app-level comparison. A value is one open store; all calls come from
/// one thread.
protocol AppStore: AnyObject {
    /// The column name in the result table ("SQLite", "GRDB", "ours").
    static var sideName: String { get }

    /// The files that make up a closed store at `path`, in a fixed order.
    static func files(at path: String) -> [String]

    /// Opens the store at `path` committing at `durability`, creating the schema when the
    /// store is new: Company(id, name) and Person(id, firstName, lastName, age, email,
    /// dateOfBirth, isActive, company), with indexes on Person.id, Person.age and the
    /// company foreign key (Core Data indexes a to-one's column itself).
    init(path: String, durability: AppDurability) throws

    /// Inserts `companies` and `employees` in one transaction (one save), each employee
    /// linked to its company.
    func load(companies: [Company], employees: [Employee]) throws

    /// Inserts one new employee of an existing company in a transaction of its own.
    func save(_ employee: Employee) throws

    /// The person whose `id` attribute is `id`, or nil; the query is built per call.
    func fetch(id: Int64) throws -> Person?

    /// People with `lower <= age <= upper`, sorted by lastName, at most `limit`; with
    /// `withCompany`, each one's company name too (prefetched: one query, not one per row).
    func fetch(ageBetween lower: Int16, and upper: Int16, limit: Int, withCompany: Bool) throws -> [(
        Person, String?
    )]

    /// People whose firstName contains `text`, ignoring ASCII case (CONTAINS[c]).
    func fetch(firstNameContaining text: String) throws -> [Person]

    /// How many people have isActive == true (an unindexed attribute).
    func countActive() throws -> Int

    /// Fetches the people with `lower <= age <= upper`, changes each (age += 1, a new
    /// email) and saves once. Returns how many changed.
    func updateAges(between lower: Int16, and upper: Int16) throws -> Int

    /// Deletes the people whose ids are `ids` in one save (their companies lose them).
    /// Returns how many were deleted.
    func delete(ids: [Int64]) throws -> Int

    /// Fetches every company and reads each one's employees: the sum over all companies of
    /// (company id × the sum of its employees' ages), so every employee is read.
    func traverseEmployees() throws -> Int64

    /// Inserts `employees` of existing companies in one save (a batch of an import); the
    /// side then drops what it holds of them (ours: `reset()`, as an importing app does).
    func importBatch(_ employees: [Employee]) throws

    /// Closes the store; a closed store is complete without a log to replay.
    func close() throws
}
