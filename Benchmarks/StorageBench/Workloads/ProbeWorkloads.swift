// Instruction-count probes: fixed, seeded operations whose measured part runs inside a
// function named `probeMeasured...`, so callgrind can count just that part:
//
//   Benchmarks/callgrind-probes.sh            builds release, prints instructions per operation
//   storage-bench probe NAME                  runs one probe once (what the script wraps)
//
// Timing on a shared machine moves by 2x; instruction counts do not. Each probe drives the
// public Core Data API the way an app does (predicates from format strings, a to-one set
// with its inverse to-many, objects materialised), or the engine directly.
import Foundation
import OpenCoreData
import StorageEngine

/// The probes' person: `id` and `age` indexed, a to-one `company` with an inverse to-many.
final class ProbePerson: NSManagedObject {
    @Managed var id: Int64
    @Managed var firstName: String?
    @Managed var lastName: String?
    @Managed var age: Int16
    @Managed var isActive: Bool
    @Managed var company: ProbeCompany?
}

/// The probes' company: a name and its employees.
final class ProbeCompany: NSManagedObject {
    @Managed var name: String?
    @Managed var employees: Set<ProbePerson>
}

/// One probe: its set-up runs outside the measured function, its operations inside.
struct Probe: Sendable {
    let name: String
    /// How many operations the measured part runs (instructions are divided by it).
    let operations: Int
    let run: @Sendable (URL) throws -> Void

    static let all: [Probe] = [
        Probe(name: "object-insert-10000", operations: 10_000, run: ProbeRuns.insert),
        Probe(name: "object-import-10000", operations: 10_000, run: ProbeRuns.importBatch),
        Probe(name: "object-one-row-commit", operations: 500, run: ProbeRuns.oneRowCommit),
        Probe(name: "object-durable-commit", operations: 500, run: ProbeRuns.durableCommit),
        Probe(name: "object-point-lookup", operations: 2_000, run: ProbeRuns.pointLookup),
        Probe(name: "object-range-fetch", operations: 200, run: ProbeRuns.rangeFetch),
        Probe(name: "object-fetch-by-id", operations: 2_000, run: ProbeRuns.fetchByID),
        Probe(name: "object-range-prefetch", operations: 200, run: ProbeRuns.rangePrefetch),
        Probe(name: "object-count-bool", operations: 20, run: ProbeRuns.countBool),
        Probe(name: "object-contains-scan", operations: 20, run: ProbeRuns.containsScan),
        Probe(name: "object-contains-long", operations: 20, run: { try ProbeRuns.containsLong($0, "UMBER 12") }),
        Probe(name: "object-contains-long9", operations: 20, run: { try ProbeRuns.containsLong($0, "NUMBER 12") }),
        Probe(name: "object-update-1000", operations: 1_000, run: ProbeRuns.update),
        Probe(name: "object-delete-in", operations: 3_000, run: ProbeRuns.deleteIn),
        Probe(name: "object-traverse", operations: 20_000, run: ProbeRuns.traverse),
        Probe(name: "object-traverse-100k", operations: 100_000, run: ProbeRuns.traverseAtScale),
        Probe(name: "engine-point-lookup", operations: 10_000, run: ProbeRuns.enginePointLookup),
        Probe(name: "engine-one-row-commit", operations: 1_000, run: ProbeRuns.engineCommit),
        Probe(name: "batch-insert-dictionaries", operations: 20_000, run: BatchBench.probeDictionaries),
        Probe(name: "batch-insert-handler", operations: 20_000, run: BatchBench.probeHandler),
        Probe(name: "batch-update-15", operations: BatchWriteProbes.updated, run: BatchWriteProbes.probeUpdate),
        Probe(name: "batch-delete-15", operations: BatchWriteProbes.deleted, run: BatchWriteProbes.probeDelete),
    ]
}

/// `storage-bench probe NAME`: runs the named probe once in a scratch directory.
func runProbe(name: String) throws(CommandLineError) -> Int32 {
    guard let probe = Probe.all.first(where: { $0.name == name }) else {
        throw CommandLineError.usage(
            "probe: no probe named '\(name)' (names: \(Probe.all.map(\.name).joined(separator: ", ")))")
    }
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("storage-probe-\(getpid())")
    defer { try? FileManager.default.removeItem(at: directory) }
    do {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try probe.run(directory)
    } catch {
        throw CommandLineError.failure("probe \(probe.name) failed: \(error)")
    }
    print("probe \(probe.name): \(probe.operations) operations")
    return ExitStatus.success
}

