// What the context's change notifications carry, transition by transition: one
// ObjectsDidChange per processing holds the changes since the last one; saves post
// WillSave and DidSave; merges report refreshed and deleted objects.
import Foundation
import OpenCoreData
import Testing

@Suite struct ChangeNotificationTests {
    /// A fresh context holding a saved company named Acme.
    static func savedAcme() throws -> (NSManagedObjectContext, TCompany) {
        let context = try TestStack.freshContext()
        let company = TCompany(context: context)
        company.name = "Acme"
        try context.save()
        return (context, company)
    }

    @Test func processingReportsTheChangesSinceTheLastProcessing() throws {
        let context = try TestStack.freshContext()
        let log = NotificationLog([.NSManagedObjectContextObjectsDidChange], from: context)
        let company = TCompany(context: context)
        company.name = "Acme"
        context.processPendingChanges()
        #expect(log.all.count == 1)
        #expect(log.objects(NSInsertedObjectsKey, in: 0) == [company])
        #expect(log.all[0].userInfo?[NSUpdatedObjectsKey] == nil, "an inserted object is not also updated")

        context.processPendingChanges()
        #expect(log.all.count == 1, "nothing changed since the last processing")

        try context.save()
        company.name = "Acme 2"
        company.name = "Acme 3"
        context.processPendingChanges()
        #expect(log.all.count == 2)
        #expect(log.objects(NSUpdatedObjectsKey, in: 1) == [company])
        #expect(log.all[1].userInfo?[NSInsertedObjectsKey] == nil)

        company.name = "Acme 4"
        context.processPendingChanges()
        #expect(log.objects(NSUpdatedObjectsKey, in: 2) == [company], "reported again after a new change")

        context.delete(company)
        context.processPendingChanges()
        #expect(log.objects(NSDeletedObjectsKey, in: 3) == [company])
        #expect(log.all[3].userInfo?[NSUpdatedObjectsKey] == nil)
    }

    @Test func anObjectInsertedAndDeletedBeforeProcessingIsNeverReported() throws {
        let context = try TestStack.freshContext()
        let log = NotificationLog([.NSManagedObjectContextObjectsDidChange], from: context)
        let company = TCompany(context: context)
        company.name = "Gone"
        context.delete(company)
        context.processPendingChanges()
        #expect(log.all.isEmpty)
        #expect(company.managedObjectContext == nil && !company.isInserted)
        #expect(context.insertedObjects.isEmpty && context.deletedObjects.isEmpty && !context.hasChanges)
        #expect(context.registeredObject(for: company.objectID) == nil)
    }

    @Test func deleteRulesChangesAreReportedWithTheDeletion() throws {
        let context = try TestStack.freshContext()
        let company = TCompany(context: context)
        company.name = "Acme"
        let ada = TEmployee(context: context)
        let grace = TEmployee(context: context)
        ada.company = company
        grace.company = company
        let project = TProject(context: context)
        project.members = [ada]
        try context.save()
        let log = NotificationLog([.NSManagedObjectContextObjectsDidChange], from: context)
        // Company -> employees cascades; employee -> projects nullifies.
        context.delete(company)
        context.processPendingChanges()
        #expect(log.all.count == 1)
        #expect(log.objects(NSDeletedObjectsKey, in: 0) == [company, ada, grace])
        #expect(log.objects(NSUpdatedObjectsKey, in: 0) == [project])
        #expect(project.members.isEmpty && context.updatedObjects == [project])
    }

    @Test func rollbackDropsTheChangesNotYetReported() throws {
        let (context, company) = try Self.savedAcme()
        let log = NotificationLog([.NSManagedObjectContextObjectsDidChange], from: context)
        company.name = "Changed"
        let temporary = TEmployee(context: context)
        context.rollback()
        context.processPendingChanges()
        #expect(log.all.isEmpty)
        #expect(company.name == "Acme" && !company.hasChanges && !company.isUpdated)
        #expect(temporary.managedObjectContext == nil && !temporary.isInserted)
    }

