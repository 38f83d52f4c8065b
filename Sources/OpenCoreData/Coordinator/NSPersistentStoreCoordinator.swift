// The coordinator: one model, its stores, and the single gate every row passes
// through. It serializes calls into its stores, so contexts on many threads can
// share it and stores need no locking of their own.
import Foundation

/// Connects contexts to the persistent stores holding a model's objects.
///
/// ```swift
/// let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
/// try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
/// let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
/// context.persistentStoreCoordinator = coordinator
/// ```
open class NSPersistentStoreCoordinator: NSObject, @unchecked Sendable {
    /// The model of the coordinator's stores; immutable from now on.
    public let managedObjectModel: NSManagedObjectModel
    /// The coordinator's name, for debugging.
    open var name: String?
    private let lock = NSRecursiveLock()
    private var stores: [NSPersistentStore] = []
    private var mergingContexts: [WeakContext] = []
    /// What stores and query generations keep instead of `weak` (WeakHandle.swift).
    let referenceHandle = WeakHandle<NSPersistentStoreCoordinator>()
    /// The model's derived attributes, checked when the first store is added (under `lock`).
    private(set) var derivedPlan: DerivedAttributePlan?

    nonisolated(unsafe) private static var storeClasses: [String: NSPersistentStore.Type] = [
        NSInMemoryStoreType: NSInMemoryStore.self,
        NSSQLiteStoreType: PageFileStore.self,
        NSBinaryStoreType: NSBinaryStore.self,
    ]
    private static let registryLock = NSLock()

    /// A coordinator for `model`; the model becomes immutable.
    public init(managedObjectModel model: NSManagedObjectModel) {
        self.managedObjectModel = model
        model.freeze()
        super.init()
        referenceHandle.attach(self)
    }

    deinit {
        referenceHandle.clear()
    }

    // MARK: Store types

    /// Makes `storeClass` the store of type `storeType` (nil unregisters it).
    open class func registerStoreClass(_ storeClass: AnyClass?, type storeType: String) {
        registryLock.lock()
        defer { registryLock.unlock() }
        storeClasses[storeType] = storeClass as? NSPersistentStore.Type
    }

    /// The registered store types.
    open class var registeredStoreTypes: [String: NSValue] {
        registryLock.lock()
        defer { registryLock.unlock() }
        return Dictionary(uniqueKeysWithValues: storeClasses.keys.map { ($0, NSValue()) })
    }

    static func storeClass(for type: String) throws -> NSPersistentStore.Type {
        registryLock.lock()
        let found = storeClasses[type]
        registryLock.unlock()
        guard let found else {
            throw CoreDataError.make(
                NSPersistentStoreInvalidTypeError,
                "unknown or not yet available persistent store type '\(type)' (available: "
                    + "\(registeredStoreTypes.keys.sorted().joined(separator: ", ")))",
                userInfo: [NSStoreTypeKey: type])
        }
        return found
    }

    /// The metadata of the store of `storeType` at `url`, without adding it.
    ///
    /// - Throws: `NSPersistentStoreInvalidTypeError` for an unknown type; the store's error.
    open class func metadataForPersistentStore(ofType storeType: String, at url: URL, options: [AnyHashable: Any]?)
        throws -> [String: Any]
    {
        try storeClass(for: storeType).metadataForPersistentStore(with: url)
    }

    // MARK: Stores

    /// The coordinator's stores.
    open var persistentStores: [NSPersistentStore] {
        lock.lock()
        defer { lock.unlock() }
        return stores
    }