enum ProbeRuns {
    static let model: NSManagedObjectModel = {
        func attribute(_ name: String, _ type: NSAttributeType, indexed: Bool = false) -> NSAttributeDescription {
            ModelDescriptions.attribute(name, type, indexed: indexed)
        }
        let person = ModelDescriptions.entity("Person", ProbePerson.self)
        let company = ModelDescriptions.entity("Company", ProbeCompany.self)
        let (toCompany, employees) = ModelDescriptions.employment(person, company)
        person.properties = [
            attribute("id", .integer64AttributeType, indexed: true), attribute("firstName", .stringAttributeType),
            attribute("lastName", .stringAttributeType), attribute("age", .integer16AttributeType, indexed: true),
            attribute("isActive", .booleanAttributeType), toCompany,
        ]
        company.properties = [attribute("name", .stringAttributeType), employees]
        let model = NSManagedObjectModel()
        model.entities = [person, company]
        return model
    }()

    static func context(at directory: URL, durability: String = "normal") throws -> NSManagedObjectContext {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: directory.appendingPathComponent("probe.store"),
            options: [PageFileStoreDurabilityOption: durability])
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    static func companies(_ count: Int, in context: NSManagedObjectContext) -> [ProbeCompany] {
        (0..<count).map { index in
            let company = ProbeCompany(context: context)
            company.name = "Company \(index)"
            return company
        }
    }

    static func fill(_ person: ProbePerson, _ index: Int, company: ProbeCompany) {
        person.id = Int64(index)
        person.firstName = "First\(index % 977)"
        person.lastName = "Last\((index &* 7919) % 10_007)"
        person.age = Int16(18 + index % 60)
        person.isActive = index % 3 == 0
        person.company = company
    }

    /// A store holding `count` people over 100 companies, saved; the context is reset.
    static func loaded(_ count: Int, at directory: URL) throws -> NSManagedObjectContext {
        let context = try context(at: directory)
        let firms = companies(100, in: context)
        for index in 0..<count { fill(ProbePerson(context: context), index, company: firms[index % firms.count]) }
        try context.save()
        context.reset()
        return context
    }

    static func insert(_ directory: URL) throws {
        let context = try context(at: directory)
        let firms = companies(100, in: context)
        try context.save()
        try probeMeasuredInsert(context, firms, 10_000)
    }

    @inline(never)
    static func probeMeasuredInsert(_ context: NSManagedObjectContext, _ firms: [ProbeCompany], _ count: Int) throws {
        for index in 0..<count { fill(ProbePerson(context: context), index, company: firms[index % firms.count]) }
        try context.save()
    }

    /// One batch of app/import: the companies fetched (faults with unloaded lists), 10,000
    /// people linked to them, one save and a reset, over a store already holding a batch.
    static func importBatch(_ directory: URL) throws {
        let context = try loaded(10_000, at: directory)
        try probeMeasuredImport(context, first: 10_000, count: 10_000)
    }

    @inline(never)
    static func probeMeasuredImport(_ context: NSManagedObjectContext, first: Int, count: Int) throws {
        let firms = try context.fetch(NSFetchRequest<ProbeCompany>(entityName: "Company"))
        guard !firms.isEmpty else { throw ProbeFailure(message: "import found no companies") }
        for index in first..<(first + count) {
            fill(ProbePerson(context: context), index, company: firms[index % firms.count])
        }
        try context.save()
        context.reset()
    }

    static func oneRowCommit(_ directory: URL) throws {
        let context = try context(at: directory)
        let firms = companies(10, in: context)
        try context.save()
        try probeMeasuredOneRowCommit(context, firms, 500)
    }

    /// `object-one-row-commit` at full durability (app/save-durable): the fdatasync per
    /// save is the difference, which `strace -c` on this probe counts.
    static func durableCommit(_ directory: URL) throws {
        let context = try context(at: directory, durability: "full")
        let firms = companies(10, in: context)
        try context.save()
        try probeMeasuredOneRowCommit(context, firms, 500)
    }

