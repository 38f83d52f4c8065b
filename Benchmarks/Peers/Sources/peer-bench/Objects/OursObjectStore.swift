// The object-level "ours" side: OpenCoreData's default on-disk store (PageFileStore,
// what `NSSQLiteStoreType` and a typeless description give), used as a Core Data user
// writes it — a model built in code with an index on age (as the SQL sides' schema has
// it), an NSManagedObject subclass with @Managed properties, one coordinator and one
// context, fetch requests with predicates, and `save()` at full durability.
//
// What each side materialises: SQLite decodes columns into a `Person` value; GRDB
// decodes a Row into a `Person` record; ours builds a registered, filled
// NSManagedObject (snapshot, registry entry, change tracking) and then reads its six
// attributes into a `Person` so the workloads check the same values everywhere. So
// ours does strictly more per fetched object than either SQL side.
//
// The record id is the object's primary key in the store, not a seventh attribute:
// SQLite's `id INTEGER PRIMARY KEY` is its rowid, so neither side stores it twice.
// `fetch(id:)` is a fetch by object ID: the URI a Core Data application keeps
// (`x-coredata://STORE/Person/pN`), mapped back by the coordinator. A new store gives
// the objects of a save the keys 1...N, but in the context's order, not the array's, so
// ours' person N may carry another person's attributes: the store holds the same people
// and every check the workloads make holds under any such assignment. The adapter does
// not call `obtainPermanentIDs` to force the order: a save then writes rows in random
// key order, and the loaded file grows by about a third (15.8 MB instead of 11.7 MB
// at scale 1), which is the store's cost, not what a plain `save()` pays.
// After every call the context is reset, so each call starts from the store (as the
// SQL sides start every statement from their page cache), not from objects the
// previous call left registered.
import Foundation
import OpenCoreData

/// A Person as a managed object.
final class PersonObject: NSManagedObject {
    @Managed var firstName: String
    @Managed var lastName: String
    @Managed var age: Int16
    @Managed var email: String
    @Managed var dateOfBirth: Date
    @Managed var isActive: Bool
}

final class OursObjectStore: ObjectStore {
    static let sideName = "ours"

    static func files(at path: String) -> [String] { [path, path + "-wal"] }

