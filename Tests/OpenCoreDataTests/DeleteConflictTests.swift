import Foundation
import Testing

@testable import OpenCoreData

/// Merge conflicts that involve a deletion, under each merge policy, on each store type:
/// an update of an object another save deleted, and a delete of an object another save
/// changed.
@Suite struct DeleteConflictTests {
    static let storeTypes = [NSInMemoryStoreType, NSSQLiteStoreType, NSBinaryStoreType]
    static let policyTypes: [NSMergePolicyType] = [
        .errorMergePolicyType, .mergeByPropertyStoreTrumpMergePolicyType, .mergeByPropertyObjectTrumpMergePolicyType,
        .overwriteMergePolicyType, .rollbackMergePolicyType,
    ]

    /// Two contexts on one store; `copy` (in `stale`) was read before `writer` saved.
    struct Scenario {
        let coordinator: NSPersistentStoreCoordinator
        let writer: NSManagedObjectContext
        let stale: NSManagedObjectContext
        let original: NSManagedObject
        let copy: NSManagedObject

        init(storeType: String) throws {
            let url = try PageFileFixtures.temporaryURL()
            coordinator = try PageFileFixtures.coordinator(PageFileFixtures.peopleModel, url, type: storeType)
            writer = PageFileFixtures.context(coordinator)
            original = PageFileFixtures.person(writer, "Ada", "Lovelace", 36, "ada@x")
            try writer.save()
            stale = PageFileFixtures.context(coordinator)
            copy = try stale.existingObject(with: original.objectID)
            #expect(copy.value(forKey: "age") as? Int16 == 36)
        }

        /// firstName, lastName and age of every stored person, as a fresh context reads them.
        func stored() throws -> [[String]] {
            let reader = PageFileFixtures.context(coordinator)
            return try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person")).map(Self.fields)
        }

        /// Puts the original person in a new team "Analysts", saves, and refreshes the stale copy.
        func joinTeam() throws -> NSManagedObject {
            let team = NSEntityDescription.insertNewObject(forEntityName: "Team", into: writer)
            team.setValue("Analysts", forKey: "title")
            original.setValue(team, forKey: "team")
            try writer.save()
            stale.refresh(copy, mergeChanges: false)
            return team
        }

        /// On the default store, `verify()` finds rows, indexes and join trees consistent.
        func expectVerified() throws {
            guard let store = coordinator.persistentStores.first as? PageFileStore else { return }
            #expect(try store.verify().isClean)
        }

        static func fields(_ object: NSManagedObject) -> [String] {
            [
                object.value(forKey: "firstName") as? String ?? "nil",
                object.value(forKey: "lastName") as? String ?? "nil",
                "\((object.value(forKey: "age") as? Int16).map(Int.init) ?? -1)",
            ]
        }
    }

    static func saveError(_ context: NSManagedObjectContext) -> NSError? {
        do {
            try context.save()
            return nil
        } catch {
            return error as NSError
        }
    }

    // MARK: An update of an object deleted in the store

    @Test(arguments: storeTypes)
    func anUpdateOfADeletedRowIsAMergeConflictWithoutAPersistedSnapshot(storeType: String) throws {
        let scenario = try Scenario(storeType: storeType)
        scenario.writer.delete(scenario.original)
        try scenario.writer.save()
        scenario.copy.setValue(Int16(50), forKey: "age")
        let error = try #require(Self.saveError(scenario.stale))
        #expect(error.domain == NSCocoaErrorDomain)
        #expect(error.code == NSManagedObjectMergeError)
        let conflicts = try #require(error.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSMergeConflict])
        #expect(conflicts.count == 1)
        let conflict = try #require(conflicts.first)
        #expect(conflict.sourceObject === scenario.copy)
        #expect(conflict.persistedSnapshot == nil)
        #expect(conflict.newVersionNumber == 0)
        #expect(conflict.oldVersionNumber == 1)
        #expect(conflict.cachedSnapshot?["age"] as? Int16 == 36)
        #expect(conflict.objectSnapshot?["age"] as? Int16 == 50)
        // Nothing was saved and the context keeps its change.
        #expect(try scenario.stored().isEmpty)
        #expect(scenario.copy.value(forKey: "age") as? Int16 == 50)
        #expect(scenario.stale.hasChanges)
    }

