// IndexPath's row, section and item, as UIKit and AppKit declare them.
import Foundation
import OpenCoreData
import Testing

@Suite struct IndexPathTableViewTests {
    @Test func rowAndSection() {
        var path = IndexPath(row: 3, section: 1)
        #expect(path.section == 1 && path.row == 3 && path.item == 3)
        #expect(path == IndexPath(indexes: [1, 3]) && path.count == 2)
        path.row = 4
        path.section = 0
        #expect(path == IndexPath(row: 4, section: 0))
        #expect(IndexPath(row: 0, section: 1) > IndexPath(row: 9, section: 0), "sections order first")
    }

    @Test func itemAndSection() {
        var path = IndexPath(item: 7, section: 2)
        #expect(path.item == 7 && path.section == 2 && path.row == 7)
        path.item = 1
        #expect(path == IndexPath(item: 1, section: 2) && path == IndexPath(row: 1, section: 2))
    }
}
