// The model and stacks of the results controller tests: people with a last name to
// section by, on each store type, and a recorder of delegate calls in place of a table
// view.
import Foundation
import OpenCoreData
import TestSupport
import Testing

final class RPerson: NSManagedObject {
    @Managed var firstName: String?
    @Managed var lastName: String?
    @Managed var age: Int16
    @Managed var serial: Int64
    @Managed var startDate: Date?

    /// Not an attribute: a sort descriptor cannot name it.
    var fullName: String { "\(firstName ?? "") \(lastName ?? "")" }
}

final class RPet: NSManagedObject {
    @Managed var name: String?
}

enum ResultsFixtures {
    static let storeTypes = [NSInMemoryStoreType, NSSQLiteStoreType, NSBinaryStoreType]

    static let model: NSManagedObjectModel = {
        let person = NSEntityDescription()
        person.name = "Person"
        person.managedObjectClassName = NSStringFromClass(RPerson.self)
        person.properties = [
            TestStack.attribute("firstName", .stringAttributeType),
            TestStack.attribute("lastName", .stringAttributeType),
            TestStack.attribute("age", .integer16AttributeType, optional: false, defaultValue: 0),
            TestStack.attribute("serial", .integer64AttributeType, optional: false, defaultValue: 0),
            TestStack.attribute("startDate", .dateAttributeType),
        ]
        let pet = NSEntityDescription()
        pet.name = "Pet"
        pet.managedObjectClassName = NSStringFromClass(RPet.self)
        pet.properties = [TestStack.attribute("name", .stringAttributeType)]
        let model = NSManagedObjectModel()
        model.entities = [person, pet]
        return model
    }()

    /// A coordinator with one store of `storeType` (files in a fresh temporary directory),
    /// keeping persistent history when asked.
    static func coordinator(_ storeType: String, history: Bool = false) throws -> NSPersistentStoreCoordinator {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let url = try TestScratch.directory("results")
        try coordinator.addPersistentStore(
            ofType: storeType, configurationName: nil,
            at: storeType == NSInMemoryStoreType ? nil : url.appendingPathComponent("People.store"),
            options: [PageFileStoreDurabilityOption: "off", NSPersistentHistoryTrackingKey: history as NSNumber])
        return coordinator
    }

    /// A private-queue context on `coordinator` (used from one thread at a time).
    static func context(_ coordinator: NSPersistentStoreCoordinator) -> NSManagedObjectContext {
        TestStack.context(coordinator)
    }

    @discardableResult
    static func person(
        _ first: String, _ last: String?, age: Int16, serial: Int64 = 0, in context: NSManagedObjectContext
    ) -> RPerson {
        let person = RPerson(context: context)
        person.firstName = first
        person.lastName = last
        person.age = age
        person.serial = serial
        return person
    }
}

/// Records a results controller's delegate calls in Stage4's notation, and keeps a copy
/// of the results (object IDs in sections) that it updates from the calls as a table
/// view applies a batch: old paths first removed, then new paths inserted.
final class ChangeRecorder: NSObject, NSFetchedResultsControllerDelegate {
    var events: [String] = []
    var updateDestinations: [IndexPath?] = []
    /// The rows as the recorder believes them to be (section name, object IDs).
    var rows: [(name: String, ids: [ObjectIdentifier])] = []
    /// Object identities in the current batch, with their old and new paths.
    private var batch:
        [(type: NSFetchedResultsChangeType, object: ObjectIdentifier, old: IndexPath?, new: IndexPath?)] =
            []
    private var sectionBatch: [(type: NSFetchedResultsChangeType, index: Int, name: String)] = []
    var batchesSeen = 0
    /// Whether `rows` follow the calls (after `load(_:)`).
    private var isReplaying = false
    /// What made a batch impossible to replay (a path out of range), if anything did.
    var replayFailures: [String] = []

    /// A recorder made the delegate of `controller`, which then fetches; the recorder's rows
    /// start as its results.
    static func following(_ controller: NSFetchedResultsController<some Any>) throws -> ChangeRecorder {
        let recorder = ChangeRecorder()
        controller.delegate = recorder
        try controller.performFetch()
        recorder.load(controller)
        return recorder
    }

    /// Takes the controller's results as the starting rows, which the calls then update.
    func load(_ controller: NSFetchedResultsController<some Any>) {
        isReplaying = true
        rows = (controller.sections ?? []).map { section in
            (section.name, (section.objects ?? []).map { ObjectIdentifier($0 as AnyObject) })
        }
    }

