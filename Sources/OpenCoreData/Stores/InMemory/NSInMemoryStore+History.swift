// The in-memory store's history journal: records in an array, gone with the store.
// Core Data's in-memory store has no history; ours does, so code using history can be
// tested without files (README, "Porting from Core Data").
import Foundation

/// Encoded history records in sequence order, with the purge bound.
struct InMemoryHistoryJournal {
    private(set) var records: [(sequence: Int64, bytes: [UInt8])] = []
    private(set) var currentSequence: Int64 = 0
    private(set) var purgedSequence: Int64 = 0

    mutating func append(_ bytes: [UInt8]) {
        currentSequence += 1
        records.append((currentSequence, bytes))
    }

    func records(after sequence: Int64) -> [(sequence: Int64, bytes: [UInt8])] {
        // Sequences are dense after the purge bound, so the start is computed, not searched.
        // Tokens may come from a decoder, so any Int64 must work without overflow.
        let start = sequence <= purgedSequence ? 0 : min(records.count, Int(clamping: sequence - purgedSequence))
        return Array(records[start...])
    }

    mutating func delete(before sequence: Int64) -> Int {
        let count = records.prefix { $0.sequence < sequence }.count
        records.removeFirst(count)
        purgedSequence = max(purgedSequence, min(sequence > 0 ? sequence - 1 : 0, currentSequence))
        return count
    }
}

extension NSInMemoryStore: PersistentHistoryJournal {
    var isHistoryTrackingEnabled: Bool { historyTrackingOption }

    func currentHistorySequence() throws -> Int64 { historyJournal.currentSequence }

    func historyPurgedSequence() throws -> Int64 { historyJournal.purgedSequence }

    func historyRecords(after sequence: Int64) throws -> [(sequence: Int64, bytes: [UInt8])] {
        historyJournal.records(after: sequence)
    }

    func deleteHistoryRecords(before sequence: Int64) throws -> Int {
        let previous = historyJournal
        let count = historyJournal.delete(before: sequence)
        do {
            try historyJournalDidChange()
        } catch {
            historyJournal = previous
            throw error
        }
        return count
    }
}
