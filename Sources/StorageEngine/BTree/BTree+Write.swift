// Changes to the copy-on-write B+tree (SPEC.md B1-B4). An operation descends recording
// the path, copies every page on it that a committed state reaches (`writable`, which
// frees the old number), then edits the leaf in place; a full page splits (the left
// page full when appending, evenly otherwise) and the separator, suffix-truncated, goes
// up; an underfull page merges with a sibling when both fit in one page.

extension TransactionCore {
    /// Descends to `key`'s leaf, filling the writer's path; returns the leaf position.
    func descend(_ writer: WriterState, root: UInt64, key: UnsafeRawBufferPointer) throws -> (Int, Bool) {
        writer.pathPages.removeAll(keepingCapacity: true)
        writer.pathIndices.removeAll(keepingCapacity: true)
        let key = SearchKey(key)
        var page = try self.page(root)
        while !page.isLeaf {
            try page.requireBranch()
            try checkDescentDepth(writer.pathPages.count)
            let index = page.branchChildIndex(key)
            writer.pathPages.append(page)
            writer.pathIndices.append(index)
            page = try self.page(page.child(index))
        }
        writer.pathPages.append(page)
        writer.pathIndices.append(0)
        let (index, found) = page.leafLowerBound(key)
        return (index, found)
    }

    /// Whether `key`, which sorts after cell `index` of the leaf at the end of the writer's
    /// path, sorts before the entry after that cell: the leaf's next cell, else the
    /// nearest separator to the right on the path (none on the tree's rightmost path).
    private func sortsBeforeNext(_ writer: WriterState, _ key: UnsafeRawBufferPointer, leaf: Page, after index: Int)
        -> Bool
    {
        if index + 1 < leaf.count { return compareKeys(key, leaf.leafCell(index + 1).key) < 0 }
        var level = writer.pathPages.count - 2
        while level >= 0 {
            let page = writer.pathPages[level]
            let child = writer.pathIndices[level]
            if child < page.count { return compareKeys(key, page.branchCell(child).key) < 0 }
            level -= 1
        }
        return true
    }

    /// Copies every page of the path that a committed state reaches, top down.
    func makePathWritable(_ writer: WriterState, tree: TreeState) {
        for level in 0..<writer.pathPages.count {
            let page = writer.pathPages[level]
            if page.transaction == writer.transaction { continue }
            let copy = writer.writable(page)
            writer.pathPages[level] = copy
            if level == 0 {
                tree.root = copy.number
            } else {
                writer.pathPages[level - 1].setChild(writer.pathIndices[level - 1], copy.number)
            }
        }
    }

    /// Checks a key against SPEC.md §5.
    @inline(__always)
    func checkKey(_ key: UnsafeRawBufferPointer) throws {
        guard key.count >= 1, key.count <= geometry.maximumKey else {
            throw StorageError(.keyTooLarge, "key of \(key.count) bytes; keys are 1 to \(geometry.maximumKey) bytes")
        }
    }

