// One page in memory and its common 40-byte header (SPEC.md §2.1):
//
//   offset size field
//        0    8 checksum H(bytes 8..<pageSize, 0)
//        8    8 page number
//       16    8 transaction id that wrote it
//       24    1 kind (1 leaf, 2 branch, 3 overflow, 4 free list)
//       25    1 reserved, 0
//       26    2 count
//       28    4 content start (leaf/branch) or payload bytes (overflow)
//       32    8 link (branch: leftmost child; overflow, free list: next page)
//
// A `Page` owns `pageSize` bytes. Pages read from disk are validated once (P1) and then
// shared immutably through the page cache; a writer mutates only pages it allocated.
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
    static let count = 26
    static let contentStart = 28
    static let link = 32
    static let size = 40
}

/// A page-sized buffer. Unsafe accessors do not bounds-check: every offset they are
/// given has been validated (on load) or computed by the engine.
final class Page: @unchecked Sendable {
    let bytes: UnsafeMutableRawPointer
    let size: Int
    /// For immutable (committed) tree pages: each cell's first 8 key bytes as a big-endian
    /// integer, so a search compares integers in one small array instead of touching a
    /// scattered cell per probe. Nil on pages a writer may still change.
    /// Set once, before the page is shared, so reads need no exclusivity check.
    ///
    /// The table holds `count` prefixes, then for a leaf each cell's offset (`count`
    /// entries), for a branch each child page (`count + 1` entries, the leftmost first): a
    /// lookup on a committed page reads the table and the one cell it wants, never the
    /// header or the slot array (each a dependent cache miss on a cold page).
    @exclusivity(unchecked) private(set) var prefixes: UnsafeMutablePointer<UInt64>?
    /// The cell count and kind, copied next to ``prefixes`` when it is built.
    @exclusivity(unchecked) private(set) var tableCount = 0
    @exclusivity(unchecked) private(set) var tableIsLeaf = false

    /// A page of `size` bytes, zeroed unless the caller overwrites every byte next (a copy,
    /// a full read, or ``format(_:number:)``): clearing 4 KiB twice was a visible part of
    /// a small commit.
    init(size: Int, zeroed: Bool = true) {
        self.size = size
        bytes = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        if zeroed { memset(bytes, 0, size) }
    }

    deinit {
        bytes.deallocate()
        prefixes?.deallocate()
    }

    /// Builds ``prefixes`` for a validated leaf or branch page that will not change again.
    func buildPrefixes() {
        guard prefixes == nil, kindByte == PageKind.leaf.rawValue || kindByte == PageKind.branch.rawValue else {
            return
        }
        let count = self.count
        let table = UnsafeMutablePointer<UInt64>.allocate(capacity: 2 * count + 1)
        let leaf = isLeaf
        for index in 0..<count {
            let offset = slot(index)
            let keyOffset = leaf ? offset + LeafCell.headerSize : offset + BranchCell.headerSize
            let keyCount = leaf ? u16(offset) : u16(offset + 8)
            table[index] = keyPrefix(UnsafeRawPointer(bytes + keyOffset), keyCount)
            table[count + index + (leaf ? 0 : 1)] = leaf ? UInt64(offset) : u64(offset)
        }
        if !leaf { table[count] = link }
        tableCount = count
        tableIsLeaf = leaf
        prefixes = table
    }

    /// A copy of this page (for copy-on-write).
    func copy() -> Page {
        let page = Page(size: size, zeroed: false)
        page.bytes.copyMemory(from: bytes, byteCount: size)
        return page
    }

