// The engine behind NSFetchedResultsController and the context's result sequences: a
// fetch request's results, kept in order and in sections, and kept current from the
// context's changes.
//
// State: the results in a RankedObjectList (each node with a sequence number that breaks
// ties between equal sort keys: the fetch's order, then arrival order), and the sections
// as name + count in order. performFetch() fills both from one fetch; section names of
// objects still faults are read from the rows the fetch returned, so a batched fetch
// (fetchBatchSize) keeps its faults.
//
// Input (while something listens, `changeHandler`): the context's lifecycle through
// ContextChangeObservers — every ObjectsDidChange batch (processPendingChanges, merges
// of other contexts' saves, merged remote and batch changes), with the IDs a merge names
// whether registered here or not, plus the objects whose transitions or property changes
// that batch may not list (an inserted object changed after its insert was reported, an
// inserted object deleted again, a rollback). Each batch is applied in
// FetchedResultsTracker+Changes.swift and handed on as one FetchedResultsChanges.
// After reset() (the objects leave the context) nothing is reported until the next
// performFetch().
//
// Everything here runs on the context's queue.
import Foundation

/// A fetch request's results in order and in sections, kept current from its context.
final class FetchedResultsTracker {
    let context: NSManagedObjectContext
    let request: NSFetchRequest<NSFetchRequestResult>
    let sectionNameKeyPath: String?
    let cacheName: String?

    /// Told of each batch of changes once applied; the tracker follows the context only
    /// while it is set.
    var changeHandler: ((FetchedResultsChanges) -> Void)? {
        didSet { updateRegistration() }
    }
    /// Told when a save gave results permanent IDs (for listeners that hold object IDs).
    var saveHandler: (() -> Void)?

    /// The results, in order.
    var list = RankedObjectList()
    /// The sections, in order (one unnamed section without a section name key path).
    var sections: [FetchedResultsSection] = []
    /// Whether performFetch() has run.
    private(set) var isFetched = false
    /// Set by reset() of the context: the results are stale until performFetch() runs.
    private(set) var needsFetch = false
    /// Bumped by every change of the results.
    private(set) var version = 0
    /// The next sequence number for an object entering the results.
    var nextSequence = 0

    private(set) var matcher: FetchRequestMatcher?
    private var sectionReader: ExpressionProgram?
    private var sectionSchema: (any KeyValueSchema)?
    private var sectionStartsCache: (version: Int, starts: [Int])?
    /// The results whose object IDs are temporary, to notice the save that makes them permanent.
    var temporaryResults: Set<ObjectIdentifier> = []
    private var savedTemporaryResult = false

    /// Objects a batch may not list (see the file comment), since the last batch.
    var touched: [NSManagedObject] = []
    private var touchedIdentities: Set<ObjectIdentifier> = []
    private var isFetching = false
    var isApplying = false
    /// Batches that arrived while one was being applied (a handler changed the context).
    var deferredBatches: [ObjectChanges] = []

    /// The controller's delegate (NSFetchedResultsController), shared by its typed and untyped faces.
    weak var delegate: (any NSFetchedResultsControllerDelegate)?
    /// Which of the delegate's methods it implements, as far as seen.
    var delegateForm = DelegateForm()
    /// Set by the delegate methods' default implementations: the call went unanswered.
    var delegateMethodIsDefault = false
    /// The controller whose `sectionIndexTitle(forSectionName:)` gives default titles.
    weak var titleSource: (any SectionIndexTitleSource)?
    /// The delegate's title for a section, when it gives one (NSFetchedResultsController).
    var delegateTitle: ((String) -> String??)?

    init(
        request: NSFetchRequest<NSFetchRequestResult>, context: NSManagedObjectContext, sectionNameKeyPath: String?,
        cacheName: String?
    ) {
        self.request = request
        self.context = context
        self.sectionNameKeyPath = sectionNameKeyPath
        self.cacheName = cacheName
    }

    // MARK: Fetching

    /// Fetches the results and their sections afresh.
    ///
    /// - Throws: `NSCoreDataError` (134060) for a request without sort descriptors, with a
    ///   result type other than managed objects, or whose first sort does not group the
    ///   results by section name; the fetch's own errors.
    func performFetch() throws {
        try context.performAndWait {
            isFetching = true
            defer { isFetching = false }
            try fetch()
        }
    }