    @inline(never)
    static func probeMeasuredOneRowCommit(_ context: NSManagedObjectContext, _ firms: [ProbeCompany], _ count: Int)
        throws
    {
        for index in 0..<count {
            fill(ProbePerson(context: context), index, company: firms[index % firms.count])
            try context.save()
        }
    }

    static func pointLookup(_ directory: URL) throws {
        let context = try loaded(20_000, at: directory)
        var random = SplitMix(seed: 5)
        let ids = (0..<2_000).map { _ in Int64(random.next() % 20_000) }
        try probeMeasuredPointLookup(context, ids)
    }

    @inline(never)
    static func probeMeasuredPointLookup(_ context: NSManagedObjectContext, _ ids: [Int64]) throws {
        var found = 0
        for id in ids {
            let request = NSFetchRequest<ProbePerson>(entityName: "Person")
            request.predicate = NSPredicate(format: "id == %lld", id)
            if let person = try context.fetch(request).first, person.id == id { found += 1 }
        }
        guard found == ids.count else { throw ProbeFailure(message: "point lookup found \(found) of \(ids.count)") }
    }

    static func rangeFetch(_ directory: URL) throws {
        let context = try loaded(20_000, at: directory)
        try probeMeasuredRangeFetch(context, 200)
    }

    @inline(never)
    static func probeMeasuredRangeFetch(_ context: NSManagedObjectContext, _ queries: Int) throws {
        var total = 0
        for query in 0..<queries {
            let request = rangeRequest(query)
            for person in try context.fetch(request) { total += Int(person.age) }
        }
        guard total > 0 else { throw ProbeFailure(message: "range fetch returned nothing") }
    }

    /// peer-bench's app/fetch-by-id: objects materialised, the context reset after each fetch.
    static func fetchByID(_ directory: URL) throws {
        let context = try loaded(20_000, at: directory)
        var random = SplitMix(seed: 5)
        let ids = (0..<2_000).map { _ in Int64(random.next() % 20_000) }
        try probeMeasuredFetchByID(context, ids)
    }

    @inline(never)
    static func probeMeasuredFetchByID(_ context: NSManagedObjectContext, _ ids: [Int64]) throws {
        var found = 0
        for id in ids {
            let request = NSFetchRequest<ProbePerson>(entityName: "Person")
            request.predicate = NSPredicate(format: "id == %lld", id)
            request.returnsObjectsAsFaults = false
            if let person = try context.fetch(request).first, person.id == id { found += 1 }
            context.reset()
        }
        guard found == ids.count else { throw ProbeFailure(message: "fetch by id found \(found) of \(ids.count)") }
    }

    /// peer-bench's app/range-prefetch-company: the range fetch with its people's companies
    /// prefetched and read, the context reset after each query.
    static func rangePrefetch(_ directory: URL) throws {
        let context = try loaded(20_000, at: directory)
        try probeMeasuredRangePrefetch(context, 200)
    }

    @inline(never)
    static func probeMeasuredRangePrefetch(_ context: NSManagedObjectContext, _ queries: Int) throws {
        var named = 0
        for query in 0..<queries {
            let request = rangeRequest(query)
            request.relationshipKeyPathsForPrefetching = ["company"]
            for person in try context.fetch(request) where person.company?.name != nil { named += 1 }
            context.reset()
        }
        guard named == queries * 100 else { throw ProbeFailure(message: "range prefetch named \(named)") }
    }

    /// The app's range query number `query`: an indexed BETWEEN, sorted by an unindexed
    /// string, a limit, objects materialised.
    static func rangeRequest(_ query: Int) -> NSFetchRequest<ProbePerson> {
        let low = 18 + query % 50
        let request = NSFetchRequest<ProbePerson>(entityName: "Person")
        request.predicate = NSPredicate(format: "age BETWEEN {%d, %d}", low, low + 5)
        request.sortDescriptors = [NSSortDescriptor(key: "lastName", ascending: true)]
        request.fetchLimit = 100
        request.returnsObjectsAsFaults = false
        return request
    }

