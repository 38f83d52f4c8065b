import Testing

@testable import StorageEngine

/// P1 (SPEC.md §2.1): a page's structure is checked before any cell of it is read.
@Suite struct PageValidationTests {
    /// A leaf whose one cell claims an overflow value while its key runs past the page:
    /// the overflow reference lies outside the page, and validation must say so without
    /// reading it (it read the 8 bytes past the key first, outside the page's memory).
    @Test func anOverflowCellRunningPastThePageIsCorruptWithoutReadingPastIt() {
        let page = Page(size: 512)
        page.format(.leaf, number: 1)
        let offset = 500
        page.setU16(offset + LeafCell.keyLengthOffset, 4_000)
        page.setU8(offset + LeafCell.flagsOffset, LeafCell.overflowFlag)
        page.setU32(offset + LeafCell.valueLengthOffset, 10_000)
        page.setSlot(0, offset)
        page.count = 1
        page.contentStart = offset
        let error = #expect(throws: StorageError.self) { try page.validateStructure(label: 1) }
        #expect(error?.code == .corrupt)
        #expect(error?.message.contains("runs past the end") == true)
    }

    /// SPEC.md §2.2 B1 and §5: the longest key for a page size.
    @Test func theKeyLimitIsTheSpecs() {
        for pageSize in [512, 1_024, 4_096, 16_384, 65_536] {
            let maximumCell = (pageSize - 40) / 4 - 2
            #expect(Geometry(pageSize: pageSize).maximumKey == min(1_024, maximumCell - 18))
        }
        #expect(Geometry(pageSize: 4_096).maximumKey == 994)
        #expect(Geometry(pageSize: 512).maximumKey == 98)
    }
}
