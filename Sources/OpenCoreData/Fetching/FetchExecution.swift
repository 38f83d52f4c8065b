// The fetch path, in one place. A fetch runs these stages in order:
//
//   1. resolve      the request's entity (unknown name: a thrown error)
//   2. candidates   the coordinator's stores return matching ROWS (the store
//                   evaluates the predicate, compiled for the entity, on StoreRowView)
//   3. pending      with includesPendingChanges: objects inserted or updated in this
//                   context or its ancestors are re-evaluated in memory; deleted ones
//                   drop out
//   4. sort         sortDescriptors, compiled for the entity (sortResults), on loaded
//                   objects or on the fetched rows: sorting fires no faults
//   5. window       fetchOffset, then fetchLimit (dictionary results: after grouping)
//   6. materialize  rows become registered objects: faults, loaded, or in batches
//   7. shape        resultType: objects, object IDs, dictionaries
//                   (FetchDictionaryResults.swift) or a count
//
// Stores return every matching row; limit and offset are applied here, after pending
// changes are merged. Managed objects come back as faults, loaded or in batches as the
// request asks (Faulting.swift), then relationshipKeyPathsForPrefetching loads their
// destinations (FetchPrefetching.swift).
import Foundation

/// Predicate evaluation and entity sets shared by stores and contexts.
enum FetchEvaluation {
    /// Whether `object` satisfies `predicate`. The one place fetches evaluate predicates.
    static func matches(_ predicate: NSPredicate, _ object: Any?) throws -> Bool {
        try predicate.evaluateThrowing(with: object)
    }

    /// `predicate` compiled for the objects and rows of `entity` (keys resolved to slots).
    ///
    /// - Throws: the predicate's parse error; `KeyValueCodingError.unknownKey` for a key the
    ///   entity does not have.
    static func compile(_ predicate: NSPredicate, for entity: NSEntityDescription) throws -> CompiledPredicate {
        try predicate.compiled(for: entity.frozenLayoutIfAny)
    }

    /// `entity` and, when asked, all of its sub-entities, depth first.
    static func entities(_ entity: NSEntityDescription, includingSubentities: Bool) -> [NSEntityDescription] {
        guard includingSubentities else { return [entity] }
        var result: [NSEntityDescription] = [entity]
        var index = 0
        while index < result.count {
            result.append(contentsOf: result[index].subentities)
            index += 1
        }
        return result
    }
}

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
}

/// One candidate result: an object ID, with its store row when it came from a store.
struct FetchCandidate {
    let objectID: NSManagedObjectID
    let row: StoreRow?
    var object: NSManagedObject?
}

