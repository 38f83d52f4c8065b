// A walk of a whole tree that checks its shape (SPEC.md §2.9 V3, V4, V6): for verify(),
// which also marks every page it reaches (V5) and reads every value, and for the internal
// check after each commit, which reads no value and no page that is not in memory (a
// check must not add I/O, which fault-injection tests count).

/// Walks trees, checking V3, V4 and V6 and marking every page it reaches (V5).
struct TreeWalker {
    let core: TransactionCore
    /// One byte per page of the file, set when the walk reaches it; nil for a walk of the
    /// trees' shape alone, over pages in memory (the internal check after each commit).
    var marks: [UInt8]?
    var leafDepth = 0
    /// Entries seen so far.
    var entries: UInt64 = 0

    mutating func mark(_ number: UInt64, _ what: String) throws {
        guard let count = marks?.count else { return }
        guard number >= 1, number < UInt64(count) else {
            throw StorageError.corrupt("V5: \(what) \(number) is outside the file")
        }
        guard marks?[Int(number)] == 0 else {
            throw StorageError.corrupt("V5: page \(number) is reached twice (\(what))")
        }
        marks?[Int(number)] = 1
    }

    /// Walks the tree at `root`, calling `visit` for each entry in order; returns its depth.
    /// Without marks, a page not in memory ends the walk with ``PageNotInMemory``.
    mutating func walk(
        root: UInt64, _ visit: ((UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void)? = nil
    ) throws -> Int {
        leafDepth = 0
        var previous: [UInt8]?
        try walkNode(root, depth: 1, isRoot: true, lower: nil, upper: nil, previous: &previous, visit)
        return leafDepth
    }

    private mutating func walkNode(
        _ number: UInt64, depth: Int, isRoot: Bool, lower: [UInt8]?, upper: [UInt8]?, previous: inout [UInt8]?,
        _ visit: ((UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void)?
    ) throws {
        guard depth <= maximumTreeDepth else { throw StorageError.corrupt("V4: tree deeper than \(maximumTreeDepth)") }
        try mark(number, "tree page")
        let page = marks == nil ? try core.pageInMemory(number) : try core.page(number)
        let geometry = core.geometry
        // Keys are compared in place (no array per key, no generic comparison): verify and
        // the internal check after each commit spend most of their time here.
        func check(_ key: UnsafeRawBufferPointer) throws {
            guard key.count >= 1, key.count <= geometry.maximumKey else {
                throw StorageError.corrupt("V3: page \(number) has a key of \(key.count) bytes")
            }
            if let lower, lower.withUnsafeBytes({ compareKeys(key, $0) }) < 0 {
                throw StorageError.corrupt("V3: page \(number) has a key below its separator")
            }
            if let upper, upper.withUnsafeBytes({ compareKeys(key, $0) }) >= 0 {
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
                let key = cell.key
                try check(key)
                if let previous, previous.withUnsafeBytes({ compareKeys($0, key) }) >= 0 {
                    throw StorageError.corrupt("V3: keys out of order at page \(number) cell \(index)")
                }
                if previous == nil {
                    previous = Array(key)
                } else {
                    previous?.removeAll(keepingCapacity: true)
                    previous?.append(contentsOf: key)
                }
                entries += 1
                if cell.isOverflow {
                    let length = cell.valueLength
                    guard !geometry.isInline(keyLength: key.count, valueLength: length) else {
                        throw StorageError.corrupt(
                            "V6: page \(number) cell \(index) overflows a value that fits inline")
                    }
                    if marks != nil {
                        for overflow in try core.overflowPages(first: cell.overflowPage, length: length) {
                            try mark(overflow, "overflow page")
                        }
                    }
                }
                if let visit { try core.withValue(of: page, at: index) { try visit(key, $0) } }
            }
        } else {
            guard page.kindByte == PageKind.branch.rawValue else {
                throw StorageError.corrupt("V2: page \(number) in a tree has kind \(page.kindByte)")
            }
            var separators: [[UInt8]] = []
            for index in 0..<page.count {
                let key = page.branchCell(index).key
                try check(key)
                if let last = separators.last, last.withUnsafeBytes({ compareKeys($0, key) }) >= 0 {
                    throw StorageError.corrupt("V3: separators out of order in page \(number)")
                }
                separators.append(Array(key))
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

/// A walk over pages in memory met one that is not.
struct PageNotInMemory: Error {}

extension TransactionCore {
    /// Page `number` as the writer sees it, if that needs no I/O (written by it or cached).
    /// A page the writer spilled is not in memory: the cache may still hold an older
    /// committed image under its number.
    /// - Throws: ``PageNotInMemory`` otherwise.
    func pageInMemory(_ number: UInt64) throws -> Page {
        if let writer {
            if let page = writer.dirty[number] { return page }
            if writer.spilled.contains(number) { throw PageNotInMemory() }
        }
        if let page = store.cachedPage(number) { return page }
        throw PageNotInMemory()
    }
}
