import Foundation
import Testing

@testable import OpenCoreData

/// The fetched results controller: sections, index paths, every change kind with the
/// exact paths and order Core Data documents, merges, the difference and snapshot
/// delegates, caches and reset — on every store type.
@Suite struct FetchedResultsControllerTests {
    /// Ann, Bob (Adams), Cid, Dee, Kid (Brown), Eve (Clark), saved; Kid is under 18.
    struct People {
        let coordinator: NSPersistentStoreCoordinator
        let context: NSManagedObjectContext
        let ann: RPerson, bob: RPerson, cid: RPerson, dee: RPerson, eve: RPerson, kid: RPerson

        init(_ storeType: String) throws {
            coordinator = try ResultsFixtures.coordinator(storeType)
            context = ResultsFixtures.context(coordinator)
            ann = ResultsFixtures.person("Ann", "Adams", age: 30, in: context)
            bob = ResultsFixtures.person("Bob", "Adams", age: 40, in: context)
            cid = ResultsFixtures.person("Cid", "Brown", age: 25, in: context)
            dee = ResultsFixtures.person("Dee", "Brown", age: 35, in: context)
            eve = ResultsFixtures.person("Eve", "Clark", age: 50, in: context)
            kid = ResultsFixtures.person("Kid", "Brown", age: 10, in: context)
            try context.save()
        }

        /// Adults by last and first name, sectioned by last name.
        func controller(cacheName: String? = nil, batchSize: Int = 0) -> NSFetchedResultsController<RPerson> {
            let request = NSFetchRequest<RPerson>(entityName: "Person")
            request.predicate = NSPredicate(format: "age >= %d", 18)
            request.sortDescriptors = [
                NSSortDescriptor(key: "lastName", ascending: true), NSSortDescriptor(key: "firstName", ascending: true),
            ]
            request.fetchBatchSize = batchSize
            return NSFetchedResultsController(
                fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: "lastName",
                cacheName: cacheName)
        }
    }

    @Test(arguments: ResultsFixtures.storeTypes)
    func sectionsObjectsAndIndexPaths(storeType: String) throws {
        let people = try People(storeType)
        let controller = people.controller()
        #expect(controller.fetchedObjects == nil && controller.sections == nil)
        try controller.performFetch()
        #expect(controller.fetchedObjects?.compactMap(\.firstName) == ["Ann", "Bob", "Cid", "Dee", "Eve"])
        let sections = try #require(controller.sections)
        #expect(sections.map(\.name) == ["Adams", "Brown", "Clark"])
        #expect(sections.map(\.numberOfObjects) == [2, 2, 1])
        #expect(sections.map(\.indexTitle) == ["A", "B", "C"])
        #expect((sections[0].objects as? [RPerson])?.compactMap(\.firstName) == ["Ann", "Bob"])
        #expect(controller.sectionIndexTitles == ["A", "B", "C"])
        #expect(controller.section(forSectionIndexTitle: "B", at: 1) == 1)
        #expect(controller.object(at: IndexPath(row: 1, section: 1)) === people.dee)
        #expect(controller.indexPath(forObject: people.cid) == IndexPath(row: 0, section: 1))
        #expect(controller.indexPath(forObject: people.eve) == IndexPath(row: 0, section: 2))
        #expect(controller.indexPath(forObject: people.kid) == nil)
    }

    @Test(arguments: ResultsFixtures.storeTypes)
    func everyChangeKindWithExactPathsAndOrder(storeType: String) throws {
        let people = try People(storeType)
        let context = people.context
        let controller = people.controller()
        let log = try ChangeRecorder.following(controller)

        func expect(
            _ name: String, _ expected: [String], sourceLocation: SourceLocation = #_sourceLocation,
            _ change: () throws -> Void
        ) throws {
            log.events.removeAll()
            log.updateDestinations.removeAll()
            try change()
            context.processPendingChanges()
            #expect(log.events == expected, "\(name)", sourceLocation: sourceLocation)
            #expect(log.replayFailures.isEmpty, "\(name): \(log.replayFailures)", sourceLocation: sourceLocation)
            #expect(
                log.rows.map(\.name) == ChangeRecorder.rows(of: controller).map(\.name)
                    && log.rows.map(\.ids) == ChangeRecorder.rows(of: controller).map(\.ids),
                "\(name): replaying the calls gives the results", sourceLocation: sourceLocation)
            try context.save()
        }

