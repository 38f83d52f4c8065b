// NSBatchDeleteRequest: stored rows deleted in one transaction without loading objects
// into a context: the rows a fetch request selects, or the rows of given object IDs.
// BatchDeletePlan.swift decides what else changes (cascades, nullified inverses).
import Foundation

/// What a batch delete reports.
public enum NSBatchDeleteRequestResultType: UInt, Sendable {
    /// `true` when the delete succeeded (the default).
    case resultTypeStatusOnly = 0
    /// The object IDs of the deleted rows (cascaded deletions included).
    case resultTypeObjectIDs = 1
    /// The number of deleted rows (cascaded deletions included).
    case resultTypeCount = 2
}

/// Deletes stored objects directly in the store, in one transaction.
///
/// The objects are those a fetch request selects (its predicate, sort descriptors,
/// `fetchOffset` and `fetchLimit` apply; its result type does not) or those of a list of
/// object IDs of one entity. The graph stays consistent: the inverse of every relationship
/// to a deleted object is nullified (a to-one reads nil, a to-many no longer lists it), and
/// a non-optional inverse that would be left empty fails the whole delete, nothing written.
/// Cascade rules are followed as a context delete follows them (Core Data does not say);
/// the Deny rule is not enforced, as in Core Data. Registered objects of contexts are not
/// updated: merge the returned object IDs with
/// `NSManagedObjectContext.mergeChanges(fromRemoteContextSave:into:)`.
///
/// ```swift
/// let request: NSFetchRequest<NSFetchRequestResult> = Person.fetchRequest()
/// request.predicate = NSPredicate(format: "age >= %d", 60)
/// let delete = NSBatchDeleteRequest(fetchRequest: request)
/// delete.resultType = .resultTypeObjectIDs
/// let ids = (try context.execute(delete) as? NSBatchDeleteResult)?.result as? [NSManagedObjectID]
/// ```
open class NSBatchDeleteRequest: NSPersistentStoreRequest, @unchecked Sendable {
    /// The fetch request selecting the rows to delete.
    public let fetchRequest: NSFetchRequest<NSFetchRequestResult>
    /// The object IDs to delete, when the request was made from object IDs.
    let objectIDs: [NSManagedObjectID]?
    /// What the result holds (default: ``NSBatchDeleteRequestResultType/resultTypeStatusOnly``).
    open var resultType: NSBatchDeleteRequestResultType = .resultTypeStatusOnly

    /// The kind of request: a batch delete.
    open override var requestType: NSPersistentStoreRequestType { .batchDeleteRequestType }

    /// A request deleting the rows `fetch` selects.
    public init(fetchRequest fetch: NSFetchRequest<NSFetchRequestResult>) {
        self.fetchRequest = fetch
        self.objectIDs = nil
        super.init()
    }

    /// A request deleting the rows of `objectIDs`, which must all be of one entity (and
    /// its sub-entities); running it throws otherwise.
    public init(objectIDs: [NSManagedObjectID]) {
        let request = NSFetchRequest<NSFetchRequestResult>()
        if let entity = objectIDs.first?.entity { request.entity = entity }
        request.predicate = NSComparisonPredicate(
            leftExpression: .expressionForEvaluatedObject(), rightExpression: NSExpression(forConstantValue: objectIDs),
            modifier: .direct, type: .in)
        self.fetchRequest = request
        self.objectIDs = objectIDs
        super.init()
    }

    /// The stores the request deletes from; nil means all stores of the coordinator (or
    /// the fetch request's `affectedStores`).
    open override var affectedStores: [NSPersistentStore]? {
        get { super.affectedStores ?? fetchRequest.affectedStores }
        set { super.affectedStores = newValue }
    }
}

/// The result of a batch delete.
open class NSBatchDeleteResult: NSPersistentStoreResult, @unchecked Sendable {
    /// `true` (status only), the deleted rows' `[NSManagedObjectID]`, or their number
    /// (`Int`), as ``resultType`` says.
    public let result: Any?
    /// What ``result`` holds.
    public let resultType: NSBatchDeleteRequestResultType

    init(result: Any?, resultType: NSBatchDeleteRequestResultType) {
        self.result = result
        self.resultType = resultType
        super.init()
    }
}

extension NSBatchDeleteRequest: ContextExecutableRequest {
    func execute(in context: NSManagedObjectContext) throws -> NSPersistentStoreResult {
        let outcome = try context.executeBatchDelete(self)
        switch resultType {
        case .resultTypeStatusOnly: return NSBatchDeleteResult(result: true, resultType: resultType)
        case .resultTypeObjectIDs: return NSBatchDeleteResult(result: outcome.objectIDs, resultType: resultType)
        case .resultTypeCount: return NSBatchDeleteResult(result: outcome.count, resultType: resultType)
        }
    }
}
