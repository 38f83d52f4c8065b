// NSBatchUpdateRequest: attribute values written straight into every stored row that
// matches a predicate, in one transaction, without loading objects into a context.
// BatchUpdateChanges.swift turns propertiesToUpdate into per-row changes.
import Foundation

/// What a batch update reports.
public enum NSBatchUpdateRequestResultType: UInt, Sendable {
    /// `true` when the update succeeded (the default).
    case statusOnlyResultType
    /// The object IDs of the rows that matched and were updated.
    case updatedObjectIDsResultType
    /// The number of rows that matched and were updated.
    case updatedObjectsCountResultType
}

/// Updates attributes of every stored object of an entity matching a predicate, in one
/// transaction.
///
/// `propertiesToUpdate` maps attribute names (or `NSAttributeDescription`s) to constants
/// or to `NSExpression`s, evaluated for each row before it changes (`age + 1`, or a key
/// path of the same object). Relationships cannot be set. Validation rules do not run, as
/// in Core Data, but a non-optional attribute cannot be set to nil, and a change that
/// would give two rows the same unique key fails the whole update with
/// `NSManagedObjectConstraintMergeError` (133021), nothing written. Registered objects of
/// contexts are not updated: merge the returned object IDs with
/// `NSManagedObjectContext.mergeChanges(fromRemoteContextSave:into:)`.
///
/// ```swift
/// let update = NSBatchUpdateRequest(entityName: "Person")
/// update.predicate = NSPredicate(format: "lastLoginDate < %@", cutoff as NSDate)
/// update.propertiesToUpdate = ["isActive": false, "age": NSExpression(format: "age + 1")]
/// update.resultType = .updatedObjectIDsResultType
/// let ids = (try context.execute(update) as? NSBatchUpdateResult)?.result as? [NSManagedObjectID]
/// ```
open class NSBatchUpdateRequest: NSPersistentStoreRequest, @unchecked Sendable {
    /// The name of the entity whose objects are updated.
    public let entityName: String
    /// The entity whose objects are updated; nil until the request runs when it was
    /// created with an entity name.
    open private(set) var entity: NSEntityDescription!
    /// The condition a row must meet to be updated; nil updates every row.
    open var predicate: NSPredicate?
    /// Whether rows of sub-entities are updated too (default true).
    open var includesSubentities = true
    /// What the result holds (default: ``NSBatchUpdateRequestResultType/statusOnlyResultType``).
    open var resultType: NSBatchUpdateRequestResultType = .statusOnlyResultType
    /// The new values: attribute names or descriptions to constants or `NSExpression`s.
    open var propertiesToUpdate: [AnyHashable: Any]?

    /// The kind of request: a batch update.
    open override var requestType: NSPersistentStoreRequestType { .batchUpdateRequestType }

    /// A request updating objects of the entity named `entityName`.
    public init(entityName: String) {
        self.entityName = entityName
        super.init()
    }

    /// A request updating objects of `entity`.
    public init(entity: NSEntityDescription) {
        self.entityName = entity.name ?? ""
        self.entity = entity
        super.init()
    }
}

/// The result of a batch update.
open class NSBatchUpdateResult: NSPersistentStoreResult, @unchecked Sendable {
    /// `true` (status only), the updated rows' `[NSManagedObjectID]`, or their number
    /// (`Int`), as ``resultType`` says.
    public let result: Any?
    /// What ``result`` holds.
    public let resultType: NSBatchUpdateRequestResultType

    init(result: Any?, resultType: NSBatchUpdateRequestResultType) {
        self.result = result
        self.resultType = resultType
        super.init()
    }
}

extension NSBatchUpdateRequest: ContextExecutableRequest {
    func execute(in context: NSManagedObjectContext) throws -> NSPersistentStoreResult {
        let outcome = try context.executeBatchUpdate(self)
        switch resultType {
        case .statusOnlyResultType: return NSBatchUpdateResult(result: true, resultType: resultType)
        case .updatedObjectIDsResultType: return NSBatchUpdateResult(result: outcome.objectIDs, resultType: resultType)
        case .updatedObjectsCountResultType: return NSBatchUpdateResult(result: outcome.count, resultType: resultType)
        }
    }

    /// The entity, resolved in `model` when the request was made with a name.
    func resolvedEntity(in model: NSManagedObjectModel) throws -> NSEntityDescription {
        try BatchEntity.resolve(entity, named: entityName, in: model, request: "batch update")
    }
}
