// README's "Quick start", run as written (its fatalError replaced by a thrown error),
// so the first code a user copies keeps compiling and working.
import OpenCoreData
import TestSupport
import Testing

final class QuickStartPerson: NSManagedObject {
    @Managed var name: String?
    @Managed var age: Int16
}

@Suite struct QuickStartTests {
    @Test func readmeQuickStartRunsAndReopens() throws {
        let directory = try TestScratch.directory("quick-start")
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("People.store")

        let name = NSAttributeDescription()
        name.name = "name"
        name.attributeType = .stringAttributeType
        let age = NSAttributeDescription()
        age.name = "age"
        age.attributeType = .integer16AttributeType
        age.defaultValue = 0
        let person = NSEntityDescription()
        person.name = "Person"
        person.managedObjectClassName = NSStringFromClass(QuickStartPerson.self)
        person.properties = [name, age]
        let model = NSManagedObjectModel()
        model.entities = [person]

        func open() throws -> NSPersistentContainer {
            let container = NSPersistentContainer(name: "People", managedObjectModel: model)
            container.persistentStoreDescriptions = [NSPersistentStoreDescription(url: url)]
            var loadError: Error?
            container.loadPersistentStores { _, error in loadError = error }
            if let loadError { throw loadError }
            return container
        }

        var container = try open()
        let context = container.viewContext
        let ada = QuickStartPerson(context: context)
        ada.name = "Ada"
        ada.age = 36
        let bob = QuickStartPerson(context: context)
        bob.name = "Bob"
        bob.age = 41
        try context.save()
        for store in container.persistentStoreCoordinator.persistentStores {
            try container.persistentStoreCoordinator.remove(store)
        }

        container = try open()
        let request = NSFetchRequest<QuickStartPerson>(entityName: "Person")
        request.predicate = NSPredicate(format: "age > %d AND name BEGINSWITH[c] %@", 30, "a")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        let people = try container.viewContext.fetch(request)
        #expect(people.map(\.name) == ["Ada"])
        #expect(people.first?.age == 36)
    }
}
