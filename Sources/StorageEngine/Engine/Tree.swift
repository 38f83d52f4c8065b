// A named tree: an ordered map from byte keys to byte values, seen through one
// transaction.

/// A named, ordered map of byte keys to byte values within one transaction.
///
/// Keys order as unsigned bytes (a prefix first). Keys are 1 to
/// ``maximumKeyLength`` bytes; values up to 2^31 - 1 bytes (large ones go to
/// overflow pages).
///
/// ```swift
/// try database.write { transaction in
///     let index = try transaction.openTree(named: "person.age")
///     try index.setValue([], forKey: [0, 42, 0, 0, 0, 7])
/// }
/// ```
public struct Tree {
    let core: TransactionCore
    let state: TreeState

    /// The tree's name.
    public var name: String { state.name }

    /// The longest key this database accepts.
    public var maximumKeyLength: Int { core.geometry.maximumKey }

    /// The number of entries. O(1).
    /// - Throws: ``StorageError``: `closed` when the transaction has ended, `treeDeleted`;
    ///   `corrupt` when the recorded count is impossible (a damaged count of 0 that a
    ///   removal took below zero).
    public var count: Int {
        get throws {
            try check()
            guard let count = Int(exactly: state.count), count <= Int(Int64.max / 2) else {
                throw StorageError.corrupt("tree \"\(state.name)\" records an impossible entry count (\(state.count))")
            }
            return count
        }
    }

    private func check() throws {
        try core.checkOpen()
        if state.deleted { throw StorageError(.treeDeleted, "tree \"\(state.name)\" was deleted") }
    }

    /// The value stored under `key`, or nil.
    /// - Throws: ``StorageError``: `closed` when the transaction has ended, `treeDeleted`, `corrupt` for a damaged page.
    /// - Complexity: O(log n).
    public func value(forKey key: [UInt8]) throws -> [UInt8]? {
        try check()
        return try key.withUnsafeBytes { try core.value(in: state, key: $0) }
    }

    /// Calls `body` with the value stored under `key` without copying it (when it is
    /// stored inline); returns nil when there is none. The buffer is valid only inside `body`.
    /// - Throws: What `body` throws, or ``StorageError``: `closed` when the transaction has ended, `treeDeleted`, `corrupt` for a damaged page.
    public func withValue<R>(forKey key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R) throws
        -> R?
    {
        try check()
        if core.writer == nil, state.root != 0, !key.isEmpty {
            switch try core.store.readerCell(
                root: state.root, key: SearchKey(key), limit: core.snapshot.pageCount,
                maximumTransaction: core.snapshot.transaction, hint: &state.descentHint)
            {
            case .found(let (leaf, offset)):
                let cell = leaf.leafCell(atOffset: offset)
                if !cell.isOverflow { return try withExtendedLifetime(leaf) { try body(cell.inlineValue) } }
            case .absent: return nil
            case .generalPath: break
            }
        }
        guard let (leaf, index, found) = try core.findLeaf(root: state.root, key: key), found else { return nil }
        return try core.withValue(of: leaf, at: index, body)
    }

    /// Whether `key` has a value.
    /// - Throws: ``StorageError``: `closed` when the transaction has ended, `treeDeleted`, `corrupt` for a damaged page.
    public func contains(_ key: [UInt8]) throws -> Bool {
        try check()
        return try key.withUnsafeBytes { try core.findLeaf(root: state.root, key: $0)?.found ?? false }
    }

    /// Stores `value` under `key`, replacing any value.
    /// - Throws: ``StorageError`` `readOnly` in a read transaction, `keyTooLarge`, `valueTooLarge`.
    /// - Complexity: O(log n).
    public func setValue(_ value: [UInt8], forKey key: [UInt8]) throws {
        try check()
        _ = try key.withUnsafeBytes { key in try value.withUnsafeBytes { try core.put(state, key: key, value: $0) } }
    }

    /// Stores `value` under `key` from raw buffers (no intermediate arrays).
    /// - Throws: As ``setValue(_:forKey:)-([UInt8],[UInt8])``.
    public func setValue(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer) throws {
        try check()
        _ = try core.put(state, key: key, value: value)
    }

    /// Removes the value under `key`; returns whether there was one.
    /// - Throws: ``StorageError`` `readOnly` in a read transaction, `closed`, `treeDeleted`,
    ///   `corrupt`.
    @discardableResult
    public func removeValue(forKey key: [UInt8]) throws -> Bool {
        try check()
        return try key.withUnsafeBytes { try core.remove(state, key: $0) }
    }