    @Test(arguments: storeTypes, policyTypes)
    func anUpdateOfADeletedRowUnderEachPolicy(storeType: String, policyType: NSMergePolicyType) throws {
        let scenario = try Scenario(storeType: storeType)
        scenario.writer.delete(scenario.original)
        try scenario.writer.save()
        scenario.copy.setValue(Int16(50), forKey: "age")
        scenario.stale.mergePolicy = NSMergePolicy(merge: policyType)
        switch policyType {
        case .errorMergePolicyType:
            #expect(Self.saveError(scenario.stale)?.code == NSManagedObjectMergeError)
            #expect(try scenario.stored().isEmpty)
        case .mergeByPropertyStoreTrumpMergePolicyType, .rollbackMergePolicyType:
            // The store's state wins: the object's changes are discarded and it leaves the context.
            try scenario.stale.save()
            #expect(try scenario.stored().isEmpty)
            #expect(scenario.copy.managedObjectContext == nil)
            #expect(scenario.stale.registeredObject(for: scenario.copy.objectID) == nil)
            #expect(!scenario.stale.hasChanges)
        case .mergeByPropertyObjectTrumpMergePolicyType, .overwriteMergePolicyType:
            // The object's state wins: the save inserts it again, under its object ID.
            try scenario.stale.save()
            #expect(try scenario.stored() == [["Ada", "Lovelace", "50"]])
            let reader = PageFileFixtures.context(scenario.coordinator)
            #expect(
                try reader.existingObject(with: scenario.copy.objectID).value(forKey: "email") as? String == "ada@x")
            #expect(scenario.copy.managedObjectContext === scenario.stale)
            #expect(!scenario.stale.hasChanges)
            // It is at the stored version: the next save of it is no conflict.
            scenario.stale.mergePolicy = NSErrorMergePolicy
            scenario.copy.setValue(Int16(51), forKey: "age")
            try scenario.stale.save()
            #expect(try scenario.stored() == [["Ada", "Lovelace", "51"]])
        @unknown default:
            Issue.record("unknown policy \(policyType)")
        }
    }

    @Test(
        arguments: storeTypes, [NSMergePolicyType.mergeByPropertyObjectTrumpMergePolicyType, .overwriteMergePolicyType])
    func aReinsertedObjectIsAMemberOfItsTeamAgain(storeType: String, policyType: NSMergePolicyType) throws {
        let scenario = try Scenario(storeType: storeType)
        let team = try scenario.joinTeam()
        let staleTeam = try #require(scenario.copy.value(forKey: "team") as? NSManagedObject)
        #expect((staleTeam.value(forKey: "members") as? Set<NSManagedObject>)?.count == 1)
        // The deleting save nullifies the team's side of the relationship.
        scenario.writer.delete(scenario.original)
        try scenario.writer.save()
        scenario.copy.setValue(Int16(50), forKey: "age")
        scenario.stale.mergePolicy = NSMergePolicy(merge: policyType)
        try scenario.stale.save()

        let reader = PageFileFixtures.context(scenario.coordinator)
        let person = try reader.existingObject(with: scenario.copy.objectID)
        let storedTeam = try #require(person.value(forKey: "team") as? NSManagedObject)
        #expect(storedTeam.objectID == team.objectID)
        let members = storedTeam.value(forKey: "members") as? Set<NSManagedObject> ?? []
        #expect(members.map(\.objectID) == [scenario.copy.objectID])
        // The stale context's team, not part of the save, sees its member again.
        let staleMembers = staleTeam.value(forKey: "members") as? Set<NSManagedObject> ?? []
        #expect(staleMembers.map(\.objectID) == [scenario.copy.objectID])
        #expect(!scenario.stale.hasChanges)
        try scenario.expectVerified()
    }

    @Test(arguments: storeTypes)
    func aReinsertedObjectDropsADestinationDeletedToo(storeType: String) throws {
        let scenario = try Scenario(storeType: storeType)
        let team = try scenario.joinTeam()
        #expect((scenario.copy.value(forKey: "team") as? NSManagedObject)?.objectID == team.objectID)
        scenario.writer.delete(scenario.original)
        scenario.writer.delete(team)
        try scenario.writer.save()
        scenario.copy.setValue(Int16(50), forKey: "age")
        scenario.stale.mergePolicy = NSOverwriteMergePolicy
        try scenario.stale.save()
        let reader = PageFileFixtures.context(scenario.coordinator)
        let person = try reader.existingObject(with: scenario.copy.objectID)
        #expect(person.value(forKey: "age") as? Int16 == 50)
        #expect(person.value(forKey: "team") == nil)
        #expect(try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Team")).isEmpty)
        try scenario.expectVerified()
    }

    @Test(arguments: storeTypes)
    func aReinsertedObjectsTeamChangedInTheSameSaveKeepsBoth(storeType: String) throws {
        let scenario = try Scenario(storeType: storeType)
        let team = try scenario.joinTeam()
        let staleTeam = try #require(scenario.copy.value(forKey: "team") as? NSManagedObject)
        #expect((staleTeam.value(forKey: "members") as? Set<NSManagedObject>)?.count == 1)
        scenario.writer.delete(scenario.original)
        try scenario.writer.save()
        scenario.copy.setValue(Int16(50), forKey: "age")
        staleTeam.setValue("Engines", forKey: "title")
        scenario.stale.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        try scenario.stale.save()

        let reader = PageFileFixtures.context(scenario.coordinator)
        let storedTeam = try reader.existingObject(with: team.objectID)
        #expect(storedTeam.value(forKey: "title") as? String == "Engines")
        let members = storedTeam.value(forKey: "members") as? Set<NSManagedObject> ?? []
        #expect(members.map(\.objectID) == [scenario.copy.objectID])
        let staleMembers = staleTeam.value(forKey: "members") as? Set<NSManagedObject> ?? []
        #expect(staleMembers.map(\.objectID) == [scenario.copy.objectID])
        // Both objects are at their stored versions: further changes save without conflicts.
        scenario.stale.mergePolicy = NSErrorMergePolicy
        staleTeam.setValue("Looms", forKey: "title")
        scenario.copy.setValue(Int16(51), forKey: "age")
        try scenario.stale.save()
        #expect(try scenario.stored() == [["Ada", "Lovelace", "51"]])
    }

    // MARK: A delete of an object changed in the store

    @Test(arguments: storeTypes, policyTypes)
    func aStaleDeleteUnderEachPolicy(storeType: String, policyType: NSMergePolicyType) throws {
        let scenario = try Scenario(storeType: storeType)
        scenario.original.setValue("Augusta", forKey: "firstName")
        scenario.original.setValue(Int16(40), forKey: "age")
        try scenario.writer.save()
        scenario.stale.delete(scenario.copy)
        scenario.stale.mergePolicy = NSMergePolicy(merge: policyType)
        switch policyType {
        case .errorMergePolicyType:
            let error = try #require(Self.saveError(scenario.stale))
            #expect(error.code == NSManagedObjectMergeError)
            let conflict = (error.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSMergeConflict])?.first
            #expect(conflict?.sourceObject === scenario.copy)
            #expect(conflict?.newVersionNumber == 2)
            #expect(conflict?.persistedSnapshot?["firstName"] as? String == "Augusta")
            #expect(try scenario.stored() == [["Augusta", "Lovelace", "40"]])
            #expect(scenario.copy.isDeleted)
        case .rollbackMergePolicyType:
            // The delete is discarded: the object returns to the stored state, in the context.
            try scenario.stale.save()
            #expect(try scenario.stored() == [["Augusta", "Lovelace", "40"]])
            #expect(!scenario.copy.isDeleted)
            #expect(scenario.copy.managedObjectContext === scenario.stale)
            #expect(Scenario.fields(scenario.copy) == ["Augusta", "Lovelace", "40"])
            #expect(!scenario.stale.hasChanges)
            #expect(scenario.stale.deletedObjects.isEmpty)
            // Restored at the stored version: a later change saves without a conflict.
            scenario.stale.mergePolicy = NSErrorMergePolicy
            scenario.copy.setValue("King", forKey: "lastName")
            try scenario.stale.save()
            #expect(try scenario.stored() == [["Augusta", "King", "40"]])
        default:
            // Store trump, object trump and overwrite: the delete is the object's change and proceeds.
            try scenario.stale.save()
            #expect(try scenario.stored().isEmpty)
            #expect(scenario.copy.managedObjectContext == nil)
            #expect(!scenario.stale.hasChanges)
        }
    }

    @Test(
        arguments: storeTypes, [NSMergePolicyType.mergeByPropertyStoreTrumpMergePolicyType, .overwriteMergePolicyType])
    func aStaleDeleteNullifiesMembersTheStoreAddedMeanwhile(storeType: String, policyType: NSMergePolicyType) throws {
        let scenario = try Scenario(storeType: storeType)
        let team = try scenario.joinTeam()
        let staleTeam = try scenario.stale.existingObject(with: team.objectID)
        #expect((staleTeam.value(forKey: "members") as? Set<NSManagedObject>)?.count == 1)
        // Another save adds a member the stale context has not seen.
        let newcomer = PageFileFixtures.person(scenario.writer, "Bob", "Babbage", 50, "bob@x")
        newcomer.setValue(team, forKey: "team")
        try scenario.writer.save()
        scenario.stale.delete(staleTeam)
        scenario.stale.mergePolicy = NSMergePolicy(merge: policyType)
        try scenario.stale.save()

        let reader = PageFileFixtures.context(scenario.coordinator)
        #expect(try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Team")).isEmpty)
        for id in [scenario.original.objectID, newcomer.objectID] {
            // Nullified, the member the store added included: no reference to the deleted team remains.
            #expect(try reader.existingObject(with: id).value(forKey: "team") == nil)
        }
        try scenario.expectVerified()
    }

    @Test(arguments: storeTypes)
    func theSaveReportsWhatThePolicyDidWithADeletedRow(storeType: String) throws {
        for policy in [NSMergeByPropertyStoreTrumpMergePolicy, NSOverwriteMergePolicy] {
            let scenario = try Scenario(storeType: storeType)
            scenario.writer.delete(scenario.original)
            try scenario.writer.save()
            scenario.copy.setValue(Int16(50), forKey: "age")
            scenario.stale.mergePolicy = policy
            let log = NotificationLog([.NSManagedObjectContextDidSave], from: scenario.stale)
            try scenario.stale.save()
            #expect(log.all.count == 1)
            let kept = policy === NSOverwriteMergePolicy
            // Deleted here too under store trump; inserted again under overwrite.
            #expect(log.objects(NSDeletedObjectsKey, in: 0) == (kept ? [] : [scenario.copy]))
            #expect(log.objects(NSInsertedObjectsKey, in: 0) == (kept ? [scenario.copy] : []))
            #expect(log.objects(NSUpdatedObjectsKey, in: 0).isEmpty)
        }
    }

    @Test(arguments: storeTypes)
    func aRolledBackDeleteIsNotReportedAsSaved(storeType: String) throws {
        let scenario = try Scenario(storeType: storeType)
        scenario.original.setValue(Int16(40), forKey: "age")
        try scenario.writer.save()
        let other = PageFileFixtures.person(scenario.stale, "Bob", "Babbage", 50, "bob@x")
        scenario.stale.delete(scenario.copy)
        scenario.stale.mergePolicy = NSRollbackMergePolicy
        let log = NotificationLog([.NSManagedObjectContextDidSave], from: scenario.stale)
        try scenario.stale.save()
        #expect(log.all.count == 1)
        #expect(log.objects(NSDeletedObjectsKey, in: 0).isEmpty)
        #expect(log.objects(NSInsertedObjectsKey, in: 0) == [other])
        #expect(try scenario.stored().count == 2)
    }

    @Test(arguments: storeTypes)
    func aDeleteOfARowDeletedInBothSaves(storeType: String) throws {
        let scenario = try Scenario(storeType: storeType)
        scenario.writer.delete(scenario.original)
        try scenario.writer.save()
        scenario.stale.delete(scenario.copy)
        try scenario.stale.save()
        #expect(try scenario.stored().isEmpty)
    }
}