    /// The rows of `controller` now, in the recorder's form.
    static func rows(of controller: NSFetchedResultsController<some Any>) -> [(name: String, ids: [ObjectIdentifier])] {
        (controller.sections ?? []).map { section in
            (section.name, (section.objects ?? []).map { ObjectIdentifier($0 as AnyObject) })
        }
    }

    func controllerWillChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>) {
        events.append("will")
        batch = []
        sectionBatch = []
    }

    func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>,
        didChange sectionInfo: NSFetchedResultsSectionInfo,
        atSectionIndex sectionIndex: Int, for type: NSFetchedResultsChangeType
    ) {
        events.append("section \(Self.describe(type)) \(sectionIndex) \(sectionInfo.name)")
        sectionBatch.append((type, sectionIndex, sectionInfo.name))
    }

    func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>, didChange anObject: Any,
        at indexPath: IndexPath?, for type: NSFetchedResultsChangeType, newIndexPath: IndexPath?
    ) {
        let name = (anObject as? RPerson)?.firstName ?? "?"
        if type == .update {
            events.append("update \(name) \(Self.describe(indexPath))")
            updateDestinations.append(newIndexPath)
        } else {
            events.append("\(Self.describe(type)) \(name) \(Self.describe(indexPath))->\(Self.describe(newIndexPath))")
        }
        batch.append((type, ObjectIdentifier(anObject as AnyObject), indexPath, newIndexPath))
    }

    func controllerDidChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>) {
        events.append("did")
        batchesSeen += 1
        if isReplaying { applyBatch() }
    }

    private func inRange(_ path: IndexPath, inserting: Bool = false) -> Bool {
        guard path.section >= 0, path.section < rows.count, path.row >= 0 else { return false }
        return path.row < rows[path.section].ids.count + (inserting ? 1 : 0)
    }

    /// Applies the batch as a table view does (performBatchUpdates): deletions and the
    /// starts of moves at old paths (sections deleted by old index), then inserted
    /// sections, insertions and the ends of moves at new paths, in ascending order.
    private func applyBatch() {
        var removals: [IndexPath] = []
        var insertions: [(IndexPath, ObjectIdentifier)] = []
        for change in batch {
            let wantsOld = change.type != .insert
            let wantsNew = change.type == .insert || change.type == .move
            if (change.old != nil) != wantsOld || (wantsNew && change.new == nil)
                || (change.type == .delete && change.new != nil)
            {
                replayFailures.append(
                    "\(Self.describe(change.type)) with paths \(change.old as Any) \(change.new as Any)")
                continue
            }
            switch change.type {
            case .delete: removals.append(change.old ?? IndexPath())
            case .insert: insertions.append((change.new ?? IndexPath(), change.object))
            case .move:
                removals.append(change.old ?? IndexPath())
                insertions.append((change.new ?? IndexPath(), change.object))
            case .update:
                guard let old = change.old, inRange(old), rows[old.section].ids[old.row] == change.object else {
                    replayFailures.append("update at \(String(describing: change.old)) names another row")
                    continue
                }
            }
        }
        // Rows go first (by old paths), then deleted sections (by old index).
        for path in removals.sorted(by: { ($0.section, $0.row) > ($1.section, $1.row) }) {
            guard inRange(path) else {
                replayFailures.append("removal at \(path) is out of range")
                continue
            }
            rows[path.section].ids.remove(at: path.row)
        }
        for section in sectionBatch.filter({ $0.type == .delete }).sorted(by: { $0.index > $1.index }) {
            guard section.index < rows.count, rows[section.index].ids.isEmpty else {
                replayFailures.append("deleted section \(section.index) is missing or still has rows")
                continue
            }
            rows.remove(at: section.index)
        }
        for section in sectionBatch.filter({ $0.type == .insert }).sorted(by: { $0.index < $1.index }) {
            guard section.index <= rows.count else {
                replayFailures.append("inserted section \(section.index) is out of range")
                continue
            }
            rows.insert((section.name, []), at: section.index)
        }
        for (path, object) in insertions.sorted(by: { ($0.0.section, $0.0.row) < ($1.0.section, $1.0.row) }) {
            guard inRange(path, inserting: true) else {
                replayFailures.append("insertion at \(path) is out of range")
                continue
            }
            rows[path.section].ids.insert(object, at: path.row)
        }
    }

    static func describe(_ type: NSFetchedResultsChangeType) -> String {
        switch type {
        case .insert: "insert"
        case .delete: "delete"
        case .move: "move"
        case .update: "update"
        }
    }

    static func describe(_ path: IndexPath?) -> String {
        guard let path else { return "nil" }
        return "[\(path.section),\(path.row)]"
    }
}
