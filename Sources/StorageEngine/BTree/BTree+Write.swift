// Changes to the copy-on-write B+tree (SPEC.md B1-B4). An operation descends recording
// the path, copies every page on it that a committed state reaches (`writable`, which
// frees the old number), then edits the leaf in place; a full page splits (the left
// page full when appending, evenly otherwise) and the separator, suffix-truncated, goes
// up; an underfull page merges with a sibling when both fit in one page.

extension Page {
    /// Replaces this page's cells with `cells` (complete cell images), keeping its header.
    func setCells<C: Collection>(_ cells: C) where C.Element == UnsafeRawBufferPointer {
        var offset = size
        var index = 0
        for cell in cells {
            offset -= cell.count
            (bytes + offset).copyMemory(from: cell.baseAddress!, byteCount: cell.count)
            setSlot(index, offset)
            index += 1
        }
        count = index
        contentStart = offset
    }
}

extension TransactionCore {
    /// Descends to `key`'s leaf, filling the writer's path; returns the leaf position.
    private func descend(_ writer: WriterState, root: UInt64, key: UnsafeRawBufferPointer) throws -> (Int, Bool) {
        writer.pathPages.removeAll(keepingCapacity: true)
        writer.pathIndices.removeAll(keepingCapacity: true)
        let keyPointer = key.baseAddress!
        var page = try self.page(root)
        while !page.isLeaf {
            guard page.kindByte == PageKind.branch.rawValue else {
                throw StorageError.corrupt("page \(page.number): expected a tree node, found kind \(page.kindByte)")
            }
            guard writer.pathPages.count < maximumTreeDepth else {
                throw StorageError.corrupt("tree deeper than \(maximumTreeDepth)")
            }
            let index = page.branchChildIndex(keyPointer, key.count)
            writer.pathPages.append(page)
            writer.pathIndices.append(index)
            page = try self.page(page.child(index))
        }
        writer.pathPages.append(page)
        writer.pathIndices.append(0)
        let (index, found) = page.leafLowerBound(keyPointer, key.count)
        return (index, found)
    }

    /// Whether the writer's path ends at the tree's last leaf (no separator above bounds it).
    private func isRightmostPath(_ writer: WriterState) -> Bool {
        for level in 0..<(writer.pathPages.count - 1) where writer.pathIndices[level] != writer.pathPages[level].count {
            return false
        }
        return true
    }

    /// Copies every page of the path that a committed state reaches, top down.
    private func makePathWritable(_ writer: WriterState, tree: TreeState) {
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
        try checkKey(key)
        guard value.count <= Int(Int32.max) else {
            throw StorageError(.valueTooLarge, "value of \(value.count) bytes; at most \(Int32.max)")
        }
        var overflow: UInt64?
        if !geometry.isInline(keyLength: key.count, valueLength: value.count) {
            overflow = writeOverflow(writer, value)
        }
        let cellSize = LeafCell.headerSize + key.count + (overflow == nil ? value.count : 8)
        // The cell is built once in scratch space and copied into place (no closure context).
        let scratch = writer.scratch
        writeLeafCell(scratch, key: key, value: value, overflowPage: overflow, valueLength: value.count)
        tree.version &+= 1
        tree.changed = true
        guard tree.root != 0 else {
            let leaf = writer.allocate(.leaf)
            _ = leaf.insertCell(at: 0, size: cellSize) { $0.copyMemory(from: scratch, byteCount: cellSize) }
            tree.root = leaf.number
            tree.count &+= 1
            return true
        }
        let index: Int
        let found: Bool
        if let hint = writer.appendHint, hint.tree === tree, hint.version == tree.version &- 1,
            let last = writer.pathPages.last, last.count > 0,
            compareKeys(
                key.baseAddress!, key.count, last.leafKeyPointer(last.count - 1), last.leafKeyLength(last.count - 1))
                > 0
        {
            // Append fast path: the previous put left the rightmost path of this tree,
            // already copied, and the key sorts after everything in it.
            (index, found) = (last.count, false)
        } else {
            (index, found) = try descend(writer, root: tree.root, key: key)
            makePathWritable(writer, tree: tree)
        }
        writer.appendHint = nil
        let leaf = writer.pathPages[writer.pathPages.count - 1]
        if found {
            if leaf.leafIsOverflow(index) {
                for page in try overflowPages(first: leaf.leafOverflowPage(index), length: leaf.leafValueLength(index))
                {
                    writer.free(page)
                }
            }
            leaf.removeCell(at: index)
        } else {
            tree.count &+= 1
        }
        if leaf.insertCell(at: index, size: cellSize, { $0.copyMemory(from: scratch, byteCount: cellSize) }) {
            if index == leaf.count - 1 && isRightmostPath(writer) { writer.appendHint = (tree, tree.version) }
            return !found
        }
        splitLeaf(
            writer, tree: tree, index: index, cell: UnsafeRawBufferPointer(start: writer.scratch, count: cellSize))
        return !found
    }

