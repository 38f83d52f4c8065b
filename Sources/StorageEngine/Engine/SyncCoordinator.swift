// Group commit: committers append their frames under the writer lock, release it, then
// wait here until a sync covers their frames. Whoever finds no sync running starts one
// for everything written so far; the others wait for it. One fdatasync serves many.
import Foundation

final class SyncCoordinator: @unchecked Sendable {
    private let condition = NSCondition()
    /// Log bytes appended, counted across log resets.
    private var written: UInt64 = 0
    private var synced: UInt64 = 0
    private var syncing = false
    private var failure: StorageError?

    /// Records that the log now holds `sequence` bytes.
    func noteWritten(_ sequence: UInt64) {
        condition.lock()
        written = max(written, sequence)
        condition.unlock()
    }

    /// Marks everything written so far durable (a checkpoint synced it into the page file).
    func markAllDurable() {
        condition.lock()
        synced = written
        condition.broadcast()
        condition.unlock()
    }

    /// Returns once a sync covering `sequence` completed; runs `sync` if none is running.
    func waitDurable(_ sequence: UInt64, sync: () throws -> Void) throws {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let failure { throw failure }
            if synced >= sequence { return }
            if syncing {
                condition.wait()
                continue
            }
            syncing = true
            let target = written
            condition.unlock()
            var syncError: StorageError?
            do { try sync() } catch let thrown as StorageError { syncError = thrown } catch {
                syncError = StorageError(.io, "\(error)")
            }
            condition.lock()
            syncing = false
            if let syncError {
                failure = StorageError(.poisoned, "log sync failed: \(syncError)")
                condition.broadcast()
                throw syncError
            }
            synced = max(synced, target)
            condition.broadcast()
        }
    }
}

/// The in-process writer lock, with a timeout.
final class WriterGate: @unchecked Sendable {
    private let condition = NSCondition()
    private var held = false

    func acquire(timeout: Double) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while held {
            if !condition.wait(until: deadline) && held { return false }
        }
        held = true
        return true
    }

    func release() {
        condition.lock()
        held = false
        condition.signal()
        condition.unlock()
    }
}
