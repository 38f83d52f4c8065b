// NSFetchedResultsController: a fetch request's results in sections, kept current as
// the context changes, reported to a delegate — Core Data's class, over a
// FetchedResultsTracker.
//
// Core Data's delegate methods take the controller as
// NSFetchedResultsController<NSFetchRequestResult>, which in Objective-C is the same
// object as your NSFetchedResultsController<Person>. Swift generics are not covariant,
// so a controller made for Person hands its delegate a second controller object: the
// same tracker (results, sections, delegate) seen with the untyped result type. The two
// are equal (`==`, `isEqual(_:)`) but not identical (`===`).
import Foundation

/// Keeps the results of a fetch request in order and in sections, follows the changes of
/// its context, and tells its delegate what changed — the model of a table view.
///
/// ```swift
/// let request: NSFetchRequest<Person> = Person.fetchRequest()
/// request.sortDescriptors = [NSSortDescriptor(key: "lastName", ascending: true)]
/// let controller = NSFetchedResultsController(
///     fetchRequest: request, managedObjectContext: context,
///     sectionNameKeyPath: "lastName", cacheName: nil)
/// controller.delegate = self
/// try controller.performFetch()
/// let first = controller.object(at: IndexPath(row: 0, section: 0))
/// ```
///
/// Use it on its context's queue. It follows the context's changes when the context
/// processes them (`processPendingChanges()`, at the latest when saving), and other
/// contexts' saves once merged (`automaticallyMergesChangesFromParent`,
/// `mergeChanges(fromContextDidSave:)`, `mergeChanges(fromRemoteContextSave:into:)`).
/// Without a delegate it does not follow changes.
///
/// `ResultType` is unconstrained (Core Data constrains it to `NSFetchRequestResult`) so
/// that `NSFetchedResultsController<NSFetchRequestResult>` compiles without an
/// Objective-C runtime; the request must return managed objects.
open class NSFetchedResultsController<ResultType>: NSObject, SectionIndexTitleSource {
    let tracker: FetchedResultsTracker
    private let typedRequest: NSFetchRequest<ResultType>
    /// The controller handed to the delegate (self when `ResultType` is NSFetchRequestResult).
    private var untypedController: NSFetchedResultsController<NSFetchRequestResult>?
    private var typedObjects: (version: Int, objects: [ResultType])?

    /// A controller for the results of `fetchRequest` in `context`, grouped into sections
    /// by `sectionNameKeyPath` (nil: one section), with section information cached under
    /// `name` (nil: no cache).
    ///
    /// The request needs at least one sort descriptor; with a section name key path, the
    /// first must sort by it or group the results the same way. Both are checked by
    /// ``performFetch()``.
    public init(
        fetchRequest: NSFetchRequest<ResultType>, managedObjectContext context: NSManagedObjectContext,
        sectionNameKeyPath: String?, cacheName name: String?
    ) {
        typedRequest = fetchRequest
        tracker = FetchedResultsTracker(
            request: fetchRequest.untyped(), context: context, sectionNameKeyPath: sectionNameKeyPath, cacheName: name)
        super.init()
        tracker.titleSource = self
    }

    /// The untyped face of `tracker` (see the file comment).
    private init(untypedFaceOf tracker: FetchedResultsTracker, request: NSFetchRequest<ResultType>) {
        self.tracker = tracker
        typedRequest = request
        super.init()
    }

    // MARK: Configuration

    /// The request whose results the controller keeps. Delete the cache before changing it.
    open var fetchRequest: NSFetchRequest<ResultType> { typedRequest }
    /// The context the controller fetches in and follows.
    open var managedObjectContext: NSManagedObjectContext { tracker.context }
    /// The key path whose value names each object's section; nil for one section.
    open var sectionNameKeyPath: String? { tracker.sectionNameKeyPath }
    /// The name of the section cache; nil when there is none.
    open var cacheName: String? { tracker.cacheName }

    /// Told of the changes of the results (held weakly). Setting one makes the controller
    /// follow its context's changes; nil stops it.
    open var delegate: (any NSFetchedResultsControllerDelegate)? {
        get { tracker.delegate }
        set {
            tracker.delegate = newValue
            tracker.delegateForm = DelegateForm()
            if newValue == nil {
                tracker.changeHandler = nil
                tracker.delegateTitle = nil
                return
            }
            tracker.changeHandler = { [weak self] changes in self?.report(changes) }
            tracker.delegateTitle = { [weak self] name in self?.delegateTitle(forSectionName: name) }
        }
    }

    /// Deletes the section cache named `name`, or every cache when nil. Call it before
    /// changing the fetch request of a controller with that cache name.
    open class func deleteCache(withName name: String?) {
        FetchedResultsCache.delete(named: name)
    }

    // MARK: Fetching

    /// Fetches the results and computes their sections, using the cache when it is valid.
    ///
    /// - Throws: `NSCoreDataError` (134060) when the request has no sort descriptors, does
    ///   not return managed objects, or its first sort does not group the results by section
    ///   name (the message names the first object out of order); the fetch's errors.
    open func performFetch() throws {
        try tracker.performFetch()
        typedObjects = nil
        if let delegate, tracker.delegateForm.implementsSnapshot != false {
            offerSnapshot(to: delegate, reloading: [])
        }
    }

