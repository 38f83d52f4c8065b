// The managed object context: a scratch pad of objects, confined to one queue.
//
// A context registers objects by ID, tracks their changes (inserted, updated,
// deleted), applies delete rules when it processes pending changes, validates and
// saves — to its coordinator's stores, or into its parent context. Its state is
// touched only on its queue: run code there with perform/performAndWait.
import Foundation
import Synchronization

/// How a context serializes access to itself.
public enum NSManagedObjectContextConcurrencyType: UInt, Sendable {
    /// Deprecated in Core Data; treated as `.privateQueueConcurrencyType`.
    case confinementConcurrencyType
    /// The context owns a private serial queue.
    case privateQueueConcurrencyType
    /// The context runs on the main queue.
    case mainQueueConcurrencyType
}

/// An object space: fetch objects into it, change them, and save the changes.
///
/// ```swift
/// let context = container.viewContext
/// let person = Person(context: context)
/// person.name = "Ada"
/// try context.save()
/// ```
///
/// A context is confined to its queue. A main-queue context may be used directly
/// from the main thread; any other use goes through ``perform(_:)`` or
/// ``performAndWait(_:)``.
open class NSManagedObjectContext: NSObject, @unchecked Sendable {
    /// How the context serializes access.
    public let concurrencyType: NSManagedObjectContextConcurrencyType
    private let queue: DispatchQueue
    private static let queueKey = DispatchSpecificKey<Int>()
    /// The context whose private queue is current (``current``).
    private static let contextKey = DispatchSpecificKey<WeakContext>()
    /// Main-queue contexts running a perform block, innermost last (main thread only).
    nonisolated(unsafe) private static var mainQueuePerformers: [WeakContext] = []
    /// Every main-queue context alive, for ``current`` on the main queue outside perform blocks.
    private static let mainQueueContextsLock = NSLock()
    nonisolated(unsafe) private static var mainQueueContexts: [WeakContext] = []
    private var queueToken: Int { Int(bitPattern: UInt(bitPattern: ObjectIdentifier(self))) }

    private var coordinatorStorage: NSPersistentStoreCoordinator?
    private var parentStorage: NSManagedObjectContext?
    private let childrenLock = NSLock()
    /// What the context's objects and weak holders keep instead of `weak` (WeakHandle.swift).
    let referenceHandle = WeakHandle<NSManagedObjectContext>()
    private var children: [WeakContext] = []
    /// The permanent IDs this context's saves gave objects a child still knows by their
    /// temporary IDs (a child's objects keep them after the parent saves, as in Core Data).
    var permanentIDsForChildren: [NSManagedObjectID: NSManagedObjectID] = [:]
    /// IDs assigned since the children were last told (NSManagedObjectContext+ChildIDs.swift).
    var permanentIDsToPass: [PermanentIDAdoption] = []
    /// IDs the parent's saves assigned to objects this context knows by temporary IDs, not
    /// yet adopted; filled on the parent's queue, taken on this context's.
    let deliveredPermanentIDs = Mutex<[PermanentIDAdoption]>([])
    /// The entity `init(context:)` found last, with the class and coordinator it was found
    /// for: an app creating objects of one class in a loop looks it up once, not under the
    /// model's lock per object. The coordinator is held so its identity cannot be reused.
    private var lastClassEntity: ClassEntity?
    private struct ClassEntity {
        let type: ObjectIdentifier
        let coordinator: NSPersistentStoreCoordinator
        let entity: NSEntityDescription
    }

