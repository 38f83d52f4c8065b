// Slotted leaf and branch pages (SPEC.md §2.2): after the 40-byte header, `count`
// 2-byte cell offsets in key order; cells packed at the end of the page.
//
//   leaf cell:   u16 keyLength, u8 flags (bit 0: overflow), u32 valueLength, key, payload
//   branch cell: u64 child, u16 keyLength, key        (child holds keys >= key)
//
// Binary search runs on the raw bytes; inserting shifts the slot array and appends the
// cell below the content start; removing leaves a hole that compaction reclaims.
#if canImport(Glibc)
    import Glibc
#endif

/// Sizes derived from the page size (SPEC.md B1, §5).
struct Geometry: Sendable {
    let pageSize: Int
    /// Bytes available for slots and cells.
    let usable: Int
    /// The largest cell, so that any four fit in a page.
    let maximumCell: Int
    let maximumKey: Int
    let overflowPayload: Int
    let freeListEntriesPerPage: Int

    init(pageSize: Int) {
        self.pageSize = pageSize
        usable = pageSize - PageHeader.size
        maximumCell = usable / 4 - 2
        maximumKey = min(1024, maximumCell - 18)
        overflowPayload = pageSize - PageHeader.size
        freeListEntriesPerPage = (pageSize - PageHeader.size) / 16
    }

    /// Whether a value of `valueLength` with a key of `keyLength` is stored inline.
    @inline(__always)
    func isInline(keyLength: Int, valueLength: Int) -> Bool {
        LeafCell.headerSize + keyLength + valueLength <= maximumCell
    }
}

extension Page {
    @inline(__always) func slot(_ index: Int) -> Int { u16(PageHeader.size + 2 * index) }
    @inline(__always) func setSlot(_ index: Int, _ offset: Int) { setU16(PageHeader.size + 2 * index, offset) }

    // MARK: Leaf cells

    @inline(__always) func leafKeyLength(_ index: Int) -> Int { u16(slot(index)) }
    @inline(__always) func leafKeyPointer(_ index: Int) -> UnsafeRawPointer {
        UnsafeRawPointer(bytes + slot(index) + LeafCell.headerSize)
    }
    @inline(__always) func leafIsOverflow(_ index: Int) -> Bool { u8(slot(index) + 2) & 1 == 1 }
    @inline(__always) func leafValueLength(_ index: Int) -> Int { u32(slot(index) + 3) }
    /// The inline value bytes, or the 8-byte overflow page number.
    @inline(__always) func leafPayloadPointer(_ index: Int) -> UnsafeRawPointer {
        let offset = slot(index)
        return UnsafeRawPointer(bytes + offset + LeafCell.headerSize + u16(offset))
    }
    @inline(__always) func leafOverflowPage(_ index: Int) -> UInt64 {
        UInt64(littleEndian: leafPayloadPointer(index).loadUnaligned(as: UInt64.self))
    }
    func leafKey(_ index: Int) -> [UInt8] {
        Array(UnsafeRawBufferPointer(start: leafKeyPointer(index), count: leafKeyLength(index)))
    }

    // MARK: Branch cells

    @inline(__always) func branchKeyLength(_ index: Int) -> Int { u16(slot(index) + 8) }
    @inline(__always) func branchKeyPointer(_ index: Int) -> UnsafeRawPointer {
        UnsafeRawPointer(bytes + slot(index) + BranchCell.headerSize)
    }
    func branchKey(_ index: Int) -> [UInt8] {
        Array(UnsafeRawBufferPointer(start: branchKeyPointer(index), count: branchKeyLength(index)))
    }
    /// Child `index` of a branch: 0 is the leftmost (the link), `i` is cell `i - 1`'s.
    @inline(__always) func child(_ index: Int) -> UInt64 {
        index == 0 ? link : u64(slot(index - 1))
    }
    @inline(__always) func setChild(_ index: Int, _ page: UInt64) {
        if index == 0 { link = page } else { setU64(slot(index - 1), page) }
    }

    /// Size of the cell at `offset` on this page, by kind.
    @inline(__always) func cellSize(atOffset offset: Int) -> Int {
        if isLeaf {
            let payload = u8(offset + 2) & 1 == 1 ? 8 : u32(offset + 3)
            return LeafCell.headerSize + u16(offset) + payload
        }
        return BranchCell.headerSize + u16(offset + 8)
    }

    @inline(__always) func cellBytes(_ index: Int) -> UnsafeRawBufferPointer {
        let offset = slot(index)
        return UnsafeRawBufferPointer(start: bytes + offset, count: cellSize(atOffset: offset))
    }

    // MARK: Search

    /// Child `index` of a committed branch, from the search table (no header or cell read).
    @inline(__always) func tableChild(_ index: Int) -> UInt64 {
        guard let prefixes else { return child(index) }
        return prefixes[tableCount + index]
    }

    /// The offset of leaf cell `index`: from the search table when the page has one.
    @inline(__always) func leafCellOffset(_ index: Int) -> Int {
        guard let prefixes else { return slot(index) }
        return Int(truncatingIfNeeded: prefixes[tableCount + index])
    }

