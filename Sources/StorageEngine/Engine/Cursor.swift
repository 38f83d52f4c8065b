// Cursors: a root-to-leaf stack of (page, index). A copy-on-write tree has no sibling
// links, so moving past a leaf's end climbs the stack to the next subtree.

/// A position in a tree, moved by seek, next and previous.
///
/// ```swift
/// let cursor = try tree.makeCursor()
/// var more = try cursor.seek([0x10])
/// while more {
///     print(try cursor.key, try cursor.value)
///     more = try cursor.next()
/// }
/// ```
///
/// A cursor belongs to its transaction; changing the tree invalidates it (its next use
/// throws `closed`).
public final class Cursor {
    let core: TransactionCore
    let state: TreeState
    // Unchecked (these four): only this class's own methods touch them, never across a
    // call of a caller's closure, and a run-time exclusivity check per access cost ~150
    // instructions per range of a many-range walk.
    @exclusivity(unchecked) private var pages: [Page] = []
    @exclusivity(unchecked) private var indices: [Int] = []
    @exclusivity(unchecked) private var version: Int
    /// Whether the cursor is on an entry.
    @exclusivity(unchecked) public private(set) var isPositioned = false

    init(core: TransactionCore, state: TreeState) {
        self.core = core
        self.state = state
        version = state.version
    }

    private func check() throws {
        try core.checkOpen()
        if state.deleted { throw StorageError(.treeDeleted, "tree \"\(state.name)\" was deleted") }
    }

    private func checkPositioned() throws {
        try check()
        guard version == state.version else { throw StorageError(.closed, "the tree changed under the cursor") }
        guard isPositioned else { throw StorageError(.invalidArgument, "the cursor is not on an entry") }
    }

    /// Descends from the root to a leaf, taking child `choose(page)` at each branch.
    private func descend(from page: Page, choose: (Page) -> Int) throws {
        var page = page
        while !page.isLeaf {
            try page.requireBranch()
            try checkDescentDepth(pages.count)
            let index = choose(page)
            pages.append(page)
            indices.append(index)
            page = try core.page(page.child(index))
        }
        pages.append(page)
        indices.append(choose(page))
    }

    private func reset() throws -> Page? {
        try check()
        version = state.version
        pages.removeAll(keepingCapacity: true)
        indices.removeAll(keepingCapacity: true)
        isPositioned = false
        guard state.root != 0 else { return nil }
        return try core.page(state.root)
    }

    /// Moves to the first entry; false when the tree is empty.
    /// - Throws: ``StorageError``: `closed` when the transaction has ended, `treeDeleted`,
    ///   `corrupt` for a damaged page.
    @discardableResult
    public func first() throws -> Bool {
        guard let root = try reset() else { return false }
        try descend(from: root) { _ in 0 }
        return try settleForward()
    }

    /// Moves to the last entry; false when the tree is empty.
    /// - Throws: ``StorageError``: `closed` when the transaction has ended, `treeDeleted`,
    ///   `corrupt` for a damaged page.
    @discardableResult
    public func last() throws -> Bool {
        guard let root = try reset() else { return false }
        try descend(from: root) { $0.isLeaf ? $0.count - 1 : $0.count }
        return try settleBackward()
    }

    /// Moves to the first entry whose key is >= `key`; false when there is none.
    /// - Throws: ``StorageError``: `closed` when the transaction has ended, `treeDeleted`,
    ///   `corrupt` for a damaged page.
    @discardableResult
    public func seek(_ key: [UInt8]) throws -> Bool {
        try key.withUnsafeBytes { try seek(raw: $0) }
    }

    func seek(raw key: UnsafeRawBufferPointer) throws -> Bool {
        guard let root = try reset() else { return false }
        let key = SearchKey(key)
        try descend(from: root) { page in
            page.isLeaf ? page.leafLowerBound(key).index : page.branchChildIndex(key)
        }
        return try settleForward()
    }

