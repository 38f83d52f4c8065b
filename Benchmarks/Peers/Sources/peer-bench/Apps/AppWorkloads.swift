// The app-shaped workloads (issue 11's table), written once, generically over `AppStore`:
// every side stores the same people and companies (100,000 and 100 at scale 1, or
// `--objects N`), runs the same queries with the same arguments, and each result is
// checked so no side can report a fast wrong answer.
import Foundation

/// One app-level workload, run once per side.
protocol AppWorkload {
    /// "app/..." — what `--only` matches and the table prints.
    var name: String { get }
    func run<Store: AppStore>(_ store: Store.Type, in context: BenchContext) throws -> [Measurement]
}

enum AppWorkloads {
    static var all: [any AppWorkload] {
        [
            AppInsert(), AppFileSize(), AppSaveEach(), AppDurableSaves(), AppFetchByID(),
            AppRangeSortLimit(withCompany: false), AppRangeSortLimit(withCompany: true), AppContains(),
            AppCountBool(), AppUpdate(), AppTraverse(), AppReopen(), AppDelete(), AppImport(),
        ]
    }

    /// `--objects N`: the people in the loaded store instead of the scaled 100,000.
    nonisolated(unsafe) static var objectCountOverride: Int?

    /// People in the loaded store.
    static func personCount(_ context: BenchContext) -> Int {
        objectCountOverride ?? ObjectWorkloads.objectCount(context)
    }

    /// Companies in the loaded store: 100, whatever the scale.
    static let companyCount = 100

    static func companies() -> [Company] {
        (1...Int64(companyCount)).map { Company(id: $0, name: "Company \($0)") }
    }

    /// Employees with ids `first..<first + count`, the same on every side; person n works
    /// for company (n mod 100) + 1.
    static func employees(from first: Int64, count: Int, seed: UInt64) -> [Employee] {
        var random = SplitMix64(seed: seed)
        return (first..<first + Int64(count)).map { id in
            Employee(
                person: Person.make(id: id, using: &random), companyID: id % Int64(companyCount) + 1)
        }
    }

    /// The loaded store of `Store`'s side, closed: built here when `AppInsert` was filtered
    /// out by `--only`.
    static func loadedStore<Store: AppStore>(_ store: Store.Type, _ context: BenchContext) throws -> String {
        try context.fixture("app-loaded-\(Store.sideName)") { path in
            let opened = try Store(path: path, durability: AppDurability.current)
            try opened.load(
                companies: companies(), employees: employees(from: 1, count: personCount(context), seed: 21))
            try opened.close()
        }
    }

    /// A copy of the loaded store for a workload that changes it.
    static func copyOfLoaded<Store: AppStore>(_ store: Store.Type, _ context: BenchContext, _ name: String) throws
        -> String
    {
        try context.copyOfFixture(
            try loadedStore(Store.self, context), files: Store.files(at:), name: "\(name)-\(Store.sideName)")
    }
}

/// Insert 100,000 people and 100 companies in one save, each person's company set (the
/// inverse to-many kept by ours, a foreign key and its index by the SQL sides).
struct AppInsert: AppWorkload {
    let name = "app/insert"

    func run<Store: AppStore>(_ store: Store.Type, in context: BenchContext) throws -> [Measurement] {
        let employees = AppWorkloads.employees(from: 1, count: AppWorkloads.personCount(context), seed: 21)
        let path = try context.freshPath("\(name)-\(Store.sideName)")
        let opened = try Store(path: path, durability: AppDurability.current)
        let seconds = try measureSeconds { try opened.load(companies: AppWorkloads.companies(), employees: employees) }
        try opened.close()
        context.registerFixture("app-loaded-\(Store.sideName)", path: path)
        return [
            .rate(
                "\(employees.count) people + 100 companies, one save", count: employees.count, seconds: seconds,
                noun: "objects")
        ]
    }
}

/// Bytes per person of the loaded store once closed, data file only and all files.
struct AppFileSize: AppWorkload {
    let name = "app/file-size"

    func run<Store: AppStore>(_ store: Store.Type, in context: BenchContext) throws -> [Measurement] {
        let path = try AppWorkloads.loadedStore(Store.self, context)
        let people = AppWorkloads.personCount(context)
        return [
            .bytes("after load, data file, per person", totalFileSize(Array(Store.files(at: path).prefix(1))) / people),
            .bytes("after load, all files, per person", totalFileSize(Store.files(at: path)) / people),
        ]
    }
}

