// The one lifecycle observer a context's results trackers share (its lifecycle's
// `resultsObserver`): it passes every transition, property change, ObjectsDidChange
// batch and save on to the trackers that follow the context, and leaves the context
// when the last one goes, so a context nobody observes keeps its fast paths.
//
// Trackers are held weakly: a results controller the app drops stops being told. Used
// on the context's queue only.
import Foundation

/// Passes a context's lifecycle on to the results trackers following it.
final class ContextChangeObservers: ObjectLifecycleObserver {
    private struct WeakTracker {
        weak var tracker: FetchedResultsTracker?
    }

    private unowned let context: NSManagedObjectContext
    private var trackers: [WeakTracker] = []

    private init(context: NSManagedObjectContext) {
        self.context = context
    }

    /// The observers of `context`, installed on first use.
    static func observers(of context: NSManagedObjectContext) -> ContextChangeObservers {
        if let installed = context.lifecycle.resultsObserver as? ContextChangeObservers { return installed }
        let observers = ContextChangeObservers(context: context)
        context.lifecycle.resultsObserver = observers
        return observers
    }

    /// Starts telling `tracker` (once).
    func add(_ tracker: FetchedResultsTracker) {
        trackers.removeAll { $0.tracker == nil }
        if !trackers.contains(where: { $0.tracker === tracker }) { trackers.append(WeakTracker(tracker: tracker)) }
    }

    /// Stops telling `tracker`; the last one gone, the context is no longer observed.
    func remove(_ tracker: FetchedResultsTracker) {
        trackers.removeAll { $0.tracker == nil || $0.tracker === tracker }
        if trackers.isEmpty, context.lifecycle.resultsObserver === self { context.lifecycle.resultsObserver = nil }
    }

    /// The live trackers (a copy: a tracker's handler may add or remove trackers).
    private var live: [FetchedResultsTracker] { trackers.compactMap(\.tracker) }

    func object(_ object: NSManagedObject, didUndergo transition: ObjectTransition) {
        for tracker in live { tracker.object(object, didUndergo: transition) }
    }

    func object(_ object: NSManagedObject, didChangeSlot slot: Int, from oldValue: Any?, to newValue: Any?) {
        // Only an inserted object's changes can be missing from the next batch: it is
        // listed as inserted once, and a later change of it as nothing.
        guard object.isInserted else { return }
        for tracker in live { tracker.noteTouched(object) }
    }

    func objectsDidChange(_ changes: ObjectChanges) {
        for tracker in live { tracker.objectsDidChange(changes) }
    }

    var awaitsChanges: Bool {
        trackers.contains { $0.tracker?.touched.isEmpty == false }
    }

    func contextDidSave() {
        for tracker in live { tracker.contextDidSave() }
    }
}