    /// The results, in section order; nil before ``performFetch()``.
    ///
    /// - Complexity: O(n) the first time after a change.
    open var fetchedObjects: [ResultType]? {
        guard tracker.isFetched else { return nil }
        if let typedObjects, typedObjects.version == tracker.version { return typedObjects.objects }
        var cast = FetchResultCast<ResultType>()
        var objects: [ResultType] = []
        objects.reserveCapacity(tracker.list.count)
        for object in tracker.allObjects {
            if cast.isVerified(object) {
                objects.append(unsafeBitCast(object, to: ResultType.self))
            } else if let typed = cast.verify(object) {
                objects.append(typed)
            }
        }
        typedObjects = (tracker.version, objects)
        return objects
    }

    /// The sections; nil before ``performFetch()``.
    open var sections: [any NSFetchedResultsSectionInfo]? {
        tracker.isFetched ? tracker.sections : nil
    }

    /// The object at `indexPath`.
    ///
    /// - Precondition: `indexPath` names a row of a section (Core Data raises otherwise).
    open func object(at indexPath: IndexPath) -> ResultType {
        guard let object = tracker.object(at: indexPath), let typed = object as? ResultType else {
            preconditionFailure(
                "OpenCoreData: NSFetchedResultsController.object(at:): no object at \(indexPath) "
                    + "(sections hold \(tracker.sections.map(\.count)))")
        }
        return typed
    }

    /// Where `object` is in the results; nil when it is not one of them.
    ///
    /// - Complexity: O(log n).
    open func indexPath(forObject object: ResultType) -> IndexPath? {
        guard let managed = object as? NSManagedObject else { return nil }
        return tracker.indexPath(for: managed)
    }

    // MARK: Section index

    /// The index title of the section named `sectionName`: its first letter, capitalized.
    /// Override it, or implement the delegate method, for other titles.
    open func sectionIndexTitle(forSectionName sectionName: String) -> String? {
        FetchedResultsSection.defaultIndexTitle(forSectionName: sectionName)
    }

    /// The index titles of the sections, in order, without repeats.
    open var sectionIndexTitles: [String] {
        var titles: [String] = []
        var seen: Set<String> = []
        for section in tracker.sections {
            if let title = tracker.indexTitle(forSectionName: section.name), seen.insert(title).inserted {
                titles.append(title)
            }
        }
        return titles
    }

    /// The section a table view's index entry `title` (at `sectionIndex` in the index)
    /// leads to: the first section with that index title, else the closest section.
    open func section(forSectionIndexTitle title: String, at sectionIndex: Int) -> Int {
        if let index = tracker.sections.firstIndex(where: { tracker.indexTitle(forSectionName: $0.name) == title }) {
            return index
        }
        return max(0, min(sectionIndex, tracker.sections.count - 1))
    }

    // MARK: Identity

    /// Equal to another controller over the same results (its untyped face included).
    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSObject else { return false }
        if other === self { return true }
        return (other as? FetchedResultsControllerFace)?.faceTracker === tracker
    }

    /// A hash consistent with `isEqual(_:)`.
    open override var hash: Int { ObjectIdentifier(tracker).hashValue }

    // MARK: Reporting to the delegate

    /// The controller the delegate receives.
    private var untyped: NSFetchedResultsController<NSFetchRequestResult> {
        if let same = self as? NSFetchedResultsController<NSFetchRequestResult> { return same }
        if let face = untypedController { return face }
        let face = NSFetchedResultsController<NSFetchRequestResult>(
            untypedFaceOf: tracker, request: typedRequest.untyped())
        untypedController = face
        return face
    }

    private func delegateTitle(forSectionName name: String) -> String?? {
        guard let delegate else { return nil }
        tracker.delegateMethodIsDefault = false
        let title = delegate.controller(untyped, sectionIndexTitleForSectionName: name)
        return tracker.delegateMethodIsDefault ? nil : .some(title)
    }

    /// Offers `delegate` the snapshot method; whether it implements it.
    @discardableResult
    private func offerSnapshot(to delegate: any NSFetchedResultsControllerDelegate, reloading: [NSManagedObject])
        -> Bool
    {
        tracker.delegateMethodIsDefault = false
        delegate.controller(untyped, didChangeContentWith: tracker.snapshot(reloading: reloading))
        let implements = !tracker.delegateMethodIsDefault
        tracker.delegateForm.implementsSnapshot = implements
        return implements
    }

    private func report(_ changes: FetchedResultsChanges) {
        guard let delegate else { return }
        typedObjects = nil
        if tracker.delegateForm.implementsSnapshot != false,
            offerSnapshot(to: delegate, reloading: changes.updatedObjects)
        {
            return
        }
        let controller = untyped
        if sectionNameKeyPath == nil, tracker.delegateForm.implementsDifference != false {
            tracker.delegateMethodIsDefault = false
            delegate.controller(controller, didChangeContentWith: changes.difference)
            let implements = !tracker.delegateMethodIsDefault
            tracker.delegateForm.implementsDifference = implements
            if implements { return }
        }
        delegate.controllerWillChangeContent(controller)
        for change in changes.sections {
            delegate.controller(controller, didChange: change.section, atSectionIndex: change.index, for: change.type)
        }
        for change in changes.objects {
            delegate.controller(
                controller, didChange: change.object, at: change.oldPath, for: change.type,
                newIndexPath: change.newPath)
        }
        delegate.controllerDidChangeContent(controller)
    }
}

/// Which of the delegate's methods stand for all the others, once seen (nil: not known yet).
struct DelegateForm {
    var implementsSnapshot: Bool?
    var implementsDifference: Bool?
}

/// What `isEqual(_:)` sees of any controller, whatever its result type.
protocol FetchedResultsControllerFace: AnyObject {
    var faceTracker: FetchedResultsTracker { get }
}

extension NSFetchedResultsController: FetchedResultsControllerFace {
    var faceTracker: FetchedResultsTracker { tracker }
}
