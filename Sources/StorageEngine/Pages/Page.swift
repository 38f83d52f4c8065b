// One page in memory and the 40-byte header every page but page 0 starts with
// (SPEC.md §2.1):
//
//   offset size field
//        0    8 checksum H(bytes 8..<pageSize, 0)
//        8    8 page number (its own position)
//       16    8 id of the transaction that wrote it
//       24    1 kind: 1 leaf, 2 branch, 3 overflow, 4 free list, 5 free record (log only)
//       25    1 reserved, 0
//       26    2 count (cells, or free-list entries)
//       28    4 leaf/branch: content start (offset of the lowest cell); overflow: payload bytes
//       32    8 link: branch: leftmost child; overflow and free list: next page (0 = end); leaf: 0
//
// What follows the header depends on the kind: Node.swift and Cells.swift (leaf, branch),
// ListPages.swift (overflow, free list, free record).
//
// A `Page` owns `pageSize` bytes. Pages read from disk are validated once (P1) and then
// shared immutably through the page cache; a writer mutates only pages it allocated.
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The kinds of page (byte 24 of the header).
enum PageKind: UInt8 {
    case leaf = 1
    case branch = 2
    case overflow = 3
    case freeList = 4
    /// A log-only page (page number 0) listing the pages a transaction freed.
    case freeRecord = 5
}

/// Offsets of the page header fields.
enum PageHeader {
    static let checksum = 0
    static let number = 8
    static let transaction = 16
    static let kind = 24
    static let reserved = 25
    static let count = 26
    static let contentStart = 28
    static let link = 32
    static let size = 40
}

/// A page-sized buffer. Accessors check bounds only in builds with internal checks: every
/// offset they are given has been validated (on load) or computed by the engine.
final class Page: @unchecked Sendable {
    let bytes: UnsafeMutableRawPointer
    let size: Int
    /// The search table's address once built (``prefixes``), 0 before: published with
    /// release ordering and read with acquire ordering, because a shared page gets its
    /// table lazily, while readers that do not hold the page store's lock may search it.
    private let searchTable = Atomic<UInt>(0)
    /// For immutable (committed) tree pages: each cell's first 8 key bytes as a big-endian
    /// integer, so a search compares integers in one small array instead of touching a
    /// scattered cell per probe. Nil on pages a writer may still change, and on committed
    /// pages no reader has searched under the page store's lock yet (``buildPrefixes()``):
    /// a page a writer published is usually copied again by the next commit before anyone
    /// searches it, and building its table then was wasted. A search without the table
    /// reads the slot array instead; the result is the same.
    ///
    /// The table holds `count` prefixes, then for a leaf each cell's offset (`count`
    /// entries), for a branch each child page (`count + 1` entries, the leftmost first): a
    /// lookup on a committed page reads the table and the one cell it wants, never the
    /// header or the slot array (each a dependent cache miss on a cold page).
    @inline(__always) var prefixes: UnsafeMutablePointer<UInt64>? {
        UnsafeMutablePointer(bitPattern: searchTable.load(ordering: .acquiring))
    }
    /// The cell count and kind, copied next to ``prefixes`` when it is built (written
    /// before the table is published, so a reader that sees the table sees them).
    @exclusivity(unchecked) private(set) var tableCount = 0
    @exclusivity(unchecked) private(set) var tableIsLeaf = false
    #if STORAGE_ENGINE_INTERNAL_CHECKS
        /// Set once others may read the page (it is cached, published or sealed): from then
        /// on it must not change (B4, SPEC.md §2.2).
        @exclusivity(unchecked) private(set) var isShared = false
    #endif

    /// A page of `size` bytes, zeroed unless the caller overwrites every byte next (a copy,
    /// a full read, or ``format(_:number:)``): clearing 4 KiB twice was a visible part of
    /// a small commit. The buffer comes from ``PageBufferPool`` and goes back to it.
    init(size: Int, zeroed: Bool = true) {
        self.size = size
        bytes = PageBufferPool.shared.take(size: size)
        if zeroed { memset(bytes, 0, size) }
    }