    /// The context's name, for debugging and history.
    open var name: String?
    /// The author recorded in persistent history for this context's saves.
    open var transactionAuthor: String?
    /// How save conflicts are resolved: one of the `NSMergePolicy` singletons or
    /// constants (`NSErrorMergePolicy` by default).
    open var mergePolicy: Any = NSErrorMergePolicy
    /// Whether changes saved by the parent (the coordinator's other contexts, for a
    /// root context) are merged into this context automatically, on its queue.
    open var automaticallyMergesChangesFromParent = false {
        didSet {
            if automaticallyMergesChangesFromParent, parentStorage == nil {
                coordinatorStorage?.registerAutomaticMerging(self)
            }
        }
    }
    /// The undo manager that records the context's changes; nil (the default) records
    /// nothing, which keeps imports fast.
    ///
    /// ```swift
    /// context.undoManager = UndoManager()
    /// person.name = "Ada"
    /// context.processPendingChanges()
    /// context.undo()
    /// ```
    ///
    /// Changes are registered as one undo action each time the context processes its
    /// pending changes (and at each checkpoint of the undo manager). ``rollback()`` and
    /// ``reset()`` remove all its actions; ``save()`` keeps them.
    open var undoManager: UndoManager? {
        didSet { undoManagerDidChange() }
    }
    /// Records changes for `undoManager` while there is one (NSManagedObjectContext+Undo.swift).
    var undoRecorder: ContextUndoRecorder?
    /// Guards `queryGeneration` and `isSavingUnpinned`: a child reads its root's from its own queue.
    let generationLock = NSLock()
    /// The pinned query generation (NSManagedObjectContext+QueryGeneration.swift); nil when not pinned.
    var queryGeneration: QueryGeneration?
    /// Set while a pinned context saves: its reads then see the newest data.
    var isSavingUnpinned = false
    /// How long fetched values are considered fresh (accepted; values are always reloaded).
    open var stalenessInterval: TimeInterval = -1
    /// Whether faults whose rows are gone read as empty objects (always true here).
    open var shouldDeleteInaccessibleFaults = true
    /// Whether registered objects are kept alive by the context (always true here).
    open var retainsRegisteredObjects = true
    /// Whether delete rules apply when pending changes are processed (always true here).
    open var propagatesDeletesAtEndOfEvent = true
    /// Your own information about the context.
    open var userInfo = NSMutableDictionary()

    // MARK: Object state (touched only on the context's queue)

    @exclusivity(unchecked) var registry = ObjectRegistry()
    /// Every state change of the registered objects passes it (ObjectLifecycle.swift).
    let lifecycle = ObjectLifecycle()
    /// Objects inserted since the last save.
    var inserted: ObjectSet { lifecycle.inserted }
    /// Objects changed since the last save (those with changed slots are updated).
    var updated: ObjectSet { lifecycle.updated }
    /// Stored objects deleted since the last save.
    var deleted: ObjectSet { lifecycle.deleted }

    // MARK: Creating

    /// A context of `concurrencyType`; give it a coordinator or a parent before use.
    public init(concurrencyType: NSManagedObjectContextConcurrencyType) {
        self.concurrencyType = concurrencyType
        if concurrencyType == .mainQueueConcurrencyType {
            queue = DispatchQueue.main
        } else {
            queue = DispatchQueue(label: "OpenCoreData.NSManagedObjectContext")
        }
        super.init()
        referenceHandle.attach(self)
        lifecycle.attach(to: self)
        if concurrencyType != .mainQueueConcurrencyType {
            queue.setSpecific(key: Self.queueKey, value: queueToken)
            queue.setSpecific(key: Self.contextKey, value: WeakContext(context: self))
        } else {
            Self.mainQueueContextsLock.withLock {
                Self.mainQueueContexts.removeAll { $0.context == nil }
                Self.mainQueueContexts.append(WeakContext(context: self))
            }
        }
        ConcurrencyDebug.configure
    }

    deinit {
        referenceHandle.clear()
        // Objects still held elsewhere must not keep each other alive through relationships.
        lifecycle.forgetAll(reporting: false)
    }

    /// The coordinator whose stores the context (or its root ancestor) saves to.
    open var persistentStoreCoordinator: NSPersistentStoreCoordinator? {
        get { parentStorage?.persistentStoreCoordinator ?? coordinatorStorage }
        set {
            precondition(
                parentStorage == nil, "OpenCoreData: a context has either a parent context or a coordinator, not both")
            coordinatorStorage = newValue
            if automaticallyMergesChangesFromParent { newValue?.registerAutomaticMerging(self) }
        }
    }