    private func writeOverflow(_ writer: WriterState, _ value: UnsafeRawBufferPointer) -> UInt64 {
        let chunk = geometry.overflowPayload
        var pages: [Page] = []
        var offset = 0
        while offset < value.count {
            let count = min(chunk, value.count - offset)
            let page = writer.allocate(.overflow)
            (page.bytes + PageHeader.size).copyMemory(from: value.baseAddress! + offset, byteCount: count)
            page.contentStart = count
            if let previous = pages.last { previous.link = page.number }
            pages.append(page)
            offset += count
        }
        return pages[0].number
    }

    /// Splits the path's full leaf around a new cell at `index`.
    private func splitLeaf(_ writer: WriterState, tree: TreeState, index: Int, cell: UnsafeRawBufferPointer) {
        let leaf = writer.pathPages[writer.pathPages.count - 1]
        let source = leaf.copy()
        var cells = (0..<source.count).map { source.cellBytes($0) }
        cells.insert(cell, at: index)
        let split = splitPoint(cells, insertedAt: index, isLeaf: true)
        let right = writer.allocate(.leaf)
        leaf.setCells(cells[0..<split])
        right.setCells(cells[split...])
        let separator = truncatedSeparator(left: cells[split - 1], right: cells[split])
        insertSeparator(
            writer, tree: tree, level: writer.pathPages.count - 2, separator: separator, child: right.number)
    }

    /// Where to split `cells`: after all of them but the new one when it was appended,
    /// before it when prepended, else at half the bytes.
    private func splitPoint(_ cells: [UnsafeRawBufferPointer], insertedAt index: Int, isLeaf: Bool) -> Int {
        let minimum = isLeaf ? 1 : 1
        let maximum = isLeaf ? cells.count - 1 : cells.count - 2
        if index == cells.count - 1 { return maximum }
        if index == 0 && isLeaf { return 1 }
        let total = cells.reduce(0) { $0 + $1.count + 2 }
        var running = 0
        for (position, cell) in cells.enumerated() {
            running += cell.count + 2
            if running * 2 >= total { return min(max(position + (isLeaf ? 1 : 0), minimum), maximum) }
        }
        return maximum
    }

    /// The shortest prefix of the right node's first key greater than the left's last (B2).
    private func truncatedSeparator(left: UnsafeRawBufferPointer, right: UnsafeRawBufferPointer) -> [UInt8] {
        let leftKeyCount = Int(left.loadUnaligned(as: UInt16.self).littleEndian)
        let rightKeyCount = Int(right.loadUnaligned(as: UInt16.self).littleEndian)
        let leftKey = left.baseAddress! + LeafCell.headerSize
        let rightKey = right.baseAddress! + LeafCell.headerSize
        var common = 0
        let limit = min(leftKeyCount, rightKeyCount)
        while common < limit
            && leftKey.load(fromByteOffset: common, as: UInt8.self)
                == rightKey.load(fromByteOffset: common, as: UInt8.self)
        {
            common += 1
        }
        let length = min(common + 1, rightKeyCount)
        return Array(UnsafeRawBufferPointer(start: rightKey, count: length))
    }