    deinit {
        PageBufferPool.shared.give(bytes, size: size)
        prefixes?.deallocate()
    }

    /// Builds ``prefixes`` for a validated leaf or branch page that will not change again.
    /// Callers hold the page store's lock (or own the page alone), so no two build at once;
    /// readers without the lock see either no table or the whole table.
    func buildPrefixes() {
        guard prefixes == nil, kindByte == PageKind.leaf.rawValue || kindByte == PageKind.branch.rawValue else {
            return
        }
        let count = self.count
        let table = UnsafeMutablePointer<UInt64>.allocate(capacity: 2 * count + 1)
        let leaf = isLeaf
        for index in 0..<count {
            if leaf {
                let offset = slot(index)
                table[index] = SearchKey(leafCell(atOffset: offset).key).prefix
                table[count + index] = UInt64(offset)
            } else {
                let cell = branchCell(index)
                table[index] = SearchKey(cell.key).prefix
                table[count + index + 1] = cell.child
            }
        }
        if !leaf { table[count] = link }
        tableCount = count
        tableIsLeaf = leaf
        searchTable.store(UInt(bitPattern: table), ordering: .releasing)
    }

    /// A copy of this page (for copy-on-write).
    func copy() -> Page {
        let page = Page(size: size, zeroed: false)
        page.bytes.copyMemory(from: bytes, byteCount: size)
        return page
    }

    @inline(__always) func u8(_ offset: Int) -> UInt8 { readable(offset, width: 1).u8(at: offset) }
    @inline(__always) func u16(_ offset: Int) -> Int { readable(offset, width: 2).u16(at: offset) }
    @inline(__always) func u32(_ offset: Int) -> Int { readable(offset, width: 4).u32(at: offset) }
    @inline(__always) func u64(_ offset: Int) -> UInt64 { readable(offset, width: 8).u64(at: offset) }
    @inline(__always) func setU8(_ offset: Int, _ value: UInt8) { writable(offset, width: 1).setU8(at: offset, value) }
    @inline(__always) func setU16(_ offset: Int, _ value: Int) { writable(offset, width: 2).setU16(at: offset, value) }
    @inline(__always) func setU32(_ offset: Int, _ value: Int) { writable(offset, width: 4).setU32(at: offset, value) }
    @inline(__always) func setU64(_ offset: Int, _ value: UInt64) {
        writable(offset, width: 8).setU64(at: offset, value)
    }

    /// The bytes, for a read of `width` bytes at `offset` (checked in builds with internal checks).
    @inline(__always) private func readable(_ offset: Int, width: Int) -> UnsafeRawPointer {
        checkRead(offset, width: width)
        return UnsafeRawPointer(bytes)
    }

    /// The bytes, for a write of `width` bytes at `offset` (checked in builds with internal checks).
    @inline(__always) private func writable(_ offset: Int, width: Int) -> UnsafeMutableRawPointer {
        checkWrite(offset, width: width)
        return bytes
    }

    /// P1 on every field read, in builds with internal checks; nothing otherwise. The
    /// condition is tested inline: it runs on every field access.
    @inline(__always) private func checkRead(_ offset: Int, width: Int) {
        #if STORAGE_ENGINE_INTERNAL_CHECKS
            if offset < 0 || offset + width > size { fieldCheckFailed(at: offset, width: width) }
        #endif
    }

    /// P1 and B4 on every field write, in builds with internal checks; nothing otherwise.
    @inline(__always) private func checkWrite(_ offset: Int, width: Int) {
        #if STORAGE_ENGINE_INTERNAL_CHECKS
            if offset < 0 || offset + width > size || isShared { fieldCheckFailed(at: offset, width: width) }
        #endif
    }

    // MARK: Internal checks

    /// Marks the page as read by others from now on: cached, published or sealed (B4).
    @inline(__always) func markShared() {
        #if STORAGE_ENGINE_INTERNAL_CHECKS
            isShared = true
        #endif
    }

    /// Whether the page is final: sealed (or shared, which a writer's page is only once
    /// sealed). Builds without internal checks do not track it and answer true.
    var isSealed: Bool {
        #if STORAGE_ENGINE_INTERNAL_CHECKS
            return isShared
        #else
            return true
        #endif
    }