/// 10,000 new people, each its own save (at the run's durability), each linked to an
/// existing company, into a copy of the loaded store. Total throughput.
struct AppSaveEach: AppWorkload {
    let name = "app/save-each"

    func run<Store: AppStore>(_ store: Store.Type, in context: BenchContext) throws -> [Measurement] {
        let total = AppWorkloads.personCount(context)
        let saves = context.scaled(10_000, minimum: 100)
        let opened = try Store(path: try AppWorkloads.copyOfLoaded(Store.self, context, name), durability: .current)
        defer { try? opened.close() }
        let employees = AppWorkloads.employees(from: Int64(total + 1), count: saves, seed: 22)
        let seconds = try measureSeconds { for employee in employees { try opened.save(employee) } }
        guard try opened.fetch(id: Int64(total + saves))?.email == employees.last?.person.email else {
            throw BenchError(message: "save-each: the last save is missing")
        }
        return [.rate("\(saves) saves of one object", count: saves, seconds: seconds, noun: "saves")]
    }
}

/// 2,000 single-person saves at full durability (whatever --durability says), median
/// latency per save after 20 warm-up saves.
struct AppDurableSaves: AppWorkload {
    let name = "app/save-durable"

    func run<Store: AppStore>(_ store: Store.Type, in context: BenchContext) throws -> [Measurement] {
        let total = AppWorkloads.personCount(context)
        let saves = context.scaled(2_000, minimum: 20)
        let opened = try Store(path: try AppWorkloads.copyOfLoaded(Store.self, context, name), durability: .full)
        defer { try? opened.close() }
        let employees = AppWorkloads.employees(from: Int64(total + 1), count: saves + 20, seed: 23)
        for employee in employees.prefix(20) { try opened.save(employee) }
        let perSave = try medianLatency(count: saves) { index in try opened.save(employees[20 + index]) }
        return [.seconds("median per durable save", perSave)]
    }
}

/// Fetch one person by its indexed `id` attribute (ours: `NSPredicate(format: "id ==
/// %lld")` built per call), random ids. Median over batches of 100, after a warm-up fifth.
struct AppFetchByID: AppWorkload {
    let name = "app/fetch-by-id"

    func run<Store: AppStore>(_ store: Store.Type, in context: BenchContext) throws -> [Measurement] {
        let total = AppWorkloads.personCount(context)
        let opened = try Store(path: try AppWorkloads.loadedStore(Store.self, context), durability: .current)
        defer { try? opened.close() }
        var random = SplitMix64(seed: 24)
        let fetches = context.scaled(50_000, minimum: 1_000)
        let ids = (0..<fetches).map { _ in Int64.random(in: 1...Int64(total), using: &random) }
        for id in ids.prefix(fetches / 5) { _ = try opened.fetch(id: id) }
        let perFetch = try medianPerOperation(count: fetches, batch: 100) { index in
            guard try opened.fetch(id: ids[index])?.id == ids[index] else {
                throw BenchError(message: "fetch-by-id: \(ids[index]) missing")
            }
        }
        return [.seconds("median per fetch", perFetch)]
    }
}

/// `age BETWEEN {lo, lo + 9}` (indexed), sorted by lastName, limit 100, objects (not
/// faults) materialised; with `withCompany`, each person's company read too (ours:
/// `relationshipKeyPathsForPrefetching = ["company"]`; the SQL sides join). Median of
/// 500 random windows; every page is checked for bounds, order and company.
struct AppRangeSortLimit: AppWorkload {
    let withCompany: Bool
    var name: String { withCompany ? "app/range-prefetch-company" : "app/range-sort-limit" }

