// The batch code of the guides in ../shared/reference, copied as the guides write it, so a
// user's port keeps compiling and doing what the guide says: the guide's deleteAllPeople,
// deletePeopleByAge, batchUpdateInactiveUsers and batchDeleteOldRecords; the skill's
// batchImport, deleteOldTrips and markAllTripsAsNotFavorite; the talk's batch insert of
// JSON posts. Each function body is the guide's, unchanged, except where noted:
// - the skill's `perform` blocks capture their parameters, which this target's Swift 6
//   mode requires to be Sendable (`perform` takes a `@Sendable` block): each parameter is
//   first bound to a `nonisolated(unsafe) let` of the same name;
// - the talk's snippet does not compile with Apple's Core Data either (`try?` makes the
//   result optional and it is cast to NSBatchInsertRequest, which has no `result`): it is
//   here with NSBatchInsertResult and the optional unwrapped.
// The guides name the types Person, CDTrip, Post and CoreDataStack; here those names are
// aliases inside GuideBatchCode, so the test target keeps its top-level names free.
import Foundation
import OpenCoreData
import TestSupport
import Testing

final class GuidePerson: NSManagedObject {
    @Managed var firstName: String?
    @Managed var age: Int16
    @Managed var isActive: Bool
    @Managed var lastLoginDate: Date?
    @Managed var createdDate: Date?
}

final class GuideTrip: NSManagedObject {
    @Managed var name: String?
    @Managed var endDate: Date?
    @Managed var isFavorite: Bool
}

final class GuidePost: NSManagedObject {
    @Managed var title: String?
}

enum GuideBatchCode {
    typealias Person = GuidePerson
    typealias CDTrip = GuideTrip
    typealias Post = GuidePost

    /// The guides' stack: the guide's `mainContext` and the skill's `viewContext` and
    /// `newBackgroundContext()`, on a default store in a directory of its own per test.
    final class CoreDataStack: @unchecked Sendable {
        nonisolated(unsafe) static var shared: CoreDataStack!
        let persistentContainer: NSPersistentContainer
        let directory: URL

        init() throws {
            directory = try TestScratch.directory("guide-batch")
            persistentContainer = NSPersistentContainer(name: "MyApp", managedObjectModel: GuideBatchCode.model)
            persistentContainer.persistentStoreDescriptions = [
                NSPersistentStoreDescription(url: directory.appendingPathComponent("MyApp.store"))
            ]
            var loadError: Error?
            persistentContainer.loadPersistentStores { _, error in loadError = error }
            if let loadError { throw loadError }
            persistentContainer.viewContext.automaticallyMergesChangesFromParent = true
            persistentContainer.viewContext.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        }

        var mainContext: NSManagedObjectContext { persistentContainer.viewContext }
        var viewContext: NSManagedObjectContext { persistentContainer.viewContext }
        func newBackgroundContext() -> NSManagedObjectContext { persistentContainer.newBackgroundContext() }

        func close() {
            let coordinator = persistentContainer.persistentStoreCoordinator
            for store in coordinator.persistentStores { try? coordinator.remove(store) }
            try? FileManager.default.removeItem(at: directory)
        }
    }

