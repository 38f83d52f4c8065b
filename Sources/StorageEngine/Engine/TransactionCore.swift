// The state behind one transaction: the snapshot it reads, and for the writer the pages
// it has copied or allocated, the free pages it may reuse and the pages it freed.

/// A named tree's root and entry count as one transaction sees them.
final class TreeState {
    let name: String
    /// The handle the tree was opened by (nil: by its name): the commit finds its entry in
    /// the catalog cache by it.
    let handle: TreeHandle?
    // A transaction's state is used by one thread at a time; the dynamic exclusivity
    // checks on these hot fields cost a runtime call per access on every lookup and put.
    @exclusivity(unchecked) var root: UInt64
    @exclusivity(unchecked) var count: UInt64
    /// Root or count changed in this transaction: the catalog entry is rewritten at commit.
    @exclusivity(unchecked) var changed = false
    @exclusivity(unchecked) var deleted = false
    /// Bumped on every change so open cursors notice.
    @exclusivity(unchecked) var version = 0
    /// Where this tree's last reader lookup went down (``DescentHint``).
    @exclusivity(unchecked) var descentHint = DescentHint()

    init(name: String, root: UInt64, count: UInt64, handle: TreeHandle? = nil) {
        self.name = name
        self.handle = handle
        self.root = root
        self.count = count
    }
}

/// One entry of the free list: a page no committed state after `freedAt - 1` reaches.
struct FreeEntry: Equatable, Sendable {
    var page: UInt64
    var freedAt: UInt64
    /// The page was first written after the durable meta (it had a frame in the current log
    /// when freed), so the page file's image cannot reach it: only snapshots can (F1).
    /// Kept in memory only; entries read from disk are conservatively false.
    var bornInLog = false
}

/// The writer's private state.
/// Used by the writer's thread only, so its fields skip dynamic exclusivity checks.
final class WriterState {
    // The transaction's fields are set again when the handle reuses the state for its next
    // transaction (``begin(transaction:pageCount:reusable:spillLimit:)``).
    @exclusivity(unchecked) var transaction: UInt64
    let geometry: Geometry
    @exclusivity(unchecked) var pageCount: UInt64
    @exclusivity(unchecked) var dirty: PageNumberTable<Page>
    /// Pages whose newest image in this transaction was spilled into their slot of the page
    /// file to bound the writer's memory (SPEC.md §2.4 step 7a); read back on demand.
    @exclusivity(unchecked) var spilled: Set<UInt64> = []
    /// The dirty pages a transaction keeps in memory before it spills (`Int.max`: never).
    @exclusivity(unchecked) var spillLimit: Int
    /// Dirty pages at which the next put or removal spills: the limit, or more after a
    /// spill that had to keep many pages.
    @exclusivity(unchecked) var spillAt: Int
    /// Free pages reusable in this transaction, largest first (so `popLast` takes the smallest).
    @exclusivity(unchecked) var reusable: [UInt64]
    /// Pages taken from `reusable` (to restore the free list if the transaction ends
    /// without committing).
    @exclusivity(unchecked) var taken: [UInt64] = []
    /// The page count the transaction started from.
    @exclusivity(unchecked) var basePageCount: UInt64
    /// Set once the free list was handed back to the database (committed or restored).
    @exclusivity(unchecked) var freeListReturned = false
    /// Committed pages this transaction stopped reaching.
    @exclusivity(unchecked) var freed: [UInt64] = []
    /// Scratch space for building one cell.
    let scratch: UnsafeMutableRawPointer
    /// The root-to-leaf path of the current operation (reused to avoid allocation).
    @exclusivity(unchecked) var pathPages: [Page] = []
    /// `pathIndices[i]` is the child index taken from `pathPages[i]`.
    @exclusivity(unchecked) var pathIndices: [Int] = []
    /// Set when the last put left its path in `tree` (at `version`) in `pathPages`, all of
    /// it already copied, its cell at `index` of the leaf: a key sorting right after that
    /// cell (before the next entry) is put without a descent — appends, and sorted runs
    /// landing inside a tree.
    @exclusivity(unchecked) var appendHint: (tree: TreeState, version: Int, index: Int)?
    /// The leaf page and slot of the last put's cell: a put right after it in the same
    /// leaf continues an ascending run (a sorted batch landing inside a tree), and a full
    /// leaf then splits at the run instead of in half (SPEC.md B3).
    @exclusivity(unchecked) var runHint: (leaf: UInt64, index: Int)?
    /// The previous transaction's tree table, emptied: the next transaction on this state
    /// takes its storage (``Database/endWrite(_:)``).
    @exclusivity(unchecked) var spareTrees = TreeTable()
    #if STORAGE_ENGINE_INTERNAL_CHECKS
        /// Pages freed in this transaction and not allocated again (F2: none is freed twice).
        @exclusivity(unchecked) var freedThisTransaction = Set<UInt64>()
        /// Set when the commit began: from then on only the catalog changes (§2.4 step 2).
        @exclusivity(unchecked) var isCommitting = false
    #endif

