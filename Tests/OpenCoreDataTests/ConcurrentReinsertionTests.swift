// Two contexts that both insert again one object a third deleted (object trump or
// overwrite, Core Data's force insertion): each save found the row deleted before either
// wrote it back, so the second re-insertion finds the first's row in its place. Before,
// the store wrote the second row over the first without taking back the first's index
// entries: the release soak (seed 301) kept a reference index entry of Owner.favorite
// naming a tag the owner no longer had ("rel.Owner.favorite: 1 entries without their row").
import Foundation
import Testing

@testable import OpenCoreData

@Suite struct ConcurrentReinsertionTests {
    /// A policy that, when it first resolves conflicts, lets `between` run: another
    /// context's save lands between this save's attempts, as a concurrent writer's would.
    final class InterleavingPolicy: NSMergePolicy, @unchecked Sendable {
        var between: (() throws -> Void)?

        override func resolve(optimisticLockingConflicts list: [NSMergeConflict]) throws {
            try super.resolve(optimisticLockingConflicts: list)
            let body = between
            between = nil
            try body?()
        }
    }

    @Test(
        arguments: [NSSQLiteStoreType, NSInMemoryStoreType, NSBinaryStoreType],
        [NSMergePolicyType.mergeByPropertyObjectTrumpMergePolicyType, .overwriteMergePolicyType])
    func aSecondReinsertionReplacesTheFirstWithItsIndexEntries(storeType: String, policyType: NSMergePolicyType)
        throws
    {
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = try PageFileFixtures.coordinator(PageFileFixtures.peopleModel, url, type: storeType)
        let writer = PageFileFixtures.context(coordinator)
        let person = PageFileFixtures.person(writer, "Ada", "Lovelace", 36, "ada@x")
        let analysts = NSEntityDescription.insertNewObject(forEntityName: "Team", into: writer)
        analysts.setValue("Analysts", forKey: "title")
        let engineers = NSEntityDescription.insertNewObject(forEntityName: "Team", into: writer)
        engineers.setValue("Engineers", forKey: "title")
        person.setValue(analysts, forKey: "team")
        try writer.save()

        // Both read the person, then change it; the writer deletes it.
        let first = PageFileFixtures.context(coordinator)
        first.mergePolicy = NSMergePolicy(merge: policyType)
        let firstCopy = try first.existingObject(with: person.objectID)
        firstCopy.setValue(try first.existingObject(with: engineers.objectID), forKey: "team")
        let second = PageFileFixtures.context(coordinator)
        let policy = InterleavingPolicy(merge: policyType)
        second.mergePolicy = policy
        let secondCopy = try second.existingObject(with: person.objectID)
        secondCopy.setValue(Int16(40), forKey: "age")
        writer.delete(person)
        try writer.save()

        // The second context's save finds the row deleted; before it inserts the person
        // again, the first context does (in the engineers' team).
        policy.between = { try first.save() }
        try second.save()

        if let store = coordinator.persistentStores.first as? PageFileStore {
            #expect(try store.verify().problems == [])
        }
        let reader = PageFileFixtures.context(coordinator)
        let stored = try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
        #expect(stored.count == 1)
        #expect(stored.first?.value(forKey: "age") as? Int16 == 40)
        let team = stored.first?.value(forKey: "team") as? NSManagedObject
        #expect(team?.value(forKey: "title") as? String == "Analysts")
        let engineersMembers = try reader.existingObject(with: engineers.objectID).value(forKey: "members")
        #expect((engineersMembers as? Set<NSManagedObject>)?.isEmpty == true)
    }
}
