// Transactions and changes as a history fetch returns them: the decoded journal
// records of a store, with object IDs mapped back through its coordinator.
import Foundation

/// What happened to an object in a history change.
public enum NSPersistentHistoryChangeType: Int, Sendable {
    /// The object was inserted.
    case insert = 0
    /// Some of the object's properties were updated (see `updatedProperties`).
    case update = 1
    /// The object was deleted (see `tombstone`).
    case delete = 2
}

/// userInfo key of `objectIDNotification()`: the inserted objects' IDs (`Set<NSManagedObjectID>`).
public let NSInsertedObjectIDsKey = "inserted_objectIDs"
/// userInfo key of `objectIDNotification()`: the updated objects' IDs (`Set<NSManagedObjectID>`).
public let NSUpdatedObjectIDsKey = "updated_objectIDs"
/// userInfo key of `objectIDNotification()`: the deleted objects' IDs (`Set<NSManagedObjectID>`).
public let NSDeletedObjectIDsKey = "deleted_objectIDs"

/// One save recorded in a store's persistent history.
///
/// ```swift
/// let request = NSPersistentHistoryChangeRequest.fetchHistory(after: lastToken)
/// let result = try context.execute(request) as? NSPersistentHistoryResult
/// for transaction in result?.result as? [NSPersistentHistoryTransaction] ?? [] {
///     viewContext.mergeChanges(fromContextDidSave: transaction.objectIDNotification())
///     lastToken = transaction.token
/// }
/// ```
open class NSPersistentHistoryTransaction: NSObject, KeyValueReadable, @unchecked Sendable {
    /// When the save happened.
    public let timestamp: Date
    /// The changed objects; nil when the request's result type leaves changes out.
    public internal(set) var changes: [NSPersistentHistoryChange]?
    /// The transaction's sequence number in its store.
    public let transactionNumber: Int64
    /// The identifier (`NSStoreUUIDKey`) of the store the save went to.
    public let storeID: String
    /// The saving application's bundle identifier: always "" (Linux has no bundles).
    public let bundleID: String = ""
    /// The saving process's identifier: always "" (not recorded).
    public let processID: String = ""
    /// The saving context's `name`.
    public let contextName: String?
    /// The saving context's `transactionAuthor`.
    public let author: String?
    /// The position just after this transaction: fetch after it for newer transactions.
    public let token: NSPersistentHistoryToken

    init(record: PersistentHistoryRecord, sequence: Int64, storeID: String) {
        self.timestamp = record.timestamp
        self.transactionNumber = sequence
        self.storeID = storeID
        self.contextName = record.contextName
        self.author = record.author
        self.token = NSPersistentHistoryToken(storeIdentifier: storeID, sequence: sequence)
        super.init()
    }

    /// A `NSManagedObjectContextDidSave` notification naming the transaction's objects by
    /// ID (`NSInsertedObjectIDsKey`, `NSUpdatedObjectIDsKey`, `NSDeletedObjectIDsKey`),
    /// for `mergeChanges(fromContextDidSave:)`.
    open func objectIDNotification() -> Notification {
        var inserted: [NSManagedObjectID] = []
        var updated: [NSManagedObjectID] = []
        var deleted: [NSManagedObjectID] = []
        for change in changes ?? [] {
            switch change.changeType {
            case .insert: inserted.append(change.changedObjectID)
            case .update: updated.append(change.changedObjectID)
            case .delete: deleted.append(change.changedObjectID)
            }
        }
        let info: [AnyHashable: Any] = [
            NSInsertedObjectIDsKey: Set(inserted), NSUpdatedObjectIDsKey: Set(updated),
            NSDeletedObjectIDsKey: Set(deleted),
            SavedChanges.userInfoKey: SavedChanges(inserted: inserted, updated: updated, deleted: deleted),
        ]
        return Notification(name: .NSManagedObjectContextDidSave, object: nil, userInfo: info)
    }

    /// The transaction's properties by name, so predicates can filter transactions
    /// (`author`, `contextName`, `timestamp`, `transactionNumber`, `storeID`, `bundleID`, `processID`).
    ///
    /// - Throws: `KeyValueCodingError.unknownKey` for any other key.
    public func readValue(forKey key: String) throws -> Any? {
        switch key {
        case "author": return author
        case "contextName": return contextName
        case "timestamp": return timestamp
        case "transactionNumber": return transactionNumber
        case "storeID": return storeID
        case "bundleID": return bundleID
        case "processID": return processID
        default: throw KeyValueCodingError.unknownKey(key, in: "NSPersistentHistoryTransaction")
        }
    }

    /// The transaction's number, store, author, context and change count, for logs.
    open override var description: String {
        "<NSPersistentHistoryTransaction \(transactionNumber) of \(storeID) author=\(author ?? "nil") "
            + "context=\(contextName ?? "nil") changes=\(changes.map { String($0.count) } ?? "-")>"
    }
}

/// One changed object of a history transaction.
open class NSPersistentHistoryChange: NSObject, KeyValueReadable, @unchecked Sendable {
    /// The change's number, unique within its store.
    public let changeID: Int64
    /// The changed object.
    public let changedObjectID: NSManagedObjectID
    /// Insert, update or delete.
    public let changeType: NSPersistentHistoryChangeType
    /// For a delete: the deleted object's attributes the model marks
    /// `preservesValueInHistoryOnDeletion`, by name; nil otherwise.
    public let tombstone: [AnyHashable: Any]?
    /// For an update: the properties the save changed; nil otherwise.
    public let updatedProperties: Set<NSPropertyDescription>?
    /// The transaction the change belongs to (held weakly: the transaction holds its changes).
    public private(set) weak var transaction: NSPersistentHistoryTransaction?

    init(
        changeID: Int64, objectID: NSManagedObjectID, type: NSPersistentHistoryChangeType,
        tombstone: [AnyHashable: Any]?, updatedProperties: Set<NSPropertyDescription>?,
        transaction: NSPersistentHistoryTransaction
    ) {
        self.changeID = changeID
        self.changedObjectID = objectID
        self.changeType = type
        self.tombstone = tombstone
        self.updatedProperties = updatedProperties
        self.transaction = transaction
        super.init()
    }

    /// The change's properties by name, so predicates can filter changes
    /// (`changeID`, `changedObjectID`, `changedEntity` (the entity's name), `changeType`
    /// as its raw value, `tombstone`, `transaction`).
    ///
    /// - Throws: `KeyValueCodingError.unknownKey` for any other key.
    public func readValue(forKey key: String) throws -> Any? {
        switch key {
        case "changeID": return changeID
        case "changedObjectID": return changedObjectID
        case "changedEntity": return changedObjectID.entity.name
        case "changeType": return changeType.rawValue
        case "tombstone": return tombstone
        case "transaction": return transaction
        default: throw KeyValueCodingError.unknownKey(key, in: "NSPersistentHistoryChange")
        }
    }

    /// The change's type, object and updated property names, for logs.
    open override var description: String {
        let names = updatedProperties.map { " " + $0.map(\.name).sorted().joined(separator: ",") } ?? ""
        return "<NSPersistentHistoryChange \(changeType) \(changedObjectID)\(names)>"
    }
}