    /// Adds a store of `storeType` at `url` (nil for the in-memory store).
    ///
    /// A file store at `/dev/null` lives in memory, as Core Data's SQLite store does
    /// there: each such store is new, empty and private, and gone when removed — the
    /// guides' recipe for isolated tests with the on-disk store's features.
    ///
    /// ```swift
    /// let description = NSPersistentStoreDescription(url: URL(fileURLWithPath: "/dev/null"))
    /// container.persistentStoreDescriptions = [description]
    /// ```
    ///
    /// - Throws: `NSPersistentStoreInvalidTypeError` (134000) for an unknown store type;
    ///   `NSPersistentStoreIncompatibleSchemaError` (134020) for a model the stores cannot
    ///   hold (a derived attribute whose expression they cannot compute, a composite
    ///   element of a type Core Data forbids), naming the attribute; the store's error
    ///   when it cannot open.
    @discardableResult
    open func addPersistentStore(
        ofType storeType: String, configurationName configuration: String?, at url: URL?,
        options: [AnyHashable: Any]?
    ) throws -> NSPersistentStore {
        let type = try NSPersistentStoreCoordinator.storeClass(for: storeType)
        try managedObjectModel.checkStoreSupport(storeType: storeType)
        let plan = try DerivedAttributePlan(model: managedObjectModel, storeType: storeType)
        if url == nil, storeType == NSSQLiteStoreType || storeType == NSBinaryStoreType {
            throw CoreDataError.make(
                NSPersistentStoreOpenError,
                "a store of type \(storeType) needs a file URL (for one in memory use NSInMemoryStoreType, "
                    + "or the URL /dev/null)")
        }
        if let staged = options?[NSPersistentStoreStagedMigrationManagerOptionKey] as? NSStagedMigrationManager,
            let url
        {
            try staged.migrate(storeAt: url, type: storeType, options: options ?? [:], to: managedObjectModel)
        }
        let store = type.init(
            persistentStoreCoordinator: self, configurationName: configuration,
            at: url ?? URL(fileURLWithPath: "/dev/null"), options: options)
        try store.loadMetadata()
        lock.lock()
        if !plan.isEmpty { derivedPlan = plan }
        stores.append(store)
        lock.unlock()
        store.didAdd(to: self)
        return store
    }

    /// Adds the store `description` describes and calls `completionHandler` with any error.
    open func addPersistentStore(
        with description: NSPersistentStoreDescription,
        completionHandler: (NSPersistentStoreDescription, Error?) -> Void
    ) {
        do {
            var options = description.options as [AnyHashable: Any]
            if description.isReadOnly { options[NSReadOnlyPersistentStoreOption] = true }
            options[NSMigratePersistentStoresAutomaticallyOption] = description.shouldMigrateStoreAutomatically
            options[NSInferMappingModelAutomaticallyOption] = description.shouldInferMappingModelAutomatically
            try addPersistentStore(
                ofType: description.type, configurationName: description.configuration, at: description.url,
                options: options)
            completionHandler(description, nil)
        } catch {
            completionHandler(description, error)
        }
    }

    /// Removes `store`; it closes its files.
    ///
    /// - Throws: `NSPersistentStoreOperationError` when the store is not the coordinator's.
    open func remove(_ store: NSPersistentStore) throws {
        lock.lock()
        let index = stores.firstIndex { $0 === store }
        if let index { stores.remove(at: index) }
        lock.unlock()
        guard index != nil else {
            throw CoreDataError.make(NSPersistentStoreOperationError, "the store is not one of this coordinator's")
        }
        store.willRemove(from: self)
    }

    /// Copies every object of `store` into a new store of `storeType` at `url`, adds the new
    /// store and removes `store`. Objects get new IDs in the new store; relationships follow.
    ///
    /// Contexts holding objects of the old store should be reset afterwards.
    ///
    /// - Throws: `NSPersistentStoreOperationError` when `store` is not the coordinator's;
    ///   `NSPersistentStoreInvalidTypeError` for an unknown type; a store error. On error
    ///   the new store is removed again and `store` stays.
    /// - Complexity: O(rows) in memory.
    @discardableResult
    open func migratePersistentStore(
        _ store: NSPersistentStore, to url: URL, options: [AnyHashable: Any]? = nil, type storeType: String
    ) throws -> NSPersistentStore {
        guard persistentStores.contains(where: { $0 === store }) else {
            throw CoreDataError.make(NSPersistentStoreOperationError, "the store is not one of this coordinator's")
        }
        let destination = try addPersistentStore(
            ofType: storeType, configurationName: store.configurationName, at: url, options: options)
        do {
            try withStores { try copyRows(from: store, to: destination) }
        } catch {
            try? remove(destination)
            throw error
        }
        try remove(store)
        return destination
    }

