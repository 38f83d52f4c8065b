// The fetch path, in one place. A fetch runs these stages in order:
//
//   1. resolve      the request's entity (unknown name: a thrown error)
//   2. candidates   the coordinator's stores return matching ROWS (the store
//                   evaluates the predicate, compiled for the entity, on StoreRowView)
//   3. pending      with includesPendingChanges: objects inserted or updated in this
//                   context or its ancestors are asked FetchRequestMatcher.matches on
//                   their unsaved values; deleted ones drop out
//   4. sort         sortDescriptors, compiled for the entity (the matcher's), on loaded
//                   objects or on the fetched rows: sorting fires no faults
//   5. window       fetchOffset, then fetchLimit (dictionary results: after grouping)
//   6. materialize  rows become registered objects: faults, loaded, or in batches
//   7. shape        resultType: objects, object IDs, dictionaries
//                   (FetchDictionaryResults.swift) or a count
//
// The request is only read: what the context will do with the rows goes down to the
// stores as a StoreFetchPlan made for this fetch, and what a store did comes back in its
// StoreFetchAnswer (StoreFetchPlan.swift), so contexts may share one request across
// threads. A store returns every matching row, or, when the plan allows (nothing unsaved
// in the chain), just the leading rows in sort order, maybe already sorted; limit and
// offset are applied here, after pending changes are merged. Managed objects come back as
// faults, loaded or in batches as the request asks (Faulting.swift), then
// relationshipKeyPathsForPrefetching loads their destinations (FetchPrefetching.swift).
import Foundation

/// What a fetch returns before it is typed: managed objects, or other results.
enum FetchResults {
    case objects([NSManagedObject])
    case values([Any])

    var count: Int {
        switch self {
        case .objects(let objects): objects.count
        case .values(let values): values.count
        }
    }
}

/// Casts fetched objects to a request's result type, cheaply.
///
/// A fetch returns objects of one or a few classes, and `as? T` costs a dynamic cast
/// per object. When `T` is a class, an object whose class is the class of an object
/// that already passed `as? T` is a `T` as well, so it is reinterpreted without asking
/// the runtime again. Any other `T` (a protocol, `AnyObject`) takes the checked cast.
struct FetchResultCast<T> {
    /// Whether `T` is a class type (not a protocol existential or a value type), so an
    /// object reference is a `T` reference bit for bit.
    private let isClass = T.self is AnyClass && MemoryLayout<T>.size == MemoryLayout<NSManagedObject>.size
    /// The class of the last object that passed the checked cast.
    private var verifiedClass: ObjectIdentifier?

    /// Whether `object` is known to be a `T` that a bit cast may produce: `T` is a class
    /// and an object of the same class passed ``verify(_:)``.
    func isVerified(_ object: NSManagedObject) -> Bool {
        isClass && ObjectIdentifier(type(of: object)) == verifiedClass
    }

    /// `object` as a `T` through the checked cast, or nil when it is not one; remembers
    /// its class when it is.
    mutating func verify(_ object: NSManagedObject) -> T? {
        guard let value = object as? T else { return nil }
        verifiedClass = ObjectIdentifier(type(of: object))
        return value
    }

    /// `objects` as a `[T]` sharing their array's storage, when `T` is a class and every
    /// object is a `T`; nil otherwise (the caller then casts one by one and names the
    /// first object that is not a `T`).
    ///
    /// References to objects of any class are one word alike, so the storage of an array
    /// of `NSManagedObject`s whose elements are all `T`s is a valid `[T]`: the standard
    /// library reinterprets an array's storage the same way when a downcast (`as! [T]`)
    /// finds every element of the target class. No second array, and no retain per object.
    mutating func array(_ objects: [NSManagedObject]) -> [T]? {
        guard isClass else { return nil }
        for object in objects where !isVerified(object) {
            guard verify(object) != nil else { return nil }
        }
        return unsafeBitCast(objects, to: [T].self)
    }
}

/// One candidate result: an object ID, with its store row when it came from a store.
struct FetchCandidate {
    let objectID: NSManagedObjectID
    let row: StoreRow?
    var object: NSManagedObject?
}

