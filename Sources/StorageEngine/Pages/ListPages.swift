// The pages that hold lists rather than tree nodes (SPEC.md §2.2). After the 40-byte
// header (Page.swift):
//
//   overflow page (kind 3): count 0; content start = payload bytes; link = next page of
//   the chain (0 = end)
//   offset size field
//       40    . payload: the next part of the value
//
//   free-list page (kind 4): count = entries; link = next page of the chain (0 = end)
//   offset size field
//       40   16 × count entries:
//                 0  8  page
//                 8  8  freedAt (the transaction that stopped reaching it; 0 = reusable at once)
//
//   free record (kind 5, page number 0; format-1 logs only, §2.3): count = entries
//   offset size field
//       40    8 × count u64 page numbers

/// Overflow page layout.
enum OverflowPage {
    static let payloadOffset = PageHeader.size

    /// Value bytes one overflow page holds.
    static func capacity(pageSize: Int) -> Int { pageSize - payloadOffset }
}

/// Free-list page layout.
enum FreeListPage {
    static let entriesOffset = PageHeader.size
    static let entrySize = 16
    /// Offsets inside an entry.
    static let pageOffset = 0
    static let freedAtOffset = 8

    /// Entries one free-list page holds.
    static func capacity(pageSize: Int) -> Int { (pageSize - entriesOffset) / entrySize }

    @inline(__always) static func offset(of index: Int) -> Int { entriesOffset + entrySize * index }
}

/// Free record page layout (format-1 logs).
enum FreeRecordPage {
    static let entriesOffset = PageHeader.size
    static let entrySize = 8

    /// Page numbers one free record page holds.
    static func capacity(pageSize: Int) -> Int { (pageSize - entriesOffset) / entrySize }

    @inline(__always) static func offset(of index: Int) -> Int { entriesOffset + entrySize * index }
}

extension Page {
    // MARK: Overflow pages

    /// An overflow page's part of the value.
    var overflowPayload: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: bytes + OverflowPage.payloadOffset, count: contentStart)
    }

    /// Makes this overflow page hold `count` bytes from `source`.
    func setOverflowPayload(_ source: UnsafeRawPointer, count: Int) {
        internalCheck(writeProblem(at: OverflowPage.payloadOffset, width: count))
        (bytes + OverflowPage.payloadOffset).copyMemory(from: source, byteCount: count)
        contentStart = count
    }

    // MARK: Free-list pages

    /// Entry `index` of a free-list page: (page, freedAt).
    func freeListEntry(_ index: Int) -> (page: UInt64, freedAt: UInt64) {
        let offset = FreeListPage.offset(of: index)
        return (u64(offset + FreeListPage.pageOffset), u64(offset + FreeListPage.freedAtOffset))
    }

    func setFreeListEntry(_ index: Int, page: UInt64, freedAt: UInt64) {
        let offset = FreeListPage.offset(of: index)
        setU64(offset + FreeListPage.pageOffset, page)
        setU64(offset + FreeListPage.freedAtOffset, freedAt)
    }

    // MARK: Free records (format 1)

    func freeRecordEntry(_ index: Int) -> UInt64 { u64(FreeRecordPage.offset(of: index)) }

    func setFreeRecordEntry(_ index: Int, _ page: UInt64) { setU64(FreeRecordPage.offset(of: index), page) }
}