    /// The problem with a field of `width` bytes at `offset`: outside the page (P1).
    func fieldProblem(at offset: Int, width: Int) -> String? {
        guard offset < 0 || offset + width > size else { return nil }
        return "P1: a \(width)-byte field at \(offset) lies outside the \(size)-byte page"
    }

    /// The problem with changing the page now: others may read it (B4). Only builds with
    /// internal checks know.
    var sharedWriteProblem: String? {
        #if STORAGE_ENGINE_INTERNAL_CHECKS
            if isShared {
                return "B4: page \(UnsafeRawPointer(bytes).u64(at: PageHeader.number)) changed after it was shared"
            }
        #endif
        return nil
    }

    /// The problem with writing `width` bytes at `offset`: outside the page, or shared.
    func writeProblem(at offset: Int, width: Int) -> String? {
        fieldProblem(at: offset, width: width) ?? sharedWriteProblem
    }

    #if STORAGE_ENGINE_INTERNAL_CHECKS
        /// Traps on ``writeProblem(at:width:)`` (which includes ``fieldProblem(at:width:)``).
        /// The accessors test the condition inline: they run on every field access.
        @inline(never) func fieldCheckFailed(at offset: Int, width: Int) -> Never {
            internalCheckFailed(writeProblem(at: offset, width: width) ?? "")
        }
    #endif

    var number: UInt64 {
        get { u64(PageHeader.number) }
        set { setU64(PageHeader.number, newValue) }
    }
    var transaction: UInt64 {
        get { u64(PageHeader.transaction) }
        set { setU64(PageHeader.transaction, newValue) }
    }
    var kindByte: UInt8 { u8(PageHeader.kind) }
    var isLeaf: Bool { u8(PageHeader.kind) == PageKind.leaf.rawValue }
    var count: Int {
        get { u16(PageHeader.count) }
        set { setU16(PageHeader.count, newValue) }
    }
    var contentStart: Int {
        get { u32(PageHeader.contentStart) }
        set { setU32(PageHeader.contentStart, newValue) }
    }
    var link: UInt64 {
        get { u64(PageHeader.link) }
        set { setU64(PageHeader.link, newValue) }
    }

    /// Clears the page and sets up an empty page of `kind` numbered `number`.
    func format(_ kind: PageKind, number: UInt64) {
        internalCheck(sharedWriteProblem)
        memset(bytes, 0, size)
        setU8(PageHeader.kind, kind.rawValue)
        self.number = number
        contentStart = size
    }

    /// Computes and stores the checksum; called once, when the page is written.
    ///
    /// A leaf's or branch's free space (between its slot array and its content start,
    /// bytes SPEC.md §2.2 gives no meaning) is cleared first: the checksum is the same
    /// XXH64 over the whole page, computed faster over known zeros, and a small commit's
    /// pages are mostly free space.
    func seal(transaction: UInt64) {
        internalCheck(structureProblem)
        self.transaction = transaction
        setU64(PageHeader.checksum, clearingFreeSpaceChecksum())
        markShared()
    }

    /// Clears a tree page's free space and returns ``storedChecksumOfContents``.
    private func clearingFreeSpaceChecksum() -> UInt64 {
        let kind = kindByte
        guard kind == PageKind.leaf.rawValue || kind == PageKind.branch.rawValue else {
            return storedChecksumOfContents
        }
        let (start, end) = (SlotArray.offset(of: count), contentStart)
        guard start < end, end <= size else { return storedChecksumOfContents }
        // In pieces below glibc's `rep stosb` threshold (2 KiB): vector stores, as fast, and
        // counted as the instructions they are by callgrind (which counts a `rep stosb` once
        // per byte, more than the checksum saves).
        var offset = start
        while offset < end {
            let piece = min(end - offset, 1_024)
            memset(bytes + offset, 0, piece)
            offset += piece
        }
        return XXH64.hash(
            bytes + PageHeader.number, count: size - PageHeader.number, seed: 0,
            zeroes: (start - PageHeader.number)..<(end - PageHeader.number))
    }