/// What stages 2-3 hand on: the candidates, whether the store's rows came sorted, and the
/// matcher the pending stage asked (for the sort stage to reuse).
struct FetchCandidates {
    let list: [FetchCandidate]
    let storeSorted: Bool
    let matcher: FetchRequestMatcher?
}

extension NSManagedObjectContext {
    /// The objects (or IDs, dictionaries, count) matching `request`.
    ///
    /// - Throws: `NSCoreDataError` (134060) for an entity the model lacks; the store's
    ///   error; `NSCoreDataError` when `ResultType` does not match the result type.
    public func fetch<T>(_ request: NSFetchRequest<T>) throws -> [T] {
        ConcurrencyDebug.check(self, "NSManagedObjectContext.fetch(_:)")
        let started = OpenCoreDataDebugLog.start()
        let results = try executeFetchResults(request.untyped())
        if OpenCoreDataDebugLog.isOn(1) { logFetch(request.untyped(), results, since: started) }
        var typed: [T] = []
        typed.reserveCapacity(results.count)
        switch results {
        case .objects(let objects):
            // An object whose class is that of an object which passed `as? T` is a `T`
            // too: reinterpret it instead of casting each one (see FetchResultCast).
            var cast = FetchResultCast<T>()
            if let reinterpreted = cast.array(objects) { return reinterpreted }
            for object in objects {
                if cast.isVerified(object) {
                    typed.append(unsafeBitCast(object, to: T.self))
                } else {
                    guard let value = cast.verify(object) else { throw Self.resultTypeMismatch(object, T.self) }
                    typed.append(value)
                }
            }
        case .values(let values):
            for result in values {
                guard let value = result as? T else { throw Self.resultTypeMismatch(result, T.self) }
                typed.append(value)
            }
        }
        return typed
    }

    private static func resultTypeMismatch<T>(_ result: Any, _: T.Type) -> NSError {
        CoreDataError.make(
            NSCoreDataError,
            "fetch: a result of type \(type(of: result)) does not match the request's result type \(T.self)")
    }

    /// The number of objects `request` would return.
    ///
    /// - Throws: as ``fetch(_:)``.
    public func count<T>(for request: NSFetchRequest<T>) throws -> Int {
        ConcurrencyDebug.check(self, "NSManagedObjectContext.count(for:)")
        let started = OpenCoreDataDebugLog.start()
        let counted = try countResults(request.untyped())
        OpenCoreDataDebugLog.log(
            1,
            "count \(OpenCoreDataDebugLog.describe(request.untyped())) in \(name ?? "a context"): \(counted) in "
                + OpenCoreDataDebugLog.elapsed(since: started))
        return counted
    }

    private func logFetch(
        _ request: NSFetchRequest<NSFetchRequestResult>, _ results: FetchResults, since started: UInt64
    ) {
        let count: Int
        var ids = ""
        switch results {
        case .objects(let objects):
            count = objects.count
            if OpenCoreDataDebugLog.isOn(3) {
                ids = ": " + objects.map { $0.objectID.uriRepresentation().absoluteString }.joined(separator: " ")
            }
        case .values(let values): count = values.count
        }
        OpenCoreDataDebugLog.log(
            1,
            "fetch \(OpenCoreDataDebugLog.describe(request)) in \(name ?? "a context"): \(count) results in "
                + OpenCoreDataDebugLog.elapsed(since: started) + ids)
    }

    private func countResults(_ untyped: NSFetchRequest<NSFetchRequestResult>) throws -> Int {
        processPendingChanges()
        let entity = try resolveEntity(of: untyped)
        let coordinator = try requireCoordinator()
        if !untyped.includesPendingChanges || !chainHasChanges(), untyped.fetchOffset == 0, untyped.fetchLimit == 0 {
            return try readingQueryGeneration { try coordinator.countRows(untyped) }
        }
        let found = try candidates(for: untyped, entity: entity).list
        return window(found, offset: untyped.fetchOffset, limit: untyped.fetchLimit).count
    }

