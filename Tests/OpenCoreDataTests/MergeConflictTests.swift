import Foundation
import Testing

@testable import OpenCoreData

/// Optimistic locking and uniqueness conflicts under each merge policy, on each store type.
@Suite struct MergeConflictTests {
    static let storeTypes = [NSInMemoryStoreType, NSSQLiteStoreType, NSBinaryStoreType]

    /// Two contexts on one store; the object saved by the first is stale in the second.
    struct StaleScenario {
        let coordinator: NSPersistentStoreCoordinator
        let writer: NSManagedObjectContext
        let stale: NSManagedObjectContext
        let copy: NSManagedObject

        /// The writer saves firstName and age; the stale context then changes age (a
        /// property changed in both) and lastName (one changed only here).
        init(storeType: String) throws {
            let url = try PageFileFixtures.temporaryURL()
            coordinator = try PageFileFixtures.coordinator(PageFileFixtures.peopleModel, url, type: storeType)
            writer = PageFileFixtures.context(coordinator)
            let person = PageFileFixtures.person(writer, "Ada", "Lovelace", 36, "ada@x")
            try writer.save()
            stale = PageFileFixtures.context(coordinator)
            copy = try stale.existingObject(with: person.objectID)
            #expect(copy.value(forKey: "age") as? Int16 == 36)
            person.setValue("Augusta", forKey: "firstName")
            person.setValue(Int16(40), forKey: "age")
            try writer.save()
            copy.setValue(Int16(50), forKey: "age")
            copy.setValue("King", forKey: "lastName")
        }

        /// firstName, lastName and age as a fresh context reads them from the store.
        func stored() throws -> [String] {
            let reader = PageFileFixtures.context(coordinator)
            return try Self.fields(reader.existingObject(with: copy.objectID))
        }

        static func fields(_ object: NSManagedObject) -> [String] {
            [
                object.value(forKey: "firstName") as? String ?? "nil",
                object.value(forKey: "lastName") as? String ?? "nil",
                "\((object.value(forKey: "age") as? Int16).map(Int.init) ?? -1)",
            ]
        }
    }

    static func number(_ value: Any?) -> Int? {
        switch value {
        case let value as Int16: Int(value)
        case let value as Int: value
        case let value as NSNumber: value.intValue
        default: nil
        }
    }

    @Test(arguments: storeTypes)
    func errorPolicyFailsWithMergeConflictDetails(storeType: String) throws {
        let scenario = try StaleScenario(storeType: storeType)
        var caught: NSError?
        do { try scenario.stale.save() } catch { caught = error as NSError }
        let error = try #require(caught)
        #expect(error.code == NSManagedObjectMergeError)
        let conflicts = try #require(error.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSMergeConflict])
        #expect(conflicts.count == 1)
        let conflict = try #require(conflicts.first)
        #expect(conflict.sourceObject === scenario.copy)
        #expect(conflict.oldVersionNumber == 1)
        #expect(conflict.newVersionNumber == 2)
        #expect(Self.number(conflict.objectSnapshot?["age"]) == 50)
        #expect(conflict.objectSnapshot?["lastName"] as? String == "King")
        #expect(Self.number(conflict.cachedSnapshot?["age"]) == 36)
        #expect(conflict.cachedSnapshot?["firstName"] as? String == "Ada")
        #expect(Self.number(conflict.persistedSnapshot?["age"]) == 40)
        #expect(conflict.persistedSnapshot?["firstName"] as? String == "Augusta")
        #expect(conflict.persistedSnapshot?["lastName"] as? String == "Lovelace")
        #expect(try scenario.stored() == ["Augusta", "Lovelace", "40"])
        // The failed save changed nothing in the context: it still holds its changes.
        #expect(StaleScenario.fields(scenario.copy) == ["Ada", "King", "50"])
    }

    @Test(arguments: storeTypes)
    func storeTrumpKeepsStoredValuesOfPropertiesChangedInBoth(storeType: String) throws {
        let scenario = try StaleScenario(storeType: storeType)
        scenario.stale.mergePolicy = NSMergeByPropertyStoreTrumpMergePolicy
        try scenario.stale.save()
        #expect(try scenario.stored() == ["Augusta", "King", "40"])
        #expect(StaleScenario.fields(scenario.copy) == ["Augusta", "King", "40"])
        #expect(!scenario.copy.hasChanges)
    }

    @Test(arguments: storeTypes)
    func objectTrumpKeepsTheObjectsChangesAndTakesTheRest(storeType: String) throws {
        let scenario = try StaleScenario(storeType: storeType)
        scenario.stale.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        try scenario.stale.save()
        #expect(try scenario.stored() == ["Augusta", "King", "50"])
        #expect(StaleScenario.fields(scenario.copy) == ["Augusta", "King", "50"])
    }

    @Test(arguments: storeTypes)
    func overwriteWritesTheWholeObject(storeType: String) throws {
        let scenario = try StaleScenario(storeType: storeType)
        scenario.stale.mergePolicy = NSOverwriteMergePolicy
        try scenario.stale.save()
        #expect(try scenario.stored() == ["Ada", "King", "50"])
        #expect(StaleScenario.fields(scenario.copy) == ["Ada", "King", "50"])
    }

