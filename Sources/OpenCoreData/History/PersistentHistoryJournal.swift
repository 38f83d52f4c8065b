// The history journal's contract with stores. History is store-agnostic: a store keeps
// opaque, encoded records (PersistentHistoryRecord, SPEC.md §3 "History journal")
// keyed by a sequence number it assigns, and the History/ layer turns them into
// transactions, tokens and changes. The in-memory, binary and on-disk stores all keep
// the same bytes, so history reads the same everywhere.
import Foundation

/// A store that keeps a persistent history journal.
///
/// What a conforming store must do:
/// 1. In `save(_:)`, when ``isHistoryTrackingEnabled``, build the save's record
///    (``PersistentHistoryRecord/init(request:timestamp:storedRow:)``, then adjust its
///    `changes` for anything the store decided itself — an upsert turns an insert into
///    `.update` of the existing row with the properties it changed) and append
///    `record.encoded()` at sequence ``currentHistorySequence()`` + 1 **inside the same
///    atomic save as the rows**: the record exists if and only if the save happened.
///    A save that changes nothing appends nothing.
/// 2. Keep sequences strictly increasing and never reuse one, even after purging.
/// 3. Keep ``historyPurgedSequence()`` — the highest sequence ever deleted — durable
///    with the records, so a reader holding an older token learns it has expired
///    (`NSPersistentHistoryTokenExpiredError`) instead of seeing a silent gap.
///
/// The coordinator serializes every call into a store, so none needs locking.
protocol PersistentHistoryJournal: NSPersistentStore {
    /// Whether saves append history records (the `NSPersistentHistoryTrackingKey` option).
    var isHistoryTrackingEnabled: Bool { get }

    /// The sequence of the newest record ever appended; 0 before the first.
    func currentHistorySequence() throws -> Int64

    /// The highest sequence deleted by ``deleteHistoryRecords(before:)``; 0 when none was.
    /// Every retained record has a larger sequence.
    func historyPurgedSequence() throws -> Int64

    /// The encoded records with a sequence greater than `sequence`, in ascending order.
    func historyRecords(after sequence: Int64) throws -> [(sequence: Int64, bytes: [UInt8])]

    /// Deletes every record with a sequence less than `sequence`, durably, and raises
    /// ``historyPurgedSequence()`` to at least `sequence - 1` (never beyond the current
    /// sequence); returns how many records it deleted.
    func deleteHistoryRecords(before sequence: Int64) throws -> Int
}

extension NSPersistentStore {
    /// Whether the store was added with `NSPersistentHistoryTrackingKey` set to true.
    var historyTrackingOption: Bool {
        guard let value = options?[NSPersistentHistoryTrackingKey] else { return false }
        if let number = value as? NSNumber { return number.boolValue }
        return (value as? Bool) ?? false
    }
}
