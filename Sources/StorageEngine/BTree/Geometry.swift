// Sizes derived from the page size (SPEC.md §2.2 B1, §5).

/// The limits and capacities of one page size.
struct Geometry: Sendable {
    let pageSize: Int
    /// Bytes available for slots and cells.
    let usable: Int
    /// The largest cell, so that any four fit in a page (B1).
    let maximumCell: Int
    /// The longest key (B1, §5).
    let maximumKey: Int
    /// Value bytes per overflow page.
    let overflowPayload: Int
    let freeListEntriesPerPage: Int

    init(pageSize: Int) {
        self.pageSize = pageSize
        usable = pageSize - PageHeader.size
        maximumCell = usable / 4 - SlotArray.slotSize
        maximumKey = min(1024, maximumCell - 18)
        overflowPayload = OverflowPage.capacity(pageSize: pageSize)
        freeListEntriesPerPage = FreeListPage.capacity(pageSize: pageSize)
    }

    /// Whether a value of `valueLength` with a key of `keyLength` is stored inline (B1).
    @inline(__always)
    func isInline(keyLength: Int, valueLength: Int) -> Bool {
        LeafCell.size(keyLength: keyLength, valueLength: valueLength, isOverflow: false) <= maximumCell
    }
}
