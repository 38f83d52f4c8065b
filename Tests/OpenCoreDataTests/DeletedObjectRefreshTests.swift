// A deleted object refreshed while its delete is pending turns into a fault and holds no
// values (it stays deleted): by `refresh(_:mergeChanges:)` itself, or by a merge of
// another save that changed it, in a context that merges automatically while it holds the
// delete, as the parent of a child context does between the child's save and its own (the
// soak's parent/child chain). When the delete then conflicts (the row changed meanwhile),
// the merge policy runs the object's delete rules over every destination the store lists,
// the ones another save added included (cascade: they go too), since what the rules ran on
// is no longer known. This is the state in which the release soak, seed 301, trapped
// before b266722 (NSMergePolicy+Resolution.swift).
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

@Suite struct DeletedObjectRefreshTests {
    static let policies = [
        NSMergeByPropertyObjectTrumpMergePolicy, NSMergeByPropertyStoreTrumpMergePolicy, NSOverwriteMergePolicy,
    ]

    /// A store holding owner o1 without items, and a context `other` on it.
    static func setUp() throws -> (NSPersistentStoreCoordinator, NSManagedObjectID) {
        let coordinator = try PageFileFixtures.coordinator(
            RollbackOrderedListTests.model, try PageFileFixtures.temporaryURL(), type: NSSQLiteStoreType)
        let setup = PageFileFixtures.context(coordinator)
        let id = try setup.performAndWait {
            let owner = RollbackOrderedListTests.insert("Owner", "o1", into: setup)
            try setup.save()
            return owner.objectID
        }
        return (coordinator, id)
    }

    /// Another context edits o1 and adds item n1 to it.
    static func editElsewhere(_ coordinator: NSPersistentStoreCoordinator, _ id: NSManagedObjectID) throws {
        let other = PageFileFixtures.context(coordinator)
        try other.performAndWait {
            let owner = try other.existingObject(with: id)
            owner.setValue("edited", forKey: "note")
            owner.mutableOrderedSetValue(forKey: "items").add(
                RollbackOrderedListTests.insert("Item", "n1", into: other))
            try other.save()
        }
    }

    /// No owner and no item is left.
    static func expectEmpty(_ coordinator: NSPersistentStoreCoordinator, _ policy: NSMergePolicy) throws {
        let check = PageFileFixtures.context(coordinator)
        try check.performAndWait {
            let owners = try check.fetch(NSFetchRequest<NSManagedObject>(entityName: "Owner"))
            let items = try check.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item"))
            #expect(owners.isEmpty && items.isEmpty, "\(policy.mergeType)")
        }
    }

    @Test(arguments: policies)
    func aDeletedObjectRefreshedIsADeletedFaultWhoseConflictCascadesOverNewItems(_ policy: NSMergePolicy) throws {
        let (coordinator, id) = try Self.setUp()
        let writer = PageFileFixtures.context(coordinator)
        writer.mergePolicy = policy
        let owner = try writer.performAndWait {
            let owner = try writer.existingObject(with: id)
            writer.delete(owner)
            writer.processPendingChanges()
            return owner
        }
        try Self.editElsewhere(coordinator, id)
        try writer.performAndWait {
            writer.refresh(owner, mergeChanges: true)
            #expect(owner.isDeleted && owner.isFault)
            try writer.save()
        }
        try Self.expectEmpty(coordinator, policy)
    }

    @Test(arguments: policies)
    func aParentMergingAnotherSaveBeforeSavingItsChildsDeleteCascadesOverNewItems(_ policy: NSMergePolicy) throws {
        let (coordinator, id) = try Self.setUp()
        let parent = PageFileFixtures.context(coordinator)
        parent.mergePolicy = policy
        parent.automaticallyMergesChangesFromParent = true
        let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        child.parent = parent
        try child.performAndWait {
            child.delete(try child.existingObject(with: id))
            try child.save()
        }
        try Self.editElsewhere(coordinator, id)
        try parent.performAndWait {
            // The other save's merge ran on the parent's queue before this block.
            let owner = try #require(parent.registeredObject(for: id))
            #expect(owner.isDeleted && owner.isFault)
            try parent.save()
        }
        try Self.expectEmpty(coordinator, policy)
    }
}
