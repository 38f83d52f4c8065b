import Foundation
import Testing

@testable import OpenCoreData

/// Implements only the snapshot method (which replaces every other one).
final class SnapshotRecorder: NSObject, NSFetchedResultsControllerDelegate {
    var snapshots: [NSDiffableDataSourceSnapshot<String, NSManagedObjectID>] = []
    var otherCalls = 0

    func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>,
        didChangeContentWith snapshot: NSDiffableDataSourceSnapshotReference
    ) {
        snapshots.append(snapshot as NSDiffableDataSourceSnapshot<String, NSManagedObjectID>)
    }

    func controllerWillChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>) {
        otherCalls += 1
    }

    func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>,
        didChangeContentWith diff: CollectionDifference<NSManagedObjectID>
    ) {
        otherCalls += 1
    }
}

/// Gives its own section index titles.
final class TitleRecorder: NSObject, NSFetchedResultsControllerDelegate {
    func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>,
        sectionIndexTitleForSectionName sectionName: String
    ) -> String? {
        "#" + sectionName.prefix(2)
    }
}

/// The delegate's other forms (snapshot, difference, index titles), failing fetches,
/// reset(), the section cache and batched fetching.
@Suite struct FetchedResultsDelegateFormsTests {
    typealias People = FetchedResultsControllerTests.People

