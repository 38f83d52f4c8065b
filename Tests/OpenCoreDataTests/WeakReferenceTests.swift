// Back references that read nil once their target is gone, without `weak` (WeakHandle):
// each reads its target while it lives and nil after, and the hot targets (entities,
// relationships, the model) get no runtime side table from typical use, which would put
// every retain and release of them on the runtime's slow path.
import Foundation
import Testing

@testable import OpenCoreData

@Suite struct WeakReferenceTests {
    /// Whether `object` has a runtime side table: one holds a weak count of 1 for the object
    /// itself plus one per `weak` reference; without one the runtime answers at most 1.
    static func hasSideTable(_ object: AnyObject) -> Bool {
        _getWeakRetainCount(object) > 1
    }

    @Test func sideTableProbeTellsWeakTargetsApart() {
        final class Target {}
        let target = Target()
        #expect(!Self.hasSideTable(target))
        weak let reference = target
        #expect(reference === target)
        #expect(Self.hasSideTable(target))
    }

    @Test func propertyEntityReadsNilOnceTheEntityIsGone() {
        let attribute = NSAttributeDescription()
        let index = NSFetchIndexDescription(name: "byName", elements: [])
        do {
            let entity = NSEntityDescription()
            entity.properties = [attribute]
            entity.indexes = [index]
            #expect(attribute.entity === entity)
            #expect(index.entity === entity)
        }
        #expect(attribute.entity == nil)
        #expect(index.entity == nil)
    }

    @Test func relationshipTargetsReadNilOnceTheyAreGone() {
        let relationship = NSRelationshipDescription()
        do {
            let destination = NSEntityDescription()
            let inverse = NSRelationshipDescription()
            relationship.destinationEntity = destination
            relationship.inverseRelationship = inverse
            #expect(relationship.destinationEntity === destination)
            #expect(relationship.inverseRelationship === inverse)
        }
        #expect(relationship.destinationEntity == nil)
        #expect(relationship.inverseRelationship == nil)
        let other = NSEntityDescription()
        relationship.destinationEntity = other
        #expect(relationship.destinationEntity === other)
        relationship.destinationEntity = nil
        #expect(relationship.destinationEntity == nil)
    }

    @Test func superentityAndModelReadNilOnceTheyAreGone() {
        let entity = NSEntityDescription()
        do {
            let parent = NSEntityDescription()
            parent.subentities = [entity]
            let model = NSManagedObjectModel()
            model.entities = [parent, entity]
            #expect(entity.superentity === parent)
            #expect(entity.managedObjectModel === model)
        }
        #expect(entity.superentity == nil)
        #expect(entity.managedObjectModel == nil)
    }

    @Test func releasingTheModelEmptiesItsPropertiesBackReferences() throws {
        let (name, employees): (NSPropertyDescription, NSRelationshipDescription) = try {
            let model = TestStack.makeModel()
            let company = try #require(model.entitiesByName["Company"])
            let name = try #require(company.propertiesByName["name"])
            let employees = try #require(company.relationshipsByName["employees"])
            #expect(name.entity === company)
            #expect(employees.destinationEntity?.name == "Employee")
            #expect(employees.inverseRelationship?.name == "company")
            return (name, employees)
        }()
        #expect(name.entity == nil)
        #expect(employees.entity == nil)
        #expect(employees.destinationEntity == nil)
        #expect(employees.inverseRelationship == nil)
    }

    @Test func objectContextReadsNilOnceTheContextIsGone() throws {
        let coordinator = try TestStack.coordinator()
        let (object, fetched): (NSManagedObject, NSManagedObject) = try {
            let context = TestStack.context(coordinator)
            return try context.performAndWait {
                let object = TCompany(context: context)
                object.name = "Acme"
                try context.save()
                let fetched = try #require(try context.fetch(TestStack.request("Company")).first)
                let unsaved = TTask(context: context)
                #expect(object.managedObjectContext === context)
                #expect(fetched.managedObjectContext === context)
                #expect(unsaved.managedObjectContext === context)
                return (object, fetched)
            }
        }()
        #expect(object.managedObjectContext == nil)
        #expect(fetched.managedObjectContext == nil)
    }