    /// Executes `request` and returns results shaped by its result type.
    func executeFetch(_ request: NSFetchRequest<NSFetchRequestResult>) throws -> [Any] {
        switch try executeFetchResults(request) {
        case .objects(let objects): return objects
        case .values(let values): return values
        }
    }

    /// Executes `request`; managed objects come back typed, so ``fetch(_:)`` need not
    /// cast each one out of an `Any`.
    private func executeFetchResults(_ request: NSFetchRequest<NSFetchRequestResult>) throws -> FetchResults {
        processPendingChanges()
        let entity = try resolveEntity(of: request)
        let found = try candidates(for: request, entity: entity)
        var candidates = found.list
        let descriptors = request.sortDescriptors ?? []
        if request.resultType == .dictionaryResultType {
            try checkTransformableValues(candidates)
            materialize(&candidates)
            if !descriptors.isEmpty {
                candidates = try sortResults(
                    candidates, by: found.matcher ?? FetchRequestMatcher(request, entity: entity))
            }
            // Groups form before the window: limit and offset count dictionaries.
            let dictionaries = try dictionaryResults(candidates.compactMap(\.object), request, entity: entity)
            let start = min(max(request.fetchOffset, 0), dictionaries.count)
            let end = request.fetchLimit > 0 ? min(start + request.fetchLimit, dictionaries.count) : dictionaries.count
            return .values(Array(dictionaries[start..<end]))
        }
        candidates = try orderedWindow(found, request, entity: entity)
        switch request.resultType {
        case .managedObjectIDResultType:
            return .values(candidates.map(\.objectID))
        case .countResultType:
            return .values([NSNumber(value: candidates.count)])
        default:
            return .objects(try objects(for: candidates, request, entity: entity))
        }
    }

    /// Stages 1-6 for managed object results, with the candidate each object came from:
    /// a results controller reads section names from the candidates' rows, so a batched
    /// fetch's faults stay faults.
    func fetchObjectsWithCandidates(_ request: NSFetchRequest<NSFetchRequestResult>) throws -> (
        entity: NSEntityDescription, candidates: [FetchCandidate], objects: [NSManagedObject]
    ) {
        processPendingChanges()
        let entity = try resolveEntity(of: request)
        let candidates = try orderedWindow(try self.candidates(for: request, entity: entity), request, entity: entity)
        return (entity, candidates, try objects(for: candidates, request, entity: entity))
    }

    /// Stages 4-5: the candidates sorted (unless the store's rows came sorted) and windowed.
    private func orderedWindow(
        _ found: FetchCandidates, _ request: NSFetchRequest<NSFetchRequestResult>, entity: NSEntityDescription
    ) throws -> [FetchCandidate] {
        var candidates = found.list
        if !(request.sortDescriptors ?? []).isEmpty, !(found.storeSorted && isReadThroughRows(candidates)) {
            candidates = try sortResults(candidates, by: found.matcher ?? FetchRequestMatcher(request, entity: entity))
        }
        return window(candidates, offset: request.fetchOffset, limit: request.fetchLimit)
    }

    /// Stage 6 for managed object results, with relationshipKeyPathsForPrefetching loaded.
    private func objects(
        for candidates: [FetchCandidate], _ request: NSFetchRequest<NSFetchRequestResult>, entity: NSEntityDescription
    ) throws -> [NSManagedObject] {
        let keyPaths = request.relationshipKeyPathsForPrefetching ?? []
        if !keyPaths.isEmpty { try validatePrefetching(keyPaths, from: entity) }
        if request.includesPropertyValues { try checkTransformableValues(candidates) }
        let objects = fetchedObjects(candidates, request)
        if !keyPaths.isEmpty && !(request.fetchBatchSize > 0 && parent == nil) {
            try prefetch(keyPaths, of: objects)
        }
        return objects
    }

    // MARK: Stages 1-3

    private func requireCoordinator() throws -> NSPersistentStoreCoordinator {
        guard let coordinator = persistentStoreCoordinator else { throw CoreDataError.noCoordinator }
        return coordinator
    }

