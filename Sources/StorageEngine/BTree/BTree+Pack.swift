// Packing a sparse tree (SPEC.md §2.13 step 2): a delete of a part of every page (15% of
// the rows, at random) leaves every leaf that much emptier, and moving pages down the file
// moves that slack with them. When a shrink is due, a tree whose cells would fit in
// clearly fewer leaves is rewritten in the shrink's transaction: its cells, in key order,
// copied into new leaves filled to the brim, branches built over them, the old leaves and
// branches freed (a tree with overflow chains is left to the move: its chains would stay).

/// The leaves and branches of one tree, and the leaves its cells would take packed.
struct TreeFill {
    var leaves = 0
    var branches = 0
    /// Leaves the cells take when each is filled in key order until the next cell does
    /// not fit, as ``TransactionCore/pack(_:)`` fills them.
    var packedLeaves = 0
    /// Cell and slot bytes in the last of those leaves.
    var packedTail = 0
    /// Whether a value of the tree is in an overflow chain.
    var hasOverflow = false

    /// Counts a cell of `size` bytes into the packed leaves.
    mutating func add(cell size: Int, usable: Int) {
        let needed = size + SlotArray.slotSize
        if packedLeaves == 0 || packedTail + needed > usable {
            packedLeaves += 1
            packedTail = 0
        }
        packedTail += needed
    }

    /// Whether packing the tree would save a tenth of its leaves or more (and it has at
    /// least four): worth rewriting it while a shrink rewrites the file's end anyway. A
    /// tree with overflow chains is left to the move: packing would leave its chains
    /// scattered over the file while its leaves go low.
    var isSparse: Bool { !hasOverflow && leaves >= 4 && packedLeaves * 10 <= leaves * 9 }
}

extension TransactionCore {
    /// The fill of the tree rooted at `root` (0: empty), walked in key order.
    func fill(of root: UInt64) throws -> TreeFill {
        var fill = TreeFill()
        guard root != 0 else { return fill }
        var stack: [(UInt64, Int)] = [(root, 1)]
        let limit = writer?.pageCount ?? snapshot.pageCount
        while let (number, depth) = stack.popLast() {
            try checkDescentDepth(depth)
            // A page reached twice would be damage (F2); bound the walk by the file.
            guard UInt64(fill.leaves + fill.branches) < limit else {
                throw StorageError.corrupt("the trees reach more pages than the file has")
            }
            let page = try self.page(number)
            if page.isLeaf {
                fill.leaves += 1
                for index in 0..<page.count {
                    let cell = page.leafCell(index)
                    fill.hasOverflow = fill.hasOverflow || cell.isOverflow
                    fill.add(cell: cell.size, usable: geometry.usable)
                }
            } else {
                try page.requireBranch()
                fill.branches += 1
                for index in (0...page.count).reversed() { stack.append((page.child(index), depth + 1)) }
            }
        }
        return fill
    }

    /// Rewrites `tree` packed: its cells in key order into new full leaves, branches over
    /// them with suffix-truncated separators (B2), its old leaves and branches freed (its
    /// overflow chains kept). Its entries, count and order do not change.
    func pack(_ tree: TreeState) throws {
        let writer = try requireWriter()
        guard tree.root != 0 else { return }
        writer.appendHint = nil
        writer.runHint = nil
        var old: [UInt64] = []
        // New leaves by number (finished ones may spill), and the one being filled.
        var leaves: [(number: UInt64, separator: [UInt8]?)] = []
        var current: Page?
        var previous: (page: Page, index: Int)?
        // In key order: a stack of (page, next child to visit), from the root.
        var stack: [(page: Page, next: Int)] = [(try page(tree.root), 0)]
        while let (node, next) = stack.popLast() {
            try checkDescentDepth(stack.count + 1)
            if !node.isLeaf {
                try node.requireBranch()
                if next == 0 { old.append(node.number) }
                guard next <= node.count else { continue }
                stack.append((node, next + 1))
                stack.append((try page(node.child(next)), 0))
                continue
            }
            old.append(node.number)
            guard UInt64(old.count) < writer.pageCount else {
                throw StorageError.corrupt("tree \"\(tree.name)\" reaches more pages than the file has")
            }
            for index in 0..<node.count {
                let image = node.cellImage(index)
                if let current, current.insertCell(image, at: current.count) {
                    previous = (node, index)
                    continue
                }
                let leaf = writer.allocate(.leaf)
                _ = leaf.insertCell(image, at: 0)
                let separator = previous.map { left in
                    truncatedSeparator(left: left.page.leafCell(left.index).key, right: node.leafCell(index).key)
                }
                leaves.append((leaf.number, separator))
                current = leaf
                previous = (node, index)
                // The leaf being filled stays in memory; finished ones may spill.
                writer.pathPages.removeAll(keepingCapacity: true)
                writer.pathPages.append(leaf)
                writer.pathIndices.removeAll(keepingCapacity: true)
                try spillIfNeeded(writer)
            }
        }
        writer.pathPages.removeAll(keepingCapacity: true)
        writer.pathIndices.removeAll(keepingCapacity: true)
        var level = leaves
        while level.count > 1 { level = buildBranches(over: level, writer) }
        tree.root = level.first?.number ?? 0
        tree.changed = true
        tree.version &+= 1
        for number in old { writer.free(number) }
    }

    /// One level of branches over `children` (each with the separator before it, nil for
    /// the first), filled in order; returns the branches with theirs.
    private func buildBranches(over children: [(number: UInt64, separator: [UInt8]?)], _ writer: WriterState)
        -> [(number: UInt64, separator: [UInt8]?)]
    {
        var branches: [(page: Page, separator: [UInt8]?)] = []
        for child in children {
            if let open = branches.last?.page, let separator = child.separator {
                let size = separator.withUnsafeBytes {
                    BranchCell.write(writer.scratch, child: child.number, key: $0)
                }
                if open.insertCell(CellImage(base: writer.scratch, count: size), at: open.count) { continue }
            }
            let branch = writer.allocate(.branch)
            branch.link = child.number
            branches.append((branch, child.separator))
        }
        // A last branch with one child takes the previous branch's last child as its
        // leftmost: that child's separator comes up, the last branch's goes down into it.
        if branches.count >= 2, let last = branches.last, last.page.count == 0 {
            let previous = branches[branches.count - 2].page
            let moved = previous.branchCell(previous.count - 1)
            let (movedChild, movedKey) = (moved.child, Array(moved.key))
            previous.removeCell(at: previous.count - 1)
            if let down = last.separator {
                let size = down.withUnsafeBytes { BranchCell.write(writer.scratch, child: last.page.link, key: $0) }
                _ = last.page.insertCell(CellImage(base: writer.scratch, count: size), at: 0)
            }
            last.page.link = movedChild
            branches[branches.count - 1].separator = movedKey
        }
        return branches.map { (number: $0.page.number, separator: $0.separator) }
    }
}