    /// The parent context: saving pushes changes into it instead of the stores.
    open var parent: NSManagedObjectContext? {
        get { parentStorage }
        set {
            precondition(
                coordinatorStorage == nil,
                "OpenCoreData: a context has either a parent context or a coordinator, not both")
            parentStorage = newValue
            newValue?.addChild(self)
        }
    }

    private func addChild(_ child: NSManagedObjectContext) {
        childrenLock.lock()
        children.removeAll { $0.context == nil }
        children.append(WeakContext(context: child))
        childrenLock.unlock()
    }

    var childContexts: [NSManagedObjectContext] {
        childrenLock.lock()
        defer { childrenLock.unlock() }
        return children.compactMap(\.context)
    }

    // MARK: Queues

    /// Whether the caller is on this context's queue.
    var isOnQueue: Bool {
        if concurrencyType == .mainQueueConcurrencyType { return Self.isOnMainQueue }
        return DispatchQueue.getSpecific(key: Self.queueKey) == queueToken
    }

    /// Marks the main queue, whose blocks may run on another thread: `DispatchQueue.main.sync`
    /// from a thread while the main thread does not serve the queue runs the block inline.
    private static let mainQueueKey: DispatchSpecificKey<Int> = {
        let key = DispatchSpecificKey<Int>()
        DispatchQueue.main.setSpecific(key: key, value: 1)
        return key
    }()

    /// Whether the caller is on the main thread or runs a block of the main queue.
    static var isOnMainQueue: Bool {
        Thread.isMainThread || DispatchQueue.getSpecific(key: mainQueueKey) != nil
    }

    /// The context whose perform block (or private queue) the caller runs in, if any:
    /// what `NSFetchRequest.execute()` uses. On the main queue outside a perform block,
    /// the main-queue context when there is exactly one (an app's view context).
    static var current: NSManagedObjectContext? {
        if let context = DispatchQueue.getSpecific(key: contextKey)?.context { return context }
        guard isOnMainQueue else { return nil }
        if let performer = mainQueuePerformers.last?.context { return performer }
        let alive = mainQueueContextsLock.withLock { mainQueueContexts.compactMap(\.context) }
        return alive.count == 1 ? alive[0] : nil
    }

    /// Whether `other` is this context, an ancestor or a descendant of it.
    func isRelated(to other: NSManagedObjectContext) -> Bool {
        var ancestor: NSManagedObjectContext? = self
        while let current = ancestor {
            if current === other { return true }
            ancestor = current.parentStorage
        }
        ancestor = other.parentStorage
        while let current = ancestor {
            if current === self { return true }
            ancestor = current.parentStorage
        }
        return false
    }

    /// Runs `block` as the main-queue context's perform block (for ``current``).
    private func runAsMainQueuePerformer<T>(_ block: () throws -> T) rethrows -> T {
        Self.mainQueuePerformers.append(WeakContext(context: self))
        defer { Self.mainQueuePerformers.removeLast() }
        return try block()
    }

    /// Runs `block` on the context's queue and waits for it; returns its value and
    /// rethrows its error. Runs inline when already on the queue.
    open func performAndWait<T>(_ block: () throws -> T) rethrows -> T {
        if concurrencyType == .mainQueueConcurrencyType {
            if Self.isOnMainQueue { return try runAsMainQueuePerformer(block) }
            return try withoutActuallyEscaping(block) { escapable in
                let box = UncheckedBox(escapable)
                return try queue.sync { try self.runAsMainQueuePerformer(box.value) }
            }
        }
        if isOnQueue { return try block() }
        return try withoutActuallyEscaping(block) { escapable in
            let box = UncheckedBox(escapable)
            return try queue.sync { try box.value() }
        }
    }