    static let model: NSManagedObjectModel = {
        func attribute(_ name: String, _ type: NSAttributeType, _ defaultValue: Any? = nil) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.defaultValue = defaultValue
            return attribute
        }
        func entity(_ name: String, _ type: NSManagedObject.Type, _ properties: [NSAttributeDescription])
            -> NSEntityDescription
        {
            let entity = NSEntityDescription()
            entity.name = name
            entity.managedObjectClassName = NSStringFromClass(type)
            entity.properties = properties
            return entity
        }
        let model = NSManagedObjectModel()
        model.entities = [
            entity(
                "Person", GuidePerson.self,
                [
                    attribute("firstName", .stringAttributeType), attribute("age", .integer16AttributeType, 0),
                    attribute("isActive", .booleanAttributeType, true),
                    attribute("lastLoginDate", .dateAttributeType), attribute("createdDate", .dateAttributeType),
                ]),
            entity(
                "CDTrip", GuideTrip.self,
                [
                    attribute("name", .stringAttributeType), attribute("endDate", .dateAttributeType),
                    attribute("isFavorite", .booleanAttributeType, false),
                ]),
            entity("Post", GuidePost.self, [attribute("title", .stringAttributeType)]),
        ]
        return model
    }()

    static let thirtyDaysAgo = Date(timeIntervalSinceNow: -30 * 86_400)
    static let oneYearAgo = Date(timeIntervalSinceNow: -365 * 86_400)

    // MARK: The guide (core-data-guide.txt, "Deleting Data" and "Batch Operations")

    // Delete multiple objects
    static func deleteAllPeople() -> Bool {
        let context = CoreDataStack.shared.mainContext
        let fetchRequest: NSFetchRequest<NSFetchRequestResult> = Person.fetchRequest()
        let batchDeleteRequest = NSBatchDeleteRequest(fetchRequest: fetchRequest)
        do {
            try context.execute(batchDeleteRequest)
            try context.save()
            print("All people deleted")
            return true
        } catch {
            print("Failed to delete all people: \(error)")
            return false
        }
    }

    // Delete with predicate
    static func deletePeopleByAge(minAge: Int) -> Bool {
        let context = CoreDataStack.shared.mainContext
        let fetchRequest: NSFetchRequest<NSFetchRequestResult> = Person.fetchRequest()
        fetchRequest.predicate = NSPredicate(format: "age >= %d", minAge)
        let batchDeleteRequest = NSBatchDeleteRequest(fetchRequest: fetchRequest)
        batchDeleteRequest.resultType = .resultTypeObjectIDs
        do {
            let result = try context.execute(batchDeleteRequest) as? NSBatchDeleteResult
            let objectIDArray = result?.result as? [NSManagedObjectID] ?? []
            let changes = [NSDeletedObjectsKey: objectIDArray]
            NSManagedObjectContext.mergeChanges(
                fromRemoteContextSave: changes,
                into: [context]
            )
            return true
        } catch {
            print("Batch delete failed: \(error)")
            return false
        }
    }

    // Batch update
    static func batchUpdateInactiveUsers() {
        let context = CoreDataStack.shared.mainContext
        let batchUpdate = NSBatchUpdateRequest(entityName: "Person")
        batchUpdate.predicate = NSPredicate(format: "lastLoginDate < %@", thirtyDaysAgo as NSDate)
        batchUpdate.propertiesToUpdate = ["isActive": false]
        batchUpdate.resultType = .updatedObjectIDsResultType
        do {
            let result = try context.execute(batchUpdate) as? NSBatchUpdateResult
            let objectIDArray = result?.result as? [NSManagedObjectID] ?? []
            let changes = [NSUpdatedObjectsKey: objectIDArray]
            NSManagedObjectContext.mergeChanges(
                fromRemoteContextSave: changes,
                into: [context]
            )
        } catch {
            print("Batch update failed: \(error)")
        }
    }

    // Batch delete (covered earlier); the guide stops at "Execute and merge changes...",
    // so this returns the request for the test to execute.
    static func batchDeleteOldRecords() -> NSBatchDeleteRequest {
        let fetchRequest: NSFetchRequest<NSFetchRequestResult> = Person.fetchRequest()
        fetchRequest.predicate = NSPredicate(
            format: "createdDate < %@",
            oneYearAgo as NSDate
        )
        let batchDelete = NSBatchDeleteRequest(fetchRequest: fetchRequest)
        batchDelete.resultType = .resultTypeObjectIDs
        // Execute and merge changes...
        return batchDelete
    }

    // MARK: The skill (core-data-skill.md, "Batch Operations")

    static func batchImport(_ records: [[String: Any]]) async throws {
        nonisolated(unsafe) let records = records
        let context = CoreDataStack.shared.newBackgroundContext()
        try await context.perform {
            let request = NSBatchInsertRequest(
                entity: CDTrip.entity(),
                objects: records
            )
            request.resultType = .objectIDs
            let result = try context.execute(request) as? NSBatchInsertResult
            if let ids = result?.result as? [NSManagedObjectID] {
                NSManagedObjectContext.mergeChanges(
                    fromRemoteContextSave: [NSInsertedObjectsKey: ids],
                    into: [CoreDataStack.shared.viewContext]
                )
            }
        }
    }

    static func deleteOldTrips(before cutoff: Date) async throws {
        let context = CoreDataStack.shared.newBackgroundContext()
        try await context.perform {
            let fetchRequest: NSFetchRequest<NSFetchRequestResult> = CDTrip.fetchRequest()
            fetchRequest.predicate = NSPredicate(format: "endDate < %@", cutoff as NSDate)
            let request = NSBatchDeleteRequest(fetchRequest: fetchRequest)
            request.resultType = .resultTypeObjectIDs
            let result = try context.execute(request) as? NSBatchDeleteResult
            if let ids = result?.result as? [NSManagedObjectID] {
                NSManagedObjectContext.mergeChanges(
                    fromRemoteContextSave: [NSDeletedObjectsKey: ids],
                    into: [CoreDataStack.shared.viewContext]
                )
            }
        }
    }

    static func markAllTripsAsNotFavorite() async throws {
        let context = CoreDataStack.shared.newBackgroundContext()
        try await context.perform {
            let request = NSBatchUpdateRequest(entity: CDTrip.entity())
            request.propertiesToUpdate = ["isFavorite": false]
            request.resultType = .updatedObjectIDsResultType
            let result = try context.execute(request) as? NSBatchUpdateResult
            if let ids = result?.result as? [NSManagedObjectID] {
                NSManagedObjectContext.mergeChanges(
                    fromRemoteContextSave: [NSUpdatedObjectsKey: ids],
                    into: [CoreDataStack.shared.viewContext]
                )
            }
        }
    }

    // MARK: The talk (making-apps-with-core-data.md, batch insertions)

    static func importPosts(_ rawPostsData: Data, into context: NSManagedObjectContext) -> Bool? {
        var success: Bool?
        if let postDicts = try? JSONSerialization.jsonObject(with: rawPostsData) as? [[String: Any]] {
            context.performAndWait {
                let insertRequest = NSBatchInsertRequest(entity: Post.entity(), objects: postDicts)
                let insertResult = try? context.execute(insertRequest) as? NSBatchInsertResult
                success = insertResult?.result as? Bool
            }
        }
        return success
    }
}

