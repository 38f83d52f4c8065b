import Foundation

// Several handles (processes) on one database (SPEC.md §2.8). The `-lock` file holds a
// change counter in bytes 0..<8, the transaction id of the state announced with it in
// bytes 8..<16, and four advisory OFD lock bytes:
//
//   byte 1  open:       shared by multi-process handles, exclusive by a single-process one
//   byte 2  writer:     exclusive for a write transaction, a checkpoint, a close
//   byte 3  checkpoint: shared while a handle has snapshots; exclusive to checkpoint
//   byte 4  gate:       exclusive while a checkpoint waits for snapshots to end; a handle
//                       starts no snapshot while another holds it (L6)
//
// A checkpoint (which overwrites page-file slots and resets the log) therefore never
// runs under another handle's snapshot, and because free pages are reused only up to
// the checkpointed transaction (F1), no writer reuses a page such a snapshot reaches.
// Each writer bumps the counter after it commits or checkpoints; a handle that sees a
// counter it does not know reloads its state from the files before its next transaction.
// A writer killed between its log append and its bump leaves a commit nobody announced:
// the next handle to hold the writer lock and recover it announces it (L4).
#if canImport(Glibc)
    import Glibc
#endif

/// Lock bytes of the `-lock` file.
enum LockByte {
    static let open: UInt64 = 1
    static let writer: UInt64 = 2
    static let checkpoint: UInt64 = 3
    static let gate: UInt64 = 4
    /// Where the `u64` change counter lies in the `-lock` file.
    static let counterOffset: UInt64 = 0
    /// Where the `u64` transaction id of the state last announced lies, written with the
    /// counter (L4).
    static let announcedTransactionOffset: UInt64 = 8
}

extension Database {
    /// Takes lock byte `byte` of `file` (exclusive unless `exclusive` is false), polling
    /// until `timeout` seconds pass (SPEC.md §2.8's bytes; a store's files use it too).
    ///
    /// - Throws: ``StorageError`` `busy` when another handle still holds it then; the file's error.
    public static func acquire(_ file: any StorageFile, byte: UInt64, timeout: Double, exclusive: Bool = true) throws {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while try !file.tryLock(byte: byte, exclusive: exclusive) {
            guard Date() < deadline else {
                throw StorageError(.busy, "another process held the database's lock for \(timeout) s")
            }
            usleep(200)
        }
    }

    /// The change counter in the lock file (0 when never written).
    static func readCounter(_ file: any StorageFile) throws -> UInt64 {
        var bytes = [UInt8](repeating: 0, count: 8)
        let read = try bytes.withUnsafeMutableBytes { try file.read(into: $0, at: LockByte.counterOffset) }
        return read == bytes.count ? get64(bytes, 0) : 0
    }

    /// The transaction id of the state last announced (0 when no build that records it
    /// wrote the lock file).
    static func readAnnouncedTransaction(_ file: any StorageFile) throws -> UInt64 {
        var bytes = [UInt8](repeating: 0, count: 8)
        let read = try bytes.withUnsafeMutableBytes {
            try file.read(into: $0, at: LockByte.announcedTransactionOffset)
        }
        return read == bytes.count ? get64(bytes, 0) : 0
    }

    /// Writes the change counter and the announced transaction, in one write.
    static func writeAnnouncement(counter: UInt64, transaction: UInt64, to file: any StorageFile) throws {
        var bytes = [UInt8](repeating: 0, count: 16)
        put64(&bytes, 0, counter)
        put64(&bytes, 8, transaction)
        try bytes.withUnsafeBytes { try file.write($0, at: LockByte.counterOffset) }
    }

    /// After a commit or checkpoint in multi-process mode: tells other handles to reload.
    /// `transaction`: the state the change leads to, recorded beside the counter.
    func announceChange(transaction: UInt64) throws {
        guard options.multiProcess else { return }
        let counter = stateLock.withLock { () -> UInt64 in
            knownCounter &+= 1
            announcedChanges &+= 1
            return knownCounter
        }
        do {
            try Database.writeAnnouncement(counter: counter, transaction: transaction, to: lockFile)
        } catch {
            throw poisonHandle(error)
        }
    }

    /// At open, under the writer lock, with the state just recovered: the change counter
    /// to start from, after announcing that state when it is not the one last announced
    /// (see ``announceRecoveredState()``); `announced` says whether it did.
    static func counterAtOpen(_ file: any StorageFile, recovered transaction: UInt64) throws -> (
        counter: UInt64, announced: Bool
    ) {
        let counter = try readCounter(file)
        guard try readAnnouncedTransaction(file) != transaction else { return (counter, false) }
        try writeAnnouncement(counter: counter &+ 1, transaction: transaction, to: file)
        return (counter &+ 1, true)
    }

    /// Under the writer lock (byte 2), with the state just reloaded from the files: a state
    /// other than the one last announced was committed by a writer that died between its
    /// log append and its counter write (or by a build that does not record the
    /// transaction). Announcing it makes the handles opened before reload before their next
    /// snapshot and read what this handle reads (L4).
    func announceRecoveredState() throws {
        let state = stateLock.withLock { committed.transaction }
        guard try Database.readAnnouncedTransaction(lockFile) != state else { return }
        try announceChange(transaction: state)
    }

    /// Multi-process mode: a number that grows by one with each commit or checkpoint
    /// another handle (another process) announces, read from the lock file's change
    /// counter without a transaction — cheap enough to poll; nil in single-process mode.
    ///
    /// It may lag one change behind while this handle announces its own (the counter is
    /// read before this handle's tally), never run ahead: keep the largest value seen.
    /// - Throws: ``StorageError`` `io` when the lock file cannot be read.
    public func changesAnnouncedByOtherHandles() throws -> UInt64? {
        guard options.multiProcess else { return nil }
        let counter = try Database.readCounter(lockFile)
        return counter &- stateLock.withLock { announcedChanges }
    }