    func run<Store: AppStore>(_ store: Store.Type, in context: BenchContext) throws -> [Measurement] {
        let opened = try Store(path: try AppWorkloads.loadedStore(Store.self, context), durability: .current)
        defer { try? opened.close() }
        var random = SplitMix64(seed: 25)
        let queries = context.scaled(500, minimum: 50)
        let lowers = (0..<queries).map { _ in Int16.random(in: 18...80, using: &random) }
        let withCompany = self.withCompany
        func query(_ lower: Int16) throws {
            let page = try opened.fetch(ageBetween: lower, and: lower + 9, limit: 100, withCompany: withCompany)
            let ordered = zip(page, page.dropFirst()).allSatisfy { $0.0.lastName <= $1.0.lastName }
            let companies = page.allSatisfy { person, company in
                !withCompany || company == "Company \(person.id % Int64(AppWorkloads.companyCount) + 1)"
            }
            guard page.count == 100, ordered, companies, page.allSatisfy({ $0.0.age >= lower && $0.0.age <= lower + 9 })
            else { throw BenchError(message: "\(name): wrong page for \(lower)") }
        }
        for lower in lowers.prefix(queries / 5) { try query(lower) }
        let perQuery = try medianLatency(count: queries) { index in try query(lowers[index]) }
        return [.seconds("median per query (100 objects)", perQuery)]
    }
}

/// `firstName CONTAINS[c] "AR"` over all rows (unindexed), the ~25% that match
/// materialised. Median of 11 after one warm-up.
struct AppContains: AppWorkload {
    let name = "app/contains-ci"

    func run<Store: AppStore>(_ store: Store.Type, in context: BenchContext) throws -> [Measurement] {
        let opened = try Store(path: try AppWorkloads.loadedStore(Store.self, context), durability: .current)
        defer { try? opened.close() }
        let expected = try opened.fetch(firstNameContaining: "AR").count
        let perQuery = try medianLatency(count: 11) { _ in
            try opened.fetch(firstNameContaining: "AR")
        } checking: { matches in
            guard matches.count == expected, expected > 0,
                matches.allSatisfy({ $0.firstName.lowercased().contains("ar") })
            else { throw BenchError(message: "contains-ci: wrong matches") }
        }
        return [.seconds("median per query", perQuery)]
    }
}

/// `count(for:)` with `isActive == YES` (unindexed Bool, ~75% match): no objects
/// materialised. Median of 21 after one warm-up.
struct AppCountBool: AppWorkload {
    let name = "app/count-bool"

    func run<Store: AppStore>(_ store: Store.Type, in context: BenchContext) throws -> [Measurement] {
        let opened = try Store(path: try AppWorkloads.loadedStore(Store.self, context), durability: .current)
        defer { try? opened.close() }
        let expected = try opened.countActive()
        let total = AppWorkloads.personCount(context)
        guard expected > total / 2, expected < total else { throw BenchError(message: "count-bool: \(expected)") }
        let perCount = try medianLatency(count: 21) { _ in
            guard try opened.countActive() == expected else { throw BenchError(message: "count-bool: changed") }
        }
        return [.seconds("median per count", perCount)]
    }
}

/// Fetch the people aged 40...44 (~7% of them), change each (age += 1, a new email), one
/// save, into a copy of the loaded store.
struct AppUpdate: AppWorkload {
    let name = "app/update"

    func run<Store: AppStore>(_ store: Store.Type, in context: BenchContext) throws -> [Measurement] {
        let opened = try Store(path: try AppWorkloads.copyOfLoaded(Store.self, context, name), durability: .current)
        defer { try? opened.close() }
        var changed = 0
        let seconds = try measureSeconds { changed = try opened.updateAges(between: 40, and: 44) }
        let moved = try opened.fetch(ageBetween: 41, and: 45, limit: Int(Int32.max), withCompany: false)
        guard changed > 0, moved.filter({ $0.0.email.hasPrefix("updated") }).count == changed else {
            throw BenchError(message: "update: \(changed) changed, not saved")
        }
        return [.rate("fetch + change \(changed) objects, one save", count: changed, seconds: seconds, noun: "objects")]
    }
}

/// Fetch every company and read each one's employees (every person materialised, through
/// the to-many on ours, a query per company on the SQL sides). Median of 5.
struct AppTraverse: AppWorkload {
    let name = "app/traverse-to-many"

    func run<Store: AppStore>(_ store: Store.Type, in context: BenchContext) throws -> [Measurement] {
        let opened = try Store(path: try AppWorkloads.loadedStore(Store.self, context), durability: .current)
        defer { try? opened.close() }
        let total = Int64(AppWorkloads.personCount(context))
        let expected = try opened.traverseEmployees()
        guard expected > total * 18 else { throw BenchError(message: "traverse: \(expected)") }
        let seconds = try medianLatency(count: 5) { _ in
            guard try opened.traverseEmployees() == expected else { throw BenchError(message: "traverse: changed") }
        }
        return [.seconds("100 companies, every employee read", seconds)]
    }
}

