import Foundation
import Testing

@testable import OpenCoreData

/// `uniquenessConstraints` behave the same on every store type: 133021 under the error
/// policy, an upsert into the existing row under the trump policies.
@Suite struct UniquenessConstraintTests {
    static let storeTypes = [NSInMemoryStoreType, NSSQLiteStoreType, NSBinaryStoreType]

    static func coordinator(_ storeType: String, tracking: Bool = false) throws -> NSPersistentStoreCoordinator {
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: PageFileFixtures.peopleModel)
        try coordinator.addPersistentStore(
            ofType: storeType, configurationName: nil, at: storeType == NSInMemoryStoreType ? nil : url,
            options: [PageFileStoreDurabilityOption: "off", NSPersistentHistoryTrackingKey: tracking as NSNumber])
        return coordinator
    }

    /// firstName of every stored person, by email, sorted.
    static func stored(_ coordinator: NSPersistentStoreCoordinator) throws -> [String] {
        let reader = PageFileFixtures.context(coordinator)
        let people = try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
        return people.map {
            "\($0.value(forKey: "email") as? String ?? "nil"):\($0.value(forKey: "firstName") as? String ?? "nil")"
        }.sorted()
    }

    static func saveError(_ context: NSManagedObjectContext) -> NSError? {
        do {
            try context.save()
            return nil
        } catch {
            return error as NSError
        }
    }

    @Test(arguments: storeTypes)
    func aDuplicateUnderTheErrorPolicyFailsWithConstraintConflicts(storeType: String) throws {
        let coordinator = try Self.coordinator(storeType)
        let first = PageFileFixtures.context(coordinator)
        let original = PageFileFixtures.person(first, "Ada", "Lovelace", 36, "ada@x")
        try first.save()
        let strict = PageFileFixtures.context(coordinator)
        let duplicate = PageFileFixtures.person(strict, "Dup", "Dup", 1, "ada@x")
        let error = try #require(Self.saveError(strict))
        #expect(error.domain == NSCocoaErrorDomain)
        #expect(error.code == NSManagedObjectConstraintMergeError)
        let conflicts = try #require(error.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSConstraintConflict])
        #expect(conflicts.count == 1)
        let conflict = try #require(conflicts.first)
        #expect(conflict.constraint == ["email"])
        #expect(conflict.constraintValues["email"] as? String == "ada@x")
        #expect(conflict.databaseObject?.objectID == original.objectID)
        #expect(conflict.databaseSnapshot?["firstName"] as? String == "Ada")
        #expect(conflict.conflictingObjects.first === duplicate)
        #expect(conflict.conflictingSnapshots.first?["firstName"] as? String == "Dup")
        #expect(try Self.stored(coordinator) == ["ada@x:Ada"])
    }

    @Test(arguments: storeTypes)
    func objectTrumpUpsertsIntoTheExistingRow(storeType: String) throws {
        let coordinator = try Self.coordinator(storeType)
        let first = PageFileFixtures.context(coordinator)
        let original = PageFileFixtures.person(first, "Ada", "Lovelace", 36, "ada@x")
        try first.save()
        let upsert = PageFileFixtures.context(coordinator)
        upsert.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        let replacement = PageFileFixtures.person(upsert, "Augusta", "King", 37, "ada@x")
        try upsert.save()
        #expect(replacement.objectID == original.objectID)
        #expect(try Self.stored(coordinator) == ["ada@x:Augusta"])
        let reader = PageFileFixtures.context(coordinator)
        let row = try reader.existingObject(with: original.objectID)
        #expect(row.value(forKey: "lastName") as? String == "King")
        #expect(row.value(forKey: "age") as? Int16 == 37)
    }

    @Test(arguments: storeTypes)
    func storeTrumpUpsertKeepsTheStoredValues(storeType: String) throws {
        let coordinator = try Self.coordinator(storeType)
        let first = PageFileFixtures.context(coordinator)
        let original = PageFileFixtures.person(first, "Ada", "Lovelace", 36, "ada@x")
        try first.save()
        let upsert = PageFileFixtures.context(coordinator)
        upsert.mergePolicy = NSMergeByPropertyStoreTrumpMergePolicy
        let replacement = PageFileFixtures.person(upsert, "Augusta", "King", 37, "ada@x")
        try upsert.save()
        #expect(replacement.objectID == original.objectID)
        #expect(try Self.stored(coordinator) == ["ada@x:Ada"])
    }

    @Test(arguments: storeTypes)
    func anUpsertIsRecordedInHistoryAsAnUpdate(storeType: String) throws {
        let coordinator = try Self.coordinator(storeType, tracking: true)
        let first = PageFileFixtures.context(coordinator)
        let original = PageFileFixtures.person(first, "Ada", "Lovelace", 36, "ada@x")
        try first.save()
        let upsert = PageFileFixtures.context(coordinator)
        upsert.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        _ = PageFileFixtures.person(upsert, "Augusta", "Lovelace", 36, "ada@x")
        try upsert.save()
        let result = try upsert.execute(
            NSPersistentHistoryChangeRequest.fetchHistory(after: nil as NSPersistentHistoryToken?))
        let transactions = try #require(
            (result as? NSPersistentHistoryResult)?.result as? [NSPersistentHistoryTransaction])
        #expect(transactions.count == 2)
        let changes = try #require(transactions.last?.changes)
        #expect(changes.count == 1)
        #expect(changes.first?.changeType == .update)
        #expect(changes.first?.changedObjectID == original.objectID)
        #expect(changes.first?.updatedProperties?.map { $0.name } == ["firstName"])
    }

    @Test(arguments: storeTypes)
    func aDuplicateWithinOneSave(storeType: String) throws {
        let coordinator = try Self.coordinator(storeType)
        let strict = PageFileFixtures.context(coordinator)
        _ = PageFileFixtures.person(strict, "One", "A", 1, "same@x")
        _ = PageFileFixtures.person(strict, "Two", "B", 2, "same@x")
        let error = try #require(Self.saveError(strict))
        #expect(error.code == NSManagedObjectConstraintMergeError)
        #expect(try Self.stored(coordinator).isEmpty)

        let upsert = PageFileFixtures.context(coordinator)
        upsert.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        let one = PageFileFixtures.person(upsert, "One", "A", 1, "same@x")
        let two = PageFileFixtures.person(upsert, "Two", "B", 2, "same@x")
        try upsert.save()
        #expect(one.objectID == two.objectID)
        // The context does not order its inserts, so either object's values may win.
        let stored = try Self.stored(coordinator)
        #expect(stored == ["same@x:One"] || stored == ["same@x:Two"])
    }

    @Test(arguments: storeTypes)
    func nilValuesDoNotConflict(storeType: String) throws {
        let coordinator = try Self.coordinator(storeType)
        let context = PageFileFixtures.context(coordinator)
        _ = PageFileFixtures.person(context, "One", "A", 1, nil)
        _ = PageFileFixtures.person(context, "Two", "B", 2, nil)
        try context.save()
        #expect(try Self.stored(coordinator) == ["nil:One", "nil:Two"])
    }

    @Test(arguments: storeTypes)
    func anUpdateTakingAnotherRowsValueFailsAndADeleteFreesIt(storeType: String) throws {
        let coordinator = try Self.coordinator(storeType)
        let context = PageFileFixtures.context(coordinator)
        let ada = PageFileFixtures.person(context, "Ada", "A", 1, "ada@x")
        let bob = PageFileFixtures.person(context, "Bob", "B", 2, "bob@x")
        try context.save()
        bob.setValue("ada@x", forKey: "email")
        #expect(Self.saveError(context)?.code == NSManagedObjectConstraintMergeError)
        context.rollback()
        context.delete(ada)
        _ = PageFileFixtures.person(context, "New", "N", 3, "ada@x")
        try context.save()
        #expect(try Self.stored(coordinator) == ["ada@x:New", "bob@x:Bob"])
    }

    @Test(arguments: storeTypes)
    func referencesToTheUpsertedObjectPointAtTheExistingRow(storeType: String) throws {
        let coordinator = try Self.coordinator(storeType)
        let first = PageFileFixtures.context(coordinator)
        let original = PageFileFixtures.person(first, "Ada", "Lovelace", 36, "ada@x")
        try first.save()
        let upsert = PageFileFixtures.context(coordinator)
        upsert.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        let team = NSEntityDescription.insertNewObject(forEntityName: "Team", into: upsert)
        team.setValue("Analysts", forKey: "title")
        let replacement = PageFileFixtures.person(upsert, "Augusta", "King", 37, "ada@x")
        replacement.setValue(team, forKey: "team")
        try upsert.save()
        let reader = PageFileFixtures.context(coordinator)
        let storedTeam = try reader.existingObject(with: team.objectID)
        let members = storedTeam.value(forKey: "members") as? Set<NSManagedObject> ?? []
        #expect(members.map(\.objectID) == [original.objectID])
        let person = try reader.existingObject(with: original.objectID)
        #expect((person.value(forKey: "team") as? NSManagedObject)?.objectID == team.objectID)
    }
}