    /// A writer starting from `pageCount` pages, allowed to reuse `reusable`.
    init(
        transaction: UInt64, geometry: Geometry, pageCount: UInt64, reusable: [UInt64], spillLimit: Int = .max
    ) {
        self.transaction = transaction
        self.spillLimit = spillLimit
        spillAt = spillLimit
        self.geometry = geometry
        self.pageCount = pageCount
        basePageCount = pageCount
        self.reusable = reusable
        scratch = PageBufferPool.shared.take(size: geometry.pageSize)
        // A one-row object save copies a few root-to-leaf paths and the catalog leaf: room
        // for that up front saves the table and arrays regrowing in every small commit.
        dirty = PageNumberTable(minimumCapacity: 16)
        freed.reserveCapacity(8)
        taken.reserveCapacity(8)
        pathPages.reserveCapacity(8)
        pathIndices.reserveCapacity(8)
    }

    deinit { PageBufferPool.shared.give(scratch, size: geometry.pageSize) }

    /// A fresh page of `kind`, from the reusable free pages or past the end of the file.
    func allocate(_ kind: PageKind) -> Page {
        internalCheck(!freeListReturned, "F1: a page allocated after the writer handed its free list back")
        let number = takePageNumber()
        let page = Page(size: geometry.pageSize, zeroed: false)
        page.format(kind, number: number)
        page.transaction = transaction
        dirty[number] = page
        return page
    }

    /// `page` itself if this transaction wrote it, else a copy at a new page number; the
    /// old number is freed.
    @inline(__always)
    func writable(_ page: Page) -> Page {
        if page.transaction == transaction { return page }
        internalCheck(!freeListReturned, "F1: a page copied after the writer handed its free list back")
        let number = takePageNumber()
        let copy = page.copy()
        copy.number = number
        copy.transaction = transaction
        dirty[number] = copy
        free(page.number)
        return copy
    }

    /// The smallest reusable free page, else a new page past the end of the file.
    @inline(__always)
    private func takePageNumber() -> UInt64 {
        let number: UInt64
        if let reused = reusable.popLast() {
            taken.append(reused)
            number = reused
        } else {
            pageCount += 1
            number = pageCount - 1
        }
        internalCheck(
            dirty[number] == nil && !spilled.contains(number),
            "F2: page \(number) allocated while this transaction holds it")
        #if STORAGE_ENGINE_INTERNAL_CHECKS
            freedThisTransaction.remove(number)
        #endif
        return number
    }

    /// Frees `number`: at once if this transaction allocated it, else at commit.
    func free(_ number: UInt64) {
        internalCheck(freeProblem(number))
        #if STORAGE_ENGINE_INTERNAL_CHECKS
            freedThisTransaction.insert(number)
        #endif
        if dirty.removeValue(forKey: number) != nil || (!spilled.isEmpty && spilled.remove(number) != nil) {
            reusable.append(number)
            if reusable.count > 1 && reusable[reusable.count - 2] < number { reusable.sort(by: >) }
            internalCheck(
                reusable.count < 2 || reusable[reusable.count - 2] > reusable[reusable.count - 1],
                "F1: reusable pages are not largest first")
        } else {
            freed.append(number)
        }
    }

    // MARK: Internal checks

    /// The problem with freeing page `number` now: the writer is done, the number lies
    /// outside the file, or this transaction already freed it (F1, F2).
    func freeProblem(_ number: UInt64) -> String? {
        if freeListReturned { return "F1: page \(number) freed after the writer handed its free list back" }
        if number < 1 || number >= pageCount { return "F2: freeing page \(number), outside 1..<\(pageCount)" }
        #if STORAGE_ENGINE_INTERNAL_CHECKS
            if freedThisTransaction.contains(number) { return "F2: page \(number) freed twice in one transaction" }
        #endif
        return nil
    }

    /// The problem with this writer changing `page`: another transaction wrote it, or it is
    /// not the page this transaction holds under its number (B4).
    func ownershipProblem(_ page: Page) -> String? {
        guard page.transaction != transaction || dirty[page.number] !== page else { return nil }
        return "B4: transaction \(transaction) changes page \(page.number), written by transaction \(page.transaction)"
    }