    static func countBool(_ directory: URL) throws {
        let context = try loaded(20_000, at: directory)
        try probeMeasuredCountBool(context, 20)
    }

    /// `count(for:)` of an unindexed Bool over every row, as an app asks it.
    @inline(never)
    static func probeMeasuredCountBool(_ context: NSManagedObjectContext, _ queries: Int) throws {
        for _ in 0..<queries {
            let request = NSFetchRequest<ProbePerson>(entityName: "Person")
            request.predicate = NSPredicate(format: "isActive == YES")
            let counted = try context.count(for: request)
            guard counted == 6_667 else { throw ProbeFailure(message: "count-bool counted \(counted)") }
        }
    }

    static func containsScan(_ directory: URL) throws {
        let context = try loaded(20_000, at: directory)
        try probeMeasuredContainsScan(context, 20)
    }

    /// `CONTAINS[c]` of `pattern` over names of 27-29 bytes (the one-word test's windows for a
    /// pattern of at most 8 bytes; the general search for a longer one): "UMBER 12" and
    /// "NUMBER 12" match the same 11 names in 977, so the two probes differ only in the path.
    static func containsLong(_ directory: URL, _ pattern: String) throws {
        let context = try context(at: directory)
        let firms = companies(100, in: context)
        for index in 0..<20_000 {
            let person = ProbePerson(context: context)
            fill(person, index, company: firms[index % firms.count])
            person.firstName = "Person number \(index % 977), long name"
        }
        try context.save()
        context.reset()
        try probeMeasuredContainsLong(context, pattern, 20)
    }

    @inline(never)
    static func probeMeasuredContainsLong(_ context: NSManagedObjectContext, _ pattern: String, _ queries: Int) throws {
        for _ in 0..<queries {
            let request = NSFetchRequest<ProbePerson>(entityName: "Person")
            request.predicate = NSPredicate(format: "firstName CONTAINS[c] %@", pattern)
            request.returnsObjectsAsFaults = false
            let found = try context.fetch(request).count
            context.reset()
            guard found == 20_000 / 977 * 11 + 11 else { throw ProbeFailure(message: "contains-long found \(found)") }
        }
    }

    /// `CONTAINS[c]` over every row, the matches (about 1 in 9) materialised and read.
    @inline(never)
    static func probeMeasuredContainsScan(_ context: NSManagedObjectContext, _ queries: Int) throws {
        for _ in 0..<queries {
            let request = NSFetchRequest<ProbePerson>(entityName: "Person")
            request.predicate = NSPredicate(format: "firstName CONTAINS[c] %@", "ST1")
            request.returnsObjectsAsFaults = false
            var total = 0
            for person in try context.fetch(request) { total += Int(person.age) }
            context.reset()
            guard total > 0 else { throw ProbeFailure(message: "contains scan returned nothing") }
        }
    }

    /// The app's delete of 15%: fetch the victims with `id IN %@` (integer constants on an indexed
    /// attribute), delete each, one save (which nullifies them in their companies' employees).
    static func deleteIn(_ directory: URL) throws {
        let context = try loaded(20_000, at: directory)
        let ids = (0..<3_000).map { NSNumber(value: Int64(($0 &* 7_919) % 20_000)) }
        try probeMeasuredDeleteIn(context, ids)
    }

    @inline(never)
    static func probeMeasuredDeleteIn(_ context: NSManagedObjectContext, _ ids: [NSNumber]) throws {
        let request = NSFetchRequest<ProbePerson>(entityName: "Person")
        request.predicate = NSPredicate(format: "id IN %@", ids)
        let people = try context.fetch(request)
        guard people.count == ids.count else {
            throw ProbeFailure(message: "delete fetched \(people.count) of \(ids.count)")
        }
        for person in people { context.delete(person) }
        try context.save()
    }

    static func update(_ directory: URL) throws {
        let context = try loaded(20_000, at: directory)
        try probeMeasuredUpdate(context, 1_000)
    }

    @inline(never)
    static func probeMeasuredUpdate(_ context: NSManagedObjectContext, _ count: Int) throws {
        let request = NSFetchRequest<ProbePerson>(entityName: "Person")
        request.predicate = NSPredicate(format: "id < %lld", Int64(count))
        let people = try context.fetch(request)
        guard people.count == count else { throw ProbeFailure(message: "update fetched \(people.count) of \(count)") }
        for person in people { person.age += 1 }
        try context.save()
    }

