// Giving space back (SPEC.md §2.13). Copy-on-write frees pages everywhere in the file and
// allocates the lowest free ones, so a large delete or update leaves the file's end in
// use and free pages below it. A checkpoint that finds enough of the file free moves the
// pages at the end into the lowest free pages (one transaction committed directly), then
// commits an empty transaction whose meta no longer reaches the end, and every
// checkpoint cuts the file after its last page in use (§2.5 step 2).
//
// The shrink is deferred: a write that rewrites much of the file (a batch update touches
// every leaf) frees about as many pages as it copied, and the next writes reuse them, so
// moving the file's end right after it would copy those pages a second time for space
// the next write takes again. Writes shrink only a file more than half free; checkpoints
// the caller asks for, and the one at close, give back a fifth.
import Foundation

extension Database {
    /// A shrink needs at least this many free pages, whatever asks for it.
    static let shrinkMinimumFreePages = 64

    /// What asks for a shrink (SPEC.md §2.13), and how much of the file must be free.
    enum ShrinkOccasion {
        /// A write transaction's direct commit, or the automatic checkpoint after its
        /// commit: only when more than half the file is free, which no copy-on-write
        /// rewrite of the pages in use leaves by itself.
        case write
        /// ``Database/checkpoint()`` or the checkpoint at ``Database/close()``: when a
        /// fifth of the file is free.
        case checkpoint

        /// Whether `free` of `pageCount` pages are enough to shrink for.
        func isEnough(free: UInt64, of pageCount: UInt64) -> Bool {
            guard free >= UInt64(Database.shrinkMinimumFreePages) else { return false }
            switch self {
            case .write: return free * 2 > pageCount
            case .checkpoint: return free * 5 >= pageCount
            }
        }
    }

    /// Pages freed by transactions up to this one are reached by no snapshot of this
    /// process and by neither meta slot (F1): what a checkpoint may reuse or cut off.
    func reuseThreshold(_ state: CommitState) -> UInt64 {
        stateLock.withLock { min(readers.values.min() ?? state.transaction, checkpointed.transaction) }
    }

    /// The page count once the free pages at the end of the file that were freed by
    /// `threshold` at the latest are cut off.
    static func trimmedPageCount(_ pageCount: UInt64, entries: [FreeEntry], threshold: UInt64) -> UInt64 {
        var cuttable = Set<UInt64>()
        for entry in entries where entry.freedAt <= threshold && entry.page + UInt64(entries.count) >= pageCount {
            cuttable.insert(entry.page)
        }
        var count = pageCount
        while count > 1 && cuttable.contains(count - 1) { count -= 1 }
        return count
    }

    /// After a meta with `pageCount` pages is durable in both slots' sense (M3): cuts the
    /// page file after them. Not synced: a file that keeps its old length is still valid.
    func trimPageFile(to pageCount: UInt64) throws {
        let bytes = pageCount * UInt64(geometry.pageSize)
        if try dataFile.size() > bytes { try dataFile.truncate(to: bytes) }
    }

    /// Whether a checkpoint now would shrink the file on `occasion`: enough of it is free
    /// and the newest state is the checkpointed one.
    func shrinkIsDue(_ occasion: ShrinkOccasion) -> Bool {
        guard options.shrinksAutomatically, !options.readOnly else { return false }
        let free = freeList.count
        let (state, oldest) = stateLock.withLock { (committed, readers.values.min()) }
        return state == checkpointed
            && !(shrinkDeclined?.state == state.transaction && shrinkDeclined?.oldest == oldest)
            && occasion.isEnough(free: UInt64(free), of: state.pageCount)
    }

    /// Shrinks the file when ``shrinkIsDue(_:)``. Runs under the writer lock, right after a
    /// checkpoint, holding the checkpoint lock in multi-process mode.
    func shrinkIfDue(_ occasion: ShrinkOccasion) throws {
        guard shrinkIsDue(occasion) else { return }
        let before = stateLock.withLock { committed }
        let moved = try relocateFileEnd()
        // The pages just moved, or those the last write freed at the file's end (a second
        // rewrite takes the low pages the first freed, freeing the end), were freed by the
        // transaction the durable meta records, so the older slot (M4) still reaches them:
        // a meta one transaction later, with nothing else changed, is the first that may
        // leave them out. When the end is held by the free-list chain alone (a checkpoint
        // writes it at the end when no page below was reusable yet), the first empty
        // transaction writes the next chain below and the second cuts.
        for _ in 0..<2 {
            let state = stateLock.withLock { committed }
            let threshold = reuseThreshold(state)
            let chain = freeListPages.map { FreeEntry(page: $0, freedAt: 0) }
            let cuttable = Database.trimmedPageCount(state.pageCount, entries: freeEntries, threshold: threshold)
            let reachable = Database.trimmedPageCount(
                state.pageCount, entries: freeEntries + chain, threshold: threshold)
            guard
                cuttable < state.pageCount
                    || reachable + UInt64(Database.shrinkMinimumFreePages / 2) <= state.pageCount,
                state.transaction + 1 < MetaSlot.transactionLimit
            else { break }
            var next = state
            next.transaction += 1
            try flush(to: next, entries: freeEntries, extraPages: [])
        }
        if !moved && stateLock.withLock({ committed.pageCount }) >= before.pageCount {
            // Nothing could move or be cut: not again until the state or the oldest snapshot
            // changes.
            shrinkDeclined = stateLock.withLock { (committed.transaction, readers.values.min()) }
        }
    }

    /// Moves the pages at the end of the file into the lowest free pages, committing
    /// directly. False when no page can move.
    private func relocateFileEnd() throws -> Bool {
        let transaction = try beginWrite()
        let core = transaction.core
        defer { endWrite(core) }
        guard let writer = core.writer else { return false }
        var trees: [TreeState] = []
        for name in try transaction.treeNames() {
            if let tree = try core.tree(named: name) { trees.append(tree) }
        }
        let packed = try packSparseTrees(trees, core, writer)
        var census = PageCensus()
        try core.takeCensus(of: core.catalog.root, into: &census)
        for tree in trees { try core.takeCensus(of: tree.root, into: &census) }
        // Room below the bound for the copied branch pages (twice: a catalog update may copy
        // some again) and for the next free-list chain, which must not land at the end.
        let chainPages = freeList.count / geometry.freeListEntriesPerPage + 2
        let slack = 2 * census.branches + 2 * chainPages + 16
        if let (bound, end) = census.relocationBound(reusable: writer.reusable, slack: slack),
            packed || end + UInt64(Database.shrinkMinimumFreePages / 2) <= writer.pageCount
        {
            for tree in trees { try core.relocate(tree, from: bound) }
            try core.relocate(core.catalog, from: bound)
        } else if !packed {
            return false
        }
        _ = try commit(core, direct: true)
        return true
    }

    /// Packs every sparse tree (``TreeFill/isSparse``) for which the reusable
    /// pages suffice, so none lands past the end; returns whether any was packed.
    private func packSparseTrees(_ trees: [TreeState], _ core: TransactionCore, _ writer: WriterState) throws
        -> Bool
    {
        var packed = false
        for tree in trees {
            let fill = try core.fill(of: tree.root)
            guard fill.isSparse, fill.packedLeaves + fill.branches + 16 <= writer.reusable.count
            else { continue }
            try core.pack(tree)
            packed = true
        }
        return packed
    }
}
