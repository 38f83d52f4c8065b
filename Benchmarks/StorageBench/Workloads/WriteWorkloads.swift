// The write path of the default store, as Benchmarks/Peers drives it (object/insert,
// object/update, object/delete): the same Person model (six non-optional attributes,
// age indexed), objects made and filled inside the measurement, one save each, the
// context reset after every call, updates and deletes fetching each object by the
// object ID its URI names. Each phase is its own function so a profile
// (`valgrind --tool=callgrind storage-bench store/writes --scale 0.05`) shows their
// inclusive costs apart.
import Foundation
import OpenCoreData

/// The peer benchmark's Person as a managed object.
final class WriteBenchPerson: NSManagedObject {
    @Managed var firstName: String
    @Managed var lastName: String
    @Managed var age: Int16
    @Managed var email: String
    @Managed var dateOfBirth: Date
    @Managed var isActive: Bool
}

enum WriteBench {
    static let model: NSManagedObjectModel = {
        func attribute(_ name: String, _ type: NSAttributeType, indexed: Bool = false) -> NSAttributeDescription {
            ModelDescriptions.attribute(name, type, optional: false, indexed: indexed)
        }
        let entity = ModelDescriptions.entity("Person", WriteBenchPerson.self)
        entity.properties = [
            attribute("firstName", .stringAttributeType), attribute("lastName", .stringAttributeType),
            attribute("age", .integer16AttributeType, indexed: true), attribute("email", .stringAttributeType),
            attribute("dateOfBirth", .dateAttributeType), attribute("isActive", .booleanAttributeType),
        ]
        let model = NSManagedObjectModel()
        model.entities = [entity]
        return model
    }()

    private static let firstNames = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "John"]
    private static let lastNames = ["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Johnson"]

    static func fill(_ object: WriteBenchPerson, _ index: Int) {
        let first = firstNames[index % firstNames.count]
        let last = lastNames[(index / 8) % lastNames.count]
        object.firstName = first
        object.lastName = last
        object.age = Int16(18 + index % 72)
        object.email = "\(first.lowercased()).\(last.lowercased())\(index)@example.com"
        object.dateOfBirth = Date(timeIntervalSinceReferenceDate: -Double(index) * 28_000)
        object.isActive = index % 4 != 0
    }

    @inline(never) static func insert(_ count: Int, into context: NSManagedObjectContext) throws {
        defer { context.reset() }
        for index in 0..<count { fill(WriteBenchPerson(context: context), index) }
        try context.save()
    }

    static func objectID(_ key: Int64, in store: NSPersistentStore, _ coordinator: NSPersistentStoreCoordinator)
        -> NSManagedObjectID?
    {
        guard let uri = URL(string: "x-coredata://\(store.identifier ?? "")/Person/p\(key)") else { return nil }
        return coordinator.managedObjectID(forURIRepresentation: uri)
    }

    @inline(never) static func update(
        _ keys: [Int64], in context: NSManagedObjectContext, store: NSPersistentStore,
        _ coordinator: NSPersistentStoreCoordinator
    ) throws -> Int {
        defer { context.reset() }
        var changed = 0
        for key in keys {
            guard let id = objectID(key, in: store, coordinator),
                let object = try? context.existingObject(with: id) as? WriteBenchPerson
            else { continue }
            object.age += 1
            object.email = "updated\(key)@example.com"
            changed += 1
        }
        try context.save()
        return changed
    }

    @inline(never) static func delete(
        _ keys: [Int64], in context: NSManagedObjectContext, store: NSPersistentStore,
        _ coordinator: NSPersistentStoreCoordinator
    ) throws -> Int {
        defer { context.reset() }
        var deleted = 0
        for key in keys {
            guard let id = objectID(key, in: store, coordinator), let object = try? context.existingObject(with: id)
            else { continue }
            context.delete(object)
            deleted += 1
        }
        try context.save()
        return deleted
    }

    static func run(_ bench: BenchContext) throws -> [Measurement] {
        let count = bench.scaled(100_000)
        let changes = min(count, bench.scaled(10_000))
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: bench.path("Writes.store"),
            options: [PageFileStoreDurabilityOption: "full"])
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        bench.progress("default store: inserting \(grouped(count))")
        let insertSeconds = try measureSeconds { try insert(count, into: context) }
        var random = SystemRandomNumberGenerator()
        let shuffled = (1...Int64(count)).shuffled(using: &random)
        let updated = Array(shuffled.prefix(changes))
        let deleted = Array(shuffled.suffix(changes))
        bench.progress("default store: updating \(grouped(changes)) by ID")
        var changed = 0
        let updateSeconds = try measureSeconds { changed = try update(updated, in: context, store: store, coordinator) }
        bench.progress("default store: deleting \(grouped(changes)) by ID")
        var removed = 0
        let deleteSeconds = try measureSeconds { removed = try delete(deleted, in: context, store: store, coordinator) }
        let remaining = try context.count(for: NSFetchRequest<WriteBenchPerson>(entityName: "Person"))
        guard changed == changes, removed == changes, remaining == count - changes else {
            throw StoreBench.failure("store/writes: \(changed) updated, \(removed) deleted, \(remaining) left")
        }
        try coordinator.remove(store)
        return [
            Measurement(
                label: "insert \(grouped(count)) in one save", value: Double(count) / insertSeconds, unit: "objects/s"),
            Measurement(
                label: "update \(grouped(changes)) by ID", value: Double(changes) / updateSeconds, unit: "objects/s"),
            Measurement(
                label: "delete \(grouped(changes)) by ID", value: Double(changes) / deleteSeconds, unit: "objects/s"),
        ]
    }
}

extension Workload {
    /// Peer-bench's insert, update and delete on the default store, for profiling the save path.
    static let storeWrites = Workload(
        name: "store/writes", summary: "insert 100k in one save, update and delete 10k by ID (default store)"
    ) { bench in
        try WriteBench.run(bench)
    }
}