    static func traverse(_ directory: URL) throws {
        let context = try loaded(20_000, at: directory)
        // A first traversal, not counted: the property lookups' one-time costs. Callgrind
        // still counts its calls (`--toggle-collect` gates costs only), so the call counts
        // callgrind_annotate prints for this probe are twice one traversal's; the
        // instructions are one traversal's.
        _ = try traverseEveryCompany(context)
        try probeMeasuredTraverse(context, expecting: 20_000)
    }

    /// object-traverse at peer-bench's scale (100,000 people of 100 companies): the objects
    /// and their storage no longer fit in the caches, and the allocator's work at a reset
    /// (coalescing 100,000 objects' freed blocks) shows in the count.
    static func traverseAtScale(_ directory: URL) throws {
        let context = try loaded(100_000, at: directory)
        _ = try traverseEveryCompany(context)
        try probeMeasuredTraverse(context, expecting: 100_000)
    }

    @inline(never)
    static func probeMeasuredTraverse(_ context: NSManagedObjectContext, expecting count: Int) throws {
        let (read, ages) = try traverseEveryCompany(context)
        guard read == count, ages > 0 else { throw ProbeFailure(message: "traverse read \(read) of \(count)") }
    }

    /// Every company fetched, each one's employees read through the to-many and an
    /// attribute of each touched (every fault fires), the context reset after, as
    /// peer-bench's app/traverse-to-many does it: the employees read and their ages' sum.
    @inline(never)
    static func traverseEveryCompany(_ context: NSManagedObjectContext) throws -> (read: Int, ages: Int) {
        var read = 0
        var ages = 0
        for company in try context.fetch(NSFetchRequest<ProbeCompany>(entityName: "Company")) {
            for person in company.employees {
                ages += Int(person.age)
                read += 1
            }
        }
        context.reset()
        return (read, ages)
    }

    static func engineKey(_ index: Int) -> [UInt8] { withUnsafeBytes(of: UInt64(index).bigEndian) { Array($0) } }

    static func engineDatabase(_ directory: URL, rows: Int) throws -> Database {
        var options = Database.Options()
        options.durability = .normal
        let database = try Database.open(at: directory.appendingPathComponent("engine.db").path, options: options)
        try database.write { transaction in
            let tree = try transaction.openTree(named: "rows")
            let value = [UInt8](repeating: 7, count: 100)
            for index in 0..<rows { try tree.setValue(value, forKey: engineKey(index)) }
        }
        try database.checkpoint()
        return database
    }

    static func enginePointLookup(_ directory: URL) throws {
        let database = try engineDatabase(directory, rows: 100_000)
        var random = SplitMix(seed: 9)
        let keys = (0..<10_000).map { _ in engineKey(Int(random.next() % 100_000)) }
        try probeMeasuredEngineLookup(database, keys)
        try database.close()
    }

    @inline(never)
    static func probeMeasuredEngineLookup(_ database: Database, _ keys: [[UInt8]]) throws {
        let found = try database.read { transaction in
            guard let tree = try transaction.tree(named: "rows") else { return 0 }
            var found = 0
            for key in keys where try tree.value(forKey: key) != nil { found += 1 }
            return found
        }
        guard found == keys.count else { throw ProbeFailure(message: "engine lookup found \(found) of \(keys.count)") }
    }

    static func engineCommit(_ directory: URL) throws {
        let database = try engineDatabase(directory, rows: 10_000)
        try probeMeasuredEngineCommit(database, 1_000)
        try database.close()
    }

    @inline(never)
    static func probeMeasuredEngineCommit(_ database: Database, _ count: Int) throws {
        let value = [UInt8](repeating: 3, count: 100)
        for index in 0..<count {
            try database.write { transaction in
                try transaction.openTree(named: "rows").setValue(value, forKey: engineKey(20_000 + index))
            }
        }
    }
}

/// A probe's own check failed (it measured something other than what it claims).
struct ProbeFailure: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// A small seeded generator, so every run probes the same keys.
struct SplitMix {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