        var abe: RPerson?
        try expect("insert", ["will", "insert Abe nil->[0,0]", "did"]) {
            abe = ResultsFixtures.person("Abe", "Adams", age: 20, in: context)
        }
        try expect("delete", ["will", "delete Bob [0,2]->nil", "did"]) { context.delete(people.bob) }
        try expect("update in place", ["will", "update Ann [0,1]", "did"]) { people.ann.age = 31 }
        #expect(log.updateDestinations == [IndexPath(row: 1, section: 0)])
        try expect("update that moves", ["will", "move Zed [0,0]->[0,1]", "did"]) { abe?.firstName = "Zed" }
        try expect("update out of the predicate", ["will", "delete Dee [1,1]->nil", "did"]) { people.dee.age = 12 }
        try expect("update into the predicate", ["will", "insert Kid nil->[1,1]", "did"]) { people.kid.age = 18 }
        try expect("new section", ["will", "section insert 1 Baker", "insert Dan nil->[1,0]", "did"]) {
            ResultsFixtures.person("Dan", "Baker", age: 40, in: context)
        }
        try expect("emptied section", ["will", "section delete 3 Clark", "delete Eve [3,0]->nil", "did"]) {
            context.delete(people.eve)
        }
        try expect("move to another section", ["will", "move Aaa [2,0]->[0,0]", "did"]) {
            people.cid.lastName = "Adams"
            people.cid.firstName = "Aaa"
        }
        try expect("nothing the request sees", []) {
            let pet = RPet(context: context)
            pet.name = "Rex"
        }
        try expect(
            "several at once",
            [
                "will", "section delete 1 Baker", "section insert 2 Young", "delete Dan [1,0]->nil",
                "insert Yan nil->[2,0]", "move A [0,1]->[0,0]", "update Zed [0,2]", "did",
            ]
        ) {
            context.delete(try #require(controller.fetchedObjects?.first { $0.firstName == "Dan" }))
            ResultsFixtures.person("Yan", "Young", age: 30, in: context)
            people.ann.firstName = "A"
            abe?.age = 77
        }
        #expect(controller.sections?.map(\.name) == ["Adams", "Brown", "Young"])
        #expect(controller.fetchedObjects?.compactMap(\.firstName) == ["A", "Aaa", "Zed", "Kid", "Yan"])
    }

    @Test(arguments: ResultsFixtures.storeTypes)
    func anInsertedObjectChangedAfterItsInsertWasReportedMoves(storeType: String) throws {
        let people = try People(storeType)
        let controller = people.controller()
        let log = try ChangeRecorder.following(controller)
        let new = ResultsFixtures.person("Abe", "Adams", age: 20, in: people.context)
        people.context.processPendingChanges()
        log.events.removeAll()
        new.firstName = "Zed"
        people.context.processPendingChanges()
        #expect(log.events == ["will", "move Zed [0,0]->[0,2]", "did"])
        people.context.delete(new)
        log.events.removeAll()
        people.context.processPendingChanges()
        #expect(log.events == ["will", "delete Zed [0,2]->nil", "did"])
        #expect(controller.fetchedObjects?.count == 5)
    }

    @Test(arguments: ResultsFixtures.storeTypes)
    func rollbackIsReportedAtTheNextBatch(storeType: String) throws {
        let people = try People(storeType)
        let controller = people.controller()
        let log = try ChangeRecorder.following(controller)
        people.ann.lastName = "Zulu"
        people.context.processPendingChanges()
        #expect(controller.sections?.map(\.name) == ["Adams", "Brown", "Clark", "Zulu"])
        log.events.removeAll()
        people.context.rollback()
        people.context.processPendingChanges()
        let pet = RPet(context: people.context)
        pet.name = "Any change"
        people.context.processPendingChanges()
        #expect(log.events == ["will", "section delete 3 Zulu", "move Ann [3,0]->[0,0]", "did"])
        #expect(controller.indexPath(forObject: people.ann) == IndexPath(row: 0, section: 0))
    }

    @Test(arguments: ResultsFixtures.storeTypes)
    func backgroundSavesArriveThroughMerges(storeType: String) throws {
        let people = try People(storeType)
        let controller = people.controller()
        let log = try ChangeRecorder.following(controller)
        let background = ResultsFixtures.context(people.coordinator)
        let saves = NotificationLog([.NSManagedObjectContextDidSave], from: background)
        try background.performAndWait {
            let eve = try #require(try background.existingObject(with: people.eve.objectID) as? RPerson)
            eve.age = 5
            let dee = try #require(try background.existingObject(with: people.dee.objectID) as? RPerson)
            dee.firstName = "Ada"
            ResultsFixtures.person("Bea", "Brown", age: 44, in: background)
            try background.save()
        }
        log.events.removeAll()
        people.context.mergeChanges(fromContextDidSave: try #require(saves.all.last))
        #expect(
            log.events == [
                "will", "section delete 2 Clark", "delete Eve [2,0]->nil", "insert Bea nil->[1,1]",
                "move Ada [1,1]->[1,0]", "did",
            ])
        #expect(log.rows.map(\.ids) == ChangeRecorder.rows(of: controller).map(\.ids))
        #expect(log.replayFailures.isEmpty, "\(log.replayFailures)")
        #expect(controller.fetchedObjects?.compactMap(\.firstName) == ["Ann", "Bob", "Ada", "Bea", "Cid"])
    }

