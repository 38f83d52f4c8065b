// The code of the DocC articles (Sources/OpenCoreData/OpenCoreData.docc), mirrored line
// for line so that it compiles with the tests; DocumentationSnippetTests checks that
// every article's Swift block appears here and runs these functions.
import Foundation
import OpenCoreData

// GettingStarted.md

final class Person: NSManagedObject {
    @Managed var name: String?
    @Managed var age: Int16
}

func makeModel() -> NSManagedObjectModel {
    let name = NSAttributeDescription()
    name.name = "name"
    name.attributeType = .stringAttributeType
    let age = NSAttributeDescription()
    age.name = "age"
    age.attributeType = .integer16AttributeType
    age.defaultValue = 0
    let person = NSEntityDescription()
    person.name = "Person"
    person.managedObjectClassName = NSStringFromClass(Person.self)
    person.properties = [name, age]
    let model = NSManagedObjectModel()
    model.entities = [person]
    return model
}

func run(storeURL: URL) throws -> [String] {
    let container = NSPersistentContainer(name: "People", managedObjectModel: makeModel())
    container.persistentStoreDescriptions = [NSPersistentStoreDescription(url: storeURL)]
    var loadError: Error?
    container.loadPersistentStores { _, error in loadError = error }
    if let loadError { throw loadError }

    let context = container.viewContext
    let ada = Person(context: context)
    ada.name = "Ada"
    ada.age = 36
    try context.save()

    let request = NSFetchRequest<Person>(entityName: "Person")
    request.predicate = NSPredicate(format: "age > %d AND name BEGINSWITH[c] %@", 30, "a")
    request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
    return try context.fetch(request).compactMap(\.name)
}

func inMemoryContainer() -> NSPersistentContainer {
    let container = NSPersistentContainer(name: "People", managedObjectModel: makeModel())
    let description = NSPersistentStoreDescription()
    description.type = NSInMemoryStoreType
    container.persistentStoreDescriptions = [description]
    container.loadPersistentStores { _, error in
        if let error { print("the store did not load: \(error)") }
    }
    return container
}

// OpenCoreData.md (the landing page)

func landingPage(model: NSManagedObjectModel, storeURL: URL) throws -> [String] {
    let container = NSPersistentContainer(name: "People", managedObjectModel: model)
    container.persistentStoreDescriptions = [NSPersistentStoreDescription(url: storeURL)]
    container.loadPersistentStores { _, error in
        if let error { print("the store did not load: \(error)") }
    }
    let context = container.viewContext
    let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
    request.predicate = NSPredicate(format: "age > %d AND name BEGINSWITH[c] %@", 30, "a")
    let people = try context.fetch(request)
    // Read while the container (and so the context) lives.
    return people.compactMap { $0.value(forKey: "name") as? String }
}

// Concurrency.md

func importNames(_ names: [String], into container: NSPersistentContainer) async throws {
    container.viewContext.automaticallyMergesChangesFromParent = true
    let background = container.newBackgroundContext()
    try await background.perform {
        for name in names {
            let person = NSEntityDescription.insertNewObject(forEntityName: "Person", into: background)
            person.setValue(name, forKey: "name")
        }
        try background.save()
    }
}

func countAdults(in container: NSPersistentContainer) async throws -> Int {
    try await container.performBackgroundTask { context in
        let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
        request.predicate = NSPredicate(format: "age >= 18")
        return try context.count(for: request)
    }
}

// StoresAndDurability.md

func durableDescription(at url: URL) -> NSPersistentStoreDescription {
    let description = NSPersistentStoreDescription(url: url)
    description.setOption("normal" as NSString, forKey: PageFileStoreDurabilityOption)
    return description
}

// Performance.md

func recentOrders(in context: NSManagedObjectContext) throws -> [NSManagedObject] {
    let request = NSFetchRequest<NSManagedObject>(entityName: "Order")
    request.predicate = NSPredicate(format: "total >= %@", 100 as NSNumber)
    request.sortDescriptors = [NSSortDescriptor(key: "date", ascending: false)]
    request.fetchLimit = 50
    request.relationshipKeyPathsForPrefetching = ["customer"]
    return try context.fetch(request)
}
