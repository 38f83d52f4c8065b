// Object-level workloads of issue 5 on each store type: the same list Benchmarks/Peers
// runs on SQLite and GRDB (documented scale: 100,000 objects).
import Foundation
import OpenCoreData

/// The store benchmark's record: `score` and `age` indexed.
final class StoreBenchRecord: NSManagedObject {
    @Managed var name: String?
    @Managed var age: Int16
    @Managed var score: Int64
    @Managed var weight: Double
    @Managed var created: Date?
    @Managed var active: Bool
}

enum StoreBench {
    static let model: NSManagedObjectModel = {
        func attribute(_ name: String, _ type: NSAttributeType, indexed: Bool = false) -> NSAttributeDescription {
            ModelDescriptions.attribute(name, type, indexed: indexed)
        }
        let entity = ModelDescriptions.entity("StoreRecord", StoreBenchRecord.self)
        entity.properties = [
            attribute("name", .stringAttributeType), attribute("age", .integer16AttributeType, indexed: true),
            attribute("score", .integer64AttributeType, indexed: true), attribute("weight", .doubleAttributeType),
            attribute("created", .dateAttributeType), attribute("active", .booleanAttributeType),
        ]
        let model = NSManagedObjectModel()
        model.entities = [entity]
        return model
    }()

    static func coordinator(type: String, url: URL, options: [AnyHashable: Any]? = nil) throws
        -> NSPersistentStoreCoordinator
    {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(
            ofType: type, configurationName: nil, at: type == NSInMemoryStoreType ? nil : url, options: options)
        return coordinator
    }

    static func context(_ coordinator: NSPersistentStoreCoordinator) -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    static func fill(_ record: StoreBenchRecord, _ index: Int) {
        record.name = "record \(index)"
        record.age = Int16(truncatingIfNeeded: index % 100)
        record.score = Int64(index)
        record.weight = Double(index) * 0.5
        record.created = Date(timeIntervalSince1970: 1_700_000_000 + Double(index))
        record.active = index % 2 == 0
    }

    /// What the tables call a store type: NSSQLiteStoreType's string is "SQLite", but the
    /// store it opens is OpenCoreData's own default store.
    static func displayName(_ type: String) -> String {
        switch type {
        case NSSQLiteStoreType: "default store"
        case NSInMemoryStoreType: "in-memory store"
        case NSBinaryStoreType: "binary store"
        default: type
        }
    }

    /// What one save of `type` costs in durability, for the single-save label.
    static func durability(_ type: String, options: [AnyHashable: Any]?) -> String {
        switch type {
        case NSInMemoryStoreType: return "not durable"
        case NSBinaryStoreType: return "durable, file rewritten"
        default:
            let setting = options?[PageFileStoreDurabilityOption] as? String ?? "full"
            return "\(setting) durability"
        }
    }

    static func failure(_ message: String) -> Error {
        CocoaError(.coderValueNotFound, userInfo: [NSLocalizedDescriptionKey: message])
    }