    /// Runs `block` on the context's queue, later.
    open func perform(_ block: @escaping @Sendable () -> Void) {
        guard concurrencyType == .mainQueueConcurrencyType else {
            queue.async(execute: block)
            return
        }
        queue.async { self.runAsMainQueuePerformer(block) }
    }

    /// When an async `perform` runs its block.
    public enum ScheduledTaskType: Sendable {
        /// Runs the block as soon as possible.
        case immediate
        /// Queues the block behind work already queued.
        case enqueued
    }

    /// Runs `block` on the context's queue and returns its value; throws what it throws.
    ///
    /// ```swift
    /// let count = try await context.perform { try context.count(for: request) }
    /// ```
    public func perform<T: Sendable, Failure: Error>(
        schedule: ScheduledTaskType = .immediate, _ block: @escaping @Sendable () throws(Failure) -> T
    ) async throws(Failure) -> T {
        let result: Result<T, Failure> = await withCheckedContinuation { continuation in
            queue.async {
                let run = { Result<T, Failure> { () throws(Failure) -> T in try block() } }
                let isMain = self.concurrencyType == .mainQueueConcurrencyType
                continuation.resume(returning: isMain ? self.runAsMainQueuePerformer(run) : run())
            }
        }
        return try result.get()
    }

    // MARK: Registered objects

    /// Every object registered in the context.
    open var registeredObjects: Set<NSManagedObject> { Set(registry.values) }
    /// Objects inserted since the last save.
    open var insertedObjects: Set<NSManagedObject> { inserted.asSet }
    /// Objects with unsaved changes (not inserted or deleted ones).
    open var updatedObjects: Set<NSManagedObject> { Set(updated.filter { $0.hasDirtySlots }) }
    /// Objects deleted since the last save.
    open var deletedObjects: Set<NSManagedObject> { deleted.asSet }

    /// Whether the context has unsaved changes.
    open var hasChanges: Bool { lifecycle.hasChanges }

    /// The registered object with `objectID`, or nil.
    open func registeredObject(for objectID: NSManagedObjectID) -> NSManagedObject? {
        registry[objectID]
    }

    /// The object with `objectID`: the registered one, or a new fault whose values load
    /// on first access. Never fails; a fault whose row is gone reads as an empty object.
    open func object(with objectID: NSManagedObjectID) -> NSManagedObject {
        ConcurrencyDebug.check(self, "NSManagedObjectContext.object(with:)")
        if objectID.isTemporaryID, let permanent = adoptedPermanentID(for: objectID) {
            return object(with: permanent)
        }
        // One probe of the registry finds the object or registers the new fault (building
        // the key loads the ID's store, so it is built once).
        return registry.object(for: objectID.registryKey) {
            let object = objectID.entity.layout.objectClass.init(entity: objectID.entity, insertInto: nil)
            object.setObjectID(objectID)
            object.managedObjectContext = self
            return object
        }
    }

    /// The object with `objectID`, with its values loaded.
    ///
    /// - Throws: `NSManagedObjectReferentialIntegrityError` (133000) when no store or
    ///   parent context has the object.
    open func existingObject(with objectID: NSManagedObjectID) throws -> NSManagedObject {
        ConcurrencyDebug.check(self, "NSManagedObjectContext.existingObject(with:)")
        if objectID.isTemporaryID, let permanent = adoptedPermanentID(for: objectID) {
            return try existingObject(with: permanent)
        }
        if let object = registry[objectID], !object.isFault { return object }
        guard let snapshot = try snapshot(for: objectID) else {
            throw CoreDataError.make(
                NSManagedObjectReferentialIntegrityError,
                "no object with ID \(objectID.uriRepresentation().absoluteString) exists in the context's stores")
        }
        let object = self.object(with: objectID)
        if object.isFault { fill(object, values: snapshot.values, version: snapshot.version) }
        return object
    }

