// IndexPath's row, section and item, which UIKit (row, section) and AppKit (item,
// section) add on Apple platforms; Core Data's fetched results controller and the
// guides' table-view code use them.
import Foundation

extension IndexPath {
    /// An index path of two indexes, `section` then `row`, as UIKit makes for a table view.
    ///
    /// ```swift
    /// let path = IndexPath(row: 2, section: 0)   // [0, 2]
    /// ```
    public init(row: Int, section: Int) {
        self.init(indexes: [section, row])
    }

    /// An index path of two indexes, `section` then `item`, as UIKit and AppKit make for a
    /// collection view.
    public init(item: Int, section: Int) {
        self.init(indexes: [section, item])
    }

    /// The first index: the section of a table or collection view.
    ///
    /// The path must hold exactly two indexes (a programmer error otherwise, as in UIKit).
    public var section: Int {
        get { self[Self.checkedPosition(0, in: self)] }
        set { self[Self.checkedPosition(0, in: self)] = newValue }
    }

    /// The second index: the row in a table view's section.
    ///
    /// The path must hold exactly two indexes (a programmer error otherwise, as in UIKit).
    public var row: Int {
        get { self[Self.checkedPosition(1, in: self)] }
        set { self[Self.checkedPosition(1, in: self)] = newValue }
    }

    /// The second index: the item in a collection view's section.
    ///
    /// The path must hold exactly two indexes (a programmer error otherwise, as in UIKit).
    public var item: Int {
        get { self[Self.checkedPosition(1, in: self)] }
        set { self[Self.checkedPosition(1, in: self)] = newValue }
    }

    /// `position`, after checking that `path` is a two-index path.
    private static func checkedPosition(_ position: Int, in path: IndexPath) -> Int {
        precondition(
            path.count == 2,
            "Invalid index path for use with a table or collection view: it must contain exactly two indexes "
                + "(section and row or item), not \(path.count)")
        return position
    }
}