    /// Runs the issue's object workloads on `type` and reports one measurement each.
    static func run(type: String, bench: BenchContext, options: [AnyHashable: Any]? = nil) throws -> [Measurement] {
        let count = bench.scaled(100_000)
        let url = bench.path("Store.store")
        var coordinator = try coordinator(type: type, url: url, options: options)
        let store = displayName(type)
        var results: [Measurement] = []
        func record(_ label: String, _ value: Double, _ unit: String) {
            results.append(Measurement(label: label, value: value, unit: unit))
        }

        bench.progress("\(store): inserting \(grouped(count)) objects")
        let writer = context(coordinator)
        let insertSeconds = try measureSeconds {
            for index in 0..<count { fill(StoreBenchRecord(context: writer), index) }
            try writer.save()
        }
        record("insert \(grouped(count)) in one save", Double(count) / insertSeconds, "objects/s")
        let ids = try context(coordinator).fetch(NSFetchRequest<StoreBenchRecord>(entityName: "StoreRecord")).map(
            \.objectID)
        guard ids.count == count else { throw failure("fetched \(ids.count) of \(count)") }

        // The binary store rewrites its whole file on every save (that is its design), so
        // 2,000 durable saves of a 100,000-object graph would take many minutes: it runs
        // 1/40 of them, and the rate is per save all the same.
        let singles = type == NSBinaryStoreType ? max(1, bench.scaled(2_000) / 40) : bench.scaled(2_000)
        bench.progress("\(store): \(grouped(singles)) single-object saves")
        let single = context(coordinator)
        let singleSeconds = try measureSeconds {
            for index in 0..<singles {
                fill(StoreBenchRecord(context: single), count + index)
                try single.save()
            }
        }
        record(
            "\(grouped(singles)) single-object saves (\(durability(type, options: options)))",
            Double(singles) / singleSeconds, "saves/s")

        let lookups = min(ids.count, bench.scaled(10_000))
        bench.progress("\(store): \(grouped(lookups)) fetches by object ID")
        let lookup = context(coordinator)
        var generator = SystemRandomNumberGenerator()
        var sum: Int64 = 0
        let lookupSeconds = try measureSeconds {
            for _ in 0..<lookups {
                let id = ids[Int.random(in: 0..<ids.count, using: &generator)]
                guard let object = try lookup.existingObject(with: id) as? StoreBenchRecord else { continue }
                sum &+= object.score
            }
        }
        record("fetch by object ID", Double(lookups) / lookupSeconds, "objects/s")

        let queries = max(1, bench.scaled(200))
        bench.progress("\(store): \(grouped(queries)) indexed range queries")
        let ranged = try measureSeconds {
            for query in 0..<queries {
                let reader = context(coordinator)
                let request = NSFetchRequest<StoreBenchRecord>(entityName: "StoreRecord")
                let low = (query * 7_919) % max(1, count - 1_000)
                request.predicate = NSPredicate(
                    format: "score >= %lld AND score < %lld", Int64(low), Int64(low + 1_000))
                request.sortDescriptors = [NSSortDescriptor(key: "score", ascending: false)]
                request.fetchLimit = 100
                let found = try reader.fetch(request)
                guard found.count == min(100, count) || count < 1_100 else {
                    throw failure("range found \(found.count)")
                }
            }
        }
        record("indexed range + sort + limit 100", Double(queries) / ranged, "queries/s")

        bench.progress("\(store): CONTAINS[c] scans")
        let scans = 3
        let containsSeconds = try measureSeconds {
            for _ in 0..<scans {
                let request = NSFetchRequest<StoreBenchRecord>(entityName: "StoreRecord")
                request.predicate = NSPredicate(format: "name CONTAINS[c] %@", "RD 99")
                _ = try context(coordinator).fetch(request)
            }
        }
        record("non-indexed CONTAINS[c] (full scan)", Double(scans) / containsSeconds, "queries/s")

        let counts = 20
        let countSeconds = try measureSeconds {
            for _ in 0..<counts {
                let request = NSFetchRequest<StoreBenchRecord>(entityName: "StoreRecord")
                request.predicate = NSPredicate(format: "age < 50")
                _ = try context(coordinator).count(for: request)
            }
        }
        record("count with predicate (age < 50)", Double(counts) / countSeconds, "queries/s")

        let changes = min(count, bench.scaled(10_000))
        bench.progress("\(store): updating \(grouped(changes))")
        let updater = context(coordinator)
        let updateRequest = NSFetchRequest<StoreBenchRecord>(entityName: "StoreRecord")
        updateRequest.predicate = NSPredicate(format: "score < %lld", Int64(changes))
        let updateSeconds = try measureSeconds {
            for object in try updater.fetch(updateRequest) { object.weight += 1 }
            try updater.save()
        }
        record("update \(grouped(changes)) (fetch, change, save)", Double(changes) / updateSeconds, "objects/s")

        bench.progress("\(store): deleting \(grouped(changes))")
        let deleter = context(coordinator)
        let deleteSeconds = try measureSeconds {
            for object in try deleter.fetch(updateRequest) { deleter.delete(object) }
            try deleter.save()
        }
        record("delete \(grouped(changes)) (fetch, delete, save)", Double(changes) / deleteSeconds, "objects/s")

        if type != NSInMemoryStoreType {
            for store in coordinator.persistentStores { try coordinator.remove(store) }
            let files = try FileManager.default.contentsOfDirectory(atPath: bench.directory.path)
            let bytes = try files.filter { $0.hasPrefix("Store.store") }.reduce(0) { total, name in
                let attributes = try FileManager.default.attributesOfItem(
                    atPath: bench.directory.appendingPathComponent(name).path)
                return total + ((attributes[.size] as? NSNumber)?.intValue ?? 0)
            }
            var firstScore: Int64?
            let reopenSeconds = try measureSeconds {
                coordinator = try StoreBench.coordinator(type: type, url: url, options: options)
                let request = NSFetchRequest<StoreBenchRecord>(entityName: "StoreRecord")
                request.predicate = NSPredicate(format: "score == %lld", Int64(count - 1))
                // Read inside the measurement, while the context is alive: the fetched object
                // is a fault that fires on this first access (a context holds its objects,
                // not the other way round, as in Core Data).
                let reader = context(coordinator)
                firstScore = try reader.fetch(request).first?.score
            }
            guard firstScore == Int64(count - 1) else { throw failure("reopen lost a row") }
            record("reopen and first fetch", reopenSeconds * 1000, "ms")
            record("file size after delete", Double(bytes) / 1_048_576, "MiB")
            record("file bytes per remaining object", Double(bytes) / Double(count + singles - changes), "bytes")
            if let store = coordinator.persistentStores.first as? PageFileStore {
                let report = try store.verify()
                guard report.isClean else { throw failure("verify: \(report.problems)") }
            }
        }
        _ = sum
        return results
    }
}

extension Workload {
    /// The issue's object workloads on the default on-disk store.
    static let storeDefault = Workload(
        name: "store/default", summary: "object workloads on the default store (100k objects, full durability)"
    ) { bench in
        try StoreBench.run(type: NSSQLiteStoreType, bench: bench)
    }

    /// The default store opened for several processes (`PageFileStoreMultiProcessOption`):
    /// what the engine's multi-process locking costs a single process.
    static let storeMultiProcess = Workload(
        name: "store/multi-process", summary: "store/default with PageFileStoreMultiProcessOption (100k objects)"
    ) { bench in
        try StoreBench.run(
            type: NSSQLiteStoreType, bench: bench, options: [PageFileStoreMultiProcessOption: true as NSNumber])
    }

    /// The same workloads on the in-memory store, for comparison.
    static let storeInMemory = Workload(
        name: "store/in-memory", summary: "object workloads on the in-memory store (100k objects)"
    ) { bench in
        try StoreBench.run(type: NSInMemoryStoreType, bench: bench)
    }
}
