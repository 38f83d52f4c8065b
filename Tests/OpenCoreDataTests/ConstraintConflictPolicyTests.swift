import Foundation
import Testing

@testable import OpenCoreData

/// Uniqueness clashes go to the merge policy's `resolve(constraintConflicts:)`, as in
/// Core Data: a subclass sees the `NSConstraintConflict` objects and its resolution is
/// what the retried save writes, on every store type.
@Suite struct ConstraintConflictPolicyTests {
    static let storeTypes = [NSInMemoryStoreType, NSSQLiteStoreType, NSBinaryStoreType]

    /// A policy that records every constraint conflict and resolves it with `body`
    /// (by default the built-in resolution of its type).
    final class RecordingPolicy: NSMergePolicy, @unchecked Sendable {
        var seen: [[NSConstraintConflict]] = []
        var body: ((NSMergePolicy, [NSConstraintConflict]) throws -> Void)?

        override func resolve(constraintConflicts list: [NSConstraintConflict]) throws {
            seen.append(list)
            if let body {
                try body(self, list)
            } else {
                try super.resolve(constraintConflicts: list)
            }
        }

        func callSuper(_ list: [NSConstraintConflict]) throws {
            try super.resolve(constraintConflicts: list)
        }
    }

    /// A store holding Ada (ada@x) and a context to save clashing objects in.
    struct Stack {
        let coordinator: NSPersistentStoreCoordinator
        let original: NSManagedObject
        let context: NSManagedObjectContext

        init(storeType: String, policy: NSMergePolicy, tracking: Bool = false) throws {
            coordinator = try UniquenessConstraintTests.coordinator(storeType, tracking: tracking)
            let first = PageFileFixtures.context(coordinator)
            original = PageFileFixtures.person(first, "Ada", "Lovelace", 36, "ada@x")
            try first.save()
            context = PageFileFixtures.context(coordinator)
            context.mergePolicy = policy
        }

        func stored() throws -> [String] { try UniquenessConstraintTests.stored(coordinator) }
    }

