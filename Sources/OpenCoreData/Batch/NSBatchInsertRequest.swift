// NSBatchInsertRequest: many new rows written straight into the store in one transaction,
// without managed objects in a context. The rows come from an array of dictionaries or
// from a handler called until it says it is done; BatchInsertRows.swift turns each into
// a store row, and the store (StoreBatch.swift) writes them.
import Foundation

/// What a batch insert reports.
public enum NSBatchInsertRequestResultType: UInt, Sendable {
    /// `true` when the insert succeeded (the default).
    case statusOnly
    /// The object IDs of the inserted rows, in the order they were given.
    case objectIDs
    /// The number of rows inserted.
    case count
}

/// Inserts many objects of one entity directly into the store, in one transaction.
///
/// Each object is given as a dictionary of attribute values keyed by attribute name, or
/// filled in by a handler. Omitted attributes take the model's default values; a
/// non-optional attribute without a default must be given. Relationships cannot be set,
/// and validation rules other than "required" do not run (as in Core Data). Registered
/// objects of contexts are not updated: merge the returned object IDs with
/// `NSManagedObjectContext.mergeChanges(fromRemoteContextSave:into:)`.
///
/// With a uniqueness constraint on the entity and a trump or overwrite merge policy on the
/// executing context, a row whose unique key another row already holds updates that row
/// instead (an upsert): it keeps its object ID and relationships, and only the attributes
/// the dictionary gives are written (Core Data resets the others to their defaults).
///
/// ```swift
/// let insert = NSBatchInsertRequest(entity: Person.entity(), objects: [
///     ["firstName": "Ada", "email": "ada@example.com", "age": 36],
/// ])
/// insert.resultType = .objectIDs
/// let result = try context.execute(insert) as? NSBatchInsertResult
/// let ids = result?.result as? [NSManagedObjectID] ?? []
/// ```
open class NSBatchInsertRequest: NSPersistentStoreRequest, @unchecked Sendable {
    /// The name of the entity whose objects are inserted.
    public let entityName: String
    /// The entity whose objects are inserted; nil until the request runs when it was
    /// created with an entity name.
    open private(set) var entity: NSEntityDescription?
    /// The objects to insert, as dictionaries keyed by attribute name.
    open var objectsToInsert: [[String: Any]]?
    /// Fills in the dictionary it is given with one object's attribute values and returns
    /// false, or returns true when there are no more objects (that dictionary is not inserted).
    open var dictionaryHandler: ((NSMutableDictionary) -> Bool)?
    /// Fills in the object it is given (of the entity's class, in no context) and returns
    /// false, or returns true when there are no more objects (that object is not inserted).
    open var managedObjectHandler: ((NSManagedObject) -> Bool)?
    /// What the result holds (default: ``NSBatchInsertRequestResultType/statusOnly``).
    open var resultType: NSBatchInsertRequestResultType = .statusOnly

    /// The kind of request: a batch insert.
    open override var requestType: NSPersistentStoreRequestType { .batchInsertRequestType }

    /// A request inserting `dictionaries` as objects of the entity named `entityName`.
    public init(entityName: String, objects dictionaries: [[String: Any]]) {
        self.entityName = entityName
        self.objectsToInsert = dictionaries
        super.init()
    }

    /// A request inserting `dictionaries` as objects of `entity`.
    public init(entity: NSEntityDescription, objects dictionaries: [[String: Any]]) {
        self.entityName = entity.name ?? ""
        self.entity = entity
        self.objectsToInsert = dictionaries
        super.init()
    }

    /// A request inserting objects of `entity` that `handler` fills in, one dictionary per
    /// call, until it returns true.
    public init(entity: NSEntityDescription, dictionaryHandler handler: @escaping (NSMutableDictionary) -> Bool) {
        self.entityName = entity.name ?? ""
        self.entity = entity
        self.dictionaryHandler = handler
        super.init()
    }

    /// A request inserting objects of the entity named `entityName` that `handler` fills
    /// in, one dictionary per call, until it returns true.
    public init(entityName: String, dictionaryHandler handler: @escaping (NSMutableDictionary) -> Bool) {
        self.entityName = entityName
        self.dictionaryHandler = handler
        super.init()
    }

    /// A request inserting objects of `entity` that `handler` fills in, one object per
    /// call, until it returns true.
    public init(entity: NSEntityDescription, managedObjectHandler handler: @escaping (NSManagedObject) -> Bool) {
        self.entityName = entity.name ?? ""
        self.entity = entity
        self.managedObjectHandler = handler
        super.init()
    }

    /// A request inserting objects of the entity named `entityName` that `handler` fills
    /// in, one object per call, until it returns true.
    public init(entityName: String, managedObjectHandler handler: @escaping (NSManagedObject) -> Bool) {
        self.entityName = entityName
        self.managedObjectHandler = handler
        super.init()
    }
}

/// The result of a batch insert.
open class NSBatchInsertResult: NSPersistentStoreResult, @unchecked Sendable {
    /// `true` (status only), the inserted rows' `[NSManagedObjectID]`, or their number
    /// (`Int`), as ``resultType`` says.
    public let result: Any?
    /// What ``result`` holds.
    public let resultType: NSBatchInsertRequestResultType

    init(result: Any?, resultType: NSBatchInsertRequestResultType) {
        self.result = result
        self.resultType = resultType
        super.init()
    }
}

extension NSBatchInsertRequest: ContextExecutableRequest {
    func execute(in context: NSManagedObjectContext) throws -> NSPersistentStoreResult {
        let outcome = try context.executeBatchInsert(self)
        switch resultType {
        case .statusOnly: return NSBatchInsertResult(result: true, resultType: resultType)
        case .objectIDs: return NSBatchInsertResult(result: outcome.objectIDs, resultType: resultType)
        case .count: return NSBatchInsertResult(result: outcome.count, resultType: resultType)
        }
    }

    /// The entity, resolved in `model` when the request was made with a name.
    func resolvedEntity(in model: NSManagedObjectModel) throws -> NSEntityDescription {
        try BatchEntity.resolve(entity, named: entityName, in: model, request: "batch insert")
    }
}
