// Lookups on the copy-on-write B+tree: descend by binary search on raw page bytes;
// values come straight from the leaf or are reassembled from an overflow chain.

/// Deepest tree accepted (SPEC.md §5); a deeper descent means a cycle or damage.
let maximumTreeDepth = 64

/// Throws when a descent that has passed `depth` branches cannot go deeper (SPEC.md §5).
@inline(__always)
func checkDescentDepth(_ depth: Int) throws {
    guard depth < maximumTreeDepth else { throw StorageError.corrupt("tree deeper than \(maximumTreeDepth)") }
}

extension Page {
    /// Throws unless this page, met on a descent and not a leaf, is a branch.
    @inline(__always)
    func requireBranch() throws {
        guard kindByte == PageKind.branch.rawValue else {
            throw StorageError.corrupt("page \(number): expected a tree node, found kind \(kindByte)")
        }
    }
}

extension TransactionCore {
    /// The leaf that holds or would hold `key`, and the key's position in it.
    @inline(__always)
    func findLeaf(root: UInt64, key: UnsafeRawBufferPointer) throws -> (leaf: Page, index: Int, found: Bool)? {
        guard root != 0 else { return nil }
        let key = SearchKey(key)
        if writer == nil { return try readerFindLeaf(root: root, key: key) }
        var page = try self.page(root)
        var depth = 0
        while !page.isLeaf {
            try page.requireBranch()
            depth += 1
            try checkDescentDepth(depth)
            page = try self.page(page.child(page.branchChildIndex(key)))
        }
        let (index, found) = page.leafLowerBound(key)
        return (page, index, found)
    }

    /// ``findLeaf(root:key:)`` for a read transaction: no dirty pages to consult, so the
    /// whole descent runs under one hold of the page-store lock.
    private func readerFindLeaf(root: UInt64, key: SearchKey) throws -> (
        leaf: Page, index: Int, found: Bool
    ) {
        let limit = snapshot.pageCount
        let maximumTransaction = snapshot.transaction
        let store = self.store
        store.lock.lock()
        defer { store.lock.unlock() }
        var number = root
        var depth = 0
        while true {
            guard number >= 1 && number < limit else {
                throw StorageError.corrupt("page number \(number) out of range 1..<\(limit)")
            }
            let page = try store.searchablePageLocked(number, maximumTransaction: maximumTransaction)
            if page.prefixes != nil {
                // A validated leaf or branch: its search table answers without the header.
                if page.tableIsLeaf {
                    let (index, found) = page.leafLowerBound(key)
                    return (page, index, found)
                }
                depth += 1
                try checkDescentDepth(depth)
                number = page.tableChild(page.branchChildIndex(key))
                continue
            }
            if page.isLeaf {
                let (index, found) = page.leafLowerBound(key)
                return (page, index, found)
            }
            try page.requireBranch()
            depth += 1
            try checkDescentDepth(depth)
            number = page.child(page.branchChildIndex(key))
        }
    }

    /// The value stored under `key` in `tree`, or nil.
    func value(in tree: TreeState, key: UnsafeRawBufferPointer) throws -> [UInt8]? {
        if writer == nil, tree.root != 0, !key.isEmpty {
            switch try store.readerValue(
                root: tree.root, key: SearchKey(key), limit: snapshot.pageCount,
                maximumTransaction: snapshot.transaction)
            {
            case .found(let value): return value
            case .absent: return nil
            case .generalPath: break
            }
        }
        guard let (leaf, index, found) = try findLeaf(root: tree.root, key: key), found else { return nil }
        return try value(of: leaf, at: index)
    }

    /// The value of cell `index` of `leaf`.
    func value(of leaf: Page, at index: Int) throws -> [UInt8] {
        let cell = leaf.leafCellUsingTable(index)
        if cell.isOverflow { return try readOverflow(first: cell.overflowPage, length: cell.valueLength) }
        return Array(cell.inlineValue)
    }

    /// Calls `body` with the value of cell `index` of `leaf` without copying inline values.
    @inline(__always)
    func withValue<R>(of leaf: Page, at index: Int, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        let cell = leaf.leafCellUsingTable(index)
        if cell.isOverflow {
            return try readOverflow(first: cell.overflowPage, length: cell.valueLength).withUnsafeBytes(body)
        }
        return try body(cell.inlineValue)
    }

    /// Reassembles an overflow chain, checking every page and that the lengths add up.
    func readOverflow(first: UInt64, length: Int) throws -> [UInt8] {
        var result: [UInt8] = []
        let chunk = geometry.overflowPayload
        result.reserveCapacity(min(length, chunk * 64))
        var next = first
        var remaining = length
        var pagesLeft = (length + chunk - 1) / chunk
        var visited = Set<UInt64>()
        while remaining > 0 {
            guard next != 0, pagesLeft > 0 else {
                throw StorageError.corrupt("overflow chain from page \(first) ends \(remaining) bytes early")
            }
            guard visited.insert(next).inserted else {
                throw StorageError.corrupt("overflow chain from page \(first) has a cycle")
            }
            let page = try self.page(next)
            guard page.kindByte == PageKind.overflow.rawValue else {
                throw StorageError.corrupt("page \(next): expected an overflow page, found kind \(page.kindByte)")
            }
            let payload = page.overflowPayload
            let count = payload.count
            guard count > 0, count <= remaining else {
                throw StorageError.corrupt("page \(next): overflow payload of \(count) bytes, \(remaining) expected")
            }
            result.append(contentsOf: payload)
            remaining -= count
            pagesLeft -= 1
            next = page.link
        }
        guard next == 0 else {
            throw StorageError.corrupt("overflow chain from page \(first) is longer than its value")
        }
        return result
    }

    /// The page numbers of an overflow chain (to free it).
    func overflowPages(first: UInt64, length: Int) throws -> [UInt64] {
        var pages: [UInt64] = []
        var next = first
        let limit = (length + geometry.overflowPayload - 1) / geometry.overflowPayload
        while next != 0 {
            guard pages.count < limit, !pages.contains(next) || pages.count > 64 else {
                throw StorageError.corrupt("overflow chain from page \(first) too long or cyclic")
            }
            let page = try self.page(next)
            guard page.kindByte == PageKind.overflow.rawValue else {
                throw StorageError.corrupt("page \(next): expected an overflow page")
            }
            pages.append(next)
            next = page.link
        }
        return pages
    }
}
