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

    @inline(__always) func leafCell(_ index: Int) -> LeafCell {
        let offset = slot(index)
        checkCell(index, atOffset: offset, headerSize: LeafCell.headerSize)
        return LeafCell(bytes + offset)
    }
    @inline(__always) func leafCell(atOffset offset: Int) -> LeafCell {
        checkCell(nil, atOffset: offset, headerSize: LeafCell.headerSize)
        return LeafCell(bytes + offset)
    }
    @inline(__always) func branchCell(_ index: Int) -> BranchCell {
        let offset = slot(index)
        checkCell(index, atOffset: offset, headerSize: BranchCell.headerSize)
        return BranchCell(bytes + offset)
    }

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

    /// The problem with reading slot `index`: past the cell count (§2.2).
    func slotProblem(_ index: Int) -> String? {
        guard index < 0 || index >= count else { return nil }
        return "§2.2: slot \(index) of page \(number), which has \(count) cells"
    }

    /// The problem with a cell at `offset` whose header is `headerSize` bytes: it does not
    /// lie in the content area (P1).
    func cellProblem(atOffset offset: Int, headerSize: Int) -> String? {
        guard offset < contentStart || offset + headerSize > size else { return nil }
        return "P1: a cell at \(offset) of page \(number) lies outside its content \(contentStart)..<\(size)"
    }

    /// In builds with internal checks, traps on ``slotProblem(_:)`` for `index` (when
    /// given) or on the ``cellProblem(atOffset:headerSize:)`` of the cell at `offset`;
    /// nothing otherwise. Reads the header without the checked accessors: this runs on
    /// every cell access.
    @inline(__always) func checkCell(_ index: Int?, atOffset offset: Int, headerSize: Int) {
        #if STORAGE_ENGINE_INTERNAL_CHECKS
            let header = UnsafeRawPointer(bytes)
            if let index, index < 0 || index >= header.u16(at: PageHeader.count) {
                internalCheckFailed(slotProblem(index) ?? "")
            }
            if offset < header.u32(at: PageHeader.contentStart) || offset + headerSize > size {
                internalCheckFailed(cellProblem(atOffset: offset, headerSize: headerSize) ?? "")
            }
        #endif
    }

    /// The problem with the page's layout after a change: the slot array runs into the
    /// cells, or the content start lies past the page (§2.2).
    var layoutProblem: String? {
        guard SlotArray.offset(of: count) > contentStart || contentStart > size else { return nil }
        return "§2.2: page \(number) has \(count) slots and content from \(contentStart) of \(size) bytes"
    }

    /// The problem with the keys of a leaf or branch page: not strictly ascending (V3).
    var keyOrderProblem: String? {
        guard count > 1 else { return nil }
        let leaf = isLeaf
        var previous = leaf ? leafCell(0).key : branchCell(0).key
        for index in 1..<count {
            let key = leaf ? leafCell(index).key : branchCell(index).key
            if compareKeys(previous, key) >= 0 {
                return "V3: keys out of order at cell \(index) of page \(number)"
            }
            previous = key
        }
        return nil
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
        internalCheck(sharedWriteProblem)
        internalCheck(index >= 0 && index <= count, "§2.2: insert at \(index) of \(count) cells")
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
        internalCheck(layoutProblem)
        return true
    }

    /// Removes cell `index`; its bytes become a hole until compaction.
    func removeCell(at index: Int) {
        internalCheck(sharedWriteProblem)
        internalCheck(slotProblem(index))
        let offset = slot(index)
        let slots = bytes + SlotArray.start
        if index + 1 < count {
            (slots + SlotArray.slotSize * index).copyMemory(
                from: slots + SlotArray.slotSize * (index + 1), byteCount: SlotArray.slotSize * (count - index - 1))
        }
        count -= 1
        if offset == contentStart { contentStart = offset + cellSize(atOffset: offset) }
        if count == 0 { contentStart = size }
        internalCheck(layoutProblem)
    }

    /// Packs the cells at the end of the page, removing holes.
    func compact() {
        let scratch = copy()
        setCells((0..<scratch.count).lazy.map { scratch.cellImage($0) })
    }

    /// Replaces this page's cells with copies of `cells`, packed at the end, keeping the
    /// header's kind, number, transaction and link.
    func setCells<C: Collection>(_ cells: C) where C.Element == CellImage {
        internalCheck(sharedWriteProblem)
        var offset = size
        var index = 0
        for cell in cells {
            offset -= cell.count
            internalCheck(offset >= SlotArray.offset(of: index + 1), "§2.2: cells overflow page \(number)")
            (bytes + offset).copyMemory(from: cell.base, byteCount: cell.count)
            setSlot(index, offset)
            index += 1
        }
        count = index
        contentStart = offset
        internalCheck(layoutProblem)
    }

    /// Appends copies of `cells` after the existing ones; the caller has checked they fit.
    func appendCells<C: Collection>(_ cells: C) where C.Element == CellImage {
        for cell in cells {
            let appended = insertCell(cell, at: count)
            precondition(appended, "appendCells: the caller checked that the cells fit")
        }
    }
}