    /// Moves to the first entry whose key is >= `key`, as ``seek(_:)`` does; when that
    /// entry lies on the current leaf at or after the current entry (the next of keys
    /// sought in order: the rows of a sorted list of keys), it is found there by a few
    /// comparisons, not a descent from the root. False when there is none.
    /// - Throws: ``StorageError`` as ``seek(_:)`` does.
    @discardableResult
    public func seek(nearby key: UnsafeRawBufferPointer) throws -> Bool {
        try check()
        return try position(atOrAfterPrefix: key)
    }

    /// Moves to the last entry whose key is < `key`; false when there is none.
    /// - Throws: ``StorageError``: `closed` when the transaction has ended, `treeDeleted`,
    ///   `corrupt` for a damaged page.
    @discardableResult
    public func seek(before key: [UInt8]) throws -> Bool {
        guard try seek(key) else { return try last() }
        return try previous()
    }

    /// If the leaf index is past the end, climbs to the next leaf.
    private func settleForward() throws -> Bool {
        while true {
            guard let leaf = pages.last else { return false }
            let index = indices[indices.count - 1]
            if index < leaf.count {
                isPositioned = true
                return true
            }
            // Climb to the first ancestor with a child to the right.
            pages.removeLast()
            indices.removeLast()
            while let parent = pages.last, indices[indices.count - 1] >= parent.count {
                pages.removeLast()
                indices.removeLast()
            }
            guard let parent = pages.last else {
                isPositioned = false
                return false
            }
            indices[indices.count - 1] += 1
            let child = try core.page(parent.child(indices[indices.count - 1]))
            try descend(from: child) { _ in 0 }
        }
    }

    /// If the leaf index is before the start, climbs to the previous leaf.
    private func settleBackward() throws -> Bool {
        while true {
            guard let leaf = pages.last else { return false }
            let index = indices[indices.count - 1]
            if index >= 0 && index < leaf.count {
                isPositioned = true
                return true
            }
            pages.removeLast()
            indices.removeLast()
            while pages.last != nil, indices[indices.count - 1] <= 0 {
                pages.removeLast()
                indices.removeLast()
            }
            guard let parent = pages.last else {
                isPositioned = false
                return false
            }
            indices[indices.count - 1] -= 1
            let child = try core.page(parent.child(indices[indices.count - 1]))
            try descend(from: child) { $0.isLeaf ? $0.count - 1 : $0.count }
        }
    }

    /// Moves to the next entry; false at the end.
    /// - Throws: ``StorageError``: `invalidArgument` when the cursor is not on an entry,
    ///   `closed` when the transaction has ended or the tree changed since the cursor moved,
    ///   `treeDeleted`, `corrupt` for a damaged page.
    @discardableResult
    public func next() throws -> Bool {
        try checkPositioned()
        indices[indices.count - 1] += 1
        return try settleForward()
    }

    /// Moves to the previous entry; false at the start.
    /// - Throws: ``StorageError``: `invalidArgument` when the cursor is not on an entry,
    ///   `closed` when the transaction has ended or the tree changed since the cursor moved,
    ///   `treeDeleted`, `corrupt` for a damaged page.
    @discardableResult
    public func previous() throws -> Bool {
        try checkPositioned()
        indices[indices.count - 1] -= 1
        return try settleBackward()
    }

    /// The current key.
    /// - Throws: ``StorageError``: `invalidArgument` when the cursor is not on an entry,
    ///   `closed` when the transaction has ended or the tree changed since the cursor moved,
    ///   `treeDeleted`, `corrupt` for a damaged page.
    public var key: [UInt8] {
        get throws {
            try checkPositioned()
            return Array(pages[pages.count - 1].leafCell(indices[indices.count - 1]).key)
        }
    }

    /// The current value.
    /// - Throws: ``StorageError``: `invalidArgument` when the cursor is not on an entry,
    ///   `closed` when the transaction has ended or the tree changed since the cursor moved,
    ///   `treeDeleted`, `corrupt` for a damaged page.
    public var value: [UInt8] {
        get throws {
            try checkPositioned()
            return try core.value(of: pages[pages.count - 1], at: indices[indices.count - 1])
        }
    }

