// A saved company and employee, and another context whose saves the first merges:
// the set-up of the merge tests.
import Foundation
import OpenCoreData
import Testing

/// A company with one employee saved in `main`, and another context on the same store
/// whose saves `main` can merge (mergingADidSaveNotification and the notification and
/// lifecycle tests of merges).
struct SavedElsewhere {
    let main: NSManagedObjectContext
    let company: TCompany
    let ada: TEmployee
    let background: NSManagedObjectContext

    init() throws {
        let coordinator = try TestStack.coordinator()
        main = TestStack.context(coordinator)
        company = TCompany(context: main)
        company.name = "Acme"
        ada = TEmployee(context: main)
        ada.company = company
        try main.save()
        background = TestStack.context(coordinator)
    }

    /// The background context's copy of `object` (call it inside ``save(_:)``).
    func theirs<Object: NSManagedObject>(_ object: Object) throws -> Object {
        try #require(try background.existingObject(with: object.objectID) as? Object)
    }

    /// Runs `change` on the background context, saves, and returns the save's DidSave
    /// notification.
    func save(_ change: (_ context: NSManagedObjectContext) throws -> Void) throws -> Notification {
        let saves = NotificationLog([.NSManagedObjectContextDidSave], from: background)
        try background.performAndWait {
            try change(background)
            try background.save()
        }
        return try #require(saves.all.first)
    }

    /// Saves the company renamed "Renamed" and the employee deleted.
    func renameCompanyAndDeleteAda() throws -> Notification {
        try save { context in
            try theirs(company).name = "Renamed"
            context.delete(try theirs(ada))
        }
    }
}
