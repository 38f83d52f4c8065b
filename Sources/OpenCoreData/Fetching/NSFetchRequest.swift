// Fetch requests: what to fetch, how to filter, order and shape the results.
import Foundation
import Synchronization

/// A type a fetch can return: managed objects, object IDs, dictionaries or counts.
public protocol NSFetchRequestResult: NSObjectProtocol {}

extension NSDictionary: NSFetchRequestResult {}
extension NSNumber: NSFetchRequestResult {}

/// The kind of results a fetch request returns.
public struct NSFetchRequestResultType: OptionSet, Sendable, Hashable {
    /// The raw bit mask.
    public let rawValue: UInt
    /// Creates a result type from its raw value.
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// Managed objects (the default).
    public static let managedObjectResultType = NSFetchRequestResultType([])
    /// Object IDs.
    public static let managedObjectIDResultType = NSFetchRequestResultType(rawValue: 1 << 0)
    /// Dictionaries of the properties in `propertiesToFetch`.
    public static let dictionaryResultType = NSFetchRequestResultType(rawValue: 1 << 1)
    /// One `NSNumber`: the number of matching objects.
    public static let countResultType = NSFetchRequestResultType(rawValue: 1 << 2)
}

/// The kinds of request a store executes.
public enum NSPersistentStoreRequestType: UInt, Sendable {
    /// A fetch request.
    case fetchRequestType = 1
    /// A save request.
    case saveRequestType
    /// A batch insert request.
    case batchInsertRequestType = 5
    /// A batch update request.
    case batchUpdateRequestType
    /// A batch delete request.
    case batchDeleteRequestType
}

/// A request a context passes to its stores: the base of fetch, batch and history requests.
open class NSPersistentStoreRequest: NSObject, @unchecked Sendable {
    /// The stores the request applies to; nil means all stores of the coordinator.
    open var affectedStores: [NSPersistentStore]?
    /// The kind of request.
    open var requestType: NSPersistentStoreRequestType { .fetchRequestType }

    /// Creates a request for all stores.
    public override init() {
        super.init()
    }
}

/// What `NSManagedObjectContext.execute(_:)` returns: the base of every request's result.
open class NSPersistentStoreResult: NSObject, @unchecked Sendable {
    /// Creates an empty result.
    public override init() {
        super.init()
    }
}

/// The state of a fetch request, shared between its typed and untyped forms so a
/// store sees every property the caller set.
///
/// A fetch only reads it, except to remember the entity it resolved from `entityName`:
/// that one write is under a lock, since contexts on other threads may fetch with the
/// same request at the same time.
final class FetchRequestStorage: @unchecked Sendable {
    var entityName: String?
    var entity: NSEntityDescription?
    /// Held while a fetch resolves `entity`: every read of `entity` on the fetch path follows
    /// the reading thread's own resolution, so the one write is ordered before it.
    private let resolution = Mutex<Void>(())
    var predicate: NSPredicate?
    var sortDescriptors: [NSSortDescriptor]?
    var fetchLimit = 0
    var fetchOffset = 0
    var fetchBatchSize = 0
    var includesSubentities = true
    var includesPendingChanges = true
    var includesPropertyValues = true
    var returnsObjectsAsFaults = true
    var relationshipKeyPathsForPrefetching: [String]?
    var propertiesToFetch: [Any]?
    var propertiesToGroupBy: [Any]?
    var havingPredicate: NSPredicate?
    var returnsDistinctResults = false
    var resultType: NSFetchRequestResultType = .managedObjectResultType
    var shouldRefreshRefetchedObjects = false
    var affectedStores: [NSPersistentStore]?

    /// The entity, or else the one `lookUp` finds for `entityName`, remembered for the
    /// request's later fetches and its `entity` property.
    ///
    /// - Throws: what `lookUp` throws; `NSCoreDataError` when the request names no entity.
    func entity(resolvingWith lookUp: (String) throws -> NSEntityDescription) throws -> NSEntityDescription {
        try resolution.withLock { _ in
            if let entity { return entity }
            guard let entityName else {
                throw CoreDataError.make(NSCoreDataError, "fetch request has neither an entity nor an entity name")
            }
            let found = try lookUp(entityName)
            entity = found
            return found
        }
    }
}

/// A description of what to fetch from a context: an entity, a predicate, an order,
/// a window and a result shape.
///
/// ```swift
/// let request = NSFetchRequest<Person>(entityName: "Person")
/// request.predicate = NSPredicate(format: "age > %d", 30)
/// request.fetchLimit = 10
/// let people = try context.fetch(request)
/// ```
///
/// `ResultType` is unconstrained (Core Data constrains it to `NSFetchRequestResult`)
/// so that `NSFetchRequest<NSFetchRequestResult>` compiles without an Objective-C runtime.
open class NSFetchRequest<ResultType>: NSPersistentStoreRequest, @unchecked Sendable {
    let storage: FetchRequestStorage