    /// Calls `body` with the current key and value without copying them.
    /// - Throws: What `body` throws, or ``StorageError`` as ``key`` does.
    public func withEntry<R>(_ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> R)
        throws -> R
    {
        try checkPositioned()
        let leaf = pages[pages.count - 1]
        let index = indices[indices.count - 1]
        let key = leaf.leafCell(index).key
        return try core.withValue(of: leaf, at: index) { try body(key, $0) }
    }

    /// The range walk behind ``Tree/scan(from:to:reverse:_:)``.
    func visit(
        from lowerBound: [UInt8]?, to upperBound: [UInt8]?, reverse: Bool,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        if reverse {
            var more = try upperBound.map { try seek(before: $0) } ?? last()
            while more {
                let leaf = pages[pages.count - 1]
                var index = indices[indices.count - 1]
                while index >= 0 {
                    let key = leaf.leafCell(index).key
                    if let lowerBound, lowerBound.withUnsafeBytes({ compareKeys(key, $0) }) < 0 { return }
                    let proceed = try core.withValue(of: leaf, at: index) { try body(key, $0) }
                    if !proceed { return }
                    guard version == state.version else {
                        throw StorageError(.closed, "the tree changed during the walk")
                    }
                    index -= 1
                }
                indices[indices.count - 1] = -1
                more = try settleBackward()
            }
        } else {
            guard try lowerBound.map({ try seek($0) }) ?? first() else { return }
            _ = try walkForward(to: upperBound, body)
        }
    }

    /// Visits entries from the current one on while their keys are below `upper` (to the
    /// end for nil), leaving the cursor on the first entry not visited; false when `body`
    /// stopped the walk.
    @inline(__always)
    private func walkForward(
        to upper: [UInt8]?, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool
    ) throws -> Bool {
        while true {
            let leaf = pages[pages.count - 1]
            var index = indices[indices.count - 1]
            let count = leaf.count
            while index < count {
                let cell = leaf.leafCell(index)
                let key = cell.key
                if let upper, upper.withUnsafeBytes({ compareKeys(key, $0) }) >= 0 {
                    indices[indices.count - 1] = index
                    return true
                }
                let proceed =
                    cell.isOverflow
                    ? try core.withValue(of: leaf, at: index) { try body(key, $0) }
                    : try body(key, cell.inlineValue)
                if !proceed { return false }
                guard version == state.version else {
                    throw StorageError(.closed, "the tree changed during the walk")
                }
                index += 1
            }
            indices[indices.count - 1] = count
            guard try settleForward() else { return true }
        }
    }

