// Edits in place on a leaf the writer already holds (TreeEditor.swift): a value replaced
// by one of another length without removing and inserting its cell, and the walk's
// copy-on-write, split and merge steps taken once per leaf rather than once per entry.
//
// A value that grows takes its bytes from the free space below the cells: the cells
// between the content start and the replaced one move down by the growth, and the slots
// pointing at them follow; a value that shrinks leaves a hole after its cell, which
// compaction reclaims like any other (SPEC.md §2.2). A run of removals from one leaf
// closes the slot array once rather than once per cell.

extension Page {
    /// Replaces the inline value of leaf cell `index` with `value` (inline too), keeping
    /// the cell's key and slot. Returns false, changing nothing, when the page lacks the
    /// free bytes a longer value needs.
    func replaceInlineValue(at index: Int, with value: UnsafeRawBufferPointer) -> Bool {
        internalCheck(sharedWriteProblem)
        internalCheck(slotProblem(index))
        var offset = slot(index)
        let old = leafCell(atOffset: offset)
        internalCheck(!old.isOverflow, "§2.2: an in-place replace of an overflowed value")
        let growth = value.count - old.valueLength
        if growth > 0 {
            if contiguousFree < growth {
                guard growth <= size - PageHeader.size - liveBytes else { return false }
                compact()
                offset = slot(index)
            }
            // The cells below this one move down by `growth`; the header and key follow.
            let start = contentStart
            (bytes + start - growth).copyMemory(from: bytes + start, byteCount: offset - start)
            for other in 0..<count {
                let position = slot(other)
                if position < offset { setSlot(other, position - growth) }
            }
            let keyLength = leafCell(atOffset: offset).keyLength
            (bytes + offset - growth).copyMemory(from: bytes + offset, byteCount: LeafCell.headerSize + keyLength)
            offset -= growth
            setSlot(index, offset)
            contentStart = start - growth
        }
        let cell = bytes + offset
        cell.setU32(at: LeafCell.valueLengthOffset, value.count)
        if let base = value.baseAddress {
            (cell + LeafCell.headerSize + UnsafeRawPointer(cell).u16(at: LeafCell.keyLengthOffset)).copyMemory(
                from: base, byteCount: value.count)
        }
        internalCheck(layoutProblem)
        return true
    }
}

extension Page {
    /// Removes the cells at `indices` (ascending, each once) in one pass over the slot
    /// array, leaving the page as removing them one by one with ``removeCell(at:)``, first
    /// to last, would: the same slots, count and content start (holes until compaction).
    func removeCells(at indices: UnsafeBufferPointer<Int>) {
        internalCheck(sharedWriteProblem)
        guard let first = indices.first else { return }
        let total = count
        let slots = bytes + SlotArray.start
        var content = contentStart
        // The kept slots between two removed ones move down in one block.
        var kept = first
        for (position, removed) in indices.enumerated() {
            internalCheck(removed < total && (position == 0 || indices[position - 1] < removed), "§2.2: removals")
            let offset = slot(removed)
            if offset == content { content = offset + cellSize(atOffset: offset) }
            let following = position + 1 < indices.count ? indices[position + 1] : total
            let run = following - removed - 1
            if run > 0 {
                (slots + SlotArray.slotSize * kept).copyMemory(
                    from: slots + SlotArray.slotSize * (removed + 1), byteCount: SlotArray.slotSize * run)
                kept += run
            }
        }
        count = kept
        contentStart = kept == 0 ? size : content
        internalCheck(layoutProblem)
    }
}

extension TransactionCore {
    /// Replaces the value of cell `index` of the leaf at the end of the writer's path (its
    /// path already writable) with `value`, as a put of the same key would. Returns false
    /// when the leaf split, which leaves the writer's path no longer leading to the key.
    func replaceValue(
        _ writer: WriterState, tree: TreeState, at index: Int, with value: UnsafeRawBufferPointer
    ) throws -> Bool {
        let leaf = writer.pathPages[writer.pathPages.count - 1]
        let cell = leaf.leafCell(index)
        let keyLength = cell.keyLength
        if !cell.isOverflow && geometry.isInline(keyLength: keyLength, valueLength: value.count)
            && leaf.replaceInlineValue(at: index, with: value)
        {
            return true
        }
        // The general case, as put takes it: the new cell built in scratch space replaces
        // the old one, overflow chains written or freed, the leaf split when it is full.
        var overflow: UInt64?
        if !geometry.isInline(keyLength: keyLength, valueLength: value.count) {
            overflow = writeOverflow(writer, value)
        }
        let image = CellImage(
            base: writer.scratch,
            count: LeafCell.write(writer.scratch, key: cell.key, value: value, overflowPage: overflow))
        internalCheck(image.count <= geometry.maximumCell, "B1: a cell of \(image.count) bytes")
        try freeOverflow(of: leaf.leafCell(index), writer)
        leaf.removeCell(at: index)
        if leaf.insertCell(image, at: index) { return true }
        splitLeaf(writer, tree: tree, index: index, cell: image)
        return false
    }
}
