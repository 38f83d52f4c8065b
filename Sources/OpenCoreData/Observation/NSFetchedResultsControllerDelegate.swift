// The delegate of a fetched results controller, as Core Data declares it.
//
// Core Data's methods are optional Objective-C methods and the controller asks which
// ones the delegate implements. Swift protocols on Linux have no optional methods, so
// every method has a default implementation here, and the controller learns which
// form the delegate uses by calling: the default implementations of the snapshot and
// difference methods and of the index title method mark the call as unanswered
// (`FetchedResultsTracker.delegateMethodIsDefault`). After each change the controller
// offers the snapshot method, then (without a section name key path) the difference
// method, and remembers for that delegate which one it implements; a delegate that
// implements neither gets the four per-change methods (those with no implementation
// do nothing). The snapshot method is also offered the first snapshot when
// performFetch() runs.
//
// One difference remains: Core Data tracks changes only when the delegate implements
// at least one change method; here any delegate turns tracking on (no delegate: none).
import Foundation

/// Receives the changes of a fetched results controller's results.
///
/// Implement the methods your code needs; the others do nothing. The `controller`
/// argument is the controller seen through `NSFetchedResultsController<NSFetchRequestResult>`,
/// as in Core Data: compare it with yours using `==`, not `===`.
///
/// ```swift
/// extension PeopleList: NSFetchedResultsControllerDelegate {
///     func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>,
///                     didChange anObject: Any, at indexPath: IndexPath?,
///                     for type: NSFetchedResultsChangeType, newIndexPath: IndexPath?) {
///         switch type {
///         case .insert: rows.insert(anObject, at: newIndexPath!.row)
///         case .delete: rows.remove(at: indexPath!.row)
///         default: break
///         }
///     }
/// }
/// ```
public protocol NSFetchedResultsControllerDelegate: AnyObject {
    /// Changes are about to be reported (before the section and object changes).
    func controllerWillChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>)

    /// An object was inserted (at `newIndexPath`), deleted (from `indexPath`), moved (from
    /// `indexPath` to `newIndexPath`) or updated in place (at `indexPath`; `newIndexPath`
    /// is its path after the whole batch).
    func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>, didChange anObject: Any,
        at indexPath: IndexPath?, for type: NSFetchedResultsChangeType, newIndexPath: IndexPath?)

    /// A section was inserted (at its new index) or deleted (at its old index).
    func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>,
        didChange sectionInfo: NSFetchedResultsSectionInfo, atSectionIndex sectionIndex: Int,
        for type: NSFetchedResultsChangeType)

    /// Every change of the batch has been reported.
    func controllerDidChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>)

    /// The index title of a section; by default the controller's
    /// `sectionIndexTitle(forSectionName:)` (the name's first letter, capitalized).
    func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>,
        sectionIndexTitleForSectionName sectionName: String
    ) -> String?

    /// The results after a change, as a snapshot (and after performFetch()). Implementing
    /// it replaces every other change method.
    func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>,
        didChangeContentWith snapshot: NSDiffableDataSourceSnapshotReference)

    /// A change of the results as a difference of object IDs, for a controller without a
    /// section name key path (and a delegate without the snapshot method). Implementing it
    /// replaces the per-change methods.
    func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>,
        didChangeContentWith diff: CollectionDifference<NSManagedObjectID>)
}

extension NSFetchedResultsControllerDelegate {
    /// Does nothing.
    public func controllerWillChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>) {}

    /// Does nothing.
    public func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>, didChange anObject: Any,
        at indexPath: IndexPath?, for type: NSFetchedResultsChangeType, newIndexPath: IndexPath?
    ) {}

    /// Does nothing.
    public func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>,
        didChange sectionInfo: NSFetchedResultsSectionInfo, atSectionIndex sectionIndex: Int,
        for type: NSFetchedResultsChangeType
    ) {}

    /// Does nothing.
    public func controllerDidChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>) {}

    /// Leaves the title to the controller.
    public func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>,
        sectionIndexTitleForSectionName sectionName: String
    ) -> String? {
        controller.tracker.delegateMethodIsDefault = true
        return nil
    }

    /// Not implemented: the controller uses another method.
    public func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>,
        didChangeContentWith snapshot: NSDiffableDataSourceSnapshotReference
    ) {
        controller.tracker.delegateMethodIsDefault = true
    }

    /// Not implemented: the controller uses another method.
    public func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>,
        didChangeContentWith diff: CollectionDifference<NSManagedObjectID>
    ) {
        controller.tracker.delegateMethodIsDefault = true
    }
}