    private func copyRows(from source: NSPersistentStore, to destination: NSPersistentStore) throws {
        var rows: [StoreRow] = []
        for entity in managedObjectModel.entities where !entity.isAbstract {
            let request = NSFetchRequest<NSFetchRequestResult>()
            request.entity = entity
            request.includesSubentities = false
            rows += try source.fetchRows(request)
        }
        let newIDs = try destination.obtainPermanentIDs(for: rows.map(\.objectID.entity))
        guard newIDs.count == rows.count else {
            throw CoreDataError.make(NSMigrationError, "the destination store returned the wrong number of object IDs")
        }
        var map: [NSManagedObjectID: NSManagedObjectID] = [:]
        for (row, id) in zip(rows, newIDs) { map[row.objectID] = id }
        var request = StoreSaveRequest()
        for (row, id) in zip(rows, newIDs) {
            let layout = row.objectID.entity.layout
            var values = row.values
            for slot in values.indices {
                let relationship = slot < layout.relationshipBySlot.count ? layout.relationshipBySlot[slot] : nil
                switch values[slot] {
                case .objectID(let old):
                    if let new = map[old] {
                        values[slot] = .objectID(new)
                    } else if relationship != nil {
                        values[slot] = .null
                    }
                case .objectIDs(let old):
                    values[slot] = .objectIDs(old.compactMap { map[$0] })
                case .unresolved:
                    if let relationship {
                        let old = try source.objectIDs(forRelationship: relationship, of: row.objectID)
                        values[slot] = .objectIDs(old.compactMap { map[$0] })
                    }
                default:
                    break
                }
            }
            request.insertedRows.append(StoreRow(objectID: id, version: 0, values: values))
        }
        _ = try destination.save(request)
    }

    /// The store at `url`, if the coordinator has one.
    open func persistentStore(for url: URL) -> NSPersistentStore? {
        persistentStores.first { $0.url?.standardizedFileURL == url.standardizedFileURL }
    }

    /// The metadata of `store`.
    open func metadata(for store: NSPersistentStore) -> [String: Any] {
        store.metadata ?? [:]
    }

    /// Replaces the metadata of `store` (saved with its next save).
    open func setMetadata(_ metadata: [String: Any]?, for store: NSPersistentStore) {
        store.metadata = metadata ?? [:]
    }

    /// The object ID a URI from `uriRepresentation()` names, if one of the stores holds it.
    open func managedObjectID(forURIRepresentation url: URL) -> NSManagedObjectID? {
        let host: String
        let parts: [String]
        if let plain = PlainObjectURI(url.absoluteString) {
            host = plain.host
            parts = [plain.entity, plain.key]
        } else {
            guard url.scheme == "x-coredata", let urlHost = url.host else { return nil }
            host = urlHost
            parts = url.path.split(separator: "/").map(String.init)
        }
        guard parts.count == 2, parts[1].hasPrefix("p"), let key = Int64(parts[1].dropFirst()) else { return nil }
        guard let store = persistentStores.first(where: { $0.identifier == host }),
            let entity = managedObjectModel.entitiesByName[parts[0]]
        else { return nil }
        return store.newObjectID(for: entity, key: key)
    }

    // MARK: Rows (what contexts call)

    /// The stores, for code already inside ``withStores(_:)``.
    var persistentStoresUnlocked: [NSPersistentStore] { stores }

    func withStores<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    /// The stores `request` reads: those it names (or all), less those the running query
    /// generation left out (added after it bound).
    private func storesFor(_ request: NSPersistentStoreRequest) -> [NSPersistentStore] {
        let named = configurationStores(for: request)
        guard let generation = QueryGeneration.current else { return named }
        return named.filter { generation.covers($0) }
    }

    /// The stores `request` names, else those whose configuration holds its entity.
    private func configurationStores(for request: NSPersistentStoreRequest) -> [NSPersistentStore] {
        if let affected = request.affectedStores { return affected }
        guard stores.count > 1, let fetch = request as? NSFetchRequest<NSFetchRequestResult>,
            let entity = fetch.entity ?? fetch.entityName.flatMap({ managedObjectModel.entitiesByName[$0] })
        else { return stores }
        // A store added with a configuration holds only that configuration's entities.
        return stores.filter { store in
            entity.hierarchy(includingSubentities: true).contains { holds(store, $0) }
        }
    }

    /// Whether `store`'s configuration includes `entity` (the default configuration has every entity).
    private func holds(_ store: NSPersistentStore, _ entity: NSEntityDescription) -> Bool {
        guard let members = managedObjectModel.entities(forConfigurationName: store.configurationName) else {
            return false
        }
        return members.contains { $0 === entity }
    }

    /// Whether a read of `store` goes ahead: it is one of the coordinator's stores and the
    /// running query generation covers it.
    private func reads(_ store: NSPersistentStore) -> Bool {
        stores.contains { $0 === store } && QueryGeneration.current?.covers(store) != false
    }