    @Test(arguments: storeTypes)
    func aSubclassCallingSuperSeesTheConflictAndUpsertsAsTheBuiltInPolicy(storeType: String) throws {
        let policy = RecordingPolicy(merge: .mergeByPropertyObjectTrumpMergePolicyType)
        let stack = try Stack(storeType: storeType, policy: policy, tracking: true)
        let replacement = PageFileFixtures.person(stack.context, "Augusta", "Lovelace", 36, "ada@x")
        try stack.context.save()
        #expect(policy.seen.count == 1)
        let conflict = try #require(policy.seen.first?.first)
        #expect(policy.seen.first?.count == 1)
        #expect(conflict.constraint == ["email"])
        #expect(conflict.constraintValues["email"] as? String == "ada@x")
        #expect(conflict.databaseObject?.objectID == stack.original.objectID)
        #expect(conflict.databaseSnapshot?["firstName"] as? String == "Ada")
        #expect(conflict.conflictingObjects.count == 1)
        #expect(conflict.conflictingObjects.first === replacement)
        #expect(conflict.conflictingSnapshots.first?["firstName"] as? String == "Augusta")
        // The same result as NSMergeByPropertyObjectTrumpMergePolicy itself.
        #expect(replacement.objectID == stack.original.objectID)
        #expect(try stack.stored() == ["ada@x:Augusta"])
        #expect(!stack.context.hasChanges)
        let result = try stack.context.execute(
            NSPersistentHistoryChangeRequest.fetchHistory(after: nil as NSPersistentHistoryToken?))
        let transactions = try #require(
            (result as? NSPersistentHistoryResult)?.result as? [NSPersistentHistoryTransaction])
        #expect(transactions.last?.changes?.map(\.changeType) == [.update])
        #expect(transactions.last?.changes?.first?.changedObjectID == stack.original.objectID)
    }

    @Test(arguments: storeTypes)
    func aSubclassOfTheErrorPolicyCallingSuperFails(storeType: String) throws {
        let policy = RecordingPolicy(merge: .errorMergePolicyType)
        let stack = try Stack(storeType: storeType, policy: policy)
        _ = PageFileFixtures.person(stack.context, "Dup", "Dup", 1, "ada@x")
        let error = try #require(UniquenessConstraintTests.saveError(stack.context))
        #expect(error.code == NSManagedObjectConstraintMergeError)
        #expect((error.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSConstraintConflict])?.count == 1)
        #expect(policy.seen.count == 1)
        #expect(try stack.stored() == ["ada@x:Ada"])
    }

    @Test(arguments: storeTypes)
    func aSubclassResolvingByChangingTheValueSavesBothObjects(storeType: String) throws {
        let policy = RecordingPolicy(merge: .errorMergePolicyType)
        policy.body = { _, list in
            for conflict in list {
                for object in conflict.conflictingObjects {
                    let email = object.value(forKey: "email") as? String ?? ""
                    object.setValue("copy-of-" + email, forKey: "email")
                }
            }
        }
        let stack = try Stack(storeType: storeType, policy: policy)
        let duplicate = PageFileFixtures.person(stack.context, "Dup", "Dup", 1, "ada@x")
        try stack.context.save()
        #expect(policy.seen.count == 1)
        #expect(duplicate.objectID != stack.original.objectID)
        #expect(!duplicate.objectID.isTemporaryID)
        #expect(try stack.stored() == ["ada@x:Ada", "copy-of-ada@x:Dup"])
        #expect(!stack.context.hasChanges)
    }

    @Test(arguments: storeTypes)
    func aSubclassMergingIntoTheDatabaseObjectAndDeletingTheInsertedOne(storeType: String) throws {
        let policy = RecordingPolicy(merge: .errorMergePolicyType)
        policy.body = { _, list in
            for conflict in list {
                guard let database = conflict.databaseObject else { continue }
                for object in conflict.conflictingObjects {
                    database.setValue(object.value(forKey: "lastName"), forKey: "lastName")
                    object.managedObjectContext?.delete(object)
                }
            }
        }
        let stack = try Stack(storeType: storeType, policy: policy)
        let duplicate = PageFileFixtures.person(stack.context, "Dup", "King", 1, "ada@x")
        try stack.context.save()
        #expect(policy.seen.count == 1)
        #expect(duplicate.managedObjectContext == nil)
        #expect(try stack.stored() == ["ada@x:Ada"])
        let reader = PageFileFixtures.context(stack.coordinator)
        let stored = try reader.existingObject(with: stack.original.objectID)
        #expect(stored.value(forKey: "lastName") as? String == "King")
        #expect(!stack.context.hasChanges)
    }

    @Test(arguments: storeTypes)
    func aClashWithinOneSaveHasNoDatabaseObjectAndListsEveryInsertedObject(storeType: String) throws {
        let policy = RecordingPolicy(merge: .mergeByPropertyObjectTrumpMergePolicyType)
        let stack = try Stack(storeType: storeType, policy: policy)
        let one = PageFileFixtures.person(stack.context, "One", "A", 1, "same@x")
        let two = PageFileFixtures.person(stack.context, "Two", "B", 2, "same@x")
        let three = PageFileFixtures.person(stack.context, "Three", "C", 3, "same@x")
        try stack.context.save()
        let conflicts = try #require(policy.seen.first)
        #expect(conflicts.count == 1)
        #expect(conflicts.first?.databaseObject == nil)
        #expect(conflicts.first?.databaseSnapshot == nil)
        let objects = conflicts.first?.conflictingObjects ?? []
        #expect(objects.count == 3)
        #expect(objects.contains(one) && objects.contains(two) && objects.contains(three))
        // As the built-in policy: the later inserts become the first one.
        #expect(one.objectID == two.objectID && two.objectID == three.objectID)
        #expect(try stack.stored() == ["ada@x:Ada", "same@x:Three"])
    }

    @Test(arguments: storeTypes)
    func everyClashOfASaveIsReportedTogether(storeType: String) throws {
        let policy = RecordingPolicy(merge: .errorMergePolicyType)
        let stack = try Stack(storeType: storeType, policy: policy)
        let writer = PageFileFixtures.context(stack.coordinator)
        _ = PageFileFixtures.person(writer, "Bob", "Babbage", 50, "bob@x")
        try writer.save()
        _ = PageFileFixtures.person(stack.context, "Dup1", "A", 1, "ada@x")
        _ = PageFileFixtures.person(stack.context, "Dup2", "B", 2, "bob@x")
        _ = PageFileFixtures.person(stack.context, "Fine", "C", 3, "carol@x")
        let error = try #require(UniquenessConstraintTests.saveError(stack.context))
        #expect(error.code == NSManagedObjectConstraintMergeError)
        let conflicts = try #require(policy.seen.first)
        #expect(policy.seen.count == 1)
        #expect(Set(conflicts.compactMap { $0.constraintValues["email"] as? String }) == ["ada@x", "bob@x"])
        #expect(try stack.stored() == ["ada@x:Ada", "bob@x:Bob"])
    }

    @Test(arguments: storeTypes)
    func anUpdateClashIsResolvedByASubclass(storeType: String) throws {
        let policy = RecordingPolicy(merge: .mergeByPropertyObjectTrumpMergePolicyType)
        policy.body = { policy, list in
            guard let self = policy as? RecordingPolicy else { return }
            // The built-in policies cannot merge an update clash: restore the object's own value.
            for conflict in list where conflict.conflictingObjects.allSatisfy({ !$0.isInserted }) {
                for object in conflict.conflictingObjects { object.setValue("bob@x", forKey: "email") }
            }
            try self.callSuper(list.filter { $0.conflictingObjects.allSatisfy(\.isInserted) })
        }
        let stack = try Stack(storeType: storeType, policy: policy)
        let bob = PageFileFixtures.person(stack.context, "Bob", "Babbage", 50, "bob@x")
        try stack.context.save()
        #expect(policy.seen.isEmpty)
        bob.setValue("ada@x", forKey: "email")
        bob.setValue("Robert", forKey: "firstName")
        try stack.context.save()
        #expect(policy.seen.count == 1)
        #expect(policy.seen.first?.first?.conflictingObjects.first === bob)
        #expect(policy.seen.first?.first?.databaseObject?.objectID == stack.original.objectID)
        #expect(try stack.stored() == ["ada@x:Ada", "bob@x:Robert"])
    }

    @Test(arguments: storeTypes)
    func theBuiltInPolicyFailsAnUpdateClash(storeType: String) throws {
        let policy = RecordingPolicy(merge: .overwriteMergePolicyType)
        let stack = try Stack(storeType: storeType, policy: policy)
        let bob = PageFileFixtures.person(stack.context, "Bob", "Babbage", 50, "bob@x")
        try stack.context.save()
        bob.setValue("ada@x", forKey: "email")
        let error = try #require(UniquenessConstraintTests.saveError(stack.context))
        #expect(error.code == NSManagedObjectConstraintMergeError)
        #expect(policy.seen.count == 1)
        #expect(try stack.stored() == ["ada@x:Ada", "bob@x:Bob"])
    }

    @Test(arguments: storeTypes)
    func aSubclassThatResolvesNothingFailsInsteadOfLooping(storeType: String) throws {
        let policy = RecordingPolicy(merge: .mergeByPropertyObjectTrumpMergePolicyType)
        policy.body = { _, _ in }
        let stack = try Stack(storeType: storeType, policy: policy)
        _ = PageFileFixtures.person(stack.context, "Dup", "Dup", 1, "ada@x")
        let error = try #require(UniquenessConstraintTests.saveError(stack.context))
        #expect(error.code == NSManagedObjectConstraintMergeError)
        #expect(policy.seen.count > 1)
        #expect(try stack.stored() == ["ada@x:Ada"])
        #expect(stack.context.hasChanges)
    }

    @Test(
        arguments: storeTypes, [NSMergePolicyType.mergeByPropertyStoreTrumpMergePolicyType, .rollbackMergePolicyType])
    func aSubclassOfAStoreWinningPolicyKeepsTheStoredValues(storeType: String, type: NSMergePolicyType) throws {
        let policy = RecordingPolicy(merge: type)
        let stack = try Stack(storeType: storeType, policy: policy)
        let replacement = PageFileFixtures.person(stack.context, "Augusta", "King", 37, "ada@x")
        try stack.context.save()
        #expect(policy.seen.count == 1)
        #expect(replacement.objectID == stack.original.objectID)
        #expect(try stack.stored() == ["ada@x:Ada"])
    }
}