    /// Marks the start of the commit (§2.4 step 2): it happens once, before the free list
    /// is handed back, and from then on only the catalog changes.
    func beginCommit() {
        internalCheck(!freeListReturned, "§2.4: a commit after the writer handed its free list back")
        #if STORAGE_ENGINE_INTERNAL_CHECKS
            internalCheck(!isCommitting, "§2.4: a writer committed twice")
            isCommitting = true
        #endif
    }

    /// The problem with changing `tree` now: the commit began and it is not the catalog.
    func changeProblem(_ tree: TreeState, catalog: TreeState) -> String? {
        #if STORAGE_ENGINE_INTERNAL_CHECKS
            if isCommitting && tree !== catalog { return "§2.4: tree \"\(tree.name)\" changed during the commit" }
        #endif
        return nil
    }

    var hasChanges: Bool { !dirty.isEmpty || !freed.isEmpty || !spilled.isEmpty }
}

/// Catalog entries of one committed state, shared so that a short read transaction, and
/// the next write transaction, do not descend the catalog again.
///
/// Keyed by transaction id and page store: a state is named by its id for the life of a
/// handle (another process's commits arrive as new ids; a vacuum swaps the store). A commit
/// carries the entries over to the state it creates (``advance(committing:from:to:store:)``):
/// that state is its snapshot's with exactly the changed trees' entries replaced.
final class CatalogCache: @unchecked Sendable {
    private let lock = Lock()
    private var transaction: UInt64 = .max
    /// The page store the entries belong to: a vacuum replaces it without a new transaction id.
    private var store: ObjectIdentifier?
    // Used under `lock` only: dynamic exclusivity checks on it buy nothing.
    @exclusivity(unchecked) private var entries = NameTable<(root: UInt64, count: UInt64)>()

    /// Forgets everything (the file was replaced: same transaction id, new page numbers).
    func clear() {
        lock.withLock {
            transaction = .max
            entries.removeAll()
        }
    }

    func lookup(_ name: String, transaction: UInt64, store: PageStore) -> (root: UInt64, count: UInt64)? {
        lock.withLock {
            self.transaction == transaction && self.store == ObjectIdentifier(store) ? entries[name] : nil
        }
    }

    /// The entry of `handle`'s tree in the state `transaction`, if the cache holds it.
    func lookup(_ handle: TreeHandle, transaction: UInt64, store: PageStore) -> (root: UInt64, count: UInt64)? {
        lock.withLock {
            self.transaction == transaction && self.store == ObjectIdentifier(store) ? entries[handle] : nil
        }
    }

    /// Records the entry of the tree `name` (found by `handle`, if given) in the state
    /// `transaction`.
    func store(
        _ name: String, handle: TreeHandle? = nil, transaction: UInt64, store: PageStore, root: UInt64, count: UInt64
    ) {
        lock.withLock {
            if self.transaction != transaction || self.store != ObjectIdentifier(store) {
                guard
                    transaction > self.transaction || self.transaction == .max || self.store != ObjectIdentifier(store)
                else { return }
                self.transaction = transaction
                self.store = ObjectIdentifier(store)
                entries.removeAll()
            }
            guard entries.count < 4_096 else { return }
            if let handle { entries[handle] = (root, count) } else { entries[name] = (root, count) }
        }
    }

    /// Moves the cache from the state `previous` to `next`, which a commit made from it by
    /// changing `trees` (the catalog entries it rewrote): the other entries stay valid.
    /// A cache holding another state, or a nil `previous` (the commit changed the catalog
    /// in other ways too), starts afresh at `next` with the changed entries.
    func advance(committing trees: TreeTable, from previous: UInt64?, to next: UInt64, store: PageStore) {
        lock.withLock {
            if previous == nil || transaction != previous || self.store != ObjectIdentifier(store) {
                entries.removeAll()
            }
            transaction = next
            self.store = ObjectIdentifier(store)
            for tree in trees.values where tree.changed {
                if let handle = tree.handle {
                    if tree.deleted {
                        entries[handle] = nil
                    } else if entries.count < 4_096 || entries[handle] != nil {
                        entries[handle] = (tree.root, tree.count)
                    }
                } else if tree.deleted {
                    entries[tree.name] = nil
                } else if entries.count < 4_096 || entries[tree.name] != nil {
                    entries[tree.name] = (tree.root, tree.count)
                }
            }
        }
    }
}

