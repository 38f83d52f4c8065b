// A fetched results controller over 100,000 people (the peer benchmark's Person model,
// WriteWorkloads.swift) on the default store, in sections by last name, sorted by last
// name and email. Each round another context saves changes to 100 of them (a new email,
// so each moves within its section; every fifth also a new last name, so it changes
// section) and the controller's context merges the save: the controller's update is
// measured with the merge, then a refetch of the same controller (performFetch()) over
// the same data. The update should cost in proportion to the 100 changes (times log n),
// the refetch in proportion to the 100,000; the ratio says how far apart they are.
import Foundation
import OpenCoreData
import TestSupport

/// Counts the changes a controller reports (as a table view would apply them).
final class ResultsBenchDelegate: NSObject, NSFetchedResultsControllerDelegate {
    var changes = 0
    var batches = 0

    func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>, didChange anObject: Any,
        at indexPath: IndexPath?, for type: NSFetchedResultsChangeType, newIndexPath: IndexPath?
    ) {
        changes += 1
    }

    func controllerDidChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>) {
        batches += 1
    }
}

/// The did-save notification of the writing context, kept for the merge.
private final class SavedNotification: @unchecked Sendable {
    var notification: Notification?
}

enum ResultsControllerBench {
    static let lastNames = ["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Johnson"]

    /// 100 people of `ids`, changed in `writer` and saved; returns the did-save notification.
    @inline(never) static func saveChanges(
        round: Int, ids: [NSManagedObjectID], writer: NSManagedObjectContext, random: inout SeededRandom
    ) throws -> Notification {
        let saved = SavedNotification()
        let observer = NotificationCenter.default.addObserver(
            forName: .NSManagedObjectContextDidSave, object: writer, queue: nil
        ) { saved.notification = $0 }
        defer { NotificationCenter.default.removeObserver(observer) }
        for change in 0..<100 {
            guard let person = writer.object(with: ids[Int(random.next() % UInt64(ids.count))]) as? WriteBenchPerson
            else { throw BenchFailure("results controller: not a person") }
            person.email = "moved\(round).\(change).\(random.next() % 1_000_000)@example.com"
            if change % 5 == 0 { person.lastName = lastNames[Int(random.next() % UInt64(lastNames.count))] }
        }
        try writer.save()
        writer.reset()
        guard let notification = saved.notification else { throw BenchFailure("results controller: no did-save") }
        return notification
    }

    @inline(never) static func merge(_ notification: Notification, into context: NSManagedObjectContext) {
        context.mergeChanges(fromContextDidSave: notification)
    }

    @inline(never) static func refetch(_ controller: NSFetchedResultsController<WriteBenchPerson>) throws {
        try controller.performFetch()
    }
}

extension Workload {
    static let storeResultsController = Workload(
        name: "store/results-controller",
        summary: "a results controller over 100,000 objects updated after a 100-object save, against a refetch"
    ) { context in
        let count = context.scaled(100_000)
        let (coordinator, loader) = try BatchBench.open(context.path("results.store"))
        try BatchBench.insert((0..<count).map(BatchBench.dictionary), into: loader)
        let view = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        view.persistentStoreCoordinator = coordinator
        let writer = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        writer.persistentStoreCoordinator = coordinator
        let request = NSFetchRequest<WriteBenchPerson>(entityName: "Person")
        request.sortDescriptors = [
            NSSortDescriptor(key: "lastName", ascending: true), NSSortDescriptor(key: "email", ascending: true),
        ]
        let controller = NSFetchedResultsController(
            fetchRequest: request, managedObjectContext: view, sectionNameKeyPath: "lastName", cacheName: nil)
        let delegate = ResultsBenchDelegate()
        controller.delegate = delegate
        context.progress("results controller: first fetch of \(count)")
        let firstFetch = try measureSeconds { try ResultsControllerBench.refetch(controller) }
        let ids = (controller.fetchedObjects ?? []).map(\.objectID)
        var random = SeededRandom(seed: 0x5EC7_10A5)
        var updates: [Double] = []
        var refetches: [Double] = []
        for round in 0..<7 {
            context.progress("results controller: round \(round)")
            let notification = try ResultsControllerBench.saveChanges(
                round: round, ids: ids, writer: writer, random: &random)
            let batchesBefore = delegate.batches
            updates.append(measureSeconds { ResultsControllerBench.merge(notification, into: view) })
            guard delegate.batches == batchesBefore + 1 else { throw BenchFailure("results controller: no update") }
            refetches.append(try measureSeconds { try ResultsControllerBench.refetch(controller) })
        }
        for store in coordinator.persistentStores { try coordinator.remove(store) }
        let update = updates.sorted()[updates.count / 2]
        let refetch = refetches.sorted()[refetches.count / 2]
        return [
            Measurement(label: "first fetch of \(count) in sections", value: firstFetch * 1000, unit: "ms"),
            Measurement(label: "merge + controller update, 100 changed (median)", value: update * 1000, unit: "ms"),
            Measurement(label: "refetch of \(count) (median)", value: refetch * 1000, unit: "ms"),
            Measurement(label: "refetch / update", value: refetch / update, unit: "x", better: .higher),
            Measurement(label: "changes reported", value: Double(delegate.changes), unit: "changes", better: .neither),
        ]
    }
}