    @inline(__always) func u8(_ offset: Int) -> UInt8 { bytes.load(fromByteOffset: offset, as: UInt8.self) }
    @inline(__always) func u16(_ offset: Int) -> Int {
        Int(UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self)))
    }
    @inline(__always) func u32(_ offset: Int) -> Int {
        Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
    }
    @inline(__always) func u64(_ offset: Int) -> UInt64 {
        UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }
    @inline(__always) func setU8(_ offset: Int, _ value: UInt8) {
        bytes.storeBytes(of: value, toByteOffset: offset, as: UInt8.self)
    }
    @inline(__always) func setU16(_ offset: Int, _ value: Int) {
        bytes.storeBytes(of: UInt16(truncatingIfNeeded: value).littleEndian, toByteOffset: offset, as: UInt16.self)
    }
    @inline(__always) func setU32(_ offset: Int, _ value: Int) {
        bytes.storeBytes(of: UInt32(truncatingIfNeeded: value).littleEndian, toByteOffset: offset, as: UInt32.self)
    }
    @inline(__always) func setU64(_ offset: Int, _ value: UInt64) {
        bytes.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt64.self)
    }

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
        memset(bytes, 0, size)
        setU8(PageHeader.kind, kind.rawValue)
        self.number = number
        contentStart = size
    }

    /// Computes and stores the checksum; called once, when the page is written.
    func seal(transaction: UInt64) {
        self.transaction = transaction
        setU64(PageHeader.checksum, storedChecksumOfContents)
    }

    var storedChecksumOfContents: UInt64 {
        XXH64.hash(bytes + 8, count: size - 8, seed: 0)
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

    /// Checks that every count, offset and length inside the page stays inside it.
    func validateStructure(label: UInt64) throws {
        guard let kind = PageKind(rawValue: kindByte), u8(25) == 0 else {
            throw StorageError.corrupt("page \(label): unknown page kind \(kindByte)")
        }
        let count = self.count
        switch kind {
        case .leaf, .branch:
            let slotsEnd = PageHeader.size + 2 * count
            let start = contentStart
            guard slotsEnd <= start, start <= size else {
                throw StorageError.corrupt("page \(label): \(count) cells do not fit (content start \(start))")
            }
            if kind == .leaf {
                guard link == 0 else { throw StorageError.corrupt("page \(label): leaf with a link") }
            } else if link == 0 {
                throw StorageError.corrupt("page \(label): branch without a leftmost child")
            }
            for index in 0..<count {
                let offset = u16(PageHeader.size + 2 * index)
                guard offset >= start else {
                    throw StorageError.corrupt("page \(label): cell \(index) outside content")
                }
                let end: Int
                if kind == .leaf {
                    guard offset + LeafCell.headerSize <= size else {
                        throw StorageError.corrupt("page \(label): cell \(index) header past the end")
                    }
                    let flags = u8(offset + 2)
                    guard flags <= 1 else {
                        throw StorageError.corrupt("page \(label): cell \(index) has flags \(flags)")
                    }
                    let payload = flags == 1 ? 8 : u32(offset + 3)
                    end = offset + LeafCell.headerSize + u16(offset) + payload
                    if flags == 1 && u64(offset + LeafCell.headerSize + u16(offset)) == 0 {
                        throw StorageError.corrupt("page \(label): cell \(index) overflow page 0")
                    }
                } else {
                    guard offset + BranchCell.headerSize <= size else {
                        throw StorageError.corrupt("page \(label): cell \(index) header past the end")
                    }
                    end = offset + BranchCell.headerSize + u16(offset + 8)
                    if u64(offset) == 0 { throw StorageError.corrupt("page \(label): cell \(index) has child page 0") }
                }
                guard end <= size else { throw StorageError.corrupt("page \(label): cell \(index) runs past the end") }
            }
        case .overflow:
            guard count == 0, contentStart <= size - PageHeader.size else {
                throw StorageError.corrupt("page \(label): overflow payload of \(contentStart) bytes")
            }
        case .freeList:
            guard PageHeader.size + count * 16 <= size else {
                throw StorageError.corrupt("page \(label): \(count) free-list entries do not fit")
            }
        case .freeRecord:
            guard PageHeader.size + count * 8 <= size else {
                throw StorageError.corrupt("page \(label): \(count) free-record entries do not fit")
            }
        }
    }
}

/// Leaf cell layout: `u16 keyLength, u8 flags, u32 valueLength, key, payload`.
enum LeafCell {
    static let headerSize = 7
}

/// Branch cell layout: `u64 child, u16 keyLength, key`.
enum BranchCell {
    static let headerSize = 10
}

/// A key's first 8 bytes as a big-endian integer, zero-padded: ordering prefixes orders
/// keys, except that equal prefixes need a full comparison.
@inline(__always)
func keyPrefix(_ key: UnsafeRawPointer, _ count: Int) -> UInt64 {
    if count >= 8 { return UInt64(bigEndian: key.loadUnaligned(as: UInt64.self)) }
    var value: UInt64 = 0
    for index in 0..<count {
        value |= UInt64(key.load(fromByteOffset: index, as: UInt8.self)) << (56 - 8 * UInt64(index))
    }
    return value
}

/// Byte-wise comparison of two keys (memcmp order, a prefix first).
@inline(__always)
func compareKeys(_ left: UnsafeRawPointer, _ leftCount: Int, _ right: UnsafeRawPointer, _ rightCount: Int) -> Int {
    let common = min(leftCount, rightCount)
    if common > 0 {
        let result = memcmp(left, right, common)
        if result != 0 { return Int(result) }
    }
    return leftCount - rightCount
}