    @Test(arguments: ResultsFixtures.storeTypes)
    func theSnapshotMethodReplacesEveryOtherAndMarksUpdates(storeType: String) throws {
        let people = try People(storeType)
        let controller = people.controller()
        let recorder = SnapshotRecorder()
        controller.delegate = recorder
        try controller.performFetch()
        // performFetch() hands the first snapshot over.
        #expect(recorder.snapshots.count == 1)
        #expect(recorder.snapshots.last?.sectionIdentifiers == ["Adams", "Brown", "Clark"])
        #expect(
            recorder.snapshots.last?.itemIdentifiers(inSection: "Brown") == [people.cid.objectID, people.dee.objectID])
        people.ann.age = 33
        people.eve.lastName = "Zulu"
        people.context.processPendingChanges()
        let snapshot = try #require(recorder.snapshots.last)
        #expect(recorder.snapshots.count == 2)
        #expect(snapshot.sectionIdentifiers == ["Adams", "Brown", "Zulu"])
        #expect(snapshot.numberOfItems == 5 && snapshot.numberOfItems(inSection: "Zulu") == 1)
        #expect(snapshot.reloadedItemIdentifiers == [people.ann.objectID])
        #expect(snapshot.indexOfItem(people.eve.objectID) == 4)
        #expect(snapshot.sectionIdentifier(containingItem: people.eve.objectID) == "Zulu")
        #expect(recorder.otherCalls == 0)
    }

    @Test(arguments: ResultsFixtures.storeTypes)
    func theDifferenceMethodOnlyWithoutSections(storeType: String) throws {
        let people = try People(storeType)
        let request = NSFetchRequest<RPerson>(entityName: "Person")
        request.sortDescriptors = [NSSortDescriptor(key: "age", ascending: true)]
        let flat = NSFetchedResultsController(
            fetchRequest: request, managedObjectContext: people.context, sectionNameKeyPath: nil, cacheName: nil)
        let differences = DifferenceRecorder()
        flat.delegate = differences
        try flat.performFetch()
        differences.ids = flat.fetchedObjects?.map(\.objectID) ?? []
        // A sectioned controller with a delegate implementing both gets the per-change calls.
        let sectioned = people.controller()
        let both = BothFormsRecorder()
        sectioned.delegate = both
        try sectioned.performFetch()

        people.kid.age = 99
        people.context.delete(people.cid)
        people.ann.firstName = "Annie"
        people.context.processPendingChanges()
        #expect(differences.differences == 1 && differences.failures.isEmpty)
        #expect(differences.ids == flat.fetchedObjects?.map(\.objectID))
        #expect(both.differences == 0)
        #expect(both.events == ["will", "delete Cid [1,0]->nil", "insert Kid nil->[1,1]", "update Annie [0,0]", "did"])
    }

    @Test func customSectionIndexTitles() throws {
        let people = try People(NSInMemoryStoreType)
        let controller = people.controller()
        let recorder = TitleRecorder()
        controller.delegate = recorder
        try controller.performFetch()
        #expect(controller.sectionIndexTitles == ["#Ad", "#Br", "#Cl"])
        #expect(controller.sections?.map(\.indexTitle) == ["#Ad", "#Br", "#Cl"])
        #expect(controller.section(forSectionIndexTitle: "#Cl", at: 2) == 2)
        // The controller's own method is unchanged; without the delegate, the defaults come back.
        #expect(controller.sectionIndexTitle(forSectionName: "Brown") == "B")
        controller.delegate = nil
        #expect(controller.sectionIndexTitles == ["A", "B", "C"])
    }

    @Test func requestsAControllerCannotKeepFailPerformFetch() throws {
        let people = try People(NSInMemoryStoreType)
        let unsorted = NSFetchRequest<RPerson>(entityName: "Person")
        let noSort = NSFetchedResultsController(
            fetchRequest: unsorted, managedObjectContext: people.context, sectionNameKeyPath: nil, cacheName: nil)
        #expect {
            try noSort.performFetch()
        } throws: { error in
            (error as NSError).code == NSCoreDataError && "\(error)".contains("sort descriptors")
        }
        let byFirstName = NSFetchRequest<RPerson>(entityName: "Person")
        byFirstName.sortDescriptors = [NSSortDescriptor(key: "firstName", ascending: true)]
        let badSections = NSFetchedResultsController(
            fetchRequest: byFirstName, managedObjectContext: people.context, sectionNameKeyPath: "lastName",
            cacheName: nil)
        #expect {
            try badSections.performFetch()
        } throws: { error in
            (error as NSError).code == NSCoreDataError && "\(error)".contains("out of order section name")
        }
        #expect(badSections.fetchedObjects == nil && badSections.sections == nil)
        // A first sort that groups like the section key (here: descending) is accepted.
        let grouped = NSFetchRequest<RPerson>(entityName: "Person")
        grouped.sortDescriptors = [NSSortDescriptor(key: "lastName", ascending: false)]
        let descending = NSFetchedResultsController(
            fetchRequest: grouped, managedObjectContext: people.context, sectionNameKeyPath: "lastName", cacheName: nil)
        try descending.performFetch()
        #expect(descending.sections?.map(\.name) == ["Clark", "Brown", "Adams"])
    }

    @Test(arguments: ResultsFixtures.storeTypes)
    func afterResetNothingIsReportedUntilPerformFetch(storeType: String) throws {
        let people = try People(storeType)
        let controller = people.controller()
        let log = try ChangeRecorder.following(controller)
        people.context.reset()
        ResultsFixtures.person("Abe", "Adams", age: 20, in: people.context)
        people.context.processPendingChanges()
        #expect(log.events.isEmpty)
        try controller.performFetch()
        #expect(controller.fetchedObjects?.compactMap(\.firstName) == ["Abe", "Ann", "Bob", "Cid", "Dee", "Eve"])
        #expect(controller.fetchedObjects?.allSatisfy { $0.managedObjectContext === people.context } == true)
        ResultsFixtures.person("Ben", "Adams", age: 20, in: people.context)
        people.context.processPendingChanges()
        #expect(log.events == ["will", "insert Ben nil->[0,2]", "did"])
    }

    // Serialized: the last step deletes every cache, which would race with the other case.
    @Test(.serialized, arguments: [NSSQLiteStoreType, NSBinaryStoreType])
    func theSectionCacheIsUsedUntilTheStoreChanges(storeType: String) throws {
        let people = try People(storeType)
        let name = "results-cache-\(UUID().uuidString)"
        defer { NSFetchedResultsController<RPerson>.deleteCache(withName: name) }
        try people.controller(cacheName: name).performFetch()
        let url = FetchedResultsCache.url(forName: name)
        #expect(FileManager.default.fileExists(atPath: url.path))
        // A cache whose sections differ (but add up) is believed while the store is unchanged...
        var file = try JSONDecoder().decode(FetchedResultsCache.File.self, from: Data(contentsOf: url))
        file.sections = [.init(name: "Adams", count: 3), .init(name: "Brown", count: 2)]
        try file.encoded().write(to: url)
        let cached = people.controller(cacheName: name)
        try cached.performFetch()
        #expect(cached.sections?.map(\.name) == ["Adams", "Brown"])
        // ...and read again once a save changed the store.
        people.kid.age = 11
        try people.context.save()
        let fresh = people.controller(cacheName: name)
        try fresh.performFetch()
        #expect(fresh.sections?.map(\.name) == ["Adams", "Brown", "Clark"])
        // deleteCache(withName: nil) deletes every cache.
        NSFetchedResultsController<RPerson>.deleteCache(withName: nil)
        #expect(!FileManager.default.fileExists(atPath: url.path))
    }

    @Test(arguments: [NSSQLiteStoreType, NSBinaryStoreType])
    func aBatchedFetchLeavesRowsBeyondTheFirstBatchFaults(storeType: String) throws {
        let people = try People(storeType)
        for index in 0..<40 { ResultsFixtures.person("P\(index)", "L\(index / 4)", age: 30, in: people.context) }
        try people.context.save()
        let context = ResultsFixtures.context(people.coordinator)
        let request = NSFetchRequest<RPerson>(entityName: "Person")
        request.sortDescriptors = [
            NSSortDescriptor(key: "lastName", ascending: true), NSSortDescriptor(key: "firstName", ascending: true),
        ]
        request.fetchBatchSize = 5
        let controller = NSFetchedResultsController(
            fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: "lastName", cacheName: nil)
        controller.delegate = ChangeRecorder()
        try controller.performFetch()
        #expect(controller.sections?.count == 13)
        let loaded = context.registeredObjects.filter { !$0.isFault }.count
        #expect(loaded <= 5, "\(loaded) objects loaded by a fetch in batches of 5")
        #expect((controller.object(at: IndexPath(row: 2, section: 7)) as RPerson).firstName == "P18")
    }

    @Test func sortDescriptorsFromKeyPaths() throws {
        let people = try People(NSInMemoryStoreType)
        let descriptor = NSSortDescriptor(keyPath: \RPerson.age, ascending: false)
        #expect(descriptor.key == "age" && !descriptor.ascending)
        #expect(NSSortDescriptor(keyPath: \RPerson.startDate, ascending: true).key == "startDate")
        #expect(NSSortDescriptor(keyPath: \RPerson.lastName, ascending: true).key == "lastName")
        let request = NSFetchRequest<RPerson>(entityName: "Person")
        request.sortDescriptors = [descriptor]
        #expect(
            try people.context.fetch(request).compactMap(\.firstName) == ["Eve", "Bob", "Dee", "Ann", "Cid", "Kid"])
        // A key path that is not an @Managed attribute names no key: a fetch sorting by it fails.
        let unresolved = NSSortDescriptor(keyPath: \RPerson.fullName, ascending: true)
        #expect(unresolved.key?.contains("unresolved") == true)
        request.sortDescriptors = [unresolved]
        #expect(throws: (any Error).self) { try people.context.fetch(request) }
    }
}

/// Implements the difference method and the per-change object method.
final class BothFormsRecorder: NSObject, NSFetchedResultsControllerDelegate {
    var differences = 0
    var events: [String] = []

    func controllerWillChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>) {
        events.append("will")
    }

    func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>, didChange anObject: Any,
        at indexPath: IndexPath?, for type: NSFetchedResultsChangeType, newIndexPath: IndexPath?
    ) {
        let name = (anObject as? RPerson)?.firstName ?? "?"
        if type == .update {
            events.append("update \(name) \(ChangeRecorder.describe(indexPath))")
        } else {
            events.append(
                "\(ChangeRecorder.describe(type)) \(name) "
                    + "\(ChangeRecorder.describe(indexPath))->\(ChangeRecorder.describe(newIndexPath))")
        }
    }

    func controllerDidChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>) {
        events.append("did")
    }

    func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>,
        didChangeContentWith diff: CollectionDifference<NSManagedObjectID>
    ) {
        differences += 1
    }
}
