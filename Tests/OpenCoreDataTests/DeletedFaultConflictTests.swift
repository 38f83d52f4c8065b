// A context deletes an owner; another context adds an item to that owner and saves; the
// first then saves under a policy that keeps its delete. The owner's delete rules must run
// over the item the other save added (cascade: the item goes), whether the first context
// merged the other save or not, and after the deleted owner is refreshed. (The deleted
// owner here is loaded again before its conflict; DeletedObjectRefreshTests reaches the
// conflict of a deleted owner holding no values, where the release soak, seed 301,
// trapped.)
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

@Suite struct DeletedFaultConflictTests {
    @Test(arguments: [NSInMemoryStoreType, NSSQLiteStoreType, NSBinaryStoreType], [false, true])
    func aDeleteKeptByThePolicyRunsItsRulesOverItemsAddedElsewhere(_ storeType: String, _ merges: Bool) throws {
        for policy in [
            NSMergeByPropertyObjectTrumpMergePolicy, NSMergeByPropertyStoreTrumpMergePolicy, NSOverwriteMergePolicy,
        ] {
            let coordinator = try PageFileFixtures.coordinator(
                RollbackOrderedListTests.model, try PageFileFixtures.temporaryURL(), type: storeType)
            let setup = PageFileFixtures.context(coordinator)
            try setup.performAndWait {
                let owner = RollbackOrderedListTests.insert("Owner", "o1", into: setup)
                owner.mutableOrderedSetValue(forKey: "items").add(
                    RollbackOrderedListTests.insert("Item", "a1", into: setup))
                try setup.save()
            }
            let writer = PageFileFixtures.context(coordinator)
            writer.mergePolicy = policy
            writer.automaticallyMergesChangesFromParent = merges
            let ownerID = try writer.performAndWait {
                let request = NSFetchRequest<NSManagedObject>(entityName: "Owner")
                let owner = try #require(try writer.fetch(request).first)
                writer.delete(owner)
                writer.processPendingChanges()
                return owner.objectID
            }
            let other = PageFileFixtures.context(coordinator)
            try other.performAndWait {
                let owner = try other.existingObject(with: ownerID)
                owner.mutableOrderedSetValue(forKey: "items").add(
                    RollbackOrderedListTests.insert("Item", "n1", into: other))
                try other.save()
            }
            try writer.performAndWait {
                // Turned back into a fault while deleted: its values are gone.
                if merges { writer.refresh(try writer.existingObject(with: ownerID), mergeChanges: false) }
                try writer.save()
            }
            let check = PageFileFixtures.context(coordinator)
            try check.performAndWait {
                #expect(try check.fetch(NSFetchRequest<NSManagedObject>(entityName: "Owner")).isEmpty)
                // The items' to-one is nullified or the item cascaded away with the owner.
                for item in try check.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item")) {
                    #expect(item.value(forKey: "owner") == nil, "\(storeType) merges \(merges) \(policy)")
                }
            }
        }
    }
}