    /// Stage 1: the request's entity, resolved from its name in the coordinator's model once
    /// (and remembered on the request, as Core Data sets `entity` when a request executes).
    func resolveEntity(of request: NSFetchRequest<NSFetchRequestResult>) throws -> NSEntityDescription {
        let model = try requireCoordinator().managedObjectModel
        return try request.storage.entity(resolvingWith: { name in
            guard let entity = model.entitiesByName[name] else {
                throw CoreDataError.make(
                    NSCoreDataError, "fetch request names entity '\(name)', which the model does not have",
                    userInfo: ["entityName": name])
            }
            return entity
        })
    }

    /// Stages 2-3: the IDs (and rows) of the matching objects of `entity` (the request's,
    /// resolved), store rows first, then pending inserts and updates.
    func candidates(for request: NSFetchRequest<NSFetchRequestResult>, entity: NSEntityDescription) throws
        -> FetchCandidates
    {
        // The rows come by their permanent IDs: objects known by temporary ones take them first.
        adoptDeliveredPermanentIDs()
        let coordinator = try requireCoordinator()
        let plan = StoreFetchPlan(request, entity: entity, mayStopEarly: !chainHasChanges())
        let answer = try readingQueryGeneration { try coordinator.fetchRows(request, plan: plan) }
        let isSorted = answer.isSorted
        // The answer's array is this function's alone, so its rows move into the candidates.
        var rows = (consume answer).rows
        guard request.includesPendingChanges else {
            return FetchCandidates(list: Self.candidates(moving: &rows), storeSorted: isSorted, matcher: nil)
        }
        let pending = pendingChanges()
        // Nothing unsaved anywhere in the chain: the rows are the answer (no per-row lookups).
        if pending.changedInOrder.isEmpty, pending.deleted.isEmpty {
            return FetchCandidates(list: Self.candidates(moving: &rows), storeSorted: isSorted, matcher: nil)
        }
        var result: [FetchCandidate] = []
        result.reserveCapacity(rows.count)
        for row in rows where !pending.deleted.contains(row.objectID) {
            guard pending.changed.contains(row.objectID) else {
                result.append(FetchCandidate(objectID: row.objectID, row: row, object: nil))
                continue
            }
            // A changed object is matched on its unsaved values below; refreshing first
            // lets stored values it has not changed take part.
            if request.shouldRefreshRefetchedObjects, parent == nil, let object = registry[row.objectID],
                !object.isFault
            {
                refreshRefetched(object, from: row)
            }
        }
        let matcher = FetchRequestMatcher(request, entity: entity)
        // The entity is checked first: `object(with:)` would register objects of any entity.
        for id in pending.changedInOrder where matcher.includes(id.entity) && !pending.deleted.contains(id) {
            let object = self.object(with: id)
            if try matcher.matches(object) { result.append(FetchCandidate(objectID: id, row: nil, object: object)) }
        }
        return FetchCandidates(list: result, storeSorted: isSorted, matcher: matcher)
    }

    /// `rows` as candidates, in order, each row moved out of the array (left empty): a copy
    /// of each retained its ID and values, which the array then released again.
    private static func candidates(moving rows: inout [StoreRow]) -> [FetchCandidate] {
        let count = rows.count
        // Taken from the end, where taking an element moves it out without shifting the
        // rest, into its place from the end (reversing a list afterwards copied each row).
        return [FetchCandidate](unsafeUninitializedCapacity: count) { buffer, initialized in
            var index = count
            while index > 0, let row = rows.popLast() {
                index -= 1
                buffer.initializeElement(at: index, to: FetchCandidate(objectID: row.objectID, row: row, object: nil))
            }
            initialized = count
        }
    }

    /// Whether this context or an ancestor has unsaved changes.
    func chainHasChanges() -> Bool {
        if hasChanges { return true }
        guard let parent else { return false }
        return parent.performAndWait { parent.chainHasChanges() }
    }