    private func fetch() throws {
        guard let descriptors = request.sortDescriptors, !descriptors.isEmpty else {
            throw CoreDataError.make(
                NSCoreDataError,
                "NSFetchedResultsController: the fetch request of entity '\(request.entityName ?? "?")' "
                    + "has no sort descriptors; a results controller needs at least one")
        }
        guard request.resultType == .managedObjectResultType else {
            throw CoreDataError.make(
                NSCoreDataError,
                "NSFetchedResultsController: the fetch request's result type must be managedObjectResultType")
        }
        let fetched = try context.fetchObjectsWithCandidates(request)
        let entity = fetched.entity
        matcher = FetchRequestMatcher(request, entity: entity)
        try compileSectionReader(for: entity)
        let counts = try sectionCounts(fetched.objects, candidates: fetched.candidates, entity: entity)
        list = RankedObjectList(fetched.objects)
        nextSequence = fetched.objects.count
        sections = counts.map { FetchedResultsSection(name: $0.name, count: $0.count, tracker: self) }
        temporaryResults = []
        for object in fetched.objects where object.objectID.isTemporaryID {
            temporaryResults.insert(ObjectIdentifier(object))
        }
        clearTouched()
        deferredBatches = []
        isFetched = true
        needsFetch = false
        version += 1
        updateRegistration()
    }

    private func compileSectionReader(for entity: NSEntityDescription) throws {
        guard let sectionNameKeyPath else {
            sectionReader = nil
            return
        }
        let schema = entity.frozenLayoutIfAny
        var compiler = PredicateCompiler(schema: schema)
        sectionReader = try compiler.compile(NSExpression(forKeyPath: sectionNameKeyPath))
        sectionSchema = schema
    }

    /// The section name of `record` (an object or a row view).
    ///
    /// - Throws: the key path's reading errors (an unknown key).
    func sectionName(of record: Any) throws -> String {
        guard let sectionReader else { return "" }
        let value = try sectionReader(EvaluationScope(object: record, schema: sectionSchema, variables: [:]))
        return FetchedResultsSection.name(of: unwrapOptional(value))
    }

    /// The sections of the fetched `objects`: from the cache when it holds them for this
    /// request and the stores as they are, else read (and cached).
    private func sectionCounts(_ objects: [NSManagedObject], candidates: [FetchCandidate], entity: NSEntityDescription)
        throws -> [(name: String, count: Int)]
    {
        guard sectionNameKeyPath != nil else { return [("", objects.count)] }
        // Only stored data is cached: with unsaved changes the sections are read afresh.
        let cache =
            context.chainHasChanges()
            ? nil : cacheName.flatMap { FetchedResultsCache(name: $0, tracker: self, entity: entity) }
        if let cached = cache?.read(), cached.reduce(0, { $0 + $1.count }) == objects.count { return cached }
        let makeView = try context.rowViewMaker()
        var counts: [(name: String, count: Int)] = []
        var seen: Set<String> = []
        for (index, object) in objects.enumerated() {
            // A fault whose row the fetch returned is read through the row: no fault fires.
            let row = index < candidates.count ? candidates[index].row : nil
            let name = try sectionName(of: object.isFault && row != nil ? makeView(row.unsafelyUnwrapped) : object)
            if let last = counts.last, last.name == name {
                counts[counts.count - 1].count += 1
                continue
            }
            guard seen.insert(name).inserted else {
                throw CoreDataError.make(
                    NSCoreDataError,
                    "NSFetchedResultsController: the fetched object at index \(index) has an out of order section "
                        + "name '\(name)'; objects must be sorted by section name (the first sort descriptor must "
                        + "sort by '\(sectionNameKeyPath ?? "")' or group like it)")
            }
            counts.append((name, 1))
        }
        cache?.write(counts)
        return counts
    }

    // MARK: Reading

    /// The results, in order.
    var allObjects: [NSManagedObject] { list.allObjects }

    /// The position of the first object of each section.
    var sectionStarts: [Int] {
        if let cached = sectionStartsCache, cached.version == version { return cached.starts }
        var starts: [Int] = []
        starts.reserveCapacity(sections.count)
        var start = 0
        for section in sections {
            starts.append(start)
            start += section.count
        }
        sectionStartsCache = (version, starts)
        return starts
    }

    /// The index path of the object at `position`.
    func indexPath(ofPosition position: Int) -> IndexPath {
        let starts = sectionStarts
        // The last section starting at or before the position (empty sections never exist).
        var low = 0
        var high = starts.count
        while high - low > 1 {
            let middle = (low + high) / 2
            if starts[middle] <= position { low = middle } else { high = middle }
        }
        return IndexPath(row: position - (starts.isEmpty ? 0 : starts[low]), section: low)
    }

