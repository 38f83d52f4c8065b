// Configurations putting entities in different stores of one coordinator: new objects
// go to the store whose configuration holds their entity, fetches read only the stores
// that hold it, and each file keeps only its configuration's objects after reopening.
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

@Suite struct ConfigurationStoreTests {
    static func model() -> NSManagedObjectModel {
        let person = NSEntityDescription()
        person.name = "Person"
        person.properties = [TestStack.attribute("name", .stringAttributeType)]
        let note = NSEntityDescription()
        note.name = "Note"
        note.properties = [TestStack.attribute("text", .stringAttributeType)]
        let model = NSManagedObjectModel()
        model.entities = [person, note]
        model.setEntities([person], forConfigurationName: "People")
        model.setEntities([note], forConfigurationName: "Notes")
        return model
    }

    @Test(arguments: [NSSQLiteStoreType, NSBinaryStoreType, NSInMemoryStoreType])
    func entitiesGoToTheStoreOfTheirConfiguration(type: String) throws {
        let model = Self.model()
        let directory = try TestScratch.directory("configs")
        defer { try? FileManager.default.removeItem(at: directory) }
        func open() throws -> (NSPersistentStoreCoordinator, NSPersistentStore, NSPersistentStore) {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            let url = { (name: String) in type == NSInMemoryStoreType ? nil : directory.appendingPathComponent(name) }
            let people = try coordinator.addPersistentStore(
                ofType: type, configurationName: "People", at: url("people"), options: nil)
            let notes = try coordinator.addPersistentStore(
                ofType: type, configurationName: "Notes", at: url("notes"), options: nil)
            return (coordinator, people, notes)
        }
        let (coordinator, people, notes) = try open()
        let context = TestStack.context(coordinator)
        try context.performAndWait {
            let ada = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
            ada.setValue("Ada", forKey: "name")
            let note = NSEntityDescription.insertNewObject(forEntityName: "Note", into: context)
            note.setValue("hello", forKey: "text")
            try context.save()
            #expect(ada.objectID.persistentStore === people && note.objectID.persistentStore === notes)
            #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Person")) == 1)
            #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Note")) == 1)
        }
        guard type != NSInMemoryStoreType else { return }
        for store in coordinator.persistentStores { try coordinator.remove(store) }
        let (reopened, people2, notes2) = try open()
        let reader = TestStack.context(reopened)
        try reader.performAndWait {
            let persons = try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
            #expect(persons.map { $0.value(forKey: "name") as? String } == ["Ada"])
            #expect(persons.first?.objectID.persistentStore === people2)
            let found = try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Note"))
            #expect(found.map { $0.value(forKey: "text") as? String } == ["hello"])
            #expect(found.first?.objectID.persistentStore === notes2)
            let onlyPeople = NSFetchRequest<NSManagedObject>(entityName: "Note")
            onlyPeople.affectedStores = [people2]
            #expect(try reader.count(for: onlyPeople) == 0, "the people file holds no notes")
        }
    }
}
