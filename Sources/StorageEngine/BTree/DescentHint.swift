// Where a tree's last reader lookup went down, so the next one can start there.
//
// Lookups in one read transaction often come in ascending key order: a batch of faults
// reads its rows sorted by key, members of one to-many lie a leaf or two apart. Each
// lookup searched every branch on its way down from scratch (an interpolation and a
// bisection of the separators, ~200 instructions a level), though the child it takes is
// usually the one the previous lookup took or the next. A hint remembers, per branch
// level, the page searched and the child taken; the next search of that page checks the
// hinted child's bounds first (one or two prefix comparisons) and falls back to the full
// search when the key lies elsewhere. The result never depends on the hint: the bounds
// are checked against the page itself, so a stale or foreign hint only costs the check.

/// The branch pages and children of a tree's previous reader lookup, for its first
/// levels; kept in the tree's transaction state (one thread at a time).
struct DescentHint {
    /// Levels remembered; deeper levels (trees of billions of rows) search in full.
    static let levels = 3

    private var page0: UInt64 = 0
    private var child0 = 0
    private var page1: UInt64 = 0
    private var child1 = 0
    private var page2: UInt64 = 0
    private var child2 = 0

    /// The child taken at `level` last time when that level's page was `page`; nil otherwise.
    @inline(__always)
    func child(atLevel level: Int, of page: UInt64) -> Int? {
        switch level {
        case 0: page0 == page ? child0 : nil
        case 1: page1 == page ? child1 : nil
        case 2: page2 == page ? child2 : nil
        default: nil
        }
    }

    /// Records that the descent took `child` of `page` at `level`.
    @inline(__always)
    mutating func record(_ child: Int, atLevel level: Int, of page: UInt64) {
        switch level {
        case 0: (page0, child0) = (page, child)
        case 1: (page1, child1) = (page, child)
        case 2: (page2, child2) = (page, child)
        default: break
        }
    }
}

/// ``tableBranchSearch(_:_:_:_:)`` starting at child `hint` when there is one: the same
/// child index for every hint, found with a comparison or a few when `key` lies under the
/// hinted child or one of the next two.
@inline(__always)
func tableBranchSearch(
    _ bytes: UnsafeRawPointer, _ table: UnsafePointer<UInt64>, _ count: Int, _ key: SearchKey, from hint: Int?
) -> Int {
    guard let hint, hint >= 0, hint <= count else { return tableBranchSearch(bytes, table, count, key) }
    let probe = key.prefix
    // The order of `key` against separator `position` (negative: the separator sorts first).
    let order = { (position: Int) -> Int in
        tableOrder(table[position], probe, key) {
            let cell = BranchCell(bytes + bytes.u16(at: SlotArray.offset(of: position)))
            return (cell.keyStart, cell.keyLength)
        }
    }
    // Child `hint` holds the keys from separator `hint - 1` (inclusive) to separator `hint`.
    guard hint == 0 || order(hint - 1) <= 0 else { return tableBranchSearch(bytes, table, count, key) }
    // The key is under child `hint` or later: a few steps right, else the full search.
    var child = hint
    let last = min(count, hint + hintSteps)
    while child < last, order(child) <= 0 { child += 1 }
    return child < last || last == count ? child : tableBranchSearch(bytes, table, count, key)
}

/// Separators a hinted search steps over before it searches in full: ascending lookups
/// one or two leaves apart (members of one to-many) stay within them.
let hintSteps = 3
