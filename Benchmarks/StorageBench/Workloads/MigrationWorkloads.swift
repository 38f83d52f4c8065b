// Lightweight migration of a large default store (documented scale: 1,000,000 objects):
// the time it takes, the peak resident memory while it runs (sampled; the migration
// writes in bounded batches, so it should stay well under 200 MB whatever the store's
// size) and the Progress it reports to the caller's current progress.
import Foundation
import OpenCoreData

#if canImport(Glibc)
    import Glibc
#endif

/// Samples the resident memory and a progress's fraction on a background thread.
private final class MigrationSampler: @unchecked Sendable {
    private let lock = NSLock()
    private var running = true
    private(set) var peakResidentBytes = 0
    private(set) var fractions: Set<Int> = []

    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// glibc's `malloc_trim(0)` (looked up: Swift's Glibc module does not export it), so
    /// memory freed before a measurement does not count as resident.
    static func returnFreedMemory() {
        #if canImport(Glibc)
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
            typealias Trim = @convention(c) (Int) -> Int32
            _ = unsafeBitCast(symbol, to: Trim.self)(0)
        #endif
    }

    func start(_ progress: Progress) {
        let thread = Thread { [self] in
            while lock.withLock({ running }) {
                let resident = MigrationSampler.residentBytes()
                let fraction = Int(progress.fractionCompleted * 100)
                lock.withLock {
                    peakResidentBytes = max(peakResidentBytes, resident)
                    fractions.insert(fraction)
                }
                usleep(5_000)
            }
        }
        thread.start()
    }

    func stop() {
        lock.withLock { running = false }
        usleep(20_000)
    }
}

enum MigrationBench {
    /// Version 1: Record (name, age indexed, score indexed, weight, created, active).
    /// Version 2: Record becomes Item, score becomes points, name mandatory with a default,
    /// a new level (default 1), active removed.
    static func model(_ version: Int) -> NSManagedObjectModel {
        func attribute(
            _ name: String, _ type: NSAttributeType, optional: Bool = true, indexed: Bool = false,
            renamedFrom: String? = nil, defaultValue: Any? = nil
        ) -> NSAttributeDescription {
            let attribute = ModelDescriptions.attribute(
                name, type, optional: optional, indexed: indexed, defaultValue: defaultValue)
            attribute.renamingIdentifier = renamedFrom
            return attribute
        }
        let entity = NSEntityDescription()
        entity.name = version == 1 ? "Record" : "Item"
        entity.renamingIdentifier = version == 1 ? nil : "Record"
        entity.properties =
            version == 1
            ? [
                attribute("name", .stringAttributeType), attribute("age", .integer16AttributeType, indexed: true),
                attribute("score", .integer64AttributeType, indexed: true), attribute("weight", .doubleAttributeType),
                attribute("created", .dateAttributeType), attribute("active", .booleanAttributeType),
            ]
            : [
                attribute("name", .stringAttributeType, optional: false, defaultValue: "unnamed"),
                attribute("age", .integer16AttributeType, indexed: true),
                attribute("points", .integer64AttributeType, indexed: true, renamedFrom: "score"),
                attribute("weight", .doubleAttributeType), attribute("created", .dateAttributeType),
                attribute("level", .integer32AttributeType, optional: false, defaultValue: Int32(1)),
            ]
        let model = NSManagedObjectModel()
        model.entities = [entity]
        return model
    }

    static func seed(_ url: URL, count: Int, bench: BenchContext) throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model(1))
        try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: url,
            options: [PageFileStoreDurabilityOption: "off"])
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        var index = 0
        while index < count {
            for _ in 0..<min(10_000, count - index) {
                let record = NSEntityDescription.insertNewObject(forEntityName: "Record", into: context)
                record.setValue(index % 10 == 0 ? nil : "record \(index)", forKey: "name")
                record.setValue(Int16(truncatingIfNeeded: index % 100), forKey: "age")
                record.setValue(Int64(index), forKey: "score")
                record.setValue(Double(index) * 0.5, forKey: "weight")
                record.setValue(Date(timeIntervalSince1970: 1_700_000_000 + Double(index)), forKey: "created")
                record.setValue(index % 2 == 0, forKey: "active")
                index += 1
            }
            try context.save()
            context.reset()
            bench.progress("migration: seeding \(index) of \(count) objects")
        }
        for store in coordinator.persistentStores { try coordinator.remove(store) }
    }
}

extension Workload {
    /// Lightweight migration of a default store of a million objects.
    static let migrationLightweight = Workload(
        name: "migration/lightweight",
        summary: "lightweight migration of a default store (1M objects): time, peak memory, progress"
    ) { bench in
        let count = bench.scaled(1_000_000)
        let url = bench.path("Migration.store")
        try MigrationBench.seed(url, count: count, bench: bench)
        // The seeding's freed memory goes back to the system, so the peak is the migration's.
        MigrationSampler.returnFreedMemory()
        let before = MigrationSampler.residentBytes()
        bench.progress("migration: migrating \(count) objects")
        let parent = Progress(totalUnitCount: 100)
        let sampler = MigrationSampler()
        sampler.start(parent)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: MigrationBench.model(2))
        let seconds = try measureSeconds {
            parent.becomeCurrent(withPendingUnitCount: 100)
            defer { parent.resignCurrent() }
            try coordinator.addPersistentStore(
                ofType: NSSQLiteStoreType, configurationName: nil, at: url,
                options: [
                    NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true,
                ])
        }
        sampler.stop()
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let migrated = try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Item"))
        let defaulted = NSFetchRequest<NSManagedObject>(entityName: "Item")
        defaulted.predicate = NSPredicate(format: "name == %@ AND level == 1", "unnamed")
        let filled = try context.count(for: defaulted)
        guard migrated == count, filled == (count + 9) / 10 else {
            throw StoreBench.failure("migrated \(migrated) of \(count) objects, \(filled) defaults")
        }
        for store in coordinator.persistentStores { try coordinator.remove(store) }
        return [
            Measurement(label: "objects migrated", value: Double(count) / seconds, unit: "/s"),
            Measurement(label: "migration time", value: seconds, unit: "s"),
            Measurement(label: "peak resident memory", value: Double(sampler.peakResidentBytes) / 1e6, unit: "MB"),
            Measurement(label: "resident memory before", value: Double(before) / 1e6, unit: "MB"),
            Measurement(label: "progress values seen", value: Double(sampler.fractions.count), unit: ""),
            Measurement(label: "progress at the end", value: parent.fractionCompleted * 100, unit: "%"),
        ]
    }
}
