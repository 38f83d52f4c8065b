// The default store's history journal (SPEC.md §3.1 T5, §3.7): records in tree
// `history` keyed by sequence, the purge bound in `store.meta`. A save appends its
// record inside its own write transaction, so the record exists iff the save does.
import Foundation
import StorageEngine

extension PageFileStore: PersistentHistoryJournal {
    static let historyTreeName = "history"
    static let purgedKey = Array("history-purged".utf8)

    var isHistoryTrackingEnabled: Bool { historyTrackingOption }

    func currentHistorySequence() throws -> Int64 {
        do {
            return try openDatabase().read { try PageFileStore.historyBounds(in: $0).current }
        } catch {
            throw translate(error)
        }
    }

    func historyPurgedSequence() throws -> Int64 {
        do {
            return try openDatabase().read { try PageFileStore.historyBounds(in: $0).purged }
        } catch {
            throw translate(error)
        }
    }

    func historyRecords(after sequence: Int64) throws -> [(sequence: Int64, bytes: [UInt8])] {
        do {
            return try openDatabase().read { transaction in
                guard let tree = try transaction.tree(named: PageFileStore.historyTreeName) else { return [] }
                guard sequence < .max else { return [] }
                var records: [(sequence: Int64, bytes: [UInt8])] = []
                try tree.scan(from: PageFileKey.sequence(max(sequence, 0) + 1)) { key, value in
                    guard let sequence = PageFileKey.sequenceNumber(key) else {
                        throw CoreDataError.make(NSFileReadCorruptFileError, "a history key is not 8 bytes")
                    }
                    records.append((sequence, Array(value)))
                    return true
                }
                return records
            }
        } catch {
            throw translate(error)
        }
    }

    func deleteHistoryRecords(before sequence: Int64) throws -> Int {
        do {
            return try openDatabase().write { transaction in
                let bounds = try PageFileStore.historyBounds(in: transaction)
                let tree = try transaction.openTree(named: PageFileStore.historyTreeName)
                let doomed = try tree.entries(to: PageFileKey.sequence(sequence)).map(\.key)
                for key in doomed { _ = try tree.removeValue(forKey: key) }
                let purged = max(bounds.purged, min(sequence - 1, bounds.current))
                try transaction.openTree(named: PageFileStore.metaTreeName).setValue(
                    PageFileKey.sequence(purged), forKey: PageFileStore.purgedKey)
                return doomed.count
            }
        } catch {
            throw translate(error, NSPersistentStoreSaveError)
        }
    }

    /// The newest sequence ever appended and the purge bound (SPEC.md §3.7 H2, H3).
    ///
    /// - Throws: `NSFileReadCorruptFileError` when the purge bound or the newest history
    ///   key is not 8 bytes or lies outside `0...StoreCounterLimit.maximum` (a save appends
    ///   at `current + 1`, which must not overflow).
    static func historyBounds(in transaction: ReadTransaction) throws -> (current: Int64, purged: Int64) {
        var purged: Int64 = 0
        if let raw = try transaction.tree(named: metaTreeName)?.value(forKey: purgedKey) {
            guard let value = raw.withUnsafeBytes({ PageFileKey.sequenceNumber($0) }), StoreCounterLimit.accepts(value)
            else {
                throw CoreDataError.make(NSFileReadCorruptFileError, "the history purge bound is damaged")
            }
            purged = value
        }
        var last: Int64 = 0
        if let tree = try transaction.tree(named: historyTreeName) {
            try tree.scan(reverse: true) { key, _ in
                guard let sequence = PageFileKey.sequenceNumber(key), StoreCounterLimit.accepts(sequence) else {
                    throw CoreDataError.make(
                        NSFileReadCorruptFileError,
                        "the newest history record's key is damaged (not a sequence in 0...\(StoreCounterLimit.maximum))"
                    )
                }
                last = sequence
                return false
            }
        }
        return (max(last, purged), purged)
    }
}