    /// The rows of every store `request` affects; sorted only when one store answered and sorted them.
    func fetchRows(_ request: NSFetchRequest<NSFetchRequestResult>, plan: StoreFetchPlan) throws -> StoreFetchAnswer {
        try withStores {
            let stores = storesFor(request)
            if OpenCoreDataDebugLog.isOn(2) {
                for store in stores { OpenCoreDataDebugLog.log(2, "  plan: \(store.debugPlan(for: request))") }
            }
            if stores.count == 1 { return try stores[0].fetchRows(request, plan: plan) }
            var rows: [StoreRow] = []
            for store in stores { rows.append(contentsOf: try store.fetchRows(request, plan: plan).rows) }
            return StoreFetchAnswer(rows: rows, isSorted: false)
        }
    }

    func countRows(_ request: NSFetchRequest<NSFetchRequestResult>) throws -> Int {
        try withStores {
            if OpenCoreDataDebugLog.isOn(2) {
                for store in storesFor(request) {
                    OpenCoreDataDebugLog.log(2, "  plan: \(store.debugPlan(for: request))")
                }
            }
            return try storesFor(request).reduce(0) { $0 + (try $1.countRows(request)) }
        }
    }

    func row(for objectID: NSManagedObjectID) throws -> StoreRow? {
        guard let store = objectID.persistentStore else { return nil }
        return try withStores { reads(store) ? try store.row(for: objectID) : nil }
    }

    /// ``row(for:)`` for a fault to fill: the store may answer it in the slot form.
    func objectRow(for objectID: NSManagedObjectID) throws -> StoreRow? {
        guard let store = objectID.persistentStore else { return nil }
        return try withStores { reads(store) ? try store.objectRow(for: objectID) : nil }
    }

    /// The rows of `objectIDs` in order (nil where missing), one `rows(for:)` call per store;
    /// references to the object of `named` may be given as `named` itself; with
    /// `toManyNames`, only the to-manys of those names need resolving; `fillsObjects`: the
    /// caller only fills faults from the rows (a store may answer them in the slot form).
    func rows(
        for objectIDs: [NSManagedObjectID], naming named: NSManagedObjectID? = nil,
        resolvingToMany toManyNames: Set<String>? = nil, fillsObjects: Bool = false
    ) throws -> [StoreRow?] {
        func rows(of store: NSPersistentStore, _ objectIDs: [NSManagedObjectID]) throws -> [StoreRow?] {
            if fillsObjects, toManyNames == nil { return try store.objectRows(for: objectIDs, naming: named) }
            if let named { return try store.rows(for: objectIDs, naming: named) }
            if let toManyNames { return try store.rows(for: objectIDs, resolvingToMany: toManyNames) }
            return try store.rows(for: objectIDs)
        }
        return try withStores {
            // One store holds them all (a batch of faults, a prefetch step): asked once.
            if let store = objectIDs.first?.persistentStore, objectIDs.allSatisfy({ $0.persistentStore === store }) {
                var result = [StoreRow?](repeating: nil, count: objectIDs.count)
                guard reads(store) else { return result }
                let rows = try rows(of: store, objectIDs)
                if rows.count == objectIDs.count { return rows }
                for (position, row) in zip(result.indices, rows) { result[position] = row }
                return result
            }
            var result = [StoreRow?](repeating: nil, count: objectIDs.count)
            var positionsByStore: [ObjectIdentifier: (store: NSPersistentStore, positions: [Int])] = [:]
            for (position, id) in objectIDs.enumerated() {
                guard let store = id.persistentStore, reads(store) else { continue }
                positionsByStore[ObjectIdentifier(store), default: (store, [])].positions.append(position)
            }
            for (store, positions) in positionsByStore.values {
                let rows = try rows(of: store, positions.map { objectIDs[$0] })
                for (position, row) in zip(positions, rows) { result[position] = row }
            }
            return result
        }
    }

    func objectIDs(forRelationship relationship: NSRelationshipDescription, of objectID: NSManagedObjectID) throws
        -> [NSManagedObjectID]
    {
        guard let store = objectID.persistentStore else { return [] }
        guard QueryGeneration.current?.covers(store) != false else { return [] }
        return try withStores { try store.objectIDs(forRelationship: relationship, of: objectID) }
    }

