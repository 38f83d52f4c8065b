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
        guard try writerGate.acquire(timeout: options.busyTimeout) else {
            throw StorageError(.busy, "another writer held \(path) for \(options.busyTimeout) s")
        }
        defer { writerGate.release() }
        try checkUsable()
        let state = stateLock.withLock { committed }
        let (meta, _, _) = try Database.readMeta(dataFile, path: path, options: options)
        guard meta == checkpointed else {
            throw StorageError.corrupt(
                "V1: the page file's newest meta (\(meta.transaction)) is not the checkpointed state")
        }
        let core = TransactionCore(store: store, snapshot: state, geometry: geometry, writer: nil)
        var walker = Walker(core: core, marks: [UInt8](repeating: 0, count: Int(state.pageCount)))
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
        for number in 1..<Int(state.pageCount) where walker.marks[number] == 0 {
            throw StorageError.corrupt("V5: page \(number) is neither reachable nor free (leaked)")
        }
        return VerificationReport(
            transaction: state.transaction, pageCount: Int(state.pageCount), treeCount: trees, entryCount: entries,
            freePageCount: free, maximumDepth: depth)
    }
}

/// Walks trees, marking every page it reaches.
private struct Walker {
    let core: TransactionCore
    var marks: [UInt8]
    var leafDepth = 0

    mutating func mark(_ number: UInt64, _ what: String) throws {
        guard number >= 1, number < UInt64(marks.count) else {
            throw StorageError.corrupt("V5: \(what) \(number) is outside the file")
        }
        guard marks[Int(number)] == 0 else {
            throw StorageError.corrupt("V5: page \(number) is reached twice (\(what))")
        }
        marks[Int(number)] = 1
    }

    /// Walks the tree at `root`, calling `visit` for each entry in order; returns its depth.
    mutating func walk(root: UInt64, _ visit: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) throws
        -> Int
    {
        leafDepth = 0
        var previous: [UInt8]?
        try walkNode(root, depth: 1, isRoot: true, lower: nil, upper: nil, previous: &previous, visit)
        return leafDepth
    }

    private mutating func walkNode(
        _ number: UInt64, depth: Int, isRoot: Bool, lower: [UInt8]?, upper: [UInt8]?, previous: inout [UInt8]?,
        _ visit: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void
    ) throws {
        guard depth <= maximumTreeDepth else { throw StorageError.corrupt("V4: tree deeper than \(maximumTreeDepth)") }
        try mark(number, "tree page")
        let page = try core.page(number)
        let geometry = core.geometry
        func check(_ key: [UInt8]) throws {
            guard key.count >= 1, key.count <= geometry.maximumKey else {
                throw StorageError.corrupt("V3: page \(number) has a key of \(key.count) bytes")
            }
            if let lower, key.lexicographicallyPrecedes(lower) {
                throw StorageError.corrupt("V3: page \(number) has a key below its separator")
            }
            if let upper, !key.lexicographicallyPrecedes(upper) {
                throw StorageError.corrupt("V3: page \(number) has a key at or above the next separator")
            }
        }
        if page.isLeaf {
            if leafDepth == 0 { leafDepth = depth }
            guard leafDepth == depth else {
                throw StorageError.corrupt("V4: leaves at depths \(leafDepth) and \(depth)")
            }
            guard page.count >= 1 else { throw StorageError.corrupt("V4: page \(number) is an empty leaf") }
            for index in 0..<page.count {
                let cell = page.leafCell(index)
                let key = Array(cell.key)
                try check(key)
                if let previous, !previous.lexicographicallyPrecedes(key) {
                    throw StorageError.corrupt("V3: keys out of order at page \(number) cell \(index)")
                }
                previous = key
                if cell.isOverflow {
                    let length = cell.valueLength
                    guard !geometry.isInline(keyLength: key.count, valueLength: length) else {
                        throw StorageError.corrupt(
                            "V6: page \(number) cell \(index) overflows a value that fits inline")
                    }
                    for overflow in try core.overflowPages(first: cell.overflowPage, length: length) {
                        try mark(overflow, "overflow page")
                    }
                }
                try key.withUnsafeBytes { key in try core.withValue(of: page, at: index) { try visit(key, $0) } }
            }
        } else {
            guard page.kindByte == PageKind.branch.rawValue else {
                throw StorageError.corrupt("V2: page \(number) in a tree has kind \(page.kindByte)")
            }
            var separators: [[UInt8]] = []
            for index in 0..<page.count {
                let key = Array(page.branchCell(index).key)
                try check(key)
                if let last = separators.last, !last.lexicographicallyPrecedes(key) {
                    throw StorageError.corrupt("V3: separators out of order in page \(number)")
                }
                separators.append(key)
            }
            for child in 0...page.count {
                let childLower = child == 0 ? lower : separators[child - 1]
                let childUpper = child == page.count ? upper : separators[child]
                try walkNode(
                    page.child(child), depth: depth + 1, isRoot: false, lower: childLower, upper: childUpper,
                    previous: &previous, visit)
            }
        }
    }
}
