// The store protocol: what every persistent store implements, shaped after Core
// Data's NSIncrementalStore. Rows, not objects, cross it (see StoreRow.swift).
//
// A store subclass overrides:
//   loadMetadata()                     open or create the store; set `metadata`
//   fetchRows(_:)                      rows of the request's entity matching its predicate
//                                      (contexts call fetchRows(_:plan:), StoreFetchPlan.swift)
//   countRows(_:)                      how many (default: fetchRows(_:).count)
//   row(for:)                          the stored values of one object
//   rows(for:)                         the same for many (default: row(for:) per ID)
//   objectIDs(forRelationship:of:)     a to-many relationship a row left `.unresolved`
//   obtainPermanentIDs(for:)           new keys for inserted objects
//   save(_:)                           apply inserted/updated/deleted rows atomically
// Batch requests reach a store through executeBatch(_:) (internal), which by default
// runs them through the calls above (StoreBatch+Save.swift).
// The coordinator serializes every call into one store, so a store needs no locking of
// its own against the contexts of one coordinator.
import Foundation

/// A persistent store: where a coordinator keeps the rows of its objects.
///
/// Subclass it to write your own store and register the subclass with
/// `NSPersistentStoreCoordinator.registerStoreClass(_:type:)`; override the row
/// methods below. Every row method of this base class throws
/// `NSPersistentStoreUnsupportedRequestTypeError`.
open class NSPersistentStore: NSObject, @unchecked Sendable {
    /// The store's type string (for example `NSInMemoryStoreType`).
    open var type: String { String(describing: Swift.type(of: self)) }
    /// The store's unique identifier (its `NSStoreUUIDKey`); it prefixes object ID URIs.
    open var identifier: String!
    /// The store's location.
    open var url: URL?
    /// The options the store was added with.
    open private(set) var options: [AnyHashable: Any]?
    /// The name of the model configuration the store holds.
    open private(set) var configurationName: String
    /// Whether saves to the store are refused.
    open var isReadOnly: Bool = false
    /// The store's metadata: type, UUID, model version hashes, and your own keys.
    open var metadata: [String: Any]!
    /// Whether the store keeps every unordered to-many whose inverse is a to-one as the
    /// to-ones naming the object say (StoreRelationshipIntegrity.swift), so a save may
    /// leave such a list `.unresolved` in an updated row. Only this module's stores do.
    var listsFollowInverseToOnes: Bool { false }
    /// Whether the store was added with `NSPersistentStoreRemoteChangeNotificationPostOptionKey`
    /// on: read once here (`options` is set only by the initializer), not from the options
    /// dictionary at every save.
    let postsRemoteChangeNotifications: Bool
    /// The coordinator the store belongs to.
    open private(set) var persistentStoreCoordinator: NSPersistentStoreCoordinator? {
        get { coordinatorHandle?.target }
        set { coordinatorHandle = newValue?.referenceHandle }
    }
    private var coordinatorHandle: WeakHandle<NSPersistentStoreCoordinator>?

    /// Creates a store for `coordinator` at `url`. Call ``loadMetadata()`` before use
    /// (the coordinator does).
    public required init(
        persistentStoreCoordinator coordinator: NSPersistentStoreCoordinator?, configurationName: String?,
        at url: URL, options: [AnyHashable: Any]?
    ) {
        self.coordinatorHandle = coordinator?.referenceHandle
        self.configurationName = configurationName ?? "PF_DEFAULT_CONFIGURATION_NAME"
        self.url = url
        self.options = options
        self.isReadOnly = (options?[NSReadOnlyPersistentStoreOption] as? Bool) ?? false
        let postOption = options?[NSPersistentStoreRemoteChangeNotificationPostOptionKey]
        postsRemoteChangeNotifications = (postOption as? NSNumber)?.boolValue ?? (postOption as? Bool) ?? false
        super.init()
    }

    /// The metadata of the store at `url` without adding it to a coordinator.
    ///
    /// - Throws: `NSPersistentStoreInvalidTypeError` in this base class.
    open class func metadataForPersistentStore(with url: URL) throws -> [String: Any] {
        throw CoreDataError.make(
            NSPersistentStoreInvalidTypeError, "\(self) cannot read store metadata at \(url.path)")
    }

    /// Opens or creates the store and sets `identifier` and `metadata`.
    open func loadMetadata() throws {
        let uuid = UUID().uuidString
        identifier = uuid
        metadata = [NSStoreTypeKey: type, NSStoreUUIDKey: uuid]
    }

    /// Called after the coordinator added the store.
    open func didAdd(to coordinator: NSPersistentStoreCoordinator) {}

    /// Called before the coordinator removes the store: close files here.
    open func willRemove(from coordinator: NSPersistentStoreCoordinator?) {}

    // MARK: Rows

    /// The rows of `request.entity` (and of its sub-entities when
    /// `includesSubentities`) that match `request.predicate`, in a stable order.
    ///
    /// The context has resolved `request.entity`. The store evaluates the predicate
    /// against each row (compile it once with `predicate.compiled(for:)` and evaluate
    /// ``StoreRowView``s) and returns EVERY matching row: it must not apply
    /// `fetchOffset` or `fetchLimit`, which the context applies after merging its
    /// pending changes and sorting. Row order is the store's own (stable) order.
    open func fetchRows(_ request: NSFetchRequest<NSFetchRequestResult>) throws -> [StoreRow] {
        throw unsupported("fetchRows")
    }