    /// `isRegistered(in:)` (a handle comparison) answers as `managedObjectContext === context`
    /// for objects of the context, of another context, reset, deleted and saved, never
    /// inserted, and of a context that is gone.
    @Test func registrationByHandleAgreesWithTheContextReference() throws {
        let coordinator = try TestStack.coordinator()
        let context = TestStack.context(coordinator)
        let other = TestStack.context(coordinator)
        let orphan: NSManagedObject = try {
            let gone = TestStack.context(coordinator)
            return try gone.performAndWait {
                let object = TCompany(context: gone)
                object.name = "Gone"
                try gone.save()
                return object
            }
        }()
        try context.performAndWait {
            let saved = TCompany(context: context)
            saved.name = "Saved"
            let deleted = TCompany(context: context)
            deleted.name = "Deleted"
            try context.save()
            context.delete(deleted)
            try context.save()
            let pending = TTask(context: context)
            let foreign = other.performAndWait { TCompany(context: other) }
            let loose = NSManagedObject(entity: saved.entity, insertInto: nil)
            let objects: [NSManagedObject] = [saved, deleted, pending, foreign, loose, orphan]
            var answers = objects.map { ($0.isRegistered(in: context), $0.managedObjectContext === context) }
            #expect(answers.map(\.0) == [true, false, true, false, false, false])
            #expect(answers.allSatisfy { $0.0 == $0.1 })
            context.reset()
            answers = objects.map { ($0.isRegistered(in: context), $0.managedObjectContext === context) }
            #expect(answers.allSatisfy { !$0.0 && $0.0 == $0.1 })
            #expect(foreign.isRegistered(in: other))
        }
    }

    @Test func storeCoordinatorReadsNilOnceTheCoordinatorIsGone() throws {
        let store: NSPersistentStore = try {
            let coordinator = try TestStack.coordinator()
            let store = try #require(coordinator.persistentStores.first)
            #expect(store.persistentStoreCoordinator === coordinator)
            return store
        }()
        #expect(store.persistentStoreCoordinator == nil)
    }

    /// An entity one thread lets go of while another reads its property's back reference.
    private final class RacingPair: @unchecked Sendable {
        var entity: NSEntityDescription?
        let attribute = NSAttributeDescription()
        init() {
            let entity = NSEntityDescription()
            entity.name = "Racing"
            entity.properties = [attribute]
            self.entity = entity
        }
    }

    @Test func readsRacingTheLastReleaseSeeTheTargetOrNil() {
        // A read gets the live entity or nil, never one whose deinit has begun (a crash or
        // a wrong name here).
        for _ in 0..<200 {
            let pair = RacingPair()
            DispatchQueue.concurrentPerform(iterations: 2) { lane in
                if lane == 0 {
                    pair.entity = nil
                } else {
                    for _ in 0..<50 {
                        if let read = pair.attribute.entity { #expect(read.name == "Racing") }
                    }
                }
            }
            #expect(pair.attribute.entity == nil)
        }
    }

    @Test func typicalUseGivesTheModelNoSideTables() throws {
        let model = TestStack.makeModel()
        let coordinator = try TestStack.coordinator(model: model)
        let context = TestStack.context(coordinator)
        try context.performAndWait {
            let company = NSEntityDescription.insertNewObject(forEntityName: "Company", into: context)
            company.setValue("Acme", forKey: "name")
            for index in 0..<3 {
                let employee = NSEntityDescription.insertNewObject(forEntityName: "Employee", into: context)
                employee.setValue("E\(index)", forKey: "name")
                employee.setValue(company, forKey: "company")
            }
            try context.save()
            context.reset()
            let companies = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Company"))
            #expect((companies.first?.value(forKey: "employees") as? Set<NSManagedObject>)?.count == 3)
        }
        #expect(!Self.hasSideTable(model))
        #expect(!Self.hasSideTable(context))
        #expect(!Self.hasSideTable(coordinator))
        for entity in model.entities {
            #expect(!Self.hasSideTable(entity), "entity \(entity.name ?? "")")
            for relationship in entity.relationshipsByName.values {
                #expect(!Self.hasSideTable(relationship), "relationship \(relationship.name)")
            }
        }
    }
}
