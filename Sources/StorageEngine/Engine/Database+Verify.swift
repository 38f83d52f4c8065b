// The integrity check (SPEC.md §2.9): walks every tree, overflow chain and the free list
// of the newest committed state and checks V1-V6.

/// What ``Database/verify()`` found in a healthy database.
public struct VerificationReport: Sendable, Equatable {
    /// The committed transaction checked.
    public let transaction: UInt64
    /// Pages in the image, page 0 included.
    public let pageCount: Int
    /// Named trees.
    public let treeCount: Int
    /// Entries across all trees.
    public let entryCount: Int
    /// Pages in the free list.
    public let freePageCount: Int
    /// The depth of the deepest tree (a single leaf is depth 1).
    public let maximumDepth: Int
}

extension Database {
    /// Checks the whole database: checksums and page numbers of every reachable page, key
    /// order and separator bounds, fill and depth bounds, entry counts, overflow lengths,
    /// and that every page is reachable exactly once or free (SPEC.md §2.9).
    ///
    /// Waits for the writer lock, so the check sees a quiet database.
    /// - Returns: Counts describing the database.
    /// - Throws: ``StorageError`` `corrupt` naming the first violation found.
    /// - Complexity: O(pages).
    public func verify() throws -> VerificationReport {
        try checkUsable()
        try acquireWriterGate()
        defer { writerGate.release() }
        try checkUsable()
        let state = stateLock.withLock { committed }
        let meta = try Database.readMeta(dataFile, path: path).state
        guard meta == checkpointed else {
            throw StorageError.corrupt(
                "V1: the page file's newest meta (\(meta.transaction)) is not the checkpointed state")
        }
        let core = TransactionCore(store: store, snapshot: state, geometry: geometry, writer: nil)
        var walker = TreeWalker(core: core, marks: [UInt8](repeating: 0, count: Int(state.pageCount)))
        var entries = 0
        var trees = 0
        var depth = 0
        var catalog: [(String, UInt64, UInt64)] = []
        if state.catalogRoot != 0 {
            depth = try walker.walk(root: state.catalogRoot) { key, value in
                guard let entry = CatalogEntry(decoding: Array(value)) else {
                    throw StorageError.corrupt("V6: catalog entry of \(value.count) bytes")
                }
                catalog.append((String(decoding: key, as: UTF8.self), entry.root, entry.count))
            }
        }
        for (name, root, count) in catalog {
            trees += 1
            var seen: UInt64 = 0
            if root != 0 {
                depth = max(depth, try walker.walk(root: root) { _, _ in seen += 1 })
            }
            guard seen == count else {
                throw StorageError.corrupt("V6: tree \"\(name)\" records \(count) entries but holds \(seen)")
            }
            entries += Int(seen)
        }
        guard (freeListPages.first ?? 0) == state.freeListHead else {
            throw StorageError.corrupt("V5: the free-list chain in memory does not start at the committed head")
        }
        for number in freeListPages {
            try walker.mark(number, "free-list page")
            let page = try core.page(number)
            guard page.kindByte == PageKind.freeList.rawValue else {
                throw StorageError.corrupt("V2: page \(number) in the free-list chain has kind \(page.kindByte)")
            }
        }
        for entry in freeEntries { try walker.mark(entry.page, "free page") }
        let free = freeEntries.count
        for number in 1..<Int(state.pageCount) where walker.marks?[number] == 0 {
            throw StorageError.corrupt("V5: page \(number) is neither reachable nor free (leaked)")
        }
        return VerificationReport(
            transaction: state.transaction, pageCount: Int(state.pageCount), treeCount: trees, entryCount: entries,
            freePageCount: free, maximumDepth: depth)
    }
}