    /// New permanent IDs, each in the first store whose configuration includes its entity
    /// (the store new objects are assigned to).
    func obtainPermanentIDs(for entities: [NSEntityDescription]) throws -> [NSManagedObjectID] {
        try withStores {
            guard let first = stores.first else {
                throw CoreDataError.make(
                    NSPersistentStoreSaveError, "the coordinator has no persistent store to save objects in")
            }
            if stores.count == 1 { return try first.obtainPermanentIDs(for: entities) }
            var positionsByStore: [ObjectIdentifier: (store: NSPersistentStore, positions: [Int])] = [:]
            for (position, entity) in entities.enumerated() {
                guard let store = stores.first(where: { holds($0, entity) }) else {
                    throw CoreDataError.make(
                        NSPersistentStoreSaveError,
                        "no store of the coordinator holds entity \(entity.name ?? "?"): add a store with a "
                            + "configuration that includes it")
                }
                positionsByStore[ObjectIdentifier(store), default: (store, [])].positions.append(position)
            }
            var result = [NSManagedObjectID?](repeating: nil, count: entities.count)
            for (store, positions) in positionsByStore.values {
                let ids = try store.obtainPermanentIDs(for: positions.map { entities[$0] })
                for (position, id) in zip(positions, ids) { result[position] = id }
            }
            return result.compactMap { $0 }
        }
    }

    /// Whether a derived attribute reads through `relationship`: a save must then list it
    /// as the context holds it (the derived values are computed from the request). The
    /// model answers it, computed once when it froze: asked on every inverse edit.
    func derivesValues(through relationship: NSRelationshipDescription) -> Bool {
        relationship.isReadByDerivedAttribute
    }

    /// Splits a save by store and applies it.
    func save(_ request: StoreSaveRequest) throws -> StoreSaveResult {
        let result = try saveRows(request)
        postRemoteChangeNotifications(after: request)
        return result
    }

    private func saveRows(_ request: StoreSaveRequest) throws -> StoreSaveResult {
        try withStores {
            let request = try derivedPlan.map { try addingDerivedValues(to: request, plan: $0) } ?? request
            if stores.count == 1, let store = stores.first, belongsEntirely(request, to: store) {
                return try store.save(request)
            }
            var byStore: [ObjectIdentifier: StoreSaveRequest] = [:]
            func part(_ store: NSPersistentStore?) -> ObjectIdentifier? {
                guard let store else { return nil }
                if byStore[ObjectIdentifier(store)] == nil {
                    var empty = StoreSaveRequest()
                    empty.checksVersions = request.checksVersions
                    empty.mergePolicyType = request.mergePolicyType
                    empty.upsertObjectIDs = request.upsertObjectIDs
                    empty.upsertedSlots = request.upsertedSlots
                    empty.reinsertedObjectIDs = request.reinsertedObjectIDs
                    empty.transactionAuthor = request.transactionAuthor
                    empty.contextName = request.contextName
                    byStore[ObjectIdentifier(store)] = empty
                }
                return ObjectIdentifier(store)
            }
            for row in request.insertedRows {
                if let key = part(row.objectID.persistentStore) { byStore[key]?.insertedRows.append(row) }
            }
            for update in request.updatedRows {
                if let key = part(update.objectID.persistentStore) { byStore[key]?.updatedRows.append(update) }
            }
            for deletion in request.deletedObjects {
                if let key = part(deletion.objectID.persistentStore) { byStore[key]?.deletedObjects.append(deletion) }
            }
            var result = StoreSaveResult()
            for store in stores {
                guard let part = byStore[ObjectIdentifier(store)], !part.isEmpty else { continue }
                let saved = try store.save(part)
                result.versions.merge(saved.versions) { _, new in new }
                result.replacedObjectIDs.merge(saved.replacedObjectIDs) { _, new in new }
            }
            return result
        }
    }

    private func belongsEntirely(_ request: StoreSaveRequest, to store: NSPersistentStore) -> Bool {
        request.insertedRows.allSatisfy { $0.objectID.persistentStore === store }
            && request.updatedRows.allSatisfy { $0.objectID.persistentStore === store }
            && request.deletedObjects.allSatisfy { $0.objectID.persistentStore === store }
    }

    // MARK: Automatic merging

    func registerAutomaticMerging(_ context: NSManagedObjectContext) {
        withStores {
            mergingContexts.removeAll { $0.context == nil || $0.context === context }
            mergingContexts.append(WeakContext(context: context))
        }
    }

    var automaticallyMergingContexts: [NSManagedObjectContext] {
        withStores {
            mergingContexts.compactMap(\.context).filter { $0.automaticallyMergesChangesFromParent && $0.parent == nil }
        }
    }
}