    /// The object at `indexPath`, nil when there is none.
    func object(at indexPath: IndexPath) -> NSManagedObject? {
        guard indexPath.count >= 2 else { return nil }
        let section = indexPath.section
        let row = indexPath.row
        guard section >= 0, section < sections.count, row >= 0, row < sections[section].count else { return nil }
        return list.object(at: sectionStarts[section] + row)
    }

    /// Where `object` is, nil when it is not a result.
    func indexPath(for object: NSManagedObject) -> IndexPath? {
        guard let node = list.node(for: object) else { return nil }
        return indexPath(ofPosition: list.position(of: node))
    }

    /// The objects of `section` (none once it has gone).
    func objects(in section: FetchedResultsSection) -> [NSManagedObject] {
        guard let index = sections.firstIndex(where: { $0 === section }) else { return [] }
        let start = sectionStarts[index]
        return list.objects(in: start..<start + section.count)
    }

    /// The index title of a section: the delegate's, else the controller's default.
    func indexTitle(forSectionName name: String) -> String? {
        if let delegateTitle, let title = delegateTitle(name) { return title }
        return titleSource?.sectionIndexTitle(forSectionName: name)
            ?? FetchedResultsSection.defaultIndexTitle(forSectionName: name)
    }

    /// The results as a snapshot: section names and object IDs; `reloading` lists the
    /// objects changed in place.
    func snapshot(reloading reloaded: [NSManagedObject] = []) -> FetchedResultsSnapshot {
        var snapshot = FetchedResultsSnapshot()
        let objects = list.allObjects
        var start = 0
        for section in sections {
            snapshot.appendSections([section.name])
            snapshot.appendItems(objects[start..<start + section.count].map(\.objectID), toSection: section.name)
            start += section.count
        }
        snapshot.reloadItems(reloaded.map(\.objectID))
        return snapshot
    }

    // MARK: Following the context

    private func updateRegistration() {
        if changeHandler != nil && isFetched {
            ContextChangeObservers.observers(of: context).add(self)
        } else {
            (context.lifecycle.resultsObserver as? ContextChangeObservers)?.remove(self)
        }
    }

    /// Whether the tracker applies the context's changes now.
    private var isFollowing: Bool { changeHandler != nil && isFetched && !needsFetch && !isFetching }

    /// `object` may have changed in a way the next batch does not list.
    func noteTouched(_ object: NSManagedObject) {
        guard isFollowing, let matcher, matcher.includes(object.entity) else { return }
        if touchedIdentities.insert(ObjectIdentifier(object)).inserted { touched.append(object) }
    }

    func clearTouched() {
        touched = []
        touchedIdentities = []
    }

    /// A transition of one of the context's objects.
    func object(_ object: NSManagedObject, didUndergo transition: ObjectTransition) {
        switch transition {
        case .forgotten:
            // reset(): the results are gone until the next performFetch().
            if isFetched && !needsFetch {
                needsFetch = true
                clearTouched()
            }
        case .saved:
            if temporaryResults.remove(ObjectIdentifier(object)) != nil { savedTemporaryResult = true }
        case .inserted, .deleted, .undeleted, .discarded, .rolledBack, .invalidated, .refreshed, .turnedIntoFault:
            noteTouched(object)
        case .loaded, .inaccessible:
            break
        }
    }

    /// The context finished a save.
    func contextDidSave() {
        guard savedTemporaryResult else { return }
        savedTemporaryResult = false
        if isFollowing { saveHandler?() }
    }

    /// One ObjectsDidChange batch (processPendingChanges or a merge).
    func objectsDidChange(_ changes: ObjectChanges) {
        guard isFollowing else { return }
        if isApplying {
            deferredBatches.append(changes)
            return
        }
        var next: ObjectChanges? = changes
        while let batch = next {
            applyAndReport(batch)
            next = deferredBatches.isEmpty || !isFollowing ? nil : deferredBatches.removeFirst()
        }
    }

    private func applyAndReport(_ batch: ObjectChanges) {
        isApplying = true
        let changes = apply(batch)
        isApplying = false
        if !changes.isEmpty { changeHandler?(changes) }
    }

    /// The results changed: cached positions are stale.
    func resultsDidChange() {
        version += 1
    }

    /// Stops following the context until the next performFetch() (the results could not be
    /// kept current: a sort key that cannot be compared, or sections out of order).
    func stopFollowing() {
        needsFetch = true
        clearTouched()
        deferredBatches = []
    }
}

/// What gives a section's default index title: the controller a user may subclass.
protocol SectionIndexTitleSource: AnyObject {
    func sectionIndexTitle(forSectionName sectionName: String) -> String?
}