    /// A request with no entity yet.
    public override init() {
        storage = FetchRequestStorage()
        super.init()
    }

    /// A request for the objects of the entity named `entityName`.
    public convenience init(entityName: String) {
        self.init()
        storage.entityName = entityName
    }

    init(sharing storage: FetchRequestStorage) {
        self.storage = storage
        super.init()
    }

    /// The same request, untyped, sharing this request's state (what stores receive).
    func untyped() -> NSFetchRequest<NSFetchRequestResult> {
        NSFetchRequest<NSFetchRequestResult>(sharing: storage)
    }

    open override var requestType: NSPersistentStoreRequestType { .fetchRequestType }

    open override var affectedStores: [NSPersistentStore]? {
        get { storage.affectedStores }
        set { storage.affectedStores = newValue }
    }

    /// The name of the entity to fetch.
    open var entityName: String? {
        get { storage.entityName ?? storage.entity?.name }
        set { storage.entityName = newValue }
    }
    /// The entity to fetch; set when the request executes if only `entityName` was given.
    open var entity: NSEntityDescription? {
        get { storage.entity }
        set {
            storage.entity = newValue
            storage.entityName = newValue?.name
        }
    }
    /// The condition results must meet; nil fetches every object of the entity.
    open var predicate: NSPredicate? {
        get { storage.predicate }
        set { storage.predicate = newValue }
    }
    /// The order of the results, most significant first.
    open var sortDescriptors: [NSSortDescriptor]? {
        get { storage.sortDescriptors }
        set { storage.sortDescriptors = newValue }
    }
    /// The largest number of results; 0 means no limit.
    open var fetchLimit: Int {
        get { storage.fetchLimit }
        set { storage.fetchLimit = newValue }
    }
    /// How many leading results to skip.
    open var fetchOffset: Int {
        get { storage.fetchOffset }
        set { storage.fetchOffset = newValue }
    }
    /// How many objects to load at a time; 0 loads all. Never changes the results.
    ///
    /// With a batch size the returned array holds faults, and the first access to an
    /// object loads its whole batch with one store call (`NSPersistentStore.rows(for:)`).
    open var fetchBatchSize: Int {
        get { storage.fetchBatchSize }
        set { storage.fetchBatchSize = newValue }
    }
    /// Whether objects of sub-entities match too (default true).
    open var includesSubentities: Bool {
        get { storage.includesSubentities }
        set { storage.includesSubentities = newValue }
    }
    /// Whether unsaved changes of the context count (default true).
    open var includesPendingChanges: Bool {
        get { storage.includesPendingChanges }
        set { storage.includesPendingChanges = newValue }
    }
    /// Whether fetched objects come with their values (default true).
    ///
    /// When false the fetch keeps only object IDs: the objects are faults that each load
    /// their row from the store on first access.
    open var includesPropertyValues: Bool {
        get { storage.includesPropertyValues }
        set { storage.includesPropertyValues = newValue }
    }
    /// Whether fetched objects start as faults (default true).
    ///
    /// A fault holds the row the fetch returned, so its first access costs no store call.
    /// Objects already loaded in the context stay loaded.
    open var returnsObjectsAsFaults: Bool {
        get { storage.returnsObjectsAsFaults }
        set { storage.returnsObjectsAsFaults = newValue }
    }
    /// Relationship key paths whose destinations are loaded with the results
    /// (`"department"`, `"department.company"`): one store call per key path step.
    open var relationshipKeyPathsForPrefetching: [String]? {
        get { storage.relationshipKeyPathsForPrefetching }
        set { storage.relationshipKeyPathsForPrefetching = newValue }
    }
    /// For dictionary results: property names or descriptions (`NSPropertyDescription`,
    /// `NSExpressionDescription`) to return.
    open var propertiesToFetch: [Any]? {
        get { storage.propertiesToFetch }
        set { storage.propertiesToFetch = newValue }
    }
    /// For dictionary results: the properties to group by.
    open var propertiesToGroupBy: [Any]? {
        get { storage.propertiesToGroupBy }
        set { storage.propertiesToGroupBy = newValue }
    }
    /// For grouped dictionary results: the condition a group must meet.
    open var havingPredicate: NSPredicate? {
        get { storage.havingPredicate }
        set { storage.havingPredicate = newValue }
    }
    /// For dictionary results: whether duplicate dictionaries are removed.
    open var returnsDistinctResults: Bool {
        get { storage.returnsDistinctResults }
        set { storage.returnsDistinctResults = newValue }
    }
    /// The kind of results.
    open var resultType: NSFetchRequestResultType {
        get { storage.resultType }
        set { storage.resultType = newValue }
    }
    /// Whether already registered objects are refreshed with the fetched values
    /// (their unsaved changes are kept).
    open var shouldRefreshRefetchedObjects: Bool {
        get { storage.shouldRefreshRefetchedObjects }
        set { storage.shouldRefreshRefetchedObjects = newValue }
    }
}