/// Runs the guides' code on a stack of its own; one at a time, since the guides reach
/// their stack through `CoreDataStack.shared`.
@Suite(.serialized) struct GuideBatchCodeTests {
    typealias Stack = GuideBatchCode.CoreDataStack

    private func withStack(_ body: (Stack) async throws -> Void) async throws {
        let stack = try Stack()
        Stack.shared = stack
        defer { stack.close() }
        try await body(stack)
    }

    private func people(_ context: NSManagedObjectContext) throws -> [GuidePerson] {
        let request = NSFetchRequest<GuidePerson>(entityName: "Person")
        request.sortDescriptors = [NSSortDescriptor(key: "firstName", ascending: true)]
        return try context.fetch(request)
    }

    @Test func theGuidesBatchDeletesAndUpdate() async throws {
        try await withStack { stack in
            let context = stack.mainContext
            let now = Date()
            for (name, age, days) in [("Ann", 17, 2.0), ("Ben", 40, 45), ("Cid", 65, 400), ("Dee", 30, 90)] {
                let person = GuidePerson(context: context)
                person.firstName = name
                person.age = Int16(age)
                person.lastLoginDate = now.addingTimeInterval(-days * 86_400)
                person.createdDate = now.addingTimeInterval(-days * 86_400)
            }
            try context.save()
            let registered = try people(context)

            GuideBatchCode.batchUpdateInactiveUsers()
            #expect(registered.map(\.isActive) == [true, false, false, false], "merged into the registered objects")

            let old = try context.execute(GuideBatchCode.batchDeleteOldRecords()) as? NSBatchDeleteResult
            #expect((old?.result as? [NSManagedObjectID]) == [registered[2].objectID])

            #expect(GuideBatchCode.deletePeopleByAge(minAge: 35))
            #expect(registered[1].isDeleted || registered[1].managedObjectContext == nil)
            #expect(try people(context).compactMap(\.firstName) == ["Ann", "Dee"])

            #expect(GuideBatchCode.deleteAllPeople())
            context.reset()
            #expect(try context.count(for: NSFetchRequest<GuidePerson>(entityName: "Person")) == 0)
        }
    }

    @Test func theSkillsImportUpdateAndDelete() async throws {
        try await withStack { stack in
            let now = Date()
            let records: [[String: Any]] = (0..<10).map { index in
                [
                    "name": "Trip \(index)", "endDate": now.addingTimeInterval(Double(index - 5) * 86_400),
                    "isFavorite": true,
                ]
            }
            try await GuideBatchCode.batchImport(records)
            let view = stack.viewContext
            let trips = try view.fetch(NSFetchRequest<GuideTrip>(entityName: "CDTrip"))
            #expect(trips.count == 10 && trips.allSatisfy(\.isFavorite))

            try await GuideBatchCode.markAllTripsAsNotFavorite()
            #expect(trips.allSatisfy { !$0.isFavorite }, "the view context's objects were refreshed")

            try await GuideBatchCode.deleteOldTrips(before: now)
            let left = try view.fetch(NSFetchRequest<GuideTrip>(entityName: "CDTrip"))
            #expect(left.count == 5 && left.allSatisfy { ($0.endDate ?? .distantPast) >= now })
        }
    }

    @Test func theTalksBatchInsertOfJSONPosts() async throws {
        try await withStack { stack in
            let json = Data(#"[{"title": "Hello, world!"}, {"title": "Batch insertions"}]"#.utf8)
            let context = stack.newBackgroundContext()
            #expect(GuideBatchCode.importPosts(json, into: context) == true)
            let titles = try stack.viewContext.fetch(NSFetchRequest<GuidePost>(entityName: "Post")).compactMap(\.title)
            #expect(titles.sorted() == ["Batch insertions", "Hello, world!"])
        }
    }
}