    /// The rows of `request` for a context that will use them as `plan` says: what contexts
    /// call. This default answers every row of ``fetchRows(_:)``, unsorted; a store of this
    /// module may return only the plan's leading rows, sorted (the default store does).
    func fetchRows(_ request: NSFetchRequest<NSFetchRequestResult>, plan: StoreFetchPlan) throws -> StoreFetchAnswer {
        StoreFetchAnswer(rows: try fetchRows(request), isSorted: false)
    }

    /// A snapshot of the store for a query generation (NSQueryGenerationToken.swift), or
    /// nil when the store has none and pinned contexts read it as it is now.
    func queryGenerationSnapshot() throws -> AnyObject? { nil }

    /// How the store finds the rows of `request`, for debug logging (level 2): this
    /// default says it evaluates every row.
    func debugPlan(for request: NSFetchRequest<NSFetchRequestResult>) -> String {
        "\(type) store: every row of \(request.entityName ?? "?") evaluated"
    }

    /// How many rows `fetchRows(_:)` would return (ignoring `fetchOffset` and `fetchLimit`).
    open func countRows(_ request: NSFetchRequest<NSFetchRequestResult>) throws -> Int {
        try fetchRows(request).count
    }

    /// The stored row of `objectID`, or nil when the store has no such object.
    open func row(for objectID: NSManagedObjectID) throws -> StoreRow? {
        throw unsupported("row(for:)")
    }

    /// The stored rows of `objectIDs`, in the same order, nil where the store has no such
    /// object: how a batch of faults (`fetchBatchSize`) and prefetched relationships load.
    ///
    /// Every ID belongs to this store. The default calls ``row(for:)`` once per ID;
    /// override it to answer in one pass (one read transaction, sorted key lookups).
    ///
    /// - Complexity: the default is `objectIDs.count` calls of ``row(for:)``.
    open func rows(for objectIDs: [NSManagedObjectID]) throws -> [StoreRow?] {
        try objectIDs.map { try row(for: $0) }
    }

    /// ``rows(for:)``, where a reference in the rows to the object of `named` may be given
    /// as `named` itself rather than a new ID (a resolved to-many's members all name the
    /// object whose relationship it is).
    func rows(for objectIDs: [NSManagedObjectID], naming named: NSManagedObjectID) throws -> [StoreRow?] {
        try rows(for: objectIDs)
    }

    /// The row of `objectID` for a context to fill a fault from: ``row(for:)``. A store of
    /// this module may answer it decoded straight into the object's form (StoreRowSlots.swift).
    func objectRow(for objectID: NSManagedObjectID) throws -> StoreRow? {
        try row(for: objectID)
    }

    /// The rows of `objectIDs` for a context to fill a batch of faults from: ``rows(for:naming:)``
    /// (``rows(for:)`` without `named`). A store of this module may answer rows decoded
    /// straight into the objects' form (StoreRowSlots.swift).
    func objectRows(for objectIDs: [NSManagedObjectID], naming named: NSManagedObjectID?) throws -> [StoreRow?] {
        if let named { return try rows(for: objectIDs, naming: named) }
        return try rows(for: objectIDs)
    }

    /// ``rows(for:)``, where only the to-many relationships named in `names` need their
    /// destinations: a store that keeps to-manys outside its rows may leave the others
    /// `.unresolved` (read through ``objectIDs(forRelationship:of:)`` only if they are read).
    func rows(for objectIDs: [NSManagedObjectID], resolvingToMany names: Set<String>) throws -> [StoreRow?] {
        try rows(for: objectIDs)
    }

    /// The destinations of a to-many `relationship` of `objectID`, for rows that leave it `.unresolved`.
    open func objectIDs(forRelationship relationship: NSRelationshipDescription, of objectID: NSManagedObjectID)
        throws -> [NSManagedObjectID]
    {
        throw unsupported("objectIDs(forRelationship:of:)")
    }

    /// One new permanent ID for each entity in `entities` (one per inserted object).
    open func obtainPermanentIDs(for entities: [NSEntityDescription]) throws -> [NSManagedObjectID] {
        throw unsupported("obtainPermanentIDs(for:)")
    }

    /// Applies `request` atomically: all of it or, when it throws, none of it.
    ///
    /// - Throws: `NSManagedObjectMergeError` (133020) when `request.checksVersions` and a
    ///   row's version differs from the expected one or an updated row is gone, with
    ///   ``StoreVersionConflict`` values under `NSPersistentStoreSaveConflictsErrorKey` so
    ///   the context's merge policy can resolve them; `NSManagedObjectConstraintMergeError`
    ///   (133021) with a ``StoreConstraintConflict`` for every uniqueness clash the request
    ///   does not allow to become an upsert (see `StoreSaveRequest.upsertObjectIDs`);
    ///   `NSPersistentStoreSaveError` otherwise.
    open func save(_ request: StoreSaveRequest) throws -> StoreSaveResult {
        throw unsupported("save(_:)")
    }

    /// Applies a batch insert, update or delete all or nothing (StoreBatch.swift). This
    /// default goes through the public row calls and one ``save(_:)``; the default store
    /// overrides it with one engine transaction.
    func executeBatch(_ operation: StoreBatchOperation) throws -> StoreBatchOutcome {
        try executeBatchThroughSave(operation)
    }

    /// A permanent object ID of this store: for stores to build the IDs of their rows.
    public func newObjectID(for entity: NSEntityDescription, key: Int64) -> NSManagedObjectID {
        NSManagedObjectID(entity: entity, store: self, key: key)
    }

    private func unsupported(_ what: String) -> NSError {
        CoreDataError.make(
            NSPersistentStoreUnsupportedRequestTypeError, "the store type '\(type)' does not implement \(what)")
    }
}