    /// IDs inserted or updated (in order, inserted first) and deleted, in this context and its ancestors.
    func pendingChanges() -> (
        changedInOrder: [NSManagedObjectID], changed: Set<NSManagedObjectID>,
        deleted: Set<NSManagedObjectID>
    ) {
        var order: [NSManagedObjectID] = []
        var changed: Set<NSManagedObjectID> = []
        var deletedIDs: Set<NSManagedObjectID> = []
        if let parent {
            let inherited = parent.performAndWait { parent.pendingChanges() }
            order = inherited.changedInOrder
            changed = inherited.changed
            deletedIDs = inherited.deleted
        }
        for object in inserted where changed.insert(object.objectID).inserted { order.append(object.objectID) }
        for object in updated where object.hasDirtySlots && changed.insert(object.objectID).inserted {
            order.append(object.objectID)
        }
        for object in deleted { deletedIDs.insert(object.objectID) }
        return (order, changed, deletedIDs)
    }

    // MARK: Stages 4-6

    /// Turns rows into loaded registered objects, for dictionary results (a registered object keeps its state).
    func materialize(_ candidates: inout [FetchCandidate]) {
        for index in candidates.indices where candidates[index].object == nil {
            let id = candidates[index].objectID
            let object = self.object(with: id)
            if object.isFault, parent == nil, let row = candidates[index].row {
                fill(object, row: row)
            }
            candidates[index].object = object
        }
    }

    /// Whether every candidate is read through its fetched row, so rows the store answered
    /// sorted (``StoreFetchAnswer/isSorted``) are sorted candidates: a loaded registered
    /// object sorts by its own values, which may be older than its row.
    private func isReadThroughRows(_ candidates: [FetchCandidate]) -> Bool {
        for candidate in candidates {
            guard candidate.object == nil, candidate.row != nil else { return false }
            if let object = registry[candidate.objectID], !object.isFault { return false }
        }
        return true
    }

    /// Stage 4: orders candidates by the matcher's sort descriptors (a stable sort, compiled
    /// for the request's entity).
    ///
    /// A candidate is read through its object when that is loaded, else through its
    /// fetched row, so sorting fires no faults.
    func sortResults(_ candidates: [FetchCandidate], by matcher: FetchRequestMatcher) throws -> [FetchCandidate] {
        let compiled = try matcher.compiledSortDescriptors()
        let makeView = try rowViewMaker()
        var records: [FetchSortRecord] = []
        records.reserveCapacity(candidates.count)
        for (index, candidate) in candidates.enumerated() {
            let object = candidate.object ?? registry[candidate.objectID]
            if let object, !object.isFault || candidate.row == nil {
                records.append(FetchSortRecord(index: index, object: object))
            } else if let row = candidate.row {
                records.append(FetchSortRecord(index: index, row: row, makeView: makeView))
            } else {
                records.append(FetchSortRecord(index: index, object: self.object(with: candidate.objectID)))
            }
        }
        return try compiled.sort(records: records).map { candidates[$0.index] }
    }

    /// Makes views of fetched rows whose relationships resolve through the coordinator:
    /// key paths are read on rows without loading objects.
    func rowViewMaker() throws -> (StoreRow) -> StoreRowView {
        let coordinator = try requireCoordinator()
        // A pinned context reads its query generation's snapshot here too.
        let resolve: (NSManagedObjectID) throws -> StoreRow? = { id in
            try self.readingQueryGeneration { try coordinator.row(for: id) }
        }
        let resolveToMany: (NSRelationshipDescription, NSManagedObjectID) throws -> [NSManagedObjectID] = {
            relationship, id in
            try self.readingQueryGeneration { try coordinator.objectIDs(forRelationship: relationship, of: id) }
        }
        return { row in StoreRowView(row: row, resolve: resolve, resolveToMany: resolveToMany) }
    }

    /// Stage 5: skips `offset` candidates and keeps at most `limit` (0: all).
    func window(_ candidates: [FetchCandidate], offset: Int, limit: Int) -> [FetchCandidate] {
        let start = min(max(offset, 0), candidates.count)
        let end = limit > 0 ? min(start + limit, candidates.count) : candidates.count
        if start == 0 && end == candidates.count { return candidates }
        return Array(candidates[start..<end])
    }

}
