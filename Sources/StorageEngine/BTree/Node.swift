// Slotted leaf and branch pages (SPEC.md §2.2): after the 40-byte header, `count` 2-byte
// cell offsets in key order; cells (Cells.swift) packed at the end of the page, growing
// down to the content start.
//
//   offset        size  field
//        0          40  page header (Page.swift); link: a branch's leftmost child
//       40   2 × count  slot array: u16 offset of each cell, in key order
//        .           .  free space
//   content start    .  cells, in any order, with holes left by removals
//
// Binary search runs on the raw bytes; inserting shifts the slot array and puts the cell
// below the content start; removing leaves a hole that compaction reclaims.

/// The slot array of a leaf or branch page.
enum SlotArray {
    static let start = PageHeader.size
    static let slotSize = 2

    /// The offset of slot `index` in the page.
    @inline(__always) static func offset(of index: Int) -> Int { start + slotSize * index }
}

extension Page {
    @inline(__always) func slot(_ index: Int) -> Int { u16(SlotArray.offset(of: index)) }
    @inline(__always) func setSlot(_ index: Int, _ offset: Int) { setU16(SlotArray.offset(of: index), offset) }

    // MARK: Cells

    @inline(__always) func leafCell(_ index: Int) -> LeafCell { LeafCell(bytes + slot(index)) }
    @inline(__always) func leafCell(atOffset offset: Int) -> LeafCell { LeafCell(bytes + offset) }
    @inline(__always) func branchCell(_ index: Int) -> BranchCell { BranchCell(bytes + slot(index)) }

    /// Leaf cell `index`, located through the search table when the page has one (no
    /// header or slot read).
    @inline(__always) func leafCellUsingTable(_ index: Int) -> LeafCell {
        guard let prefixes else { return leafCell(index) }
        return leafCell(atOffset: Int(truncatingIfNeeded: prefixes[tableCount + index]))
    }

    /// Child `index` of a branch: 0 is the leftmost (the link), `i` is cell `i - 1`'s.
    @inline(__always) func child(_ index: Int) -> UInt64 {
        index == 0 ? link : branchCell(index - 1).child
    }
    @inline(__always) func setChild(_ index: Int, _ page: UInt64) {
        if index == 0 { link = page } else { setU64(slot(index - 1) + BranchCell.childOffset, page) }
    }

    /// Child `index` of a committed branch, from the search table (no header or cell read).
    @inline(__always) func tableChild(_ index: Int) -> UInt64 {
        guard let prefixes else { return child(index) }
        return prefixes[tableCount + index]
    }

    /// Size of the cell at `offset` on this page, by kind.
    @inline(__always) func cellSize(atOffset offset: Int) -> Int {
        isLeaf ? leafCell(atOffset: offset).size : BranchCell(bytes + offset).size
    }

    @inline(__always) func cellImage(_ index: Int) -> CellImage {
        let offset = slot(index)
        return CellImage(base: bytes + offset, count: cellSize(atOffset: offset))
    }

    // MARK: Search

    /// The first index whose key is >= `key`, and whether it is equal.
    @inline(__always)
    func leafLowerBound(_ key: SearchKey) -> (index: Int, found: Bool) {
        if let prefixes { return tableLeafSearch(bytes, prefixes, tableCount, key) }
        return lowerBound(0, count) { index in
            let cell = leafCell(index)
            return compareKeys(cell.keyStart, cell.keyLength, key)
        }
    }

    /// The child index under which `key` lives: the number of separators <= key.
    @inline(__always)
    func branchChildIndex(_ key: SearchKey) -> Int {
        if let prefixes { return tableBranchSearch(bytes, prefixes, tableCount, key) }
        return upperBound(0, count) { index in
            let cell = branchCell(index)
            return compareKeys(cell.keyStart, cell.keyLength, key)
        }
    }

    // MARK: Space

    var contiguousFree: Int { contentStart - SlotArray.offset(of: count) }

    /// Slot and cell bytes in use.
    var liveBytes: Int {
        var total = SlotArray.slotSize * count
        for index in 0..<count { total += cellSize(atOffset: slot(index)) }
        return total
    }

    /// Whether ``liveBytes`` is below `bound`, summing only until the bound is reached:
    /// the check after every removal, where a well-filled page answers after a few cells.
    func hasLiveBytes(below bound: Int) -> Bool {
        var total = SlotArray.slotSize * count
        var index = 0
        while index < count, total < bound {
            total += cellSize(atOffset: slot(index))
            index += 1
        }
        return total < bound
    }

    // MARK: Mutation (dirty pages only)

    /// Inserts a copy of `cell` at `index`; compacts first when the free bytes are
    /// fragmented. Returns false when it does not fit.
    @inline(__always)
    func insertCell(_ cell: CellImage, at index: Int) -> Bool {
        let needed = cell.count + SlotArray.slotSize
        if contiguousFree < needed {
            guard needed <= size - PageHeader.size - liveBytes else { return false }
            compact()
        }
        let offset = contentStart - cell.count
        (bytes + offset).copyMemory(from: cell.base, byteCount: cell.count)
        let slots = bytes + SlotArray.start
        if index < count {
            (slots + SlotArray.slotSize * (index + 1)).copyMemory(
                from: slots + SlotArray.slotSize * index, byteCount: SlotArray.slotSize * (count - index))
        }
        setSlot(index, offset)
        contentStart = offset
        count += 1
        return true
    }

    /// Removes cell `index`; its bytes become a hole until compaction.
    func removeCell(at index: Int) {
        let offset = slot(index)
        let slots = bytes + SlotArray.start
        if index + 1 < count {
            (slots + SlotArray.slotSize * index).copyMemory(
                from: slots + SlotArray.slotSize * (index + 1), byteCount: SlotArray.slotSize * (count - index - 1))
        }
        count -= 1
        if offset == contentStart { contentStart = offset + cellSize(atOffset: offset) }
        if count == 0 { contentStart = size }
    }

    /// Packs the cells at the end of the page, removing holes.
    func compact() {
        let scratch = copy()
        setCells((0..<scratch.count).lazy.map { scratch.cellImage($0) })
    }

    /// Replaces this page's cells with copies of `cells`, packed at the end, keeping the
    /// header's kind, number, transaction and link.
    func setCells<C: Collection>(_ cells: C) where C.Element == CellImage {
        var offset = size
        var index = 0
        for cell in cells {
            offset -= cell.count
            (bytes + offset).copyMemory(from: cell.base, byteCount: cell.count)
            setSlot(index, offset)
            index += 1
        }
        count = index
        contentStart = offset
    }

    /// Appends copies of `cells` after the existing ones; the caller has checked they fit.
    func appendCells<C: Collection>(_ cells: C) where C.Element == CellImage {
        for cell in cells {
            let appended = insertCell(cell, at: count)
            precondition(appended, "appendCells: the caller checked that the cells fit")
        }
    }
}
