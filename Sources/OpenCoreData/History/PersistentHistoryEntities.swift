// The entities that describe history transactions and changes, so a fetch request can
// filter them: NSPersistentHistoryChangeRequest.fetchHistory(withFetch:) and its
// fetchRequest take requests on these entities, as Core Data's do.
import Foundation

enum PersistentHistoryEntities {
    static let transaction: NSEntityDescription = {
        let entity = NSEntityDescription()
        entity.name = "NSPersistentHistoryTransaction"
        entity.properties = [
            attribute("author", .stringAttributeType), attribute("bundleID", .stringAttributeType),
            attribute("contextName", .stringAttributeType), attribute("processID", .stringAttributeType),
            attribute("storeID", .stringAttributeType), attribute("timestamp", .dateAttributeType),
            attribute("transactionNumber", .integer64AttributeType),
        ]
        return entity
    }()

    static let change: NSEntityDescription = {
        let entity = NSEntityDescription()
        entity.name = "NSPersistentHistoryChange"
        entity.properties = [
            attribute("changeID", .integer64AttributeType), attribute("changedEntity", .stringAttributeType),
            attribute("changedObjectID", .objectIDAttributeType), attribute("changeType", .integer64AttributeType),
            attribute("tombstone", .transformableAttributeType),
        ]
        return entity
    }()

    private static func attribute(_ name: String, _ type: NSAttributeType) -> NSAttributeDescription {
        let attribute = NSAttributeDescription()
        attribute.name = name
        attribute.attributeType = type
        return attribute
    }

    /// Whether `request` asks for changes (its entity is the change entity) rather than transactions.
    static func isChangeRequest(_ request: NSFetchRequest<NSFetchRequestResult>) -> Bool {
        (request.entity?.name ?? request.entityName) == change.name
    }
}

extension NSPersistentHistoryTransaction {
    /// The entity describing transactions, for fetch requests that filter them.
    public class var entityDescription: NSEntityDescription? { PersistentHistoryEntities.transaction }

    /// The entity describing transactions (the same in every context).
    public class func entityDescription(with context: NSManagedObjectContext) -> NSEntityDescription? {
        PersistentHistoryEntities.transaction
    }

    /// A fetch request on transactions: set its predicate (on `author`, `contextName`,
    /// `timestamp`, `transactionNumber`, ...) and pass it to
    /// `NSPersistentHistoryChangeRequest.fetchHistory(withFetch:)` or a request's `fetchRequest`.
    ///
    /// ```swift
    /// let request = NSPersistentHistoryChangeRequest.fetchHistory(after: lastToken)
    /// let notMine = NSPersistentHistoryTransaction.fetchRequest
    /// notMine?.predicate = NSPredicate(format: "author != %@", "app")
    /// request.fetchRequest = notMine
    /// ```
    public class var fetchRequest: NSFetchRequest<NSFetchRequestResult>? {
        let request = NSFetchRequest<NSFetchRequestResult>()
        request.entity = PersistentHistoryEntities.transaction
        return request
    }
}

extension NSPersistentHistoryChange {
    /// The entity describing changes, for fetch requests that filter them.
    public class var entityDescription: NSEntityDescription? { PersistentHistoryEntities.change }

    /// The entity describing changes (the same in every context).
    public class func entityDescription(with context: NSManagedObjectContext) -> NSEntityDescription? {
        PersistentHistoryEntities.change
    }

    /// A fetch request on changes: its predicate (on `changeType`, `changedEntity`,
    /// `changedObjectID`, `transaction.author`, ...) keeps the matching changes of each
    /// transaction, and the transactions with at least one.
    ///
    /// ```swift
    /// let inserts = NSPersistentHistoryChange.fetchRequest!
    /// inserts.predicate = NSPredicate(format: "changeType == %d", NSPersistentHistoryChangeType.insert.rawValue)
    /// let request = NSPersistentHistoryChangeRequest.fetchHistory(withFetch: inserts)
    /// ```
    public class var fetchRequest: NSFetchRequest<NSFetchRequestResult>? {
        let request = NSFetchRequest<NSFetchRequestResult>()
        request.entity = PersistentHistoryEntities.change
        return request
    }
}