    var storedChecksumOfContents: UInt64 {
        XXH64.hash(bytes + PageHeader.number, count: size - PageHeader.number, seed: 0)
    }

    var storedChecksum: UInt64 { u64(PageHeader.checksum) }

    /// Validates the page as read from disk for page `number` (P1); throws `corrupt`.
    func validate(number expected: UInt64, maximumTransaction: UInt64) throws {
        guard storedChecksum == storedChecksumOfContents else {
            throw StorageError.corrupt("page \(expected): checksum mismatch")
        }
        guard number == expected else {
            throw StorageError.corrupt("page \(expected): holds page number \(number)")
        }
        guard transaction <= maximumTransaction else {
            throw StorageError.corrupt(
                "page \(expected): written by transaction \(transaction), newer than \(maximumTransaction)")
        }
        try validateStructure(label: expected)
    }

    /// What ``validateStructure(label:)`` finds wrong with a page this process built (P1):
    /// a page the engine writes must pass what it demands of pages it reads.
    var structureProblem: String? {
        do {
            try validateStructure(label: UnsafeRawPointer(bytes).u64(at: PageHeader.number))
            return nil
        } catch {
            return "P1: \(error)"
        }
    }

    /// Checks that every count, offset and length inside the page stays inside it.
    func validateStructure(label: UInt64) throws {
        guard let kind = PageKind(rawValue: kindByte), u8(PageHeader.reserved) == 0 else {
            throw StorageError.corrupt("page \(label): unknown page kind \(kindByte)")
        }
        let count = self.count
        switch kind {
        case .leaf, .branch:
            let start = contentStart
            guard SlotArray.offset(of: count) <= start, start <= size else {
                throw StorageError.corrupt("page \(label): \(count) cells do not fit (content start \(start))")
            }
            if kind == .leaf {
                guard link == 0 else { throw StorageError.corrupt("page \(label): leaf with a link") }
            } else if link == 0 {
                throw StorageError.corrupt("page \(label): branch without a leftmost child")
            }
            for index in 0..<count {
                let offset = slot(index)
                guard offset >= start else {
                    throw StorageError.corrupt("page \(label): cell \(index) outside content")
                }
                if kind == .leaf {
                    guard offset + LeafCell.headerSize <= size else {
                        throw StorageError.corrupt("page \(label): cell \(index) header past the end")
                    }
                    let cell = leafCell(atOffset: offset)
                    guard cell.flags <= LeafCell.overflowFlag else {
                        throw StorageError.corrupt("page \(label): cell \(index) has flags \(cell.flags)")
                    }
                    // The end is checked before the overflow reference is read: it may lie past the page.
                    guard offset + cell.size <= size else {
                        throw StorageError.corrupt("page \(label): cell \(index) runs past the end")
                    }
                    if cell.isOverflow && cell.overflowPage == 0 {
                        throw StorageError.corrupt("page \(label): cell \(index) overflow page 0")
                    }
                } else {
                    guard offset + BranchCell.headerSize <= size else {
                        throw StorageError.corrupt("page \(label): cell \(index) header past the end")
                    }
                    let cell = BranchCell(bytes + offset)
                    if cell.child == 0 { throw StorageError.corrupt("page \(label): cell \(index) has child page 0") }
                    guard offset + cell.size <= size else {
                        throw StorageError.corrupt("page \(label): cell \(index) runs past the end")
                    }
                }
            }
        case .overflow:
            guard count == 0, contentStart <= OverflowPage.capacity(pageSize: size) else {
                throw StorageError.corrupt("page \(label): overflow payload of \(contentStart) bytes")
            }
        case .freeList:
            guard count <= FreeListPage.capacity(pageSize: size) else {
                throw StorageError.corrupt("page \(label): \(count) free-list entries do not fit")
            }
        case .freeRecord:
            guard count <= FreeRecordPage.capacity(pageSize: size) else {
                throw StorageError.corrupt("page \(label): \(count) free-record entries do not fit")
            }
        }
    }
}