    @Test(arguments: storeTypes)
    func rollbackDiscardsTheObjectsChanges(storeType: String) throws {
        let scenario = try StaleScenario(storeType: storeType)
        scenario.stale.mergePolicy = NSRollbackMergePolicy
        try scenario.stale.save()
        #expect(try scenario.stored() == ["Augusta", "Lovelace", "40"])
        #expect(StaleScenario.fields(scenario.copy) == ["Augusta", "Lovelace", "40"])
        #expect(!scenario.stale.hasChanges)
    }

    @Test(arguments: storeTypes)
    func aResolvedObjectSavesAgainAtItsNewVersion(storeType: String) throws {
        let scenario = try StaleScenario(storeType: storeType)
        scenario.stale.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        try scenario.stale.save()
        scenario.stale.mergePolicy = NSErrorMergePolicy
        scenario.copy.setValue(Int16(60), forKey: "age")
        try scenario.stale.save()
        #expect(try scenario.stored() == ["Augusta", "King", "60"])
    }

    @Test(arguments: storeTypes)
    func aStaleDeleteIsAConflictUnderErrorAndProceedsUnderTrump(storeType: String) throws {
        let scenario = try StaleScenario(storeType: storeType)
        scenario.stale.delete(scenario.copy)
        var caught: NSError?
        do { try scenario.stale.save() } catch { caught = error as NSError }
        let conflicts = caught?.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSMergeConflict]
        #expect(caught?.code == NSManagedObjectMergeError)
        #expect(conflicts?.first?.sourceObject === scenario.copy)
        #expect(try scenario.stored() == ["Augusta", "Lovelace", "40"])
        scenario.stale.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        try scenario.stale.save()
        let reader = PageFileFixtures.context(scenario.coordinator)
        #expect(try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person")).isEmpty)
    }

    @Test(arguments: storeTypes)
    func aStaleDeleteOfAnUnreadFaultProceedsUnderTrump(storeType: String) throws {
        let scenario = try StaleScenario(storeType: storeType)
        let other = PageFileFixtures.context(scenario.coordinator)
        other.mergePolicy = NSMergeByPropertyStoreTrumpMergePolicy
        let fault = other.object(with: scenario.copy.objectID)
        #expect(fault.isFault)
        other.delete(fault)
        try other.save()
        let reader = PageFileFixtures.context(scenario.coordinator)
        #expect(try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person")).isEmpty)
    }

    @Test func aSubclassedPolicySeesTheConflicts() throws {
        final class CountingPolicy: NSMergePolicy, @unchecked Sendable {
            nonisolated(unsafe) var seen: [NSMergeConflict] = []
            override func resolve(optimisticLockingConflicts list: [NSMergeConflict]) throws {
                seen.append(contentsOf: list)
                try super.resolve(optimisticLockingConflicts: list)
            }
        }
        let scenario = try StaleScenario(storeType: NSInMemoryStoreType)
        let policy = CountingPolicy(merge: .mergeByPropertyObjectTrumpMergePolicyType)
        scenario.stale.mergePolicy = policy
        try scenario.stale.save()
        #expect(policy.seen.count == 1)
        #expect(policy.seen.first?.sourceObject === scenario.copy)
    }

    @Test func uniqueConstraintErrorCarriesConstraintConflicts() throws {
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = try PageFileFixtures.coordinator(PageFileFixtures.peopleModel, url)
        let first = PageFileFixtures.context(coordinator)
        let original = PageFileFixtures.person(first, "Ada", "Lovelace", 36, "ada@x")
        try first.save()
        let strict = PageFileFixtures.context(coordinator)
        let duplicate = PageFileFixtures.person(strict, "Dup", "Dup", 1, "ada@x")
        var caught: NSError?
        do { try strict.save() } catch { caught = error as NSError }
        let error = try #require(caught)
        #expect(error.code == NSManagedObjectConstraintMergeError)
        let conflicts = try #require(error.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSConstraintConflict])
        let conflict = try #require(conflicts.first)
        #expect(conflicts.count == 1)
        #expect(conflict.constraint == ["email"])
        #expect(conflict.constraintValues["email"] as? String == "ada@x")
        #expect(conflict.databaseObject?.objectID == original.objectID)
        #expect(conflict.databaseSnapshot?["firstName"] as? String == "Ada")
        #expect(conflict.conflictingObjects.count == 1)
        #expect(conflict.conflictingObjects.first === duplicate)
        #expect(conflict.conflictingSnapshots.first?["firstName"] as? String == "Dup")
    }

    @Test(arguments: [
        (NSMergeByPropertyStoreTrumpMergePolicy, "Ada"), (NSMergeByPropertyObjectTrumpMergePolicy, "Augusta"),
    ])
    func uniqueConstraintUnderATrumpPolicyIsAnUpsert(policy: NSMergePolicy, expected: String) throws {
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = try PageFileFixtures.coordinator(PageFileFixtures.peopleModel, url)
        let first = PageFileFixtures.context(coordinator)
        let original = PageFileFixtures.person(first, "Ada", "Lovelace", 36, "ada@x")
        try first.save()
        let upsert = PageFileFixtures.context(coordinator)
        upsert.mergePolicy = policy
        let replacement = PageFileFixtures.person(upsert, "Augusta", "King", 37, "ada@x")
        try upsert.save()
        #expect(replacement.objectID == original.objectID)
        let check = PageFileFixtures.context(coordinator)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
        let found = try check.fetch(request)
        #expect(found.count == 1)
        #expect(found.first?.value(forKey: "firstName") as? String == expected)
    }
}