    /// Inserts separator -> `child` into the branch at `level` of the path (after the child
    /// taken there), splitting upward as needed; level -1 grows a new root.
    private func insertSeparator(_ writer: WriterState, tree: TreeState, level: Int, separator: [UInt8], child: UInt64)
    {
        let cellSize = BranchCell.headerSize + separator.count
        separator.withUnsafeBytes { key in
            let scratch = writer.scratch
            writeBranchCell(scratch, child: child, key: key)
            guard level >= 0 else {
                let root = writer.allocate(.branch)
                root.link = writer.pathPages[0].number
                _ = root.insertCell(at: 0, size: cellSize) { $0.copyMemory(from: scratch, byteCount: cellSize) }
                tree.root = root.number
                return
            }
            let branch = writer.pathPages[level]
            let index = writer.pathIndices[level]
            if branch.insertCell(at: index, size: cellSize, { $0.copyMemory(from: scratch, byteCount: cellSize) }) {
                return
            }
            let source = branch.copy()
            var cells = (0..<source.count).map { source.cellBytes($0) }
            cells.insert(UnsafeRawBufferPointer(start: writer.scratch, count: cellSize), at: index)
            let middle = splitPoint(cells, insertedAt: index, isLeaf: false)
            let pushed = cells[middle]
            let pushedChild = UInt64(littleEndian: pushed.loadUnaligned(as: UInt64.self))
            let pushedKeyCount = Int(UInt16(littleEndian: pushed.loadUnaligned(fromByteOffset: 8, as: UInt16.self)))
            let pushedKey = Array(
                UnsafeRawBufferPointer(
                    rebasing: pushed[BranchCell.headerSize..<(BranchCell.headerSize + pushedKeyCount)]))
            let right = writer.allocate(.branch)
            right.link = pushedChild
            right.setCells(cells[(middle + 1)...])
            branch.setCells(cells[0..<middle])
            insertSeparator(writer, tree: tree, level: level - 1, separator: pushedKey, child: right.number)
        }
    }

    /// Removes `key` from `tree`; returns whether it was there.
    @discardableResult
    func remove(_ tree: TreeState, key: UnsafeRawBufferPointer) throws -> Bool {
        let writer = try requireWriter()
        guard !tree.deleted else { throw StorageError(.treeDeleted, "tree \"\(tree.name)\" was deleted") }
        guard key.count >= 1, key.count <= geometry.maximumKey, tree.root != 0 else { return false }
        writer.appendHint = nil
        let (index, found) = try descend(writer, root: tree.root, key: key)
        guard found else { return false }
        tree.version &+= 1
        tree.changed = true
        makePathWritable(writer, tree: tree)
        let leaf = writer.pathPages[writer.pathPages.count - 1]
        if leaf.leafIsOverflow(index) {
            for page in try overflowPages(first: leaf.leafOverflowPage(index), length: leaf.leafValueLength(index)) {
                writer.free(page)
            }
        }
        leaf.removeCell(at: index)
        tree.count &-= 1
        try rebalance(writer, tree: tree, level: writer.pathPages.count - 1)
        return true
    }

    /// Restores fill bounds at `level` of the path after a removal (B3).
    private func rebalance(_ writer: WriterState, tree: TreeState, level: Int) throws {
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
        let separatorCount = parent.branchKeyLength(leftIndex)
        let needed = left.liveBytes + right.liveBytes + (node.isLeaf ? 0 : 2 + BranchCell.headerSize + separatorCount)
        guard needed <= geometry.usable else { return }
        if left.transaction != writer.transaction {
            left = writer.writable(left)
            parent.setChild(leftIndex, left.number)
        }
        if !node.isLeaf {
            let separator = UnsafeRawBufferPointer(start: parent.branchKeyPointer(leftIndex), count: separatorCount)
            let cellSize = BranchCell.headerSize + separatorCount
            writeBranchCell(writer.scratch, child: right.link, key: separator)
            left.appendCells([UnsafeRawBufferPointer(start: writer.scratch, count: cellSize)])
        }
        left.appendCells((0..<right.count).map { right.cellBytes($0) })
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
                for index in 0..<page.count where page.leafIsOverflow(index) {
                    for overflow in try overflowPages(
                        first: page.leafOverflowPage(index), length: page.leafValueLength(index))
                    {
                        writer.free(overflow)
                    }
                }
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
