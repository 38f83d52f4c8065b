// The object-level workloads (issue 5's "Performance" rows), written once, generically
// over `ObjectStore`: every side stores the same 100,000 people (at scale 1), runs the
// same queries with the same arguments, and each result is checked so no side can
// report a fast wrong answer.
import Foundation

/// One object-level workload, run once per side.
protocol ObjectWorkload {
    /// "object/..." — what `--only` matches and the table prints.
    var name: String { get }
    func run<Store: ObjectStore>(_ store: Store.Type, in context: BenchContext) throws -> [Measurement]
}

enum ObjectWorkloads {
    static var all: [any ObjectWorkload] {
        [
            ObjectInsert(), ObjectFileSize(), FetchByID(), IndexedRangeSortLimit(), NonIndexedContains(),
            CountWithPredicate(), ObjectReopen(), DurableSaves(), ObjectUpdate(), ObjectDelete(),
            ObjectBatchInsert(), ObjectBatchUpdate(), ObjectBatchDelete(),
        ]
    }

    /// People in the loaded store at `context`'s scale.
    static func objectCount(_ context: BenchContext) -> Int { context.scaled(100_000, minimum: 1_000) }

    /// People 1...count, the same on every side.
    static func people(count: Int) -> [Person] {
        var random = SplitMix64(seed: 11)
        return (1...Int64(count)).map { Person.make(id: $0, using: &random) }
    }

    /// The loaded store of `Store`'s side, closed: built here when `ObjectInsert` was
    /// filtered out by `--only`.
    static func loadedStore<Store: ObjectStore>(_ store: Store.Type, _ context: BenchContext) throws -> String {
        try context.fixture("object-loaded-\(Store.sideName)") { path in
            let opened = try Store(path: path)
            try opened.insert(people(count: objectCount(context)))
            try opened.close()
        }
    }

    /// `count` distinct existing ids in random order.
    static func distinctIDs(_ count: Int, of total: Int, seed: UInt64) -> [Int64] {
        var random = SplitMix64(seed: seed)
        return Array((1...Int64(total)).shuffled(using: &random).prefix(count))
    }
}

/// Insert 100,000 objects in one save: object-to-row encoding, index maintenance and
/// one durable commit. Objects are made before the clock starts, on every side.
struct ObjectInsert: ObjectWorkload {
    let name = "object/insert"

    func run<Store: ObjectStore>(_ store: Store.Type, in context: BenchContext) throws -> [Measurement] {
        let people = ObjectWorkloads.people(count: ObjectWorkloads.objectCount(context))
        let path = try context.freshPath("\(name)-\(Store.sideName)")
        let opened = try Store(path: path)
        let seconds = try measureSeconds { try opened.insert(people) }
        try opened.close()
        context.registerFixture("object-loaded-\(Store.sideName)", path: path)
        return [.rate("\(people.count) objects, one save", count: people.count, seconds: seconds, noun: "objects")]
    }
}

/// File size of the loaded store once closed: rows plus the age index.
struct ObjectFileSize: ObjectWorkload {
    let name = "object/file-size"

    func run<Store: ObjectStore>(_ store: Store.Type, in context: BenchContext) throws -> [Measurement] {
        let path = try ObjectWorkloads.loadedStore(Store.self, context)
        // Both numbers, as the engine group reports them: a log left beside the data file
        // after a checkpoint (ours keeps its length; SQLite deletes its WAL on close) is
        // disk the user pays for, but not data.
        return [
            .bytes("after insert, closed, all files", totalFileSize(Store.files(at: path))),
            .bytes("after insert, closed, data file", totalFileSize(Array(Store.files(at: path).prefix(1)))),
        ]
    }
}

/// Fetch by primary key (Core Data: by object ID): one object materialised per fetch,
/// random ids. Median over batches of 100 fetches, after a warm-up fifth.
struct FetchByID: ObjectWorkload {
    let name = "object/fetch-by-id"