/// What every transaction reads through.
final class TransactionCore {
    let store: PageStore
    let snapshot: CommitState
    let geometry: Geometry
    let writer: WriterState?
    @exclusivity(unchecked) var isOpen = true
    let catalog: TreeState
    @exclusivity(unchecked) var trees = TreeTable()
    let catalogCache: CatalogCache?

    init(
        store: PageStore, snapshot: CommitState, geometry: Geometry, writer: WriterState?,
        catalogCache: CatalogCache? = nil
    ) {
        self.store = store
        self.snapshot = snapshot
        self.geometry = geometry
        self.writer = writer
        self.catalogCache = catalogCache
        catalog = TreeState(name: "", root: snapshot.catalogRoot, count: 0)
    }

    /// Page `number` as this transaction sees it.
    @inline(__always)
    func page(_ number: UInt64) throws -> Page {
        if let writer {
            if let page = writer.dirty[number] {
                #if STORAGE_ENGINE_INTERNAL_CHECKS
                    if page.number != number {
                        internalCheckFailed("B4: the writer holds page \(page.number) as \(number)")
                    }
                #endif
                return page
            }
            if !writer.spilled.isEmpty && writer.spilled.contains(number) { return try reloadSpilled(number, writer) }
            guard number >= 1 && number < writer.pageCount else {
                throw StorageError.corrupt("page number \(number) out of range 1..<\(writer.pageCount)")
            }
        } else {
            guard number >= 1 && number < snapshot.pageCount else {
                throw StorageError.corrupt("page number \(number) out of range 1..<\(snapshot.pageCount)")
            }
        }
        return try store.page(number, maximumTransaction: snapshot.transaction)
    }

    func checkOpen() throws {
        guard isOpen else { throw StorageError(.closed, "the transaction has ended") }
    }

    func requireWriter() throws -> WriterState {
        try checkOpen()
        guard let writer else { throw StorageError(.readOnly, "cannot modify a tree in a read transaction") }
        return writer
    }

    /// The tree of `handle`, or nil: ``tree(named:)`` without comparing names when the
    /// transaction or the catalog cache has met the handle.
    func tree(_ handle: TreeHandle) throws -> TreeState? {
        try checkOpen()
        if let tree = trees[handle] { return tree.deleted ? nil : tree }
        if let cached = catalogCache?.lookup(handle, transaction: snapshot.transaction, store: store) {
            let tree = TreeState(name: handle.name, root: cached.root, count: cached.count, handle: handle)
            if writer != nil { trees[handle] = tree }
            return tree
        }
        return try tree(named: handle.name, handle: handle)
    }

    /// The tree named `name`, or nil; `handle`: the caller's handle of the name, which
    /// ``tree(_:)`` looked up already in the transaction and the cache.
    func tree(named name: String, handle: TreeHandle? = nil) throws -> TreeState? {
        try checkOpen()
        if handle == nil, let tree = trees[name] { return tree.deleted ? nil : tree }
        if handle == nil, let cached = catalogCache?.lookup(name, transaction: snapshot.transaction, store: store) {
            let tree = TreeState(name: name, root: cached.root, count: cached.count)
            // A reader asks the shared cache again rather than filling a table of its own: most
            // read transactions open a tree or two, once each, and the table's insert cost more
            // than the lookup it saves.
            if writer != nil { trees[name] = tree }
            return tree
        }
        let key = Array(name.utf8)
        guard !key.isEmpty, key.count <= 255 else { throw StorageError(.invalidTreeName, "tree name \"\(name)\"") }
        guard let stored = try key.withUnsafeBytes({ try value(in: catalog, key: $0) }) else { return nil }
        guard let entry = CatalogEntry(decoding: stored) else {
            throw StorageError.corrupt("catalog entry for \"\(name)\" is \(stored.count) bytes")
        }
        let root = entry.root
        let limit = writer?.pageCount ?? snapshot.pageCount
        guard root < limit else { throw StorageError.corrupt("tree \"\(name)\" has root page \(root) past the end") }
        // A page holds fewer entries than bytes, so a larger count is damage (and ``Tree/count``
        // converts it to Int).
        guard entry.count <= limit * UInt64(geometry.pageSize) else {
            throw StorageError.corrupt("tree \"\(name)\" records \(entry.count) entries, impossible in \(limit) pages")
        }
        let tree = TreeState(name: name, root: root, count: entry.count, handle: handle)
        if let handle { trees[handle] = tree } else { trees[name] = tree }
        catalogCache?.store(
            name, handle: handle, transaction: snapshot.transaction, store: store, root: root, count: tree.count)
        return tree
    }
}
