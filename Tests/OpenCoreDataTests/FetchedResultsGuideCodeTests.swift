// The guides' results controller code (../shared/reference: core-data-guide.txt
// "Fetched Results Controller", core-data-skill.md "NSFetchedResultsController",
// making-apps-with-core-data.md's difference delegate), as written there, with UIKit's
// table view, collection view and diffable data source replaced by recorders that apply
// the calls as UIKit does and keep the rows. After changes, the rows must be the
// controller's. (`@unknown default:` is left out: NSFetchedResultsChangeType is an
// exhaustive Swift enum here, and the case would be a never-executed warning.)
import Foundation
import Testing

@testable import OpenCoreData

/// UITableView's row animation, as the guide names it.
enum RowAnimation {
    case automatic
}

/// A table view's batch updates: rows deleted at old paths, inserted at new ones, applied
/// at endUpdates() as UITableView applies them.
final class RecordingTableView {
    /// The objects in each row (by identity: a save changes inserted objects' IDs).
    var rows: [[ObjectIdentifier]] = []
    var reloads = 0
    private var deletions: [IndexPath] = []
    private var insertions: [IndexPath] = []
    private let source: () -> [[ObjectIdentifier]]

    /// `source` gives the data source's rows at a path (what `cellForRowAt` would read).
    init(source: @escaping () -> [[ObjectIdentifier]]) {
        self.source = source
    }

    func reloadData() { rows = source() }
    func beginUpdates() {
        deletions = []
        insertions = []
    }
    func insertRows(at paths: [IndexPath], with animation: RowAnimation) { insertions += paths }
    func deleteRows(at paths: [IndexPath], with animation: RowAnimation) { deletions += paths }
    func reloadRows(at paths: [IndexPath], with animation: RowAnimation) { reloads += paths.count }

    /// Deletes at old paths (last first), then inserts the data source's rows at new paths.
    func endUpdates() {
        let now = source()
        for path in deletions.sorted(by: { ($0.section, $0.row) > ($1.section, $1.row) }) {
            guard path.section < rows.count, path.row < rows[path.section].count else {
                failures.append("delete at \(path)")
                continue
            }
            rows[path.section].remove(at: path.row)
        }
        while rows.count < now.count { rows.append([]) }
        for path in insertions.sorted(by: { ($0.section, $0.row) < ($1.section, $1.row) }) {
            guard path.section < now.count, path.row < now[path.section].count, path.row <= rows[path.section].count
            else {
                failures.append("insert at \(path)")
                continue
            }
            rows[path.section].insert(now[path.section][path.row], at: path.row)
        }
    }

    /// Updates UITableView would have refused (paths out of range).
    var failures: [String] = []
}

/// The guide's PeopleViewController, a recorder in place of its table view.
final class PeopleViewController: NSObject {
    private var tableView: RecordingTableView!
    let context: NSManagedObjectContext

    init(context: NSManagedObjectContext) {
        self.context = context
        super.init()
        tableView = RecordingTableView { [unowned self] in
            (0..<self.numberOfSections()).map { section in
                (0..<self.numberOfRows(inSection: section)).map {
                    ObjectIdentifier(self.fetchedResultsController.object(at: IndexPath(row: $0, section: section)))
                }
            }
        }
    }

    lazy var fetchedResultsController: NSFetchedResultsController<RPerson> = {
        let fetchRequest = NSFetchRequest<RPerson>(entityName: "Person")
        fetchRequest.sortDescriptors = [
            NSSortDescriptor(key: "lastName", ascending: true),
            NSSortDescriptor(key: "firstName", ascending: true),
        ]
        let controller = NSFetchedResultsController(
            fetchRequest: fetchRequest,
            managedObjectContext: context,
            sectionNameKeyPath: nil,
            cacheName: "PeopleCache"
        )
        controller.delegate = self
        return controller
    }()

    var rows: [[ObjectIdentifier]] { tableView.rows }
    var failures: [String] { tableView.failures }
    var reloads: Int { tableView.reloads }
    var events: [String] = []

    func viewDidLoad() {
        performFetch()
    }

    private func performFetch() {
        do {
            try fetchedResultsController.performFetch()
            tableView.reloadData()
        } catch {
            print("Failed to fetch: \(error)")
        }
    }

    func numberOfSections() -> Int {
        return fetchedResultsController.sections?.count ?? 0
    }

    func numberOfRows(inSection section: Int) -> Int {
        return fetchedResultsController.sections?[section].numberOfObjects ?? 0
    }

    func cellText(at indexPath: IndexPath) -> String {
        let person = fetchedResultsController.object(at: indexPath)
        return person.fullName
    }
}

