// The space a default store takes on disk, as an app fills and prunes it (issue 11's
// "Space" row): 100,000 people in 100 companies (`person.company`, inverse to-many
// `employees`), inserted in one save, then 15% of them deleted in one save. Bytes per
// row are the closed store's files (the page file; the log is empty after a clean
// close) over the rows it holds. The SQLite figures to compare with come from the same
// rows in `CREATE TABLE person(... company INTEGER)` with indexes on age and company
// (Core Data's SQLite store indexes a to-one's foreign key).
import Foundation
import OpenCoreData

/// A company of the space workload.
final class SpaceBenchCompany: NSManagedObject {
    @Managed var name: String
}

enum SpaceBench {
    static let model: NSManagedObjectModel = {
        let person = ModelDescriptions.entity("Person", WriteBenchPerson.self)
        let company = ModelDescriptions.entity("Company", SpaceBenchCompany.self)
        let (employer, employees) = ModelDescriptions.employment(person, company)
        person.properties = WriteBench.personAttributes() + [employer]
        company.properties = [ModelDescriptions.attribute("name", .stringAttributeType, optional: false), employees]
        let model = NSManagedObjectModel()
        model.entities = [person, company]
        return model
    }()

    /// Bytes of the store's files at `url` (page file, log, lock file).
    static func storeBytes(_ url: URL) throws -> Int {
        try ["", "-wal", "-lock"].reduce(0) { total, suffix in
            let path = url.path + suffix
            guard FileManager.default.fileExists(atPath: path) else { return total }
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            return total + ((attributes[.size] as? NSNumber)?.intValue ?? 0)
        }
    }

    static func open(_ url: URL) throws -> (NSPersistentStoreCoordinator, NSManagedObjectContext) {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: url,
            options: [PageFileStoreDurabilityOption: "normal"])
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return (coordinator, context)
    }

    static func close(_ coordinator: NSPersistentStoreCoordinator) throws {
        for store in coordinator.persistentStores { try coordinator.remove(store) }
    }

    static func run(_ bench: BenchContext) throws -> [Measurement] {
        let count = bench.scaled(100_000)
        let url = bench.path("Space.store")
        var (coordinator, context) = try open(url)
        bench.progress("space: inserting \(grouped(count))")
        let companies = (0..<100).map { index in
            let company = SpaceBenchCompany(context: context)
            company.name = "Company \(index)"
            return company
        }
        for index in 0..<count {
            let person = WriteBenchPerson(context: context)
            WriteBench.fill(person, index)
            person.setValue(companies[index % companies.count], forKey: "company")
        }
        try context.save()
        context.reset()
        try close(coordinator)
        let loaded = try storeBytes(url)

        (coordinator, context) = try open(url)
        let deletions = count * 15 / 100
        bench.progress("space: deleting \(grouped(deletions))")
        var random = SplitMix(seed: 15)
        let request = NSFetchRequest<WriteBenchPerson>(entityName: "Person")
        let people = try context.fetch(request)
        var chosen = Set<Int>()
        while chosen.count < deletions { chosen.insert(Int(random.next() % UInt64(people.count))) }
        for index in chosen { context.delete(people[index]) }
        try context.save()
        context.reset()
        let remaining = try context.count(for: request)
        guard remaining == count - deletions else {
            throw StoreBench.failure("store/space: \(remaining) people left, \(count - deletions) expected")
        }
        try close(coordinator)
        let pruned = try storeBytes(url)
        let report = try PageFileStore.verify(at: url)
        guard report.isClean else { throw StoreBench.failure("store/space: verify: \(report.problems)") }
        return [
            Measurement(
                label: "bytes per row after inserting \(grouped(count))", value: Double(loaded) / Double(count + 100),
                unit: "bytes"),
            Measurement(
                label: "bytes per row after deleting \(grouped(deletions))",
                value: Double(pruned) / Double(remaining + 100), unit: "bytes"),
            Measurement(label: "file after deleting", value: Double(pruned) / 1_048_576, unit: "MiB"),
            Measurement(
                label: "free pages after deleting", value: Double(report.engine?.freePageCount ?? 0), unit: "pages",
                better: .lower),
        ]
    }
}

extension Workload {
    /// Bytes per row after a load and after deleting 15% (issue 11's "Space").
    static let storeSpace = Workload(
        name: "store/space", summary: "bytes per row: 100k people in 100 companies, then 15% deleted (default store)"
    ) { bench in
        try SpaceBench.run(bench)
    }
}
