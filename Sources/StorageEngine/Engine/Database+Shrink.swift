// Giving space back (SPEC.md §2.13). Copy-on-write frees pages everywhere in the file and
// allocates the lowest free ones, so a large delete or update leaves the file's end in
// use and free pages below it. A checkpoint that finds enough of the file free moves the
// pages at the end into the lowest free pages (one transaction committed directly), then
// commits an empty transaction whose meta no longer reaches the end, and every
// checkpoint cuts the file after its last page in use (§2.5 step 2).
import Foundation

extension Database {
    /// A checkpoint shrinks the file when at least this many pages, and this fraction of
    /// the file (one page in `shrinkFreeDivisor`), are free.
    static let shrinkMinimumFreePages = 64
    static let shrinkFreeDivisor: UInt64 = 5

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

    /// Whether a checkpoint now would shrink the file: enough of it is free and the
    /// newest state is the checkpointed one.
    var shrinkIsDue: Bool {
        guard options.shrinksAutomatically, !options.readOnly else { return false }
        let free = freeList.count
        let (state, oldest) = stateLock.withLock { (committed, readers.values.min()) }
        return state == checkpointed
            && !(shrinkDeclined?.state == state.transaction && shrinkDeclined?.oldest == oldest)
            && free >= Database.shrinkMinimumFreePages && UInt64(free) * Database.shrinkFreeDivisor >= state.pageCount
    }

    /// Shrinks the file when ``shrinkIsDue``. Runs under the writer lock, right after a
    /// checkpoint, holding the checkpoint lock in multi-process mode.
    func shrinkIfDue() throws {
        guard shrinkIsDue else { return }
        guard try relocateFileEnd() else {
            // Nothing could move: not again until the state or the oldest snapshot changes.
            shrinkDeclined = stateLock.withLock { (committed.transaction, readers.values.min()) }
            return
        }
        let relocated = stateLock.withLock { committed }
        let threshold = reuseThreshold(relocated)
        guard
            Database.trimmedPageCount(relocated.pageCount, entries: freeEntries, threshold: threshold)
                < relocated.pageCount,
            relocated.transaction + 1 < MetaSlot.transactionLimit
        else { return }
        // The pages just moved were freed by the transaction the durable meta records, so
        // the older slot (M4) still reaches them: a meta one transaction later, with nothing
        // else changed, is the first that may leave them out.
        var next = relocated
        next.transaction += 1
        try flush(to: next, entries: freeEntries, extraPages: [])
    }

    /// Moves the pages at the end of the file into the lowest free pages, committing
    /// directly. False when no page can move.
    private func relocateFileEnd() throws -> Bool {
        let transaction = try beginWrite()
        let core = transaction.core
        defer {
            core.isOpen = false
            if let writer = core.writer { restoreFreeList(writer) }
        }
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