    /// The entity of this context's model whose objects are of class `type`.
    func entity(forClass type: NSManagedObject.Type) -> NSEntityDescription? {
        guard let coordinator = persistentStoreCoordinator else { return nil }
        if let last = lastClassEntity, last.type == ObjectIdentifier(type), last.coordinator === coordinator {
            return last.entity
        }
        // A coordinator's model is frozen when the coordinator is made: its answer never changes.
        guard let entity = coordinator.managedObjectModel.entity(for: type) else { return nil }
        lastClassEntity = ClassEntity(type: ObjectIdentifier(type), coordinator: coordinator, entity: entity)
        return entity
    }

    /// Gives the objects permanent IDs now (saving does it for inserted objects).
    ///
    /// - Throws: the store's error.
    open func obtainPermanentIDs(for objects: [NSManagedObject]) throws {
        let temporary = objects.filter { $0.objectID.isTemporaryID }
        guard !temporary.isEmpty else { return }
        guard let coordinator = persistentStoreCoordinator else { throw CoreDataError.noCoordinator }
        let ids = try coordinator.obtainPermanentIDs(for: temporary.map(\.entity))
        let forChildren = tracksPermanentIDsForChildren()
        for (object, id) in zip(temporary, ids) { reassign(object, to: id, forChildren: forChildren) }
        passPermanentIDsToChildren()
    }

    /// Whether reassigned IDs are recorded for children (asked once per batch of objects):
    /// with no child left, the record is dropped, so it never outlives the children.
    func tracksPermanentIDsForChildren() -> Bool {
        if childContexts.isEmpty {
            if !permanentIDsForChildren.isEmpty { permanentIDsForChildren = [:] }
            return false
        }
        return true
    }

    /// Gives `object` `objectID` (`upserted`: an existing row's), recording it for the
    /// children when `forChildren`.
    func reassign(
        _ object: NSManagedObject, to objectID: NSManagedObjectID, forChildren: Bool, upserted: Bool = false
    ) {
        let (registered, previous) = giveID(objectID, to: object, forChildren: forChildren, upserted: upserted)
        if registered {
            registry[previous] = nil
            registry[objectID] = object
        }
    }

    /// ``reassign(_:to:forChildren:upserted:)`` of each of `objects` (temporary IDs, in
    /// order) to the matching new permanent ID of `objectIDs`, the registry re-keyed at
    /// once (ObjectRegistry.swift) rather than an entry removed and one added per object.
    /// The same registry results.
    func reassign(_ objects: [NSManagedObject], to objectIDs: [NSManagedObjectID], forChildren: Bool) {
        var moved: [(from: NSManagedObjectID.Key, to: NSManagedObjectID.Key, object: NSManagedObject)] = []
        moved.reserveCapacity(objects.count)
        for (object, objectID) in zip(objects, objectIDs) {
            let (registered, previous) = giveID(objectID, to: object, forChildren: forChildren, upserted: false)
            guard registered else { continue }
            moved.append((previous.registryKey, objectID.registryKey, object))
        }
        registry.rekey(moved)
    }

    /// Gives `object` `objectID`, recording it for the children; returns whether the
    /// object is registered here and its previous ID.
    private func giveID(_ objectID: NSManagedObjectID, to object: NSManagedObject, forChildren: Bool, upserted: Bool)
        -> (registered: Bool, previous: NSManagedObjectID)
    {
        // The context is read once: each read of the reference locks its handle and retains it.
        let registered = object.isRegistered(in: self)
        let previous = object.objectID
        if forChildren, previous.isTemporaryID, registered {
            permanentIDsForChildren[previous] = objectID
            permanentIDsToPass.append(
                PermanentIDAdoption(temporary: previous, permanent: objectID, upserted: upserted))
        }
        object.setObjectID(objectID)
        return (registered, previous)
    }

    // MARK: Loading values

    /// Stored values for `objectID`: from the parent chain, else from the coordinator.
    func snapshot(for objectID: NSManagedObjectID) throws -> (values: [StoreValue], version: Int64)? {
        if let parent = parentStorage {
            return try parent.performAndWait { try parent.snapshotForChild(objectID) }
        }
        guard let coordinator = persistentStoreCoordinator, !objectID.isTemporaryID else { return nil }
        return try readingQueryGeneration { try coordinator.row(for: objectID).map { ($0.values, $0.version) } }
    }

