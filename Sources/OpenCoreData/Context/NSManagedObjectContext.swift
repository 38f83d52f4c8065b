// The managed object context: a scratch pad of objects, confined to one queue.
//
// A context registers objects by ID, tracks their changes (inserted, updated,
// deleted), applies delete rules when it processes pending changes, validates and
// saves — to its coordinator's stores, or into its parent context. Its state is
// touched only on its queue: run code there with perform/performAndWait.
import Foundation

/// How a context serializes access to itself.
public enum NSManagedObjectContextConcurrencyType: UInt, Sendable {
    /// Deprecated in Core Data; treated as `.privateQueueConcurrencyType`.
    case confinementConcurrencyType = 0
    /// The context owns a private serial queue.
    case privateQueueConcurrencyType = 1
    /// The context runs on the main queue.
    case mainQueueConcurrencyType = 2
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
    private var queueToken: Int { Int(bitPattern: UInt(bitPattern: ObjectIdentifier(self))) }

    private var coordinatorStorage: NSPersistentStoreCoordinator?
    private var parentStorage: NSManagedObjectContext?
    private let childrenLock = NSLock()
    private var children: [WeakContext] = []

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
    /// The context's undo manager (undo is not implemented yet; it stays nil).
    open var undoManager: AnyObject?
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
        lifecycle.attach(to: self)
        if concurrencyType != .mainQueueConcurrencyType {
            queue.setSpecific(key: Self.queueKey, value: queueToken)
        }
    }

    deinit {
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
        if concurrencyType == .mainQueueConcurrencyType { return Thread.isMainThread }
        return DispatchQueue.getSpecific(key: Self.queueKey) == queueToken
    }

    /// Runs `block` on the context's queue and waits for it; returns its value and
    /// rethrows its error. Runs inline when already on the queue.
    open func performAndWait<T>(_ block: () throws -> T) rethrows -> T {
        if isOnQueue { return try block() }
        return try withoutActuallyEscaping(block) { escapable in
            let box = UncheckedBox(escapable)
            return try queue.sync { try box.value() }
        }
    }

    /// Runs `block` on the context's queue, later.
    open func perform(_ block: @escaping @Sendable () -> Void) {
        queue.async(execute: block)
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
                continuation.resume(returning: Result<T, Failure> { () throws(Failure) -> T in try block() })
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
        // One registry key for the lookup and the registration (building it loads the ID's store).
        let key = objectID.registryKey
        if let object = registry[key] { return object }
        let object = objectID.entity.layout.objectClass.init(entity: objectID.entity, insertInto: nil)
        object.setObjectID(objectID)
        object.managedObjectContext = self
        registry[key] = object
        return object
    }

    /// The object with `objectID`, with its values loaded.
    ///
    /// - Throws: `NSManagedObjectReferentialIntegrityError` (133000) when no store or
    ///   parent context has the object.
    open func existingObject(with objectID: NSManagedObjectID) throws -> NSManagedObject {
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

    /// Gives the objects permanent IDs now (saving does it for inserted objects).
    ///
    /// - Throws: the store's error.
    open func obtainPermanentIDs(for objects: [NSManagedObject]) throws {
        let temporary = objects.filter { $0.objectID.isTemporaryID }
        guard !temporary.isEmpty else { return }
        guard let coordinator = persistentStoreCoordinator else { throw CoreDataError.noCoordinator }
        let ids = try coordinator.obtainPermanentIDs(for: temporary.map(\.entity))
        for (object, id) in zip(temporary, ids) { reassign(object, to: id) }
    }

    func reassign(_ object: NSManagedObject, to objectID: NSManagedObjectID) {
        if object.managedObjectContext === self { registry[object.objectID] = nil }
        object.setObjectID(objectID)
        if object.managedObjectContext === self { registry[objectID] = object }
    }

    // MARK: Loading values

    /// Stored values for `objectID`: from the parent chain, else from the coordinator.
    func snapshot(for objectID: NSManagedObjectID) throws -> (values: [StoreValue], version: Int64)? {
        if let parent = parentStorage {
            return try parent.performAndWait { try parent.snapshotForChild(objectID) }
        }
        guard let coordinator = persistentStoreCoordinator, !objectID.isTemporaryID else { return nil }
        return try coordinator.row(for: objectID).map { ($0.values, $0.version) }
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

    /// Loads the fault `object` with `values` (stored form) of row version `version`.
    func fill(_ object: NSManagedObject, values: [StoreValue], version: Int64) {
        lifecycle.load(object, stored: values, version: version)
    }

    /// The destinations of a to-many relationship the row left unresolved.
    func destinationIDs(of relationship: NSRelationshipDescription, for objectID: NSManagedObjectID)
        -> [NSManagedObjectID]
    {
        if let parent = parentStorage {
            return parent.performAndWait { parent.destinationIDsForChild(relationship, objectID) }
        }
        guard let coordinator = persistentStoreCoordinator, !objectID.isTemporaryID else { return [] }
        return (try? coordinator.objectIDs(forRelationship: relationship, of: objectID)) ?? []
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

/// Registered objects by ID. Keyed by a plain struct rather than the ID object: hashing
/// and comparing NSObject keys goes through dynamic dispatch and existential casts.
struct ObjectRegistry {
    private var objects: [NSManagedObjectID.Key: NSManagedObject] = [:]

    subscript(id: NSManagedObjectID) -> NSManagedObject? {
        get { objects[id.registryKey] }
        set { objects[id.registryKey] = newValue }
    }

    subscript(key: NSManagedObjectID.Key) -> NSManagedObject? {
        get { objects[key] }
        set { objects[key] = newValue }
    }

    var values: Dictionary<NSManagedObjectID.Key, NSManagedObject>.Values { objects.values }
    var isEmpty: Bool { objects.isEmpty }
    var count: Int { objects.count }

    mutating func reserveCapacity(_ count: Int) { objects.reserveCapacity(count) }
}

/// A context held weakly (children, auto-merging contexts).
struct WeakContext {
    weak var context: NSManagedObjectContext?
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