extension PeopleViewController: NSFetchedResultsControllerDelegate {
    func controllerWillChangeContent(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>
    ) {
        tableView.beginUpdates()
    }

    func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>,
        didChange anObject: Any,
        at indexPath: IndexPath?,
        for type: NSFetchedResultsChangeType,
        newIndexPath: IndexPath?
    ) {
        events.append("\(type) \(String(describing: indexPath)) \(String(describing: newIndexPath))")
        switch type {
        case .insert:
            if let newIndexPath = newIndexPath {
                tableView.insertRows(at: [newIndexPath], with: .automatic)
            }
        case .delete:
            if let indexPath = indexPath {
                tableView.deleteRows(at: [indexPath], with: .automatic)
            }
        case .update:
            if let indexPath = indexPath {
                tableView.reloadRows(at: [indexPath], with: .automatic)
            }
        case .move:
            if let indexPath = indexPath, let newIndexPath = newIndexPath {
                tableView.deleteRows(at: [indexPath], with: .automatic)
                tableView.insertRows(at: [newIndexPath], with: .automatic)
            }
        }
    }

    func controllerDidChangeContent(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>
    ) {
        tableView.endUpdates()
    }
}

/// A diffable data source: keeps the last snapshot applied.
final class RecordingDataSource {
    var applied: [NSDiffableDataSourceSnapshot<String, NSManagedObjectID>] = []
    func apply(_ snapshot: NSDiffableDataSourceSnapshot<String, NSManagedObjectID>, animatingDifferences: Bool) {
        applied.append(snapshot)
    }
}

/// The skill's TripsViewController (people for trips, the start date for the trip's).
final class TripsViewController: NSObject, NSFetchedResultsControllerDelegate {
    let context: NSManagedObjectContext
    let dataSource = RecordingDataSource()

    init(context: NSManagedObjectContext) {
        self.context = context
    }

    lazy var fetchedResultsController: NSFetchedResultsController<RPerson> = {
        let request = NSFetchRequest<RPerson>(entityName: "Person")
        request.sortDescriptors = [
            NSSortDescriptor(keyPath: \RPerson.startDate, ascending: false)
        ]
        request.fetchBatchSize = 20
        let controller = NSFetchedResultsController(
            fetchRequest: request,
            managedObjectContext: context,
            sectionNameKeyPath: nil,
            cacheName: "TripsCache"
        )
        controller.delegate = self
        return controller
    }()

    func viewDidLoad() {
        try? fetchedResultsController.performFetch()
    }

    func controller(
        _ controller: NSFetchedResultsController<any NSFetchRequestResult>,
        didChangeContentWith snapshot: NSDiffableDataSourceSnapshotReference
    ) {
        let snapshot = snapshot as NSDiffableDataSourceSnapshot<String, NSManagedObjectID>
        dataSource.apply(snapshot, animatingDifferences: true)
    }
}

/// A collection view's batch updates, applied as UICollectionView applies them.
final class RecordingCollectionView {
    var items: [NSManagedObjectID] = []
    private var deletions: [Int] = []
    private var insertions: [(Int, NSManagedObjectID?)] = []
    private var moves: [(from: Int, to: Int)] = []

    func performBatchUpdates(_ updates: () -> Void, completion: ((Bool) -> Void)?) {
        deletions = []
        insertions = []
        moves = []
        updates()
        let removed = deletions + moves.map(\.from)
        guard removed.allSatisfy({ items.indices.contains($0) }) else {
            failures.append("a removal out of range")
            return
        }
        let moved = Dictionary(moves.map { ($0.to, items[$0.from]) }, uniquingKeysWith: { first, _ in first })
        for index in removed.sorted(by: >) { items.remove(at: index) }
        let placed = insertions + moves.map { ($0.to, moved[$0.to]) }
        for (index, item) in placed.sorted(by: { $0.0 < $1.0 }) {
            guard index <= items.count, let item = item ?? pending[index] else {
                failures.append("an insertion at \(index) out of range")
                continue
            }
            items.insert(item, at: index)
        }
        completion?(true)
    }

    /// Updates UICollectionView would have refused.
    var failures: [String] = []
    /// The items a data source would give for inserted index paths.
    var pending: [Int: NSManagedObjectID] = [:]

    func insertItems(at paths: [IndexPath]) { insertions += paths.map { ($0.row, nil) } }
    func deleteItems(at paths: [IndexPath]) { deletions += paths.map(\.row) }
    func moveItem(at from: IndexPath, to: IndexPath) { moves.append((from.row, to.row)) }
}

/// The "Making apps with Core Data" difference delegate.
final class PostsViewController: NSObject, NSFetchedResultsControllerDelegate {
    let collectionView = RecordingCollectionView()
    let frcSection = 0