    /// What a child sees of `objectID`: this context's current state when registered.
    private func snapshotForChild(_ objectID: NSManagedObjectID) throws -> (values: [StoreValue], version: Int64)? {
        if let object = registry[objectID], !object.isFault {
            return (try object.storeValues(), object.version)
        }
        return try snapshot(for: objectID)
    }

    /// Loads a fault's values (called when a fault fires).
    func fulfillFault(_ object: NSManagedObject) {
        if fulfillPendingFault(object) { return }
        if parentStorage == nil {
            fulfillFaultFromStore(object)
            return
        }
        let loaded: (values: [StoreValue], version: Int64)?
        do {
            loaded = try snapshot(for: object.objectID)
        } catch {
            return
        }
        guard let loaded else {
            faultIsInaccessible(object)
            return
        }
        fill(object, values: loaded.values, version: loaded.version)
    }

    /// Loads a fault of a context on a coordinator from its store: its row as the store
    /// answers it for an object to fill (StoreRowSlots.swift).
    private func fulfillFaultFromStore(_ object: NSManagedObject) {
        let objectID = object.objectID
        let row: StoreRow?
        do {
            if let coordinator = persistentStoreCoordinator, !objectID.isTemporaryID {
                row = try readingQueryGeneration { try coordinator.objectRow(for: objectID) }
            } else {
                row = nil
            }
        } catch {
            return
        }
        guard let row else {
            faultIsInaccessible(object)
            return
        }
        fill(object, row: row)
    }

    /// Loads the fault `object` with `values` (stored form) of row version `version`.
    func fill(_ object: NSManagedObject, values: [StoreValue], version: Int64) {
        lifecycle.load(object, values: object.layout.objectValues(fromStored: values), version: version)
    }

    /// Loads the fault `object` with `row`'s values (its slot form as it is).
    func fill(_ object: NSManagedObject, row: StoreRow) {
        // Read in place: taking the slot form out of a copy of the row retained and released
        // the row's ID and values once more, and the caller's row still shares them.
        if let values = row.slots?.values {
            lifecycle.load(object, values: values, version: row.version)
        } else {
            lifecycle.load(object, values: object.layout.objectValues(fromStored: row.values), version: row.version)
        }
    }

    /// The destinations of a to-many relationship the row left unresolved.
    func destinationIDs(of relationship: NSRelationshipDescription, for objectID: NSManagedObjectID)
        -> [NSManagedObjectID]
    {
        if let parent = parentStorage {
            return parent.performAndWait { parent.destinationIDsForChild(relationship, objectID) }
        }
        guard let coordinator = persistentStoreCoordinator, !objectID.isTemporaryID else { return [] }
        return (try? readingQueryGeneration { try coordinator.objectIDs(forRelationship: relationship, of: objectID) })
            ?? []
    }

    private func destinationIDsForChild(_ relationship: NSRelationshipDescription, _ objectID: NSManagedObjectID)
        -> [NSManagedObjectID]
    {
        if let object = registry[objectID], !object.isFault,
            let slot = object.layout.slotsByName[relationship.name]
        {
            return object.destinations(slot).map(\.objectID)
        }
        return destinationIDs(of: relationship, for: objectID)
    }
}

/// A context held weakly (children, auto-merging contexts), through its handle.
struct WeakContext {
    private let handle: WeakHandle<NSManagedObjectContext>
    var context: NSManagedObjectContext? { handle.target }

    init(context: NSManagedObjectContext) {
        handle = context.referenceHandle
    }
}

/// Carries a non-Sendable value across a synchronous queue hop the caller waits for.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

extension CoreDataError {
    static var noCoordinator: NSError {
        make(NSCoreDataError, "the context has no persistent store coordinator (set one, or a parent context)")
    }
}