    @Test func saveNotificationsCarryTheSavedObjects() throws {
        let context = try TestStack.freshContext()
        let kept = TCompany(context: context)
        kept.name = "Acme"
        let doomed = TCompany(context: context)
        doomed.name = "Doomed"
        try context.save()
        let log = NotificationLog(
            [.NSManagedObjectContextObjectsDidChange, .NSManagedObjectContextWillSave, .NSManagedObjectContextDidSave],
            from: context)
        try context.save()
        #expect(log.all.isEmpty, "a save without changes posts nothing")

        kept.name = "Kept"
        context.delete(doomed)
        let fresh = TCompany(context: context)
        fresh.name = "Fresh"
        try context.save()
        #expect(
            log.all.map(\.name) == [
                .NSManagedObjectContextObjectsDidChange, .NSManagedObjectContextWillSave,
                .NSManagedObjectContextDidSave,
            ])
        #expect(log.objects(NSInsertedObjectsKey, in: 2) == [fresh])
        #expect(log.objects(NSUpdatedObjectsKey, in: 2) == [kept])
        #expect(log.objects(NSDeletedObjectsKey, in: 2) == [doomed])
        #expect(!fresh.isInserted && !kept.isUpdated && doomed.managedObjectContext == nil)
        #expect(!context.hasChanges && context.registeredObject(for: doomed.objectID) == nil)
    }

    @Test func changesMadeInWillSaveAreReportedBeforeDidSave() throws {
        let context = TestStack.context(try TestStack.coordinator(model: StampingCompany.model))
        let company = StampingCompany.make(in: context)
        try context.save()
        let log = NotificationLog(
            [.NSManagedObjectContextObjectsDidChange, .NSManagedObjectContextWillSave, .NSManagedObjectContextDidSave],
            from: context)
        company.setValue("Renamed", forKey: "name")
        try context.save()
        #expect(
            log.all.map(\.name) == [
                .NSManagedObjectContextObjectsDidChange, .NSManagedObjectContextWillSave,
                .NSManagedObjectContextObjectsDidChange, .NSManagedObjectContextDidSave,
            ])
        #expect(company.value(forKey: "stamp") as? String == "Renamed!")
        #expect(log.objects(NSUpdatedObjectsKey, in: 2) == [company], "the stamp set by willSave")
        #expect(log.objects(NSUpdatedObjectsKey, in: 3) == [company])
        #expect(company.committedValues(forKeys: ["stamp"])["stamp"] as? String == "Renamed!")
    }

    @Test func mergingReportsRefreshedAndDeletedObjects() throws {
        let scenario = try SavedElsewhere()
        let (main, company, ada) = (scenario.main, scenario.company, scenario.ada)
        let note = try scenario.renameCompanyAndDeleteAda()
        let log = NotificationLog([.NSManagedObjectContextObjectsDidChange], from: main)
        main.mergeChanges(fromContextDidSave: note)
        #expect(log.all.count == 1)
        #expect(log.objects(NSRefreshedObjectsKey, in: 0) == [company])
        #expect(log.objects(NSDeletedObjectsKey, in: 0) == [ada])
        #expect(ada.managedObjectContext == nil && main.registeredObject(for: ada.objectID) == nil)
        #expect(!main.hasChanges)
    }

    @Test func aChildSaveIsReportedInTheParent() throws {
        let parent = try TestStack.freshContext()
        let company = TCompany(context: parent)
        company.name = "Acme"
        try parent.save()
        let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        child.parent = parent
        let log = NotificationLog([.NSManagedObjectContextObjectsDidChange], from: parent)
        let newID = try child.performAndWait {
            let theirs = try child.existingObject(with: company.objectID) as! TCompany
            theirs.name = "From child"
            let ada = TEmployee(context: child)
            ada.company = theirs
            try child.save()
            return ada.objectID
        }
        #expect(log.all.count == 1)
        let copy = try #require(parent.registeredObject(for: newID))
        #expect(log.objects(NSInsertedObjectsKey, in: 0) == [copy])
        #expect(log.objects(NSUpdatedObjectsKey, in: 0) == [company])
        #expect(copy.isInserted && company.isUpdated && company.name == "From child")
        #expect((copy as? TEmployee)?.company === company && company.employees.count == 1)
    }

    @Test func stateFlagsFollowTheObjectThroughItsLife() throws {
        let context = try TestStack.freshContext()
        let company = TCompany(context: context)
        company.name = "Acme"
        #expect(company.isInserted && !company.isUpdated && !company.isDeleted && !company.isFault)
        #expect(company.hasChanges)
        context.delete(company)
        #expect(company.isInserted && company.isDeleted && context.insertedObjects.isEmpty)
        context.insert(company)
        #expect(company.isInserted && !company.isDeleted && context.insertedObjects == [company])
        try context.save()
        #expect(!company.isInserted && !company.hasChanges && company.managedObjectContext === context)

        company.name = "Renamed"
        #expect(company.isUpdated && context.updatedObjects == [company])
        context.delete(company)
        #expect(company.isDeleted && !company.isUpdated && context.updatedObjects.isEmpty)
        #expect(context.deletedObjects == [company])
        context.rollback()
        #expect(company.name == "Acme" && !company.hasChanges && !company.isDeleted)
        #expect(context.deletedObjects.isEmpty && !context.hasChanges)

        company.name = "Saved"
        try context.save()
        context.refresh(company, mergeChanges: false)
        #expect(company.isFault && !company.hasChanges)
        #expect(company.name == "Saved" && !company.isFault)
        company.name = "Dirty"
        context.refresh(company, mergeChanges: false)
        #expect(company.isFault && context.updatedObjects.isEmpty && !context.hasChanges)
        #expect(company.name == "Saved")
    }

    @Test func undeletingAChangedObjectKeepsItsChanges() throws {
        let (context, company) = try Self.savedAcme()
        let log = NotificationLog([.NSManagedObjectContextObjectsDidChange], from: context)
        company.name = "Renamed"
        context.delete(company)
        context.insert(company)
        #expect(!company.isDeleted && company.isUpdated && context.updatedObjects == [company])
        context.processPendingChanges()
        #expect(log.objects(NSUpdatedObjectsKey, in: 0) == [company])
        #expect(log.objects(NSDeletedObjectsKey, in: 0).isEmpty, "no longer deleted")
        try context.save()
        let reader = TestStack.context(try #require(context.persistentStoreCoordinator))
        let stored = try reader.existingObject(with: company.objectID) as? TCompany
        #expect(stored?.name == "Renamed", "the change made before the delete is saved")

        company.name = "Again"
        context.delete(company)
        context.insert(company)
        context.rollback()
        #expect(company.name == "Renamed" && !company.hasChanges)
    }

    @Test func rollbackForgetsChangesReportedNowhere() throws {
        let (context, company) = try Self.savedAcme()
        let log = NotificationLog([.NSManagedObjectContextObjectsDidChange], from: context)
        company.name = "Renamed"
        // Turned into a fault, the object leaves the updated objects but not the pending notice.
        context.refresh(company, mergeChanges: false)
        context.rollback()
        company.name = "After rollback"
        context.processPendingChanges()
        #expect(log.all.count == 1)
        #expect(log.objects(NSUpdatedObjectsKey, in: 0) == [company], "a change after the rollback is reported")
    }

    @Test func rollbackRemovesAnInsertedObjectDeletedSinceProcessing() throws {
        let context = try TestStack.freshContext()
        let company = TCompany(context: context)
        company.name = "Gone"
        context.delete(company)
        context.rollback()
        #expect(company.managedObjectContext == nil && !company.isInserted && !company.isDeleted)
        #expect(context.registeredObject(for: company.objectID) == nil && context.registeredObjects.isEmpty)
        #expect(!context.hasChanges)
    }
}

/// A company whose willSave stamps a derived value (a change made during the save).
final class StampingCompany: NSManagedObject {
    static func make(in context: NSManagedObjectContext) -> StampingCompany {
        StampingCompany(entity: entity, insertInto: context)
    }

    override func willSave() {
        super.willSave()
        let name = value(forKey: "name") as? String
        let stamp = name.map { $0 + "!" }
        if value(forKey: "stamp") as? String != stamp { setValue(stamp, forKey: "stamp") }
    }

    static let model: NSManagedObjectModel = {
        let entity = NSEntityDescription()
        entity.name = "StampingCompany"
        entity.managedObjectClassName = NSStringFromClass(StampingCompany.self)
        entity.properties = [
            TestStack.attribute("name", .stringAttributeType), TestStack.attribute("stamp", .stringAttributeType),
        ]
        let model = NSManagedObjectModel()
        model.entities = [entity]
        return model
    }()

    static var entity: NSEntityDescription { model.entitiesByName["StampingCompany"]! }
}
