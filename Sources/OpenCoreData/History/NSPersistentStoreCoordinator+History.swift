// Running history requests: read each tracking store's journal, decode its records
// and map their objects back to this coordinator's model and stores.
import Foundation

extension NSPersistentStoreCoordinator {
    /// A token for the newest history of `stores` (all stores for nil), or nil when none
    /// of them tracks history.
    ///
    /// - Parameter stores: `NSPersistentStore`s of the coordinator (other elements are ignored).
    public func currentPersistentHistoryToken(fromStores stores: [Any]?) -> NSPersistentHistoryToken? {
        withStores {
            let chosen = stores.map { $0.compactMap { $0 as? NSPersistentStore } } ?? persistentStores
            var sequences: [String: Int64] = [:]
            for store in chosen {
                guard let journal = store as? any PersistentHistoryJournal, journal.isHistoryTrackingEnabled,
                    let identifier = store.identifier, let sequence = try? journal.currentHistorySequence()
                else { continue }
                sequences[identifier] = sequence
            }
            return sequences.isEmpty ? nil : NSPersistentHistoryToken(sequencesByStore: sequences)
        }
    }

    func executeHistoryRequest(_ request: NSPersistentHistoryChangeRequest) throws -> NSPersistentHistoryResult {
        try withStores {
            let journals = (request.affectedStores ?? persistentStores).compactMap { store in
                (store as? any PersistentHistoryJournal).flatMap { $0.isHistoryTrackingEnabled ? $0 : nil }
            }
            guard !journals.isEmpty else {
                throw CoreDataError.make(
                    NSPersistentStoreUnsupportedRequestTypeError,
                    "persistent history is not enabled on the request's stores: add them with the "
                        + "NSPersistentHistoryTrackingKey option set to true")
            }
            switch request.operation {
            case .fetch(let bound): return try fetchHistory(after: bound, from: journals, request: request)
            case .delete(let bound): return try deleteHistory(before: bound, from: journals, request: request)
            }
        }
    }

    private func fetchHistory(
        after bound: NSPersistentHistoryChangeRequest.Bound, from journals: [any PersistentHistoryJournal],
        request: NSPersistentHistoryChangeRequest
    ) throws -> NSPersistentHistoryResult {
        let withChanges = request.resultType != .transactionsOnly && request.resultType != .count
        var transactions: [NSPersistentHistoryTransaction] = []
        for journal in journals {
            let storeID = journal.identifier ?? ""
            var after: Int64 = 0
            if case .token(let token?) = bound, let sequence = token.sequence(forStore: storeID) {
                let purged = try journal.historyPurgedSequence()
                // Sequences start at 1: a token at or below 0 misses nothing unless a record was purged.
                if max(sequence, 0) < purged {
                    throw CoreDataError.make(
                        NSPersistentHistoryTokenExpiredError,
                        "the history token has expired: history of store \(storeID) up to transaction \(purged) "
                            + "was deleted, and the token asks for the transactions after \(sequence); "
                            + "fetch with a newer token, or after nil for all retained history",
                        userInfo: ["NSPersistentHistoryTokenKey": token])
                }
                after = max(sequence, 0)
            }
            for (sequence, bytes) in try journal.historyRecords(after: after) {
                let record = try PersistentHistoryRecord(
                    decoding: bytes, what: "history record \(sequence) of store \(storeID)")
                if case .date(let date) = bound, record.timestamp <= date { continue }
                transactions.append(
                    try transaction(
                        from: record, sequence: sequence, store: journal, withChanges: withChanges))
            }
        }
        if journals.count > 1 { transactions.sort { $0.timestamp < $1.timestamp } }
        if let fetchRequest = request.fetchRequest {
            transactions = filter(transactions, by: fetchRequest)
        }
        let result: Any
        switch request.resultType {
        case .statusOnly: result = NSNumber(value: true)
        case .count: result = NSNumber(value: transactions.count)
        case .objectIDs: result = transactions.flatMap { ($0.changes ?? []).map(\.changedObjectID) }
        case .changesOnly: result = transactions.flatMap { $0.changes ?? [] }
        case .transactionsOnly, .transactionsAndChanges: result = transactions
        }
        return NSPersistentHistoryResult(resultType: request.resultType, result: result)
    }

    /// The transactions `fetchRequest` keeps: its predicate on transactions, or on each
    /// transaction's changes for a request on the change entity; then its fetch limit.
    private func filter(
        _ transactions: [NSPersistentHistoryTransaction], by fetchRequest: NSFetchRequest<NSFetchRequestResult>
    ) -> [NSPersistentHistoryTransaction] {
        var kept = transactions
        if let predicate = fetchRequest.predicate {
            if PersistentHistoryEntities.isChangeRequest(fetchRequest) {
                kept = kept.filter { transaction in
                    guard let changes = transaction.changes else { return true }
                    transaction.changes = changes.filter { predicate.evaluate(with: $0) }
                    return transaction.changes?.isEmpty == false
                }
            } else {
                kept = kept.filter { predicate.evaluate(with: $0) }
            }
        }
        if fetchRequest.fetchLimit > 0 && kept.count > fetchRequest.fetchLimit {
            kept.removeSubrange(fetchRequest.fetchLimit...)
        }
        return kept
    }