    /// Visits the entries of each of `ranges` in turn, calling `body` with the range's
    /// position in `ranges`. A range that starts on the leaf the cursor is on (the next
    /// of many sorted, nearby ranges: an IN list's index points, a sorted set of row keys)
    /// is found by a search of that leaf, not a descent from the root; any other range
    /// seeks from the root, so the order of `ranges` never changes what is visited.
    func visit(
        ranges: [(lower: [UInt8]?, upper: [UInt8]?)],
        _ body: (Int, UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        for (ordinal, range) in ranges.enumerated() {
            guard try position(atOrAfter: range.lower) else { continue }
            guard try walkForward(to: range.upper, { try body(ordinal, $0, $1) }) else { return }
        }
    }

    /// Moves to the first entry whose key is >= `lower` (the first entry for nil), searching
    /// only the current leaf when the key lies within it; false when there is none.
    private func position(atOrAfter lower: [UInt8]?) throws -> Bool {
        guard let lower else { return try first() }
        return try lower.withUnsafeBytes { lower in
            if isPositioned, version == state.version, let leaf = pages.last, leaf.isLeaf, leaf.count > 0,
                compareKeys(leaf.leafCell(0).key, lower) <= 0,
                compareKeys(leaf.leafCell(leaf.count - 1).key, lower) >= 0
            {
                indices[indices.count - 1] = leaf.leafLowerBound(SearchKey(lower)).index
                return true
            }
            return try seek(raw: lower)
        }
    }

    /// The walk behind ``Tree/scan(prefixes:_:)``: ``visit(ranges:_:)`` for the ranges of
    /// `prefixes`, read in place from their buffer.
    func visit(
        prefixes: KeyPrefixes, _ body: (Int, UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try prefixes.bytes.withUnsafeBytes { all in
            var start = 0
            for (ordinal, end) in prefixes.ends.enumerated() {
                let prefix = UnsafeRawBufferPointer(rebasing: all[start..<end])
                start = end
                guard try position(atOrAfterPrefix: prefix) else { continue }
                guard try walkForward(whileKeysBegin: prefix, { try body(ordinal, $0, $1) }) else { return }
            }
        }
    }

    /// Moves to the first entry whose key is >= `prefix`; false when there is none. When the
    /// answer lies on the current leaf past the current entry (the next of sorted points),
    /// it is found by probing 1, 2, 4, ... entries on from there and then bisecting: a few
    /// comparisons for points a few entries apart, no descent from the root.
    private func position(atOrAfterPrefix prefix: UnsafeRawBufferPointer) throws -> Bool {
        if isPositioned, version == state.version, let leaf = pages.last, leaf.isLeaf {
            let count = leaf.count
            let current = indices[indices.count - 1]
            let search = SearchKey(prefix)
            if current < count, Self.order(leaf, count - 1, search) >= 0 {
                // Every key before `current` is below the prefix, or `current` is the leaf's
                // first entry and not above it: the answer lies in current..<count.
                let inLeaf = current > 0 ? Self.order(leaf, current - 1, search) < 0 : Self.order(leaf, 0, search) <= 0
                if inLeaf {
                    indices[indices.count - 1] = Self.gallop(to: search, in: leaf, from: current, last: count - 1)
                    return true
                }
            }
        }
        return try seek(raw: prefix)
    }

    /// The order of the key at `index` of `leaf` against `search`.
    @inline(__always)
    private static func order(_ leaf: Page, _ index: Int, _ search: SearchKey) -> Int {
        let cell = leaf.leafCell(index)
        return compareKeys(cell.keyStart, cell.keyLength, search)
    }

    /// The first index at or after `start` whose key is not below `search` in `leaf`,
    /// whose keys before `start` are below it and whose key at `last` is not.
    private static func gallop(to search: SearchKey, in leaf: Page, from start: Int, last: Int) -> Int {
        var low = start
        var probe = start
        var step = 1
        while true {
            let order = order(leaf, probe, search)
            if order == 0 { return probe }
            if order > 0 { break }
            low = probe + 1
            probe = min(probe + step, last)
            step &<<= 1
        }
        return lowerBound(low, probe) { order(leaf, $0, search) }.index
    }

    /// ``walkForward(to:_:)`` over the entries whose keys begin with `prefix`.
    private func walkForward(
        whileKeysBegin prefix: UnsafeRawBufferPointer,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool
    ) throws -> Bool {
        let search = SearchKey(prefix)
        while true {
            let leaf = pages[pages.count - 1]
            var index = indices[indices.count - 1]
            let count = leaf.count
            while index < count {
                let cell = leaf.leafCell(index)
                guard cell.keyLength >= search.count, compareKeys(cell.keyStart, search.count, search) == 0 else {
                    indices[indices.count - 1] = index
                    return true
                }
                let key = cell.key
                let proceed =
                    cell.isOverflow
                    ? try core.withValue(of: leaf, at: index) { try body(key, $0) }
                    : try body(key, cell.inlineValue)
                if !proceed { return false }
                guard version == state.version else {
                    throw StorageError(.closed, "the tree changed during the walk")
                }
                index += 1
            }
            indices[indices.count - 1] = count
            guard try settleForward() else { return true }
        }
    }

    func countRange(from lowerBound: [UInt8]?, to upperBound: [UInt8]?) throws -> Int {
        var total = 0
        var more = try lowerBound.map { try seek($0) } ?? first()
        while more {
            let leaf = pages[pages.count - 1]
            var index = indices[indices.count - 1]
            let count = leaf.count
            if let upperBound {
                while index < count {
                    let key = leaf.leafCell(index).key
                    if upperBound.withUnsafeBytes({ compareKeys(key, $0) }) >= 0 { return total }
                    total += 1
                    index += 1
                }
            } else {
                total += count - index
            }
            indices[indices.count - 1] = count
            more = try settleForward()
        }
        return total
    }
}