    /// Stores `value` under `key` in `tree`, replacing any value; returns true if the key is new.
    @discardableResult
    func put(_ tree: TreeState, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws -> Bool {
        let writer = try requireWriter()
        guard !tree.deleted else { throw StorageError(.treeDeleted, "tree \"\(tree.name)\" was deleted") }
        try spillIfNeeded(writer)
        internalCheck(writer.changeProblem(tree, catalog: catalog))
        try checkKey(key)
        guard value.count <= Int(Int32.max) else {
            throw StorageError(.valueTooLarge, "value of \(value.count) bytes; at most \(Int32.max)")
        }
        var overflow: UInt64?
        if !geometry.isInline(keyLength: key.count, valueLength: value.count) {
            overflow = writeOverflow(writer, value)
        }
        // The cell is built once in scratch space and copied into place.
        let cell = CellImage(
            base: writer.scratch, count: LeafCell.write(writer.scratch, key: key, value: value, overflowPage: overflow))
        internalCheck(cell.count <= geometry.maximumCell, "B1: a cell of \(cell.count) bytes")
        tree.version &+= 1
        tree.changed = true
        guard tree.root != 0 else {
            let leaf = writer.allocate(.leaf)
            _ = leaf.insertCell(cell, at: 0)
            tree.root = leaf.number
            tree.count &+= 1
            return true
        }
        let index: Int
        let found: Bool
        if let hint = writer.appendHint, hint.tree === tree, hint.version == tree.version &- 1,
            let last = writer.pathPages.last, hint.index < last.count,
            compareKeys(key, last.leafCell(hint.index).key) > 0,
            sortsBeforeNext(writer, key, leaf: last, after: hint.index)
        {
            // Run fast path: the previous put left its path in this tree, already copied,
            // and the key goes right after that put's cell (an append, or the next key of
            // a sorted batch landing inside the tree).
            (index, found) = (hint.index + 1, false)
        } else {
            (index, found) = try descend(writer, root: tree.root, key: key)
            makePathWritable(writer, tree: tree)
        }
        writer.appendHint = nil
        internalCheck(pathProblem(writer, key: key))
        let leaf = writer.pathPages[writer.pathPages.count - 1]
        if found {
            // A new inline value for an inline one (a commit's catalog entries, a row
            // rewritten): the cell keeps its place and slot, the page no hole.
            if overflow == nil && !leaf.leafCell(index).isOverflow && leaf.replaceInlineValue(at: index, with: value) {
                writer.runHint = (leaf.number, index)
                writer.appendHint = (tree, tree.version, index)
                return false
            }
            try freeOverflow(of: leaf.leafCell(index), writer)
            leaf.removeCell(at: index)
        } else {
            tree.count &+= 1
        }
        if leaf.insertCell(cell, at: index) {
            internalCheck(leaf.insertionOrderProblem(at: index))
            writer.runHint = (leaf.number, index)
            writer.appendHint = (tree, tree.version, index)
            return !found
        }
        splitLeaf(writer, tree: tree, index: index, cell: cell)
        return !found
    }

    /// Frees the overflow chain of `cell`, if its value has one.
    func freeOverflow(of cell: LeafCell, _ writer: WriterState) throws {
        guard cell.isOverflow else { return }
        for page in try overflowPages(first: cell.overflowPage, length: cell.valueLength) { writer.free(page) }
    }

    /// Writes `value` into a new overflow chain; returns its first page.
    func writeOverflow(_ writer: WriterState, _ value: UnsafeRawBufferPointer) -> UInt64 {
        guard let base = value.baseAddress else { preconditionFailure("an overflowed value is longer than a cell") }
        let chunk = geometry.overflowPayload
        var pages: [Page] = []
        var offset = 0
        while offset < value.count {
            let count = min(chunk, value.count - offset)
            let page = writer.allocate(.overflow)
            page.setOverflowPayload(base + offset, count: count)
            if let previous = pages.last { previous.link = page.number }
            pages.append(page)
            offset += count
        }
        return pages[0].number
    }

    /// Splits the path's full leaf around a new cell at `index`.
    func splitLeaf(_ writer: WriterState, tree: TreeState, index: Int, cell: CellImage) {
        let leaf = writer.pathPages[writer.pathPages.count - 1]
        let source = leaf.copy()
        var cells = (0..<source.count).map { source.cellImage($0) }
        cells.insert(cell, at: index)
        let continuesRun = writer.runHint.map { $0.leaf == leaf.number && $0.index == index - 1 } ?? false
        let split = splitPoint(cells, insertedAt: index, isLeaf: true, continuesRun: continuesRun)
        let right = writer.allocate(.leaf)
        writer.runHint = index < split ? (leaf.number, index) : (right.number, index - split)
        let separator = withExtendedLifetime(source) {
            leaf.setCells(cells[0..<split])
            right.setCells(cells[split...])
            let leftKey = LeafCell(cells[split - 1].base).key
            let rightKey = LeafCell(cells[split].base).key
            let separator = truncatedSeparator(left: leftKey, right: rightKey)
            internalCheck(
                separator.withUnsafeBytes { separatorProblem(left: leftKey, separator: $0, right: rightKey) })
            return separator
        }
        insertSeparator(
            writer, tree: tree, level: writer.pathPages.count - 2, separator: separator, child: right.number)
    }

    /// Where to split `cells`: after all of them but the new one when it was appended,
    /// before it when prepended, right after it when it continues an ascending run inside
    /// the leaf (`continuesRun`: the run's next keys then fill the left page, and the
    /// cells after the run keep their own), else at half the bytes.
    private func splitPoint(_ cells: [CellImage], insertedAt index: Int, isLeaf: Bool, continuesRun: Bool = false)
        -> Int
    {
        let minimum = isLeaf ? 1 : 1
        let maximum = isLeaf ? cells.count - 1 : cells.count - 2
        if index == cells.count - 1 { return maximum }
        if index == 0 && isLeaf { return 1 }
        if continuesRun && isLeaf
            && cells[...index].reduce(0, { $0 + $1.count + SlotArray.slotSize }) <= geometry.usable
        {
            return index + 1
        }
        let total = cells.reduce(0) { $0 + $1.count + SlotArray.slotSize }
        var running = 0
        for (position, cell) in cells.enumerated() {
            running += cell.count + SlotArray.slotSize
            if running * 2 >= total { return min(max(position + (isLeaf ? 1 : 0), minimum), maximum) }
        }
        return maximum
    }

    /// The shortest prefix of the right node's first key greater than the left's last (B2).
    func truncatedSeparator(left: UnsafeRawBufferPointer, right: UnsafeRawBufferPointer) -> [UInt8] {
        var common = 0
        let limit = min(left.count, right.count)
        while common < limit && left[common] == right[common] { common += 1 }
        return Array(right[..<min(common + 1, right.count)])
    }

    /// Inserts separator -> `child` into the branch at `level` of the path (after the child
    /// taken there), splitting upward as needed; level -1 grows a new root.
    private func insertSeparator(_ writer: WriterState, tree: TreeState, level: Int, separator: [UInt8], child: UInt64)
    {
        let pushed: (key: [UInt8], child: UInt64)? = separator.withUnsafeBytes { key in
            let cell = CellImage(base: writer.scratch, count: BranchCell.write(writer.scratch, child: child, key: key))
            guard level >= 0 else {
                let root = writer.allocate(.branch)
                root.link = writer.pathPages[0].number
                _ = root.insertCell(cell, at: 0)
                tree.root = root.number
                return nil
            }
            let branch = writer.pathPages[level]
            let index = writer.pathIndices[level]
            if branch.insertCell(cell, at: index) { return nil }
            let source = branch.copy()
            return withExtendedLifetime(source) {
                var cells = (0..<source.count).map { source.cellImage($0) }
                cells.insert(cell, at: index)
                let middle = splitPoint(cells, insertedAt: index, isLeaf: false)
                let middleCell = BranchCell(cells[middle].base)
                let right = writer.allocate(.branch)
                right.link = middleCell.child
                right.setCells(cells[(middle + 1)...])
                branch.setCells(cells[0..<middle])
                return (Array(middleCell.key), right.number)
            }
        }
        if let pushed {
            insertSeparator(writer, tree: tree, level: level - 1, separator: pushed.key, child: pushed.child)
        }
    }

    /// Removes `key` from `tree`; returns whether it was there.
    @discardableResult
    func remove(_ tree: TreeState, key: UnsafeRawBufferPointer) throws -> Bool {
        let writer = try requireWriter()
        guard !tree.deleted else { throw StorageError(.treeDeleted, "tree \"\(tree.name)\" was deleted") }
        try spillIfNeeded(writer)
        internalCheck(writer.changeProblem(tree, catalog: catalog))
        guard key.count >= 1, key.count <= geometry.maximumKey, tree.root != 0 else { return false }
        writer.appendHint = nil
        writer.runHint = nil
        let (index, found) = try descend(writer, root: tree.root, key: key)
        guard found else { return false }
        tree.version &+= 1
        tree.changed = true
        makePathWritable(writer, tree: tree)
        internalCheck(pathProblem(writer, key: key))
        let leaf = writer.pathPages[writer.pathPages.count - 1]
        try freeOverflow(of: leaf.leafCell(index), writer)
        leaf.removeCell(at: index)
        tree.count &-= 1
        try rebalance(writer, tree: tree, level: writer.pathPages.count - 1)
        return true
    }

    /// Restores fill bounds at `level` of the path after a removal (B3).
    func rebalance(_ writer: WriterState, tree: TreeState, level: Int) throws {
        let node = writer.pathPages[level]
        if level == 0 {
            if node.count == 0 {
                tree.root = node.isLeaf ? 0 : node.link
                writer.free(node.number)
            }
            return
        }
        if node.isLeaf && node.count == 0 {
            writer.free(node.number)
            try removeChild(writer, tree: tree, level: level - 1)
            return
        }
        guard node.hasLiveBytes(below: geometry.usable / 4) else { return }
        let parent = writer.pathPages[level - 1]
        let childIndex = writer.pathIndices[level - 1]
        guard parent.count >= 1 else { return }
        let leftIndex = childIndex > 0 ? childIndex - 1 : 0
        var left = leftIndex == childIndex ? node : try self.page(parent.child(leftIndex))
        let right = leftIndex == childIndex ? try self.page(parent.child(leftIndex + 1)) : node
        guard left.kindByte == node.kindByte, right.kindByte == node.kindByte else {
            throw StorageError.corrupt("page \(parent.number): children of different kinds")
        }
        let separatorCount = parent.branchCell(leftIndex).keyLength
        let needed =
            left.liveBytes + right.liveBytes
            + (node.isLeaf ? 0 : SlotArray.slotSize + BranchCell.headerSize + separatorCount)
        guard needed <= geometry.usable else { return }
        if left.transaction != writer.transaction {
            left = writer.writable(left)
            parent.setChild(leftIndex, left.number)
        }
        internalCheck(writer.ownershipProblem(left))
        if !node.isLeaf {
            // The separator comes down between the two halves, over the right node's leftmost child.
            let size = BranchCell.write(writer.scratch, child: right.link, key: parent.branchCell(leftIndex).key)
            left.appendCells(CollectionOfOne(CellImage(base: writer.scratch, count: size)))
        }
        left.appendCells((0..<right.count).lazy.map { right.cellImage($0) })
        writer.free(right.number)
        parent.removeCell(at: leftIndex)
        try rebalance(writer, tree: tree, level: level - 1)
    }

    /// The branch at `level` lost the child it was descended through.
    private func removeChild(_ writer: WriterState, tree: TreeState, level: Int) throws {
        let parent = writer.pathPages[level]
        let index = writer.pathIndices[level]
        if parent.count == 0 {
            writer.free(parent.number)
            if level == 0 {
                tree.root = 0
            } else {
                try removeChild(writer, tree: tree, level: level - 1)
            }
            return
        }
        if index == 0 {
            parent.link = parent.child(1)
            parent.removeCell(at: 0)
        } else {
            parent.removeCell(at: index - 1)
        }
        try rebalance(writer, tree: tree, level: level)
    }

    /// Frees every page of `tree` (when it is deleted).
    func freeAllPages(of tree: TreeState) throws {
        let writer = try requireWriter()
        guard tree.root != 0 else { return }
        var stack: [(UInt64, Int)] = [(tree.root, 0)]
        while let (number, depth) = stack.popLast() {
            guard depth < maximumTreeDepth else { throw StorageError.corrupt("tree deeper than \(maximumTreeDepth)") }
            let page = try self.page(number)
            if page.isLeaf {
                for index in 0..<page.count { try freeOverflow(of: page.leafCell(index), writer) }
            } else {
                guard page.kindByte == PageKind.branch.rawValue else {
                    throw StorageError.corrupt("page \(number): expected a tree node")
                }
                for index in 0...page.count { stack.append((page.child(index), depth + 1)) }
            }
            writer.free(number)
        }
        tree.root = 0
        tree.count = 0
    }
}
