// Searches over a committed page's search table (`Page.prefixes`): `count` big-endian key
// prefixes, then the leaf cell offsets or the branch's `count + 1` child pages. They take
// raw pointers so a reader's descent can run from `SearchSlot`s beside the page cache
// without touching (or reference counting) the page objects.

/// What a lookup needs of one cached committed page.
struct SearchSlot {
    var bytes: UnsafeRawPointer?
    var table: UnsafePointer<UInt64>?
    var count = 0
    var isLeaf = false

    init() {}

    /// The slot of `page`; empty unless the page has a search table.
    init(_ page: Page) {
        guard let prefixes = page.prefixes else { return }
        bytes = UnsafeRawPointer(page.bytes)
        table = UnsafePointer(prefixes)
        count = page.tableCount
        isLeaf = page.tableIsLeaf
    }
}

/// The first cell of a committed leaf whose key is >= `key`, and whether it is equal.
@inline(__always)
func tableLeafSearch(
    _ bytes: UnsafeRawPointer, _ table: UnsafePointer<UInt64>, _ count: Int, _ key: SearchKey
) -> (index: Int, found: Bool) {
    let probe = key.prefix
    let (low, high) = narrowByInterpolation(table, count: count, probe: probe)
    return lowerBound(low, high) { middle in
        tableOrder(table[middle], probe, key) {
            let cell = LeafCell(bytes + Int(truncatingIfNeeded: table[count + middle]))
            return (cell.keyStart, cell.keyLength)
        }
    }
}

/// The child index of a committed branch under which `key` lives: the number of separators <= key.
@inline(__always)
func tableBranchSearch(
    _ bytes: UnsafeRawPointer, _ table: UnsafePointer<UInt64>, _ count: Int, _ key: SearchKey
) -> Int {
    let probe = key.prefix
    let (low, high) = narrowByInterpolation(table, count: count, probe: probe)
    return upperBound(low, high) { middle in
        tableOrder(table[middle], probe, key) {
            let cell = BranchCell(bytes + bytes.u16(at: SlotArray.offset(of: middle)))
            return (cell.keyStart, cell.keyLength)
        }
    }
}

/// Orders `key` (whose prefix is `probe`) against a table entry: by the entry's `prefix`
/// where that decides, else by the whole key `cellKey` locates (start, length) in the cell.
@inline(__always)
func tableOrder(
    _ prefix: UInt64, _ probe: UInt64, _ key: SearchKey, _ cellKey: () -> (UnsafeRawPointer, Int)
) -> Int {
    if prefix < probe { return -1 }
    if prefix > probe { return 1 }
    let (start, length) = cellKey()
    return compareKeys(start, length, key)
}

/// Narrows a search range by interpolating `probe` between the first and last prefix,
/// then checking one more prefix nearby: integer keys (row ids) are often evenly spread,
/// and each prefix probe skipped is a cache miss saved. A prefix strictly below the
/// probe moves the low end past it; one strictly above moves the high end to it; equal
/// prefixes are left to the full comparison.
@inline(__always)
func narrowByInterpolation(_ prefixes: UnsafePointer<UInt64>, count: Int, probe: UInt64) -> (Int, Int) {
    guard count > 16 else { return (0, count) }
    let first = prefixes[0]
    let last = prefixes[count - 1]
    guard first < probe, probe < last else { return (0, count) }
    let fraction = Double(probe - first) / Double(last - first)
    let guess = min(count - 2, max(1, Int(fraction * Double(count - 1))))
    var low = 0
    var high = count
    let atGuess = prefixes[guess]
    if atGuess < probe {
        low = guess + 1
        let next = min(guess + 6, count - 1)
        if prefixes[next] > probe { high = next } else if prefixes[next] < probe { low = next + 1 }
    } else if atGuess > probe {
        high = guess
        let previous = max(guess - 6, 0)
        if prefixes[previous] < probe { low = previous + 1 } else if prefixes[previous] > probe { high = previous }
    }
    return (low, high)
}