    func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>,
        didChangeContentWith diff: CollectionDifference<NSManagedObjectID>
    ) {
        for change in diff.insertions {
            if case .insert(let offset, let element, _) = change { collectionView.pending[offset] = element }
        }
        collectionView.performBatchUpdates(
            {
                for change in diff {
                    switch change {
                    case .insert(offset: let newRow, element: _, associatedWith: let assoc):
                        if let oldRow = assoc {
                            collectionView.moveItem(
                                at: IndexPath(row: oldRow, section: frcSection),
                                to: IndexPath(row: newRow, section: frcSection))
                        } else {
                            collectionView.insertItems(
                                at: [IndexPath(row: newRow, section: frcSection)])
                        }
                    case .remove(offset: let oldRow, element: _, associatedWith: let assoc):
                        if assoc == nil {
                            collectionView.deleteItems(
                                at: [IndexPath(row: oldRow, section: frcSection)])
                        }
                    }
                }
            }, completion: nil)
    }
}

@Suite struct FetchedResultsGuideCodeTests {
    typealias People = FetchedResultsControllerTests.People

    @Test(arguments: ResultsFixtures.storeTypes)
    func theGuidesTableViewController(storeType: String) throws {
        let people = try People(storeType)
        NSFetchedResultsController<RPerson>.deleteCache(withName: "PeopleCache")
        let screen = PeopleViewController(context: people.context)
        screen.viewDidLoad()
        #expect(screen.rows.first?.count == 6)
        #expect(screen.cellText(at: IndexPath(row: 0, section: 0)) == "Ann Adams")
        ResultsFixtures.person("Abe", "Zulu", age: 3, in: people.context)
        people.context.delete(people.bob)
        people.cid.firstName = "Aaa"
        people.dee.lastName = "Aaron"
        people.eve.age = 51
        try people.context.save()
        let now = (0..<screen.numberOfSections()).map { section in
            (0..<screen.numberOfRows(inSection: section)).map {
                ObjectIdentifier(screen.fetchedResultsController.object(at: IndexPath(row: $0, section: section)))
            }
        }
        #expect(screen.failures.isEmpty, "\(screen.failures)")
        #expect(screen.rows == now, "\(screen.events)")
        #expect(screen.reloads == 2, "Cid renamed in place and Eve changed")
        NSFetchedResultsController<RPerson>.deleteCache(withName: "PeopleCache")
    }

    @Test(arguments: ResultsFixtures.storeTypes)
    func theSkillsDiffableController(storeType: String) throws {
        let people = try People(storeType)
        NSFetchedResultsController<RPerson>.deleteCache(withName: "TripsCache")
        for (index, person) in [people.ann, people.bob, people.cid].enumerated() {
            person.startDate = Date(timeIntervalSinceReferenceDate: Double(index) * 86_400)
        }
        try people.context.save()
        let screen = TripsViewController(context: people.context)
        screen.viewDidLoad()
        #expect(screen.dataSource.applied.count == 1)
        #expect(
            screen.dataSource.applied.last?.itemIdentifiers.prefix(3)
                == [people.cid.objectID, people.bob.objectID, people.ann.objectID])
        people.ann.startDate = Date(timeIntervalSinceReferenceDate: 10 * 86_400)
        try people.context.save()
        #expect(screen.dataSource.applied.last?.itemIdentifiers.first == people.ann.objectID)
        #expect(
            screen.dataSource.applied.last?.itemIdentifiers
                == screen.fetchedResultsController.fetchedObjects?.map(\.objectID))
        NSFetchedResultsController<RPerson>.deleteCache(withName: "TripsCache")
    }

    @Test(arguments: ResultsFixtures.storeTypes)
    func theDifferenceDelegateOfMakingApps(storeType: String) throws {
        let people = try People(storeType)
        let request = NSFetchRequest<RPerson>(entityName: "Person")
        request.sortDescriptors = [NSSortDescriptor(key: "firstName", ascending: true)]
        request.fetchBatchSize = 50
        let controller = NSFetchedResultsController(
            fetchRequest: request, managedObjectContext: people.context, sectionNameKeyPath: nil, cacheName: nil)
        let screen = PostsViewController()
        controller.delegate = screen
        try controller.performFetch()
        screen.collectionView.items = controller.fetchedObjects?.map(\.objectID) ?? []
        people.ann.firstName = "Zed"
        people.context.delete(people.cid)
        let new = ResultsFixtures.person("Bea", "Brown", age: 1, in: people.context)
        try people.context.obtainPermanentIDs(for: [new])
        people.kid.firstName = "Al"
        try people.context.save()
        #expect(screen.collectionView.items == controller.fetchedObjects?.map(\.objectID))
        #expect(screen.collectionView.failures.isEmpty)
    }
}
