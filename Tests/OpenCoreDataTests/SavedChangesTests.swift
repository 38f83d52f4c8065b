// The object IDs a save's DidSave notification carries for the contexts that merge it
// (SavedChanges): those of the saved objects, in the save's order, each list made in one
// pass (ObjectLifecycle.objectIDs(of:)).
import Foundation
import Testing

@testable import OpenCoreData

@Suite struct SavedChangesTests {
    @Test func objectIDsListsEachObjectsIDInOrder() throws {
        let context = try TestStack.freshContext()
        let companies = (0..<3).map { index in
            let company = TCompany(context: context)
            company.name = "C\(index)"
            return company
        }
        #expect(ObjectLifecycle.objectIDs(of: []).isEmpty)
        #expect(ObjectLifecycle.objectIDs(of: [companies[1]]) == [companies[1].objectID])
        let pair: [NSManagedObject] = [companies[2], companies[0]]
        #expect(ObjectLifecycle.objectIDs(of: pair) == pair.map(\.objectID))
        let mixed: [NSManagedObject] = [companies[2], companies[0], companies[1]]
        #expect(ObjectLifecycle.objectIDs(of: mixed) == mixed.map(\.objectID), "temporary IDs")
        try context.save()
        #expect(ObjectLifecycle.objectIDs(of: mixed) == mixed.map(\.objectID), "permanent IDs")
    }

    @Test func aSavesNotificationCarriesTheIDsOfItsObjects() throws {
        let context = try TestStack.freshContext()
        let kept = TCompany(context: context)
        kept.name = "Kept"
        let gone = TCompany(context: context)
        gone.name = "Gone"
        try context.save()
        let log = NotificationLog([.NSManagedObjectContextDidSave], from: context)
        let added = TCompany(context: context)
        added.name = "Added"
        kept.name = "Kept 2"
        context.delete(gone)
        try context.save()
        let changes = try #require(log.all.first?.userInfo?[SavedChanges.userInfoKey] as? SavedChanges)
        #expect(changes.inserted == [added.objectID])
        #expect(changes.updated == [kept.objectID])
        #expect(changes.deleted == [gone.objectID])
    }
}