    @Test(arguments: ResultsFixtures.storeTypes)
    func unregisteredObjectsThatStartToMatchAreInsertedAndOthersStayUnregistered(storeType: String) throws {
        let people = try People(storeType)
        let context = ResultsFixtures.context(people.coordinator)
        let request = NSFetchRequest<RPerson>(entityName: "Person")
        request.predicate = NSPredicate(format: "age >= %d", 45)
        request.sortDescriptors = [NSSortDescriptor(key: "firstName", ascending: true)]
        let controller = NSFetchedResultsController(
            fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: nil, cacheName: nil)
        let log = try ChangeRecorder.following(controller)
        #expect(controller.fetchedObjects?.compactMap(\.firstName) == ["Eve"])
        let registeredBefore = context.registeredObjects.count
        let background = ResultsFixtures.context(people.coordinator)
        let saves = NotificationLog([.NSManagedObjectContextDidSave], from: background)
        try background.performAndWait {
            for id in [people.bob.objectID, people.cid.objectID] {
                let person = try #require(try background.existingObject(with: id) as? RPerson)
                person.age += 20
            }
            ResultsFixtures.person("Old", "Timer", age: 90, in: background)
            ResultsFixtures.person("Young", "Timer", age: 9, in: background)
            try background.save()
        }
        context.mergeChanges(fromContextDidSave: try #require(saves.all.last))
        #expect(
            log.events == ["will", "insert Bob nil->[0,0]", "insert Cid nil->[0,1]", "insert Old nil->[0,3]", "did"])
        // Bob, Cid and Old are registered now; Young, who does not match, never was.
        #expect(controller.fetchedObjects?.compactMap(\.firstName) == ["Bob", "Cid", "Eve", "Old"])
        #expect(context.registeredObjects.count == registeredBefore + 3)
        #expect(!context.registeredObjects.contains { ($0 as? RPerson)?.firstName == "Young" })
    }

    @Test(arguments: ResultsFixtures.storeTypes)
    func automaticMergesReachTheControllerOnItsQueue(storeType: String) throws {
        let people = try People(storeType)
        let context = ResultsFixtures.context(people.coordinator)
        context.automaticallyMergesChangesFromParent = true
        let (controller, log) = try context.performAndWait {
            let controller = NSFetchedResultsController(
                fetchRequest: { () -> NSFetchRequest<RPerson> in
                    let request = NSFetchRequest<RPerson>(entityName: "Person")
                    request.sortDescriptors = [NSSortDescriptor(key: "firstName", ascending: true)]
                    return request
                }(), managedObjectContext: context, sectionNameKeyPath: nil, cacheName: nil)
            let log = try ChangeRecorder.following(controller)
            return (controller, log)
        }
        let background = ResultsFixtures.context(people.coordinator)
        try background.performAndWait {
            ResultsFixtures.person("Amy", "Adams", age: 22, in: background)
            try background.save()
        }
        // The merge is queued on the context's queue: wait for it there.
        let events = context.performAndWait { log.events }
        #expect(events == ["will", "insert Amy nil->[0,0]", "did"])
        #expect(
            context.performAndWait {
                log.replayFailures.isEmpty && log.rows.map(\.ids) == ChangeRecorder.rows(of: controller).map(\.ids)
            })
        #expect(context.performAndWait { controller.fetchedObjects?.count } == 7)
    }

    @Test(arguments: ResultsFixtures.storeTypes)
    func mergedHistoryReachesTheController(storeType: String) throws {
        let coordinator = try ResultsFixtures.coordinator(storeType, history: true)
        let writer = ResultsFixtures.context(coordinator)
        let ann = ResultsFixtures.person("Ann", "Adams", age: 30, in: writer)
        try writer.save()
        let reader = ResultsFixtures.context(coordinator)
        let request = NSFetchRequest<RPerson>(entityName: "Person")
        request.predicate = NSPredicate(format: "age >= %d", 18)
        request.sortDescriptors = [NSSortDescriptor(key: "firstName", ascending: true)]
        let controller = NSFetchedResultsController(
            fetchRequest: request, managedObjectContext: reader, sectionNameKeyPath: nil, cacheName: nil)
        let log = try ChangeRecorder.following(controller)
        #expect(controller.fetchedObjects?.compactMap(\.firstName) == ["Ann"])
        let token = coordinator.currentPersistentHistoryToken(fromStores: nil)
        ResultsFixtures.person("Bob", "Baker", age: 40, in: writer)
        let kid = ResultsFixtures.person("Kid", "Baker", age: 10, in: writer)
        ann.age = 5
        try writer.save()
        // The reader learns of the writer's save only from the history, as another process would.
        let history = try reader.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: token))
        let transactions = (history as? NSPersistentHistoryResult)?.result as? [NSPersistentHistoryTransaction] ?? []
        #expect(transactions.count == 1)
        for transaction in transactions { reader.mergeChanges(fromContextDidSave: transaction.objectIDNotification()) }
        #expect(log.events == ["will", "delete Ann [0,0]->nil", "insert Bob nil->[0,0]", "did"])
        #expect(log.replayFailures.isEmpty && log.rows.map(\.ids) == ChangeRecorder.rows(of: controller).map(\.ids))
        #expect(reader.registeredObject(for: kid.objectID) == nil, "a row that does not match stays unregistered")
    }
}