    /// One model for every open store: Person, six non-optional attributes, age indexed.
    private static let model: NSManagedObjectModel = {
        func attribute(_ name: String, _ type: NSAttributeType, indexed: Bool = false) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.isOptional = false
            attribute.isIndexed = indexed
            return attribute
        }
        let entity = NSEntityDescription()
        entity.name = "Person"
        entity.managedObjectClassName = NSStringFromClass(PersonObject.self)
        entity.properties = [
            attribute("firstName", .stringAttributeType), attribute("lastName", .stringAttributeType),
            attribute("age", .integer16AttributeType, indexed: true), attribute("email", .stringAttributeType),
            attribute("dateOfBirth", .dateAttributeType), attribute("isActive", .booleanAttributeType),
        ]
        let model = NSManagedObjectModel()
        model.entities = [entity]
        return model
    }()

    private let coordinator: NSPersistentStoreCoordinator
    private let store: NSPersistentStore
    private let context: NSManagedObjectContext
    /// Store keys of people whose id is not their key (saved after a reopen).
    private var keyByID: [Int64: Int64] = [:]

    init(path: String) throws {
        coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.model)
        store = try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: URL(fileURLWithPath: path),
            options: [PageFileStoreDurabilityOption: "full"])
        context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
    }

    private func objectID(for id: Int64) -> NSManagedObjectID? {
        let key = keyByID[id] ?? id
        guard let uri = URL(string: "x-coredata://\(store.identifier ?? "")/Person/p\(key)") else { return nil }
        return coordinator.managedObjectID(forURIRepresentation: uri)
    }

    private static func person(_ object: PersonObject) throws -> Person {
        guard let key = object.objectID.storeKey else {
            throw BenchError(message: "ours: a fetched object has a temporary ID")
        }
        return Person(
            id: key, firstName: object.firstName, lastName: object.lastName, age: object.age,
            email: object.email, dateOfBirth: object.dateOfBirth, isActive: object.isActive)
    }

    private func fill(_ person: Person) -> PersonObject {
        let object = PersonObject(context: context)
        object.firstName = person.firstName
        object.lastName = person.lastName
        object.age = person.age
        object.email = person.email
        object.dateOfBirth = person.dateOfBirth
        object.isActive = person.isActive
        return object
    }

    /// Checks that the saved `objects` got permanent keys and notes the key of each person
    /// whose id differs from it (after a reopen the store starts a new block of keys,
    /// SPEC.md §3.9 S3), so later calls find every id.
    private func checkKeys(_ objects: [PersonObject], _ people: [Person]) throws {
        let keys = objects.compactMap(\.objectID.storeKey)
        guard keys.count == people.count, Set(keys).count == keys.count else {
            throw BenchError(message: "ours: the save did not give every object its own permanent key")
        }
        let fresh = Set(keys)
        // A new store numbers one save's objects 1...N in the context's order: those ids
        // are their keys already (see above); otherwise map each person to its object's key.
        guard !people.allSatisfy({ fresh.contains($0.id) }) else { return }
        for (person, key) in zip(people, keys) { keyByID[person.id] = key }
    }

    func insert(_ people: [Person]) throws {
        defer { context.reset() }
        let objects = people.map(fill)
        try context.save()
        try checkKeys(objects, people)
    }

    func save(_ person: Person) throws {
        defer { context.reset() }
        let object = fill(person)
        try context.save()
        try checkKeys([object], [person])
    }

    func fetch(id: Int64) throws -> Person? {
        defer { context.reset() }
        guard let objectID = objectID(for: id),
            let object = try? context.existingObject(with: objectID) as? PersonObject
        else { return nil }
        return try Self.person(object)
    }

    private func fetch(_ request: NSFetchRequest<PersonObject>) throws -> [Person] {
        defer { context.reset() }
        return try context.fetch(request).map(Self.person)
    }

    func fetch(ageFrom lower: Int16, below upper: Int16, limit: Int) throws -> [Person] {
        let request = NSFetchRequest<PersonObject>(entityName: "Person")
        request.predicate = NSPredicate(format: "age >= %d AND age < %d", Int(lower), Int(upper))
        // Core Data cannot sort on the object ID; ties in age come back in primary-key
        // order (the store's order, kept by the context's stable sort), which is the SQL
        // sides' `ORDER BY age, id`. The workload checks that order.
        request.sortDescriptors = [NSSortDescriptor(key: "age", ascending: true)]
        request.fetchLimit = limit
        return try fetch(request)
    }

    func fetch(lastNameContaining text: String) throws -> [Person] {
        let request = NSFetchRequest<PersonObject>(entityName: "Person")
        request.predicate = NSPredicate(format: "lastName CONTAINS[c] %@", text)
        return try fetch(request)
    }

    func count(ageFrom lower: Int16, below upper: Int16) throws -> Int {
        let request = NSFetchRequest<PersonObject>(entityName: "Person")
        request.predicate = NSPredicate(format: "age >= %d AND age < %d", Int(lower), Int(upper))
        return try context.count(for: request)
    }

    /// Fetches each object by ID, changes it and saves once — as GRDB's side does.
    func update(ids: [Int64]) throws -> Int {
        defer { context.reset() }
        var changed = 0
        for id in ids {
            guard let objectID = objectID(for: id),
                let object = try? context.existingObject(with: objectID) as? PersonObject
            else { continue }
            object.age += 1
            object.email = "updated\(id)@example.com"
            changed += 1
        }
        try context.save()
        return changed
    }

    /// Fetches each object by ID (to learn it exists), deletes it and saves once.
    func delete(ids: [Int64]) throws -> Int {
        defer { context.reset() }
        var deleted = 0
        for id in ids {
            guard let objectID = objectID(for: id), let object = try? context.existingObject(with: objectID)
            else { continue }
            context.delete(object)
            deleted += 1
        }
        try context.save()
        return deleted
    }

    /// Each person as the dictionary a batch insert takes (the keys become 1...N in the
    /// given order on a new store: the people's ids).
    func batchInput(_ people: [Person]) -> [[String: Any]] {
        people.map { person in
            [
                "firstName": person.firstName, "lastName": person.lastName, "age": person.age, "email": person.email,
                "dateOfBirth": person.dateOfBirth, "isActive": person.isActive,
            ]
        }
    }

    func batchInsert(_ dictionaries: [[String: Any]]) throws {
        let insert = NSBatchInsertRequest(entityName: "Person", objects: dictionaries)
        insert.resultType = .count
        let count = (try context.execute(insert) as? NSBatchInsertResult)?.result as? Int
        guard count == dictionaries.count else {
            throw BenchError(message: "ours: batch insert wrote \(count ?? -1) of \(dictionaries.count) rows")
        }
    }

    func batchUpdate(ageFrom lower: Int16, below upper: Int16) throws -> Int {
        let update = NSBatchUpdateRequest(entityName: "Person")
        update.predicate = NSPredicate(format: "age >= %d AND age < %d", Int(lower), Int(upper))
        update.propertiesToUpdate = ["isActive": false, "age": NSExpression(format: "age + 100")]
        update.resultType = .updatedObjectsCountResultType
        return (try context.execute(update) as? NSBatchUpdateResult)?.result as? Int ?? -1
    }

    func batchDelete(ageFrom lower: Int16, below upper: Int16) throws -> Int {
        let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Person")
        request.predicate = NSPredicate(format: "age >= %d AND age < %d", Int(lower), Int(upper))
        let delete = NSBatchDeleteRequest(fetchRequest: request)
        delete.resultType = .resultTypeCount
        return (try context.execute(delete) as? NSBatchDeleteResult)?.result as? Int ?? -1
    }

    func close() throws {
        context.reset()
        try coordinator.remove(store)
    }
}
