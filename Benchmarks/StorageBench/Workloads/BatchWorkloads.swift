// Batch requests on the default store, with the peer benchmark's Person model
// (WriteWorkloads.swift): NSBatchInsertRequest from dictionaries and from a handler,
// NSBatchUpdateRequest and NSBatchDeleteRequest of the ~15% of people in an age range,
// and the memory a handler-driven insert of 1,000,000 objects holds (the process's peak
// resident size, VmHWM, reset before the batch). Each phase is its own function, so a
// profile (`valgrind --tool=callgrind storage-bench store/batch-requests --scale 0.1`) shows them apart.
import Foundation
import OpenCoreData

enum BatchBench {
    /// Person `index` as the dictionary a batch insert takes (WriteBench.fill's values).
    static func dictionary(_ index: Int) -> [String: Any] {
        let first = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "John"][index % 8]
        let last = ["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Johnson"][(index / 8) % 7]
        return [
            "firstName": first, "lastName": last, "age": Int16(18 + index % 72),
            "email": "\(first.lowercased()).\(last.lowercased())\(index)@example.com",
            "dateOfBirth": Date(timeIntervalSinceReferenceDate: -Double(index) * 28_000), "isActive": index % 4 != 0,
        ]
    }

    static func open(_ url: URL) throws -> (NSPersistentStoreCoordinator, NSManagedObjectContext) {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: WriteBench.model)
        try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: url,
            options: [PageFileStoreDurabilityOption: "full"])
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return (coordinator, context)
    }

    @inline(never) static func insert(_ dictionaries: [[String: Any]], into context: NSManagedObjectContext) throws {
        let request = NSBatchInsertRequest(entityName: "Person", objects: dictionaries)
        request.resultType = .count
        guard (try context.execute(request) as? NSBatchInsertResult)?.result as? Int == dictionaries.count else {
            throw BenchFailure("batch insert: wrong count")
        }
    }

    @inline(never) static func insert(handling count: Int, into context: NSManagedObjectContext) throws {
        var next = 0
        let request = NSBatchInsertRequest(entityName: "Person") { (dictionary: NSMutableDictionary) -> Bool in
            guard next < count else { return true }
            let first = next % 2 == 0 ? "Ada" : "Grace"
            dictionary["firstName"] = first
            dictionary["lastName"] = "Lovelace"
            dictionary["age"] = NSNumber(value: 18 + next % 72)
            dictionary["email"] = "\(first.lowercased())\(next)@example.com"
            dictionary["dateOfBirth"] = NSDate(timeIntervalSinceReferenceDate: -Double(next) * 28_000)
            dictionary["isActive"] = NSNumber(value: next % 4 != 0)
            next += 1
            return false
        }
        request.resultType = .count
        guard (try context.execute(request) as? NSBatchInsertResult)?.result as? Int == count else {
            throw BenchFailure("batch insert by handler: wrong count")
        }
    }

    @inline(never) static func update(_ context: NSManagedObjectContext) throws -> Int {
        let update = NSBatchUpdateRequest(entityName: "Person")
        update.predicate = NSPredicate(format: "age >= 30 AND age < 41")
        update.propertiesToUpdate = ["isActive": false, "age": NSExpression(format: "age + 100")]
        update.resultType = .updatedObjectsCountResultType
        return (try context.execute(update) as? NSBatchUpdateResult)?.result as? Int ?? -1
    }

    @inline(never) static func delete(_ context: NSManagedObjectContext) throws -> Int {
        let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Person")
        request.predicate = NSPredicate(format: "age >= 50 AND age < 61")
        let delete = NSBatchDeleteRequest(fetchRequest: request)
        delete.resultType = .resultTypeCount
        return (try context.execute(delete) as? NSBatchDeleteResult)?.result as? Int ?? -1
    }

    /// Probe (ProbeWorkloads.swift): a batch insert of 20,000 dictionaries made before
    /// the measured part, into a new store; instructions per row include the commit.
    static func probeDictionaries(_ directory: URL) throws {
        let dictionaries = (0..<20_000).map(dictionary)
        let (coordinator, context) = try open(directory.appendingPathComponent("batch.store"))
        try probeMeasuredBatchInsert(dictionaries, into: context)
        for store in coordinator.persistentStores { try coordinator.remove(store) }
    }

    @inline(never)
    static func probeMeasuredBatchInsert(_ dictionaries: [[String: Any]], into context: NSManagedObjectContext)
        throws
    {
        try insert(dictionaries, into: context)
    }

    /// Probe: a handler-driven batch insert of 20,000 objects (the handler's own
    /// NSNumber and NSDate making is counted too, as an app pays it).
    static func probeHandler(_ directory: URL) throws {
        let (coordinator, context) = try open(directory.appendingPathComponent("handled.store"))
        try probeMeasuredBatchHandler(20_000, into: context)
        for store in coordinator.persistentStores { try coordinator.remove(store) }
    }

    @inline(never)
    static func probeMeasuredBatchHandler(_ count: Int, into context: NSManagedObjectContext) throws {
        try insert(handling: count, into: context)
    }

    /// The process's peak resident size so far, in bytes (`VmHWM` of /proc/self/status).
    static func peakResidentBytes() -> Double? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kibibytes = Double(line.split(separator: " ").dropFirst().first ?? "")
        else { return nil }
        return kibibytes * 1024
    }

    /// Starts the peak resident size over from the current size (Linux: clear_refs 5).
    static func resetPeakResident() -> Bool {
        FileManager.default.createFile(atPath: "/proc/self/clear_refs", contents: Data("5".utf8))
            || (try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)) != nil
    }
}

struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension Workload {
    static let storeBatch = Workload(
        name: "store/batch-requests",
        summary: "batch insert (dictionaries, handler), batch update and delete of 15% by the age index"
    ) { context in
        let count = context.scaled(100_000)
        let dictionaries = (0..<count).map(BatchBench.dictionary)
        let (loaded, loadedContext) = try BatchBench.open(context.path("batch.store"))
        let inserted = try measureSeconds { try BatchBench.insert(dictionaries, into: loadedContext) }
        let (_, handled) = try BatchBench.open(context.path("handled.store"))
        let handledSeconds = try measureSeconds { try BatchBench.insert(handling: count, into: handled) }
        var updated = 0
        let updateSeconds = try measureSeconds { updated = try BatchBench.update(loadedContext) }
        var deleted = 0
        let deleteSeconds = try measureSeconds { deleted = try BatchBench.delete(loadedContext) }
        for store in loaded.persistentStores { try loaded.remove(store) }
        return [
            Measurement(label: "insert \(count) (dictionaries)", value: Double(count) / inserted, unit: "objects/s"),
            Measurement(label: "insert \(count) (handler)", value: Double(count) / handledSeconds, unit: "objects/s"),
            Measurement(label: "update \(updated) (15%)", value: Double(updated) / updateSeconds, unit: "objects/s"),
            Measurement(label: "delete \(deleted) (15%)", value: Double(deleted) / deleteSeconds, unit: "objects/s"),
        ]
    }

    static let storeBatchMemory = Workload(
        name: "store/batch-memory",
        summary: "peak resident size of a handler-driven batch insert of 1,000,000 objects"
    ) { context in
        let count = context.scaled(1_000_000)
        let (coordinator, batch) = try BatchBench.open(context.path("memory.store"))
        let before = BatchBench.peakResidentBytes() ?? .nan
        let reset = BatchBench.resetPeakResident()
        let seconds = try measureSeconds { try BatchBench.insert(handling: count, into: batch) }
        let peak = BatchBench.peakResidentBytes() ?? .nan
        for store in coordinator.persistentStores { try coordinator.remove(store) }
        return [
            Measurement(label: "insert \(count) (handler)", value: Double(count) / seconds, unit: "objects/s"),
            Measurement(
                label: reset ? "peak resident during the batch" : "peak resident (process, not reset)",
                value: peak / 1_048_576, unit: "MiB"),
            Measurement(label: "peak resident before", value: before / 1_048_576, unit: "MiB"),
        ]
    }
}