extension NSManagedObjectContext {
    /// The objects (or IDs, dictionaries, count) matching `request`.
    ///
    /// - Throws: `NSCoreDataError` (134060) for an entity the model lacks; the store's
    ///   error; `NSCoreDataError` when `ResultType` does not match the result type.
    public func fetch<T>(_ request: NSFetchRequest<T>) throws -> [T] {
        ConcurrencyDebug.check(self, "NSManagedObjectContext.fetch(_:)")
        let results = try executeFetchResults(request.untyped())
        var typed: [T] = []
        typed.reserveCapacity(results.count)
        switch results {
        case .objects(let objects):
            // An object whose class is that of an object which passed `as? T` is a `T`
            // too: reinterpret it instead of casting each one (see FetchResultCast).
            var cast = FetchResultCast<T>()
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
        let untyped = request.untyped()
        processPendingChanges()
        _ = try resolveEntity(of: untyped)
        let coordinator = try requireCoordinator()
        if !untyped.includesPendingChanges || !chainHasChanges(), untyped.fetchOffset == 0, untyped.fetchLimit == 0 {
            return try coordinator.countRows(untyped)
        }
        return window(try candidates(for: untyped), offset: untyped.fetchOffset, limit: untyped.fetchLimit).count
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
        var candidates = try candidates(for: request)
        let entity = try resolveEntity(of: request)
        if request.resultType == .dictionaryResultType {
            materialize(&candidates)
            if let descriptors = request.sortDescriptors, !descriptors.isEmpty {
                candidates = try sortResults(candidates, by: descriptors, entity: entity)
            }
            // Groups form before the window: limit and offset count dictionaries.
            let dictionaries = try dictionaryResults(candidates.compactMap(\.object), request)
            let start = min(max(request.fetchOffset, 0), dictionaries.count)
            let end = request.fetchLimit > 0 ? min(start + request.fetchLimit, dictionaries.count) : dictionaries.count
            return .values(Array(dictionaries[start..<end]))
        }
        if let descriptors = request.sortDescriptors, !descriptors.isEmpty, !(try isPresorted(candidates, request)) {
            candidates = try sortResults(candidates, by: descriptors, entity: entity)
        }
        candidates = window(candidates, offset: request.fetchOffset, limit: request.fetchLimit)
        switch request.resultType {
        case .managedObjectIDResultType:
            return .values(candidates.map(\.objectID))
        case .countResultType:
            return .values([NSNumber(value: candidates.count)])
        default:
            let keyPaths = request.relationshipKeyPathsForPrefetching ?? []
            if !keyPaths.isEmpty { try validatePrefetching(keyPaths, from: entity) }
            let objects = fetchedObjects(candidates, request)
            if !keyPaths.isEmpty && !(request.fetchBatchSize > 0 && parent == nil) {
                try prefetch(keyPaths, of: objects)
            }
            return .objects(objects)
        }
    }

    // MARK: Stages 1-3

    private func requireCoordinator() throws -> NSPersistentStoreCoordinator {
        guard let coordinator = persistentStoreCoordinator else { throw CoreDataError.noCoordinator }
        return coordinator
    }

    func resolveEntity(of request: NSFetchRequest<NSFetchRequestResult>) throws -> NSEntityDescription {
        let coordinator = try requireCoordinator()
        if let entity = request.storage.entity { return entity }
        guard let name = request.storage.entityName else {
            throw CoreDataError.make(NSCoreDataError, "fetch request has neither an entity nor an entity name")
        }
        guard let entity = coordinator.managedObjectModel.entitiesByName[name] else {
            throw CoreDataError.make(
                NSCoreDataError, "fetch request names entity '\(name)', which the model does not have",
                userInfo: ["entityName": name])
        }
        request.storage.entity = entity
        return entity
    }

    /// Stages 1-3: the IDs (and rows) of the matching objects, store rows first, then pending inserts.
    func candidates(for request: NSFetchRequest<NSFetchRequestResult>) throws -> [FetchCandidate] {
        processPendingChanges()
        let entity = try resolveEntity(of: request)
        let coordinator = try requireCoordinator()
        request.storage.storeMayApplyWindow =
            request.fetchLimit > 0 && request.resultType != .dictionaryResultType && !chainHasChanges()
        request.storage.storeReturnedSortedRows = false
        defer { request.storage.storeMayApplyWindow = false }
        let rows = try coordinator.fetchRows(request)
        guard request.includesPendingChanges else {
            return rows.map { FetchCandidate(objectID: $0.objectID, row: $0, object: nil) }
        }
        let pending = pendingChanges()
        if pending.changedInOrder.isEmpty, pending.deleted.isEmpty {
            // Nothing unsaved anywhere in the chain: the rows are the answer (no per-row lookups).
            return rows.map { FetchCandidate(objectID: $0.objectID, row: $0, object: nil) }
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
        let family = Set(
            FetchEvaluation.entities(entity, includingSubentities: request.includesSubentities).map(
                ObjectIdentifier.init))
        for id in pending.changedInOrder where family.contains(ObjectIdentifier(id.entity)) {
            if pending.deleted.contains(id) { continue }
            let object = self.object(with: id)
            if object.isDeleted { continue }
            if let predicate = request.predicate, !(try FetchEvaluation.matches(predicate, object)) { continue }
            result.append(FetchCandidate(objectID: id, row: nil, object: object))
        }
        return result
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
                fill(object, values: row.values, version: row.version)
            }
            candidates[index].object = object
        }
    }

    /// Whether `candidates` are already in sort order: the one store answering returned them
    /// sorted (`storeReturnedSortedRows`, which it sets only when the context's stable sort
    /// of its rows would not move them), and every candidate is read through that row — a
    /// loaded registered object sorts by its own values, which may be older than the row.
    private func isPresorted(_ candidates: [FetchCandidate], _ request: NSFetchRequest<NSFetchRequestResult>)
        throws -> Bool
    {
        defer { request.storage.storeReturnedSortedRows = false }
        guard request.storage.storeReturnedSortedRows, try requireCoordinator().persistentStores.count == 1 else {
            return false
        }
        for candidate in candidates {
            guard candidate.object == nil, candidate.row != nil else { return false }
            if let object = registry[candidate.objectID], !object.isFault { return false }
        }
        return true
    }

    /// Stage 4: orders candidates by `descriptors` (a stable sort, compiled for the entity).
    ///
    /// A candidate is read through its object when that is loaded, else through its
    /// fetched row, so sorting fires no faults.
    func sortResults(_ candidates: [FetchCandidate], by descriptors: [NSSortDescriptor], entity: NSEntityDescription)
        throws -> [FetchCandidate]
    {
        let compiled = try CompiledSortDescriptors(descriptors, schema: entity.frozenLayoutIfAny)
        let coordinator = try requireCoordinator()
        let resolve: (NSManagedObjectID) throws -> StoreRow? = { try coordinator.row(for: $0) }
        let resolveToMany: (NSRelationshipDescription, NSManagedObjectID) throws -> [NSManagedObjectID] = {
            try coordinator.objectIDs(forRelationship: $0, of: $1)
        }
        let makeView = { (row: StoreRow) in StoreRowView(row: row, resolve: resolve, resolveToMany: resolveToMany) }
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

    /// Stage 5: skips `offset` candidates and keeps at most `limit` (0: all).
    func window(_ candidates: [FetchCandidate], offset: Int, limit: Int) -> [FetchCandidate] {
        let start = min(max(offset, 0), candidates.count)
        let end = limit > 0 ? min(start + limit, candidates.count) : candidates.count
        if start == 0 && end == candidates.count { return candidates }
        return Array(candidates[start..<end])
    }

}