    /// The first index whose key is >= `key`, and whether it is equal.
    @inline(__always)
    func leafLowerBound(_ key: UnsafeRawPointer, _ keyCount: Int) -> (index: Int, found: Bool) {
        if let prefixes { return tableLeafSearch(bytes, prefixes, tableCount, key, keyCount) }
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) >> 1
            let offset = slot(middle)
            let order = compareKeys(bytes + offset + LeafCell.headerSize, u16(offset), key, keyCount)
            if order < 0 {
                low = middle + 1
            } else if order > 0 {
                high = middle
            } else {
                return (middle, true)
            }
        }
        return (low, false)
    }

    /// The child index under which `key` lives: the number of separators <= key.
    @inline(__always)
    func branchChildIndex(_ key: UnsafeRawPointer, _ keyCount: Int) -> Int {
        if let prefixes { return tableBranchSearch(bytes, prefixes, tableCount, key, keyCount) }
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) >> 1
            let offset = slot(middle)
            if compareKeys(bytes + offset + BranchCell.headerSize, u16(offset + 8), key, keyCount) <= 0 {
                low = middle + 1
            } else {
                high = middle
            }
        }
        return low
    }

    // MARK: Space

    var contiguousFree: Int { contentStart - PageHeader.size - 2 * count }

    /// Slot and cell bytes in use.
    var liveBytes: Int {
        var total = 2 * count
        for index in 0..<count { total += cellSize(atOffset: slot(index)) }
        return total
    }

    /// Whether ``liveBytes`` is below `bound`, summing only until the bound is reached:
    /// the check after every removal, where a well-filled page answers after a few cells.
    func hasLiveBytes(below bound: Int) -> Bool {
        var total = 2 * count
        var index = 0
        while index < count, total < bound {
            total += cellSize(atOffset: slot(index))
            index += 1
        }
        return total < bound
    }

    // MARK: Mutation (dirty pages only)

    /// Inserts a cell of `size` bytes at `index`, filled by `fill`; compacts first when the
    /// free bytes are fragmented. Returns false when it does not fit.
    @inline(__always)
    func insertCell(at index: Int, size: Int, _ fill: (UnsafeMutableRawPointer) -> Void) -> Bool {
        if contiguousFree < size + 2 {
            guard size + 2 <= self.size - PageHeader.size - liveBytes else { return false }
            compact()
        }
        let offset = contentStart - size
        fill(bytes + offset)
        let slots = bytes + PageHeader.size
        if index < count {
            (slots + 2 * (index + 1)).copyMemory(from: slots + 2 * index, byteCount: 2 * (count - index))
        }
        setSlot(index, offset)
        contentStart = offset
        count += 1
        return true
    }

    /// Removes cell `index`; its bytes become a hole until compaction.
    func removeCell(at index: Int) {
        let offset = slot(index)
        let slots = bytes + PageHeader.size
        if index + 1 < count {
            (slots + 2 * index).copyMemory(from: slots + 2 * (index + 1), byteCount: 2 * (count - index - 1))
        }
        count -= 1
        if offset == contentStart { contentStart = offset + cellSize(atOffset: offset) }
        if count == 0 { contentStart = size }
    }

    /// Packs the cells at the end of the page, removing holes.
    func compact() {
        let scratch = copy()
        rebuild(from: scratch, range: 0..<scratch.count, extra: nil)
    }

    /// Rewrites this page's cells as `source`'s cells in `range`, then `extra` cells, keeping
    /// the header's kind, number, transaction and link.
    func rebuild(from source: Page, range: Range<Int>, extra: [UnsafeRawBufferPointer]?) {
        var offset = size
        var index = 0
        for sourceIndex in range {
            let cell = source.cellBytes(sourceIndex)
            offset -= cell.count
            (bytes + offset).copyMemory(from: cell.baseAddress!, byteCount: cell.count)
            setSlot(index, offset)
            index += 1
        }
        for cell in extra ?? [] {
            offset -= cell.count
            (bytes + offset).copyMemory(from: cell.baseAddress!, byteCount: cell.count)
            setSlot(index, offset)
            index += 1
        }
        count = index
        contentStart = offset
    }

    /// Appends cells (each a complete cell image) after the existing ones; the caller has
    /// checked they fit.
    func appendCells(_ cells: [UnsafeRawBufferPointer]) {
        for cell in cells {
            let ok = insertCell(at: count, size: cell.count) {
                $0.copyMemory(from: cell.baseAddress!, byteCount: cell.count)
            }
            precondition(ok, "appendCells: caller checked the cells fit")
        }
    }
}

/// Writes a leaf cell at `destination`.
@inline(__always)
func writeLeafCell(
    _ destination: UnsafeMutableRawPointer, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer,
    overflowPage: UInt64?, valueLength: Int
) {
    destination.storeBytes(of: UInt16(key.count).littleEndian, as: UInt16.self)
    destination.storeBytes(of: overflowPage == nil ? 0 : 1, toByteOffset: 2, as: UInt8.self)
    destination.storeBytes(of: UInt32(valueLength).littleEndian, toByteOffset: 3, as: UInt32.self)
    if key.count > 0 { (destination + LeafCell.headerSize).copyMemory(from: key.baseAddress!, byteCount: key.count) }
    let payload = destination + LeafCell.headerSize + key.count
    if let overflowPage {
        payload.storeBytes(of: overflowPage.littleEndian, as: UInt64.self)
    } else if value.count > 0 {
        payload.copyMemory(from: value.baseAddress!, byteCount: value.count)
    }
}

/// Writes a branch cell at `destination`.
@inline(__always)
func writeBranchCell(_ destination: UnsafeMutableRawPointer, child: UInt64, key: UnsafeRawBufferPointer) {
    destination.storeBytes(of: child.littleEndian, as: UInt64.self)
    destination.storeBytes(of: UInt16(key.count).littleEndian, toByteOffset: 8, as: UInt16.self)
    if key.count > 0 { (destination + BranchCell.headerSize).copyMemory(from: key.baseAddress!, byteCount: key.count) }
}
