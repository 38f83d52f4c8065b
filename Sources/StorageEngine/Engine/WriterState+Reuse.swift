// A handle's write transactions, one after another, reuse one writer state: creating and
// freeing it (the object, its scratch page, the dirty table and the path arrays) cost about
// 4.8k instructions per one-row commit. The handle keeps the state only when nothing else
// holds it (a transaction or cursor kept past its end would still see it), and clears it
// at once, so a finished transaction's pages are not kept alive until the next one.

extension WriterState {
    /// Past this many dirty-table slots or path entries, a cleared state drops its storage
    /// rather than keep a large transaction's tables for the small ones after it.
    static var keptCapacity: Int { 1_024 }

    /// Starts transaction `transaction` on a state that ``clear()`` emptied.
    func begin(transaction: UInt64, pageCount: UInt64, reusable: [UInt64], spillLimit: Int) {
        internalCheck(freeListReturned && dirty.isEmpty && freed.isEmpty, "F1: a writer state reused before clearing")
        self.transaction = transaction
        self.pageCount = pageCount
        basePageCount = pageCount
        self.reusable = reusable
        self.spillLimit = spillLimit
        spillAt = spillLimit
        freeListReturned = false
    }

    /// Forgets the finished transaction: every field a transaction fills is empty again
    /// (``begin(transaction:pageCount:reusable:spillLimit:)`` sets the rest). The free list
    /// must have been handed back.
    func clear() {
        internalCheck(freeListReturned, "F1: a writer state cleared before it handed its free list back")
        if dirty.slotCount > Self.keptCapacity {
            dirty = PageNumberTable(minimumCapacity: 16)
        } else {
            dirty.removeAll()
        }
        spilled = []
        reusable = []
        taken.removeAll(keepingCapacity: taken.capacity <= Self.keptCapacity)
        freed.removeAll(keepingCapacity: freed.capacity <= Self.keptCapacity)
        pathPages.removeAll(keepingCapacity: pathPages.capacity <= Self.keptCapacity)
        pathIndices.removeAll(keepingCapacity: pathIndices.capacity <= Self.keptCapacity)
        appendHint = nil
        runHint = nil
        if spareTrees.capacity > Self.keptCapacity {
            spareTrees = TreeTable()
        } else {
            spareTrees.removeAll()
        }
        #if STORAGE_ENGINE_INTERNAL_CHECKS
            freedThisTransaction.removeAll()
            isCommitting = false
        #endif
    }
}

extension Database {
    /// A writer state for transaction `transaction`: the handle's spare one if it has one.
    func makeWriter(transaction: UInt64, pageCount: UInt64, reusable: [UInt64]) -> WriterState {
        let spillLimit = max(16, options.spillThreshold / geometry.pageSize)
        if let spare = spareWriter {
            spareWriter = nil
            spare.begin(transaction: transaction, pageCount: pageCount, reusable: reusable, spillLimit: spillLimit)
            return spare
        }
        return WriterState(
            transaction: transaction, geometry: geometry, pageCount: pageCount, reusable: reusable,
            spillLimit: spillLimit)
    }

    /// Keeps `writer`, whose transaction ended, as the spare for the next one, cleared, if
    /// nothing else holds it. Under the writer gate.
    func recycle(_ writer: inout WriterState?) {
        guard var kept = writer else { return }
        writer = nil
        guard isKnownUniquelyReferenced(&kept), kept.freeListReturned else { return }
        kept.clear()
        spareWriter = kept
    }
}
