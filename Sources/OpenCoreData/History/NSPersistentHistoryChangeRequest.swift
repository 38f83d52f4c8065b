// Requests on persistent history: fetch the transactions after a point, or delete
// those before one. They run through `NSManagedObjectContext.execute(_:)`.
import Foundation

/// What a history request returns.
public enum NSPersistentHistoryResultType: Int, Sendable {
    /// Only whether it succeeded (`NSNumber` true).
    case statusOnly
    /// The changed objects' IDs (`[NSManagedObjectID]`).
    case objectIDs
    /// The number of transactions fetched or deleted (`NSNumber`).
    case count
    /// The transactions without their changes (`[NSPersistentHistoryTransaction]`).
    case transactionsOnly
    /// The changes only (`[NSPersistentHistoryChange]`).
    case changesOnly
    /// The transactions with their changes (`[NSPersistentHistoryTransaction]`); the default.
    case transactionsAndChanges
}

/// A request to fetch or delete persistent history.
///
/// ```swift
/// let request = NSPersistentHistoryChangeRequest.fetchHistory(after: token)
/// let result = try context.execute(request) as? NSPersistentHistoryResult
/// let transactions = result?.result as? [NSPersistentHistoryTransaction] ?? []
/// _ = try context.execute(NSPersistentHistoryChangeRequest.deleteHistory(before: transactions.last?.token))
/// ```
open class NSPersistentHistoryChangeRequest: NSPersistentStoreRequest, @unchecked Sendable {
    enum Bound {
        case token(NSPersistentHistoryToken?)
        case date(Date)
    }

    enum Operation {
        case fetch(after: Bound)
        case delete(before: Bound)
    }

    let operation: Operation

    /// What the request returns; `.transactionsAndChanges` unless set.
    open var resultType: NSPersistentHistoryResultType = .transactionsAndChanges
    /// The token the request starts or ends at, if it was made with one.
    open var token: NSPersistentHistoryToken? {
        switch operation {
        case .fetch(after: .token(let token)), .delete(before: .token(let token)): token
        default: nil
        }
    }
    /// A fetch request whose predicate filters what is fetched: transactions, for a
    /// request on `NSPersistentHistoryTransaction.fetchRequest` (or with no entity); each
    /// transaction's changes, for one on `NSPersistentHistoryChange.fetchRequest`
    /// (transactions left without a change are dropped). Its `fetchLimit` caps the
    /// number of transactions.
    open var fetchRequest: NSFetchRequest<NSFetchRequestResult>?

    init(_ operation: Operation) {
        self.operation = operation
        super.init()
    }

    /// Fetches the transactions after `token`, or all retained ones for nil.
    ///
    /// Executing it throws `NSPersistentHistoryTokenExpiredError` (134301) when history
    /// after `token` has been deleted.
    open class func fetchHistory(after token: NSPersistentHistoryToken?) -> NSPersistentHistoryChangeRequest {
        NSPersistentHistoryChangeRequest(.fetch(after: .token(token)))
    }

    /// Fetches the transactions with a timestamp later than `date`.
    open class func fetchHistory(after date: Date) -> NSPersistentHistoryChangeRequest {
        NSPersistentHistoryChangeRequest(.fetch(after: .date(date)))
    }

    /// Fetches the transactions after `transaction`, or all retained ones for nil.
    open class func fetchHistory(after transaction: NSPersistentHistoryTransaction?)
        -> NSPersistentHistoryChangeRequest
    {
        NSPersistentHistoryChangeRequest(.fetch(after: .token(transaction?.token)))
    }

    /// Fetches the transactions (or, for a request on `NSPersistentHistoryChange`, the
    /// changes) the predicate of `fetchRequest` accepts.
    open class func fetchHistory(withFetch fetchRequest: NSFetchRequest<NSFetchRequestResult>)
        -> NSPersistentHistoryChangeRequest
    {
        let request = NSPersistentHistoryChangeRequest(.fetch(after: .token(nil)))
        request.fetchRequest = fetchRequest
        return request
    }

    /// Deletes the transactions strictly before `token` (the token's own transaction
    /// stays); nil deletes all history.
    open class func deleteHistory(before token: NSPersistentHistoryToken?) -> NSPersistentHistoryChangeRequest {
        NSPersistentHistoryChangeRequest(.delete(before: .token(token)))
    }

    /// Deletes the transactions older than `date` (in sequence order: deletion stops at
    /// the first transaction at or after `date`).
    open class func deleteHistory(before date: Date) -> NSPersistentHistoryChangeRequest {
        NSPersistentHistoryChangeRequest(.delete(before: .date(date)))
    }

    /// Deletes the transactions strictly before `transaction`; nil deletes all history.
    open class func deleteHistory(before transaction: NSPersistentHistoryTransaction?)
        -> NSPersistentHistoryChangeRequest
    {
        NSPersistentHistoryChangeRequest(.delete(before: .token(transaction?.token)))
    }
}

/// The result of a history request; `result` depends on the request's `resultType`.
open class NSPersistentHistoryResult: NSPersistentStoreResult, @unchecked Sendable {
    /// The kind of `result`.
    public let resultType: NSPersistentHistoryResultType
    /// Transactions, changes, object IDs, a count or a status, as `resultType` says.
    public let result: Any?

    init(resultType: NSPersistentHistoryResultType, result: Any?) {
        self.resultType = resultType
        self.result = result
        super.init()
    }
}

extension NSPersistentHistoryChangeRequest: ContextExecutableRequest {
    func execute(in context: NSManagedObjectContext) throws -> NSPersistentStoreResult {
        guard let coordinator = context.persistentStoreCoordinator else { throw CoreDataError.noCoordinator }
        return try coordinator.executeHistoryRequest(self)
    }
}