    /// A cursor over the tree, not yet positioned.
    /// - Throws: ``StorageError``: `closed` when the transaction has ended, `treeDeleted`.
    public func makeCursor() throws -> Cursor {
        try check()
        return Cursor(core: core, state: state)
    }

    /// Visits entries with `lowerBound <= key < upperBound` (either bound optional) in key
    /// order, or in reverse; stops when `body` returns false. The buffers are valid only
    /// inside `body`.
    /// - Throws: What `body` throws, or ``StorageError``: `closed` when the transaction has ended, `treeDeleted`, `corrupt` for a damaged page; `closed` also when `body`
    ///   changes the tree during the walk.
    /// - Complexity: O(log n + visited entries).
    public func scan(
        from lowerBound: [UInt8]? = nil, to upperBound: [UInt8]? = nil, reverse: Bool = false,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try check()
        let cursor = Cursor(core: core, state: state)
        try cursor.visit(from: lowerBound, to: upperBound, reverse: reverse, body)
    }

    /// Visits, for each range of `ranges` in turn, the entries with `lower <= key < upper`
    /// (either bound optional) in key order, calling `body` with the range's position in
    /// `ranges`; stops when `body` returns false. One cursor serves every range: ranges
    /// sorted by their lower bound, many starting on the leaf the previous one ended on
    /// (an IN list's points, a sorted set of keys), cost a search of that leaf each rather
    /// than a descent from the root. Overlapping or unsorted ranges visit what separate
    /// scans would. The buffers are valid only inside `body`.
    /// - Throws: What `body` throws, or ``StorageError`` as ``scan(from:to:reverse:_:)`` does.
    /// - Complexity: O(log n) per range that starts on another leaf, plus the visited entries.
    public func scan(
        ranges: [(lower: [UInt8]?, upper: [UInt8]?)],
        _ body: (_ range: Int, _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try check()
        let cursor = Cursor(core: core, state: state)
        try cursor.visit(ranges: ranges, body)
    }

    /// Visits, for each prefix of `prefixes` in turn, the entries whose keys begin with it
    /// in key order, calling `body` with the prefix's position in `prefixes`; stops when
    /// `body` returns false. What ``scan(ranges:_:)`` visits for the ranges
    /// `prefix <= key < successor(prefix)`, without a pair of keys per range: one cursor
    /// serves every prefix, and a prefix that starts on the leaf the previous one ended on
    /// (sorted points: an IN list's) is found from where that one ended, a few comparisons.
    /// The buffers are valid only inside `body`.
    /// - Throws: What `body` throws, or ``StorageError`` as ``scan(from:to:reverse:_:)`` does.
    /// - Complexity: O(log n) per prefix that starts on another leaf, plus the visited entries.
    public func scan(
        prefixes: KeyPrefixes,
        _ body: (_ prefix: Int, _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try check()
        let cursor = Cursor(core: core, state: state)
        try cursor.visit(prefixes: prefixes, body)
    }

    /// The entries with `lowerBound <= key < upperBound`, in order (or reverse), at most `limit`.
    /// - Throws: ``StorageError``: `closed` when the transaction has ended, `treeDeleted`, `corrupt` for a damaged page.
    public func entries(
        from lowerBound: [UInt8]? = nil, to upperBound: [UInt8]? = nil, reverse: Bool = false, limit: Int = .max
    ) throws -> [(key: [UInt8], value: [UInt8])] {
        var result: [(key: [UInt8], value: [UInt8])] = []
        guard limit > 0 else { return result }
        try scan(from: lowerBound, to: upperBound, reverse: reverse) { key, value in
            result.append((Array(key), Array(value)))
            return result.count < limit
        }
        return result
    }

    /// The number of keys with `lowerBound <= key < upperBound`.
    /// - Throws: ``StorageError``: `closed` when the transaction has ended, `treeDeleted`, `corrupt` for a damaged page.
    /// - Complexity: O(log n + counted entries); use ``count`` for the whole tree.
    public func count(from lowerBound: [UInt8]?, to upperBound: [UInt8]?) throws -> Int {
        try check()
        let cursor = Cursor(core: core, state: state)
        return try cursor.countRange(from: lowerBound, to: upperBound)
    }
}
