// What the internal checks (Support/InternalChecks.swift) look for in the B+tree around
// a write: the path a change descended, the cells beside it, a split's separator, and
// after each commit the shape and counts of the trees it changed. Shape checks: each
// holds when the tree was valid (V3-V6) before the write.

/// Trees with at most this many entries are walked whole after each commit that changes
/// them (SPEC.md §2.9 V3, V4, V6); larger ones rely on the checks around each change,
/// which keep `swift test` about as fast as without checks.
let internalCheckTreeWalkLimit: UInt64 = 64

extension Page {
    /// The problem with the leaf cell just put at `index`: its key does not sort strictly
    /// between its neighbours' (V3).
    func insertionOrderProblem(at index: Int) -> String? {
        let key = leafCell(index).key
        if index > 0, compareKeys(leafCell(index - 1).key, key) >= 0 {
            return "V3: the key put at cell \(index) of page \(number) is not above the one before it"
        }
        if index + 1 < count, compareKeys(key, leafCell(index + 1).key) >= 0 {
            return "V3: the key put at cell \(index) of page \(number) is not below the one after it"
        }
        return nil
    }
}

/// The problem with a split's separator: not above the left node's last key, not at or
/// below the right node's first, or not a prefix of it (B2).
func separatorProblem(
    left: UnsafeRawBufferPointer, separator: UnsafeRawBufferPointer, right: UnsafeRawBufferPointer
) -> String? {
    guard compareKeys(left, separator) < 0, compareKeys(separator, right) <= 0,
        separator.count <= right.count,
        compareKeys(separator, UnsafeRawBufferPointer(rebasing: right[..<separator.count])) == 0
    else { return "B2: a separator of \(separator.count) bytes does not divide the split nodes" }
    return nil
}

extension TransactionCore {
    /// The problem with the writer's path to `key` before it changes the leaf: a page on
    /// it the writer does not own (B4), or a separator above that does not bound the key
    /// (V3: the child taken holds keys from the separator before it, below the one after).
    func pathProblem(_ writer: WriterState, key: UnsafeRawBufferPointer) -> String? {
        for (level, page) in writer.pathPages.enumerated() {
            if let problem = writer.ownershipProblem(page) { return problem }
            guard level + 1 < writer.pathPages.count else { break }
            let child = writer.pathIndices[level]
            if child > 0, compareKeys(page.branchCell(child - 1).key, key) > 0 {
                return "V3: key above its path's separator at page \(page.number) child \(child)"
            }
            if child < page.count, compareKeys(key, page.branchCell(child).key) >= 0 {
                return "V3: key at or past its path's next separator at page \(page.number) child \(child)"
            }
        }
        return nil
    }

    /// The problem with a tree this writer changed, walked whole (over pages in memory:
    /// a check adds no I/O) when it has at most ``internalCheckTreeWalkLimit`` entries: keys out of order or outside their
    /// separators (V3), leaves at different depths or empty (V4), an entry count other than
    /// the tree records (V6). The catalog's count is not recorded, so only its shape is.
    func treeShapeProblem(_ tree: TreeState, countsEntries: Bool = true) -> String? {
        if countsEntries && tree.count > internalCheckTreeWalkLimit { return nil }
        var walker = TreeWalker(core: self, marks: nil)
        do {
            if tree.root != 0 { _ = try walker.walk(root: tree.root) }
        } catch is PageNotInMemory {
            return nil
        } catch {
            return "tree \"\(tree.name)\" after a write: \(error)"
        }
        guard !countsEntries || walker.entries == tree.count else {
            return "V6: tree \"\(tree.name)\" records \(tree.count) entries but holds \(walker.entries)"
        }
        return nil
    }

    /// The problem with any tree this transaction changed, and with the catalog (see
    /// ``treeShapeProblem(_:countsEntries:)``).
    var changedTreesProblem: String? {
        for tree in trees.values where tree.changed && !tree.deleted {
            if let problem = treeShapeProblem(tree) { return problem }
        }
        return treeShapeProblem(catalog, countsEntries: false)
    }
}