    private func deleteHistory(
        before bound: NSPersistentHistoryChangeRequest.Bound, from journals: [any PersistentHistoryJournal],
        request: NSPersistentHistoryChangeRequest
    ) throws -> NSPersistentHistoryResult {
        var deleted = 0
        for journal in journals {
            let storeID = journal.identifier ?? ""
            let before: Int64
            switch bound {
            case .token(nil):
                before = try journal.currentHistorySequence() + 1
            case .token(let token?):
                guard let sequence = token.sequence(forStore: storeID) else { continue }
                // Tokens may come from a decoder: stores see only sequences from 1 on.
                before = max(sequence, 1)
            case .date(let date):
                // The first record at or after `date` ends the deleted prefix.
                var end = try journal.currentHistorySequence() + 1
                for (sequence, bytes) in try journal.historyRecords(after: journal.historyPurgedSequence()) {
                    let record = try PersistentHistoryRecord(
                        decoding: bytes, what: "history record \(sequence) of store \(storeID)")
                    if record.timestamp >= date {
                        end = sequence
                        break
                    }
                }
                before = end
            }
            deleted += try journal.deleteHistoryRecords(before: before)
        }
        let result: NSNumber = request.resultType == .count ? NSNumber(value: deleted) : NSNumber(value: true)
        return NSPersistentHistoryResult(resultType: request.resultType, result: result)
    }

    private func transaction(
        from record: PersistentHistoryRecord, sequence: Int64, store: NSPersistentStore, withChanges: Bool
    ) throws -> NSPersistentHistoryTransaction {
        let storeID = store.identifier ?? ""
        let transaction = NSPersistentHistoryTransaction(record: record, sequence: sequence, storeID: storeID)
        guard withChanges else { return transaction }
        let entities = managedObjectModel.entitiesByName
        var changes: [NSPersistentHistoryChange] = []
        changes.reserveCapacity(record.changes.count)
        for (index, change) in record.changes.enumerated() {
            guard let entity = entities[change.entityName] else {
                throw CoreDataError.make(
                    NSCoreDataError,
                    "history record \(sequence) of store \(storeID) names entity '\(change.entityName)', "
                        + "which the coordinator's model does not have")
            }
            let type: NSPersistentHistoryChangeType
            var updated: Set<NSPropertyDescription>?
            var tombstone: [AnyHashable: Any]?
            switch change.kind {
            case .insert: type = .insert
            case .update:
                type = .update
                let properties = entity.propertiesByName
                updated = Set(change.updatedProperties.compactMap { properties[$0] })
            case .delete:
                type = .delete
                let attributes = entity.attributesByName
                var values: [AnyHashable: Any] = [:]
                for entry in change.tombstone {
                    if let attribute = attributes[entry.name] {
                        values[entry.name] = attribute.attributeValue(entry.value) ?? NSNull()
                    }
                }
                tombstone = values
            }
            changes.append(
                NSPersistentHistoryChange(
                    changeID: sequence &* 1_000_000_000 &+ Int64(index),
                    objectID: store.newObjectID(for: entity, key: change.key), type: type, tombstone: tombstone,
                    updatedProperties: updated, transaction: transaction))
        }
        transaction.changes = changes
        return transaction
    }
}

/// userInfo key of `NSPersistentStoreRemoteChange`: the store's newest history token.
public let NSPersistentHistoryTokenKey = "historyToken"
/// userInfo key of `NSPersistentStoreRemoteChange`: the changed store's URL.
public let NSPersistentStoreURLKey = "storeURL"

extension Notification.Name {
    /// Posted by a coordinator after a save changed a store added with
    /// `NSPersistentStoreRemoteChangeNotificationPostOptionKey` — its own saves, and, for a
    /// default store also added with `PageFileStoreMultiProcessOption`, saves by other
    /// processes (noticed within a second); userInfo holds
    /// `NSStoreUUIDKey`, `NSPersistentStoreURLKey` and, when the store tracks history,
    /// `NSPersistentHistoryTokenKey`.
    public static let NSPersistentStoreRemoteChange = Notification.Name("NSPersistentStoreRemoteChangeNotification")
}

extension NSPersistentStoreCoordinator {
    /// Posts `NSPersistentStoreRemoteChange` for each store `request` changed that asked
    /// for it, outside the coordinator's lock so observers may fetch history at once.
    func postRemoteChangeNotifications(after request: StoreSaveRequest) {
        let posting = postingStores(persistentStores)
        guard !posting.isEmpty else { return }
        let ids =
            request.insertedRows.lazy.map(\.objectID) + request.updatedRows.lazy.map(\.objectID)
            + request.deletedObjects.lazy.map(\.objectID)
        for store in posting where ids.contains(where: { $0.persistentStore === store }) {
            postRemoteChangeNotification(for: store)
        }
    }

    /// Posts `NSPersistentStoreRemoteChange` for each of the `changed` stores that asked for it.
    func postRemoteChangeNotifications(for changed: [NSPersistentStore]) {
        for store in postingStores(changed) { postRemoteChangeNotification(for: store) }
    }

    /// The stores of `stores` added with `NSPersistentStoreRemoteChangeNotificationPostOptionKey`.
    private func postingStores(_ stores: [NSPersistentStore]) -> [NSPersistentStore] {
        stores.filter(\.postsRemoteChangeNotifications)
    }

    /// Posts `NSPersistentStoreRemoteChange` for `store`: its identifier, URL and newest
    /// history token.
    func postRemoteChangeNotification(for store: NSPersistentStore) {
        var info: [AnyHashable: Any] = [NSStoreUUIDKey: store.identifier ?? ""]
        if let url = store.url { info[NSPersistentStoreURLKey] = url }
        if let token = currentPersistentHistoryToken(fromStores: [store]) {
            info[NSPersistentHistoryTokenKey] = token
        }
        NotificationCenter.default.post(name: .NSPersistentStoreRemoteChange, object: self, userInfo: info)
    }
}