    /// Takes the checkpoint lock exclusively (converting this handle's shared hold); false
    /// when another handle has a snapshot. Holds `readerLock` until ``endExclusiveCheckpoint()``.
    ///
    /// When other handles hold snapshots it closes the gate (byte 4, L6), so that they
    /// start no new one, and waits up to ``checkpointGateWait`` for theirs to end: readers
    /// that take turns never starve the checkpoint. After a wait that failed (a long-lived
    /// snapshot) it does not wait again for ``checkpointGateBackoff`` seconds.
    func beginExclusiveCheckpoint() throws -> Bool {
        guard options.multiProcess else { return true }
        readerLock.lock()
        do {
            if try lockFile.tryLock(byte: LockByte.checkpoint, exclusive: true) { return true }
            if let failed = gateFailure, Date().timeIntervalSince(failed) < Database.checkpointGateBackoff {
                readerLock.unlock()
                return false
            }
            if try lockFile.tryLock(byte: LockByte.gate, exclusive: true) {
                defer { lockFile.unlock(byte: LockByte.gate) }
                let deadline = Date(timeIntervalSinceNow: min(options.busyTimeout, Database.checkpointGateWait))
                repeat {
                    usleep(100)
                    if try lockFile.tryLock(byte: LockByte.checkpoint, exclusive: true) {
                        gateFailure = nil
                        return true
                    }
                } while Date() < deadline
                gateFailure = Date()
            }
        } catch {
            readerLock.unlock()
            throw error
        }
        readerLock.unlock()
        return false
    }

    /// Seconds a checkpoint waits for other handles' snapshots to end (L6).
    static let checkpointGateWait = 0.1
    /// Seconds after a failed wait during which checkpoints do not wait again.
    static let checkpointGateBackoff = 1.0

    /// Waits, under `readerLock`, while another handle's checkpoint holds the gate (L6).
    /// Called before this handle's first snapshot and before any new one while the gate is
    /// closed, so a handle whose readers overlap also lets the checkpoint through.
    private func passCheckpointGate() throws {
        let deadline = Date(timeIntervalSinceNow: options.busyTimeout)
        while try !lockFile.tryLock(byte: LockByte.gate, exclusive: false) {
            guard Date() < deadline else {
                throw StorageError(.busy, "another process held \(path)'s checkpoint gate for \(options.busyTimeout) s")
            }
            readerLock.unlock()
            usleep(100)
            readerLock.lock()
        }
        lockFile.unlock(byte: LockByte.gate)
    }

    /// Returns the checkpoint lock to what this handle's readers need.
    func endExclusiveCheckpoint() {
        guard options.multiProcess else { return }
        if checkpointLockShared {
            _ = try? lockFile.tryLock(byte: LockByte.checkpoint, exclusive: false)
        } else {
            lockFile.unlock(byte: LockByte.checkpoint)
        }
        readerLock.unlock()
    }

    /// Before a read transaction picks its snapshot: hold the checkpoint lock shared, then
    /// catch up with other handles' commits.
    func beginSharedRead() throws {
        try readerLock.withLock {
            try passCheckpointGate()
            if sharedReaders == 0 {
                try Database.acquire(
                    lockFile, byte: LockByte.checkpoint, timeout: options.busyTimeout, exclusive: false)
                checkpointLockShared = true
            }
            sharedReaders += 1
        }
        do {
            let counter = try Database.readCounter(lockFile)
            if stateLock.withLock({ knownCounter }) != counter {
                guard try writerGate.acquire(timeout: options.busyTimeout) else {
                    throw StorageError(.busy, "a writer held \(path) for \(options.busyTimeout) s")
                }
                defer { writerGate.release() }
                try refreshLocked(holdingWriterLock: false)
            }
        } catch {
            endSharedRead()
            throw error
        }
    }

    /// After a read transaction ends.
    func endSharedRead() {
        readerLock.withLock {
            sharedReaders -= 1
            if sharedReaders == 0 {
                lockFile.unlock(byte: LockByte.checkpoint)
                checkpointLockShared = false
            }
        }
    }

    /// Reloads the committed state from the files when another handle changed them. Runs
    /// under the writer gate, with the writer lock byte or the checkpoint lock held, so the
    /// log is not reset underneath. Holding the writer lock, it announces a reloaded state
    /// nobody announced (L4); a reader, holding only the checkpoint lock, may be reading a
    /// live writer's commit before the writer's own announcement, and announces nothing.
    func refreshLocked(holdingWriterLock: Bool = true) throws {
        guard options.multiProcess else { return }
        internalCheck(writerGate.isHeldByCurrentThread, "L4: a reload without the writer lock")
        let counter = try Database.readCounter(lockFile)
        // An unchanged counter can hide a commit whose process died before announcing it.
        guard try counter != stateLock.withLock({ knownCounter }) || log.holdsFramesBeyondEnd() else { return }
        let choice = try Database.readMeta(dataFile, path: path)
        let meta = choice.state
        let recovery = try log.recover(from: meta)
        let repair = try Database.checkRecoveredState(choice, recovery, path: path, options: options)
        try Database.checkPageCount(meta: meta, recovered: recovery.state, dataFile: dataFile, log: log)
        store.replaceAll(logIndex: recovery.index)
        checkpointed = meta
        metaSlot = choice.slot
        metaRepair = repair
        (freeEntries, freeListPages) = try Database.rebuildFreeList(
            store, geometry: geometry, meta: meta, recovery: recovery)
        stateLock.withLock {
            committed = recovery.state
            knownCounter = counter
        }
        if holdingWriterLock { try announceRecoveredState() }
    }
}