    func run<Store: ObjectStore>(_ store: Store.Type, in context: BenchContext) throws -> [Measurement] {
        let total = ObjectWorkloads.objectCount(context)
        let opened = try Store(path: try ObjectWorkloads.loadedStore(Store.self, context))
        defer { try? opened.close() }
        var random = SplitMix64(seed: 12)
        let fetches = context.scaled(100_000, minimum: 2_000)
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

/// Indexed range predicate with sort and limit: `age >= a AND age < a+10`, sorted by
/// age then id, limit 100 — a screenful from an index. Median of 1,000 queries with
/// random windows; every result is checked for order and bounds.
struct IndexedRangeSortLimit: ObjectWorkload {
    let name = "object/range-sort-limit"

    func run<Store: ObjectStore>(_ store: Store.Type, in context: BenchContext) throws -> [Measurement] {
        let opened = try Store(path: try ObjectWorkloads.loadedStore(Store.self, context))
        defer { try? opened.close() }
        var random = SplitMix64(seed: 13)
        let queries = context.scaled(1_000, minimum: 50)
        let lowers = (0..<queries).map { _ in Int16.random(in: 18...80, using: &random) }
        for lower in lowers.prefix(queries / 5) { _ = try opened.fetch(ageFrom: lower, below: lower + 10, limit: 100) }
        let perQuery = try medianLatency(count: queries) { index in
            let lower = lowers[index]
            let page = try opened.fetch(ageFrom: lower, below: lower + 10, limit: 100)
            let ordered = zip(page, page.dropFirst()).allSatisfy { ($0.age, $0.id) < ($1.age, $1.id) }
            guard !page.isEmpty, page.count <= 100, ordered,
                page.allSatisfy({ $0.age >= lower && $0.age < lower + 10 })
            else { throw BenchError(message: "range-sort-limit: wrong page for \(lower)") }
        }
        return [.seconds("median per query (100 objects)", perQuery)]
    }
}

/// Non-indexed `lastName CONTAINS[c] "SON"`: a full scan with a case-insensitive
/// substring test, materialising the ~24% that match. Median of 11 after one warm-up.
struct NonIndexedContains: ObjectWorkload {
    let name = "object/contains-ci"

    func run<Store: ObjectStore>(_ store: Store.Type, in context: BenchContext) throws -> [Measurement] {
        let opened = try Store(path: try ObjectWorkloads.loadedStore(Store.self, context))
        defer { try? opened.close() }
        _ = try opened.fetch(lastNameContaining: "SON")
        let perQuery = try medianLatency(count: 11) { _ in
            try opened.fetch(lastNameContaining: "SON")
        } checking: { matches in
            guard !matches.isEmpty, matches.allSatisfy({ $0.lastName.lowercased().contains("son") }) else {
                throw BenchError(message: "contains-ci: wrong matches")
            }
        }
        return [.seconds("median per query", perQuery)]
    }
}

/// Count with a predicate (`age >= 30 AND age < 50`, ~28% of people): no objects
/// materialised. Median of 21 after one warm-up.
struct CountWithPredicate: ObjectWorkload {
    let name = "object/count"

    func run<Store: ObjectStore>(_ store: Store.Type, in context: BenchContext) throws -> [Measurement] {
        let opened = try Store(path: try ObjectWorkloads.loadedStore(Store.self, context))
        defer { try? opened.close() }
        let expected = try opened.count(ageFrom: 30, below: 50)
        let perCount = try medianLatency(count: 21) { _ in
            guard try opened.count(ageFrom: 30, below: 50) == expected, expected > 0 else {
                throw BenchError(message: "count: changed between runs")
            }
        }
        return [.seconds("median per count", perCount)]
    }
}

/// Reopen and first fetch: open the closed loaded store and fetch one object by id —
/// the launch cost. Median of 21 after 3 warm-up opens.
struct ObjectReopen: ObjectWorkload {
    let name = "object/reopen"

    func run<Store: ObjectStore>(_ store: Store.Type, in context: BenchContext) throws -> [Measurement] {
        let path = try ObjectWorkloads.loadedStore(Store.self, context)
        let total = Int64(ObjectWorkloads.objectCount(context))
        var samples: [Double] = []
        for attempt in 0..<24 {
            let id = Int64(attempt) * 7_919 % total + 1
            let start = nowNanoseconds()
            let opened = try Store(path: path)
            let person = try opened.fetch(id: id)
            let elapsed = Double(nowNanoseconds() - start) / 1e9
            try opened.close()
            guard person?.id == id else { throw BenchError(message: "reopen: \(id) missing") }
            if attempt >= 3 { samples.append(elapsed) }
        }
        return [.seconds("open + first fetch, median", samples.isEmpty ? .nan : median(samples))]
    }
}

/// 2,000 single-object saves at full durability: one new object per save, each its own
/// durable commit, into a copy of the loaded store. Median latency per save after 20
/// warm-up saves.
struct DurableSaves: ObjectWorkload {
    let name = "object/save-durable"

    func run<Store: ObjectStore>(_ store: Store.Type, in context: BenchContext) throws -> [Measurement] {
        let total = ObjectWorkloads.objectCount(context)
        let path = try context.copyOfFixture(
            try ObjectWorkloads.loadedStore(Store.self, context), files: Store.files(at:),
            name: "\(name)-\(Store.sideName)")
        let opened = try Store(path: path)
        defer { try? opened.close() }
        let saves = context.scaled(2_000, minimum: 20)
        var random = SplitMix64(seed: 14)
        let people = (0..<(saves + 20)).map { Person.make(id: Int64(total + 1 + $0), using: &random) }
        for person in people.prefix(20) { try opened.save(person) }
        let perSave = try medianLatency(count: saves) { index in try opened.save(people[20 + index]) }
        return [.seconds("median per save", perSave)]
    }
}

/// Update 10,000 objects in one save: age += 1 and a new email on random existing
/// objects. GRDB (and ours) fetch each object and write it back, as their users do;
/// SQLite's C side issues one UPDATE per id without loading the object.
struct ObjectUpdate: ObjectWorkload {
    let name = "object/update"

    func run<Store: ObjectStore>(_ store: Store.Type, in context: BenchContext) throws -> [Measurement] {
        let total = ObjectWorkloads.objectCount(context)
        let count = context.scaled(10_000, minimum: 100)
        let ids = ObjectWorkloads.distinctIDs(count, of: total, seed: 15)
        let path = try context.copyOfFixture(
            try ObjectWorkloads.loadedStore(Store.self, context), files: Store.files(at:),
            name: "\(name)-\(Store.sideName)")
        let opened = try Store(path: path)
        defer { try? opened.close() }
        var changed = 0
        let seconds = try measureSeconds { changed = try opened.update(ids: ids) }
        guard changed == count, try opened.fetch(id: ids[0])?.email == "updated\(ids[0])@example.com" else {
            throw BenchError(message: "update: \(changed) of \(count) changed")
        }
        return [.rate("\(count) objects, one save", count: count, seconds: seconds, noun: "objects")]
    }
}

/// Delete 10,000 objects in one save, by id, with the age index maintained.
struct ObjectDelete: ObjectWorkload {
    let name = "object/delete"

    func run<Store: ObjectStore>(_ store: Store.Type, in context: BenchContext) throws -> [Measurement] {
        let total = ObjectWorkloads.objectCount(context)
        let count = context.scaled(10_000, minimum: 100)
        let ids = ObjectWorkloads.distinctIDs(count, of: total, seed: 16)
        let path = try context.copyOfFixture(
            try ObjectWorkloads.loadedStore(Store.self, context), files: Store.files(at:),
            name: "\(name)-\(Store.sideName)")
        let opened = try Store(path: path)
        defer { try? opened.close() }
        var deleted = 0
        let seconds = try measureSeconds { deleted = try opened.delete(ids: ids) }
        guard deleted == count, try opened.fetch(id: ids[0]) == nil else {
            throw BenchError(message: "delete: \(deleted) of \(count) deleted")
        }
        return [.rate("\(count) objects, one save", count: count, seconds: seconds, noun: "objects")]
    }
}
