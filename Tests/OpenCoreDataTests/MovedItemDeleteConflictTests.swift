// A context moves an item from owner a to owner b and deletes a (its items cascade) while
// another save has changed a: the delete conflicts, and the policy keeps it, running a's
// delete rules over the items the store lists for a that the context did not know. The
// moved item is still listed there (the move is not saved yet) but the context knew it:
// it must stay, under b. (The policy cascaded to it: the release soak's "acknowledged save
// lost", an item inserted and moved by acknowledged saves missing, seed 302.)
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

@Suite struct MovedItemDeleteConflictTests {
    static func fetch(_ entity: String, _ name: String, _ context: NSManagedObjectContext) throws -> NSManagedObject? {
        let request = NSFetchRequest<NSManagedObject>(entityName: entity)
        request.predicate = NSPredicate(format: "name == %@", name)
        return try context.fetch(request).first
    }

    /// Variant 0 moves the item by inserting it into b's ordered list, 1 by setting its to-one.
    @Test(
        arguments: [
            NSMergeByPropertyStoreTrumpMergePolicy, NSMergeByPropertyObjectTrumpMergePolicy, NSOverwriteMergePolicy,
        ], [0, 1])
    func anItemMovedAwayBeforeItsOwnersConflictingDeleteStays(_ policy: NSMergePolicy, _ variant: Int) throws {
        let coordinator = try PageFileFixtures.coordinator(
            RollbackOrderedListTests.model, try PageFileFixtures.temporaryURL(), type: NSSQLiteStoreType)
        let context = PageFileFixtures.context(coordinator)
        context.mergePolicy = policy
        try context.performAndWait {
            let a = RollbackOrderedListTests.insert("Owner", "a", into: context)
            for name in ["x", "n"] {
                a.mutableOrderedSetValue(forKey: "items").add(
                    RollbackOrderedListTests.insert("Item", name, into: context))
            }
            RollbackOrderedListTests.insert("Owner", "b", into: context)
            try context.save()
        }
        let other = PageFileFixtures.context(coordinator)
        try other.performAndWait {
            try #require(try Self.fetch("Owner", "a", other)).setValue("edited", forKey: "note")
            try other.save()
        }
        try context.performAndWait {
            let a = try #require(try Self.fetch("Owner", "a", context))
            let b = try #require(try Self.fetch("Owner", "b", context))
            let n = try #require(try Self.fetch("Item", "n", context))
            if variant == 0 {
                b.mutableOrderedSetValue(forKey: "items").insert(n, at: 0)
            } else {
                n.setValue(b, forKey: "owner")
            }
            context.delete(a)
            try context.save()
        }
        let check = PageFileFixtures.context(coordinator)
        try check.performAndWait {
            let item = try Self.fetch("Item", "n", check)
            let owner = (item?.value(forKey: "owner") as? NSManagedObject)?.value(forKey: "name") as? String
            #expect(
                owner == "b",
                "\(policy.mergeType) variant \(variant): n \(item == nil ? "missing" : "owner \(owner ?? "nil")")")
        }
    }
}