/// Reopen and first fetch: open the closed loaded store and fetch one person by its id
/// attribute — the launch cost. Median of 11 after 2 warm-up opens.
struct AppReopen: AppWorkload {
    let name = "app/reopen"

    func run<Store: AppStore>(_ store: Store.Type, in context: BenchContext) throws -> [Measurement] {
        let path = try AppWorkloads.loadedStore(Store.self, context)
        let total = Int64(AppWorkloads.personCount(context))
        var samples: [Double] = []
        for attempt in 0..<13 {
            let id = Int64(attempt) * 7_919 % total + 1
            let start = nowNanoseconds()
            let opened = try Store(path: path, durability: .current)
            let person = try opened.fetch(id: id)
            let elapsed = Double(nowNanoseconds() - start) / 1e9
            try opened.close()
            guard person?.id == id else { throw BenchError(message: "reopen: \(id) missing") }
            if attempt >= 2 { samples.append(elapsed) }
        }
        return [.seconds("open + first fetch, median", median(samples))]
    }
}

/// Delete 15% of the people (random ids) in one save, their companies' to-many kept,
/// into a copy of the loaded store; then the closed file's bytes per remaining person.
struct AppDelete: AppWorkload {
    let name = "app/delete-15%"

    func run<Store: AppStore>(_ store: Store.Type, in context: BenchContext) throws -> [Measurement] {
        let total = AppWorkloads.personCount(context)
        let count = total * 15 / 100
        let ids = ObjectWorkloads.distinctIDs(count, of: total, seed: 26)
        let path = try AppWorkloads.copyOfLoaded(Store.self, context, name)
        let opened = try Store(path: path, durability: .current)
        var deleted = 0
        let seconds = try measureSeconds { deleted = try opened.delete(ids: ids) }
        guard deleted == count, try opened.fetch(id: ids[0]) == nil else {
            try? opened.close()
            throw BenchError(message: "delete: \(deleted) of \(count) deleted")
        }
        try opened.close()
        let remaining = total - count
        return [
            .rate("\(count) objects, one save", count: count, seconds: seconds, noun: "objects"),
            .bytes(
                "after delete, data file, per person", totalFileSize(Array(Store.files(at: path).prefix(1))) / remaining
            ),
        ]
    }
}

/// Import ten times the loaded store's people (1,000,000 at scale 1) into a new store with
/// the 100 companies, saving (and, ours, resetting the context) every 10,000: throughput and
/// the process's peak resident size sampled after each save. The people of each batch are
/// made just before it, so the benchmark's own data stays small; run it alone (`--only
/// app/import`) for a resident size that is the import's alone.
struct AppImport: AppWorkload {
    let name = "app/import"

    func run<Store: AppStore>(_ store: Store.Type, in context: BenchContext) throws -> [Measurement] {
        let total = AppWorkloads.personCount(context) * 10
        let batch = 10_000
        let path = try context.freshPath("\(name)-\(Store.sideName)")
        let opened = try Store(path: path, durability: AppDurability.current)
        defer { try? opened.close() }
        try opened.load(companies: AppWorkloads.companies(), employees: [])
        var peak = residentBytes()
        var elapsed: UInt64 = 0
        var first: Int64 = 1
        while first <= Int64(total) {
            let count = min(batch, total - Int(first) + 1)
            let employees = AppWorkloads.employees(from: first, count: count, seed: 27 &+ UInt64(first))
            let start = nowNanoseconds()
            try opened.importBatch(employees)
            elapsed += nowNanoseconds() - start
            peak = max(peak, residentBytes())
            first += Int64(count)
        }
        guard try opened.fetch(id: Int64(total))?.id == Int64(total) else {
            throw BenchError(message: "import: the last person is missing")
        }
        return [
            .rate(
                "\(total) people, a save every \(batch)", count: total, seconds: Double(elapsed) / 1e9, noun: "objects"),
            .bytes("peak resident size of the process", Int(peak)),
        ]
    }
}

/// This process's resident size now, from /proc/self/statm (0 where there is none).
func residentBytes() -> UInt64 {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = UInt64(fields[1]) else { return 0 }
    return pages * UInt64(sysconf(Int32(_SC_PAGESIZE)))
}
