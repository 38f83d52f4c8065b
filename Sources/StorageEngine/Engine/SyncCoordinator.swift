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
    /// Write transactions begun (waiting for or holding the writer lock) and not yet
    /// appended: a syncer waits briefly for them so one sync covers their commits too.
    private var pendingCommitters = 0
    /// The longest a syncer waits for pending committers, in seconds.
    private let gatherWindow = 0.000_4

    /// A write transaction is starting.
    func committerStarted() {
        condition.lock()
        pendingCommitters += 1
        condition.unlock()
    }

    /// A write transaction appended its frames, or ended without committing.
    func committerFinished() {
        condition.lock()
        pendingCommitters -= 1
        condition.broadcast()
        condition.unlock()
    }

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
            let deadline = Date(timeIntervalSinceNow: gatherWindow)
            while pendingCommitters > 0 && Date() < deadline { _ = condition.wait(until: deadline) }
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
    private var owner: pthread_t?

    /// Takes the lock, waiting up to `timeout` seconds; false on timeout.
    /// - Throws: `invalidArgument` when the calling thread already holds it (a write,
    ///   checkpoint, verify or vacuum started inside a write transaction would wait forever).
    /// Whether the calling thread holds the lock (for internal checks).
    var isHeldByCurrentThread: Bool {
        condition.lock()
        defer { condition.unlock() }
        guard held, let owner else { return false }
        return pthread_equal(owner, pthread_self()) != 0
    }

    func acquire(timeout: Double) throws -> Bool {
        condition.lock()
        defer { condition.unlock() }
        if held, let owner, pthread_equal(owner, pthread_self()) != 0 {
            throw StorageError(
                .invalidArgument, "a write, checkpoint, verify or vacuum cannot start inside a write transaction")
        }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while held {
            if !condition.wait(until: deadline) && held { return false }
        }
        held = true
        owner = pthread_self()
        return true
    }

    func release() {
        condition.lock()
        internalCheck(
            held && owner.map { pthread_equal($0, pthread_self()) != 0 } == true,
            "L1: the writer lock released by a thread that does not hold it")
        held = false
        owner = nil
        condition.signal()
        condition.unlock()
    }
}
