// A sorted fetch with a limit that no index walks in sort order (a string sort key, or
// an unindexed one): the store keeps the best `limit` matching rows in a bounded heap
// while it scans, comparing their encoded sort slots, and decodes only those rows
// (SPEC.md §3.5 Q6). The context then skips its own sort.
//
// The order must be the context's exactly (CompiledSortDescriptors, a stable sort of
// rows in key order): nil first ascending, integers by value, dates by their seconds,
// ASCII strings with `compare:` by their bytes (Swift's String order for ASCII) — and
// ties by primary key. A sort this cannot reproduce (a key path, a comparator, another
// selector, another type, a string beyond ASCII, a NaN date) takes the full path.
import Foundation
import StorageEngine

extension PageFileStore {
    /// Appends to `result` the `limit` leading rows of `entity` matching the request's
    /// predicate in the order of its sort descriptors, sorted; false, with `result`
    /// untouched, when the sort cannot be done on encoded rows.
    func collectTopRows(
        of entity: NSEntityDescription, request: NSFetchRequest<NSFetchRequestResult>, limit: Int,
        in transaction: ReadTransaction, codec: PageFileRowCodec, intoSlots: Bool = false,
        into result: inout [StoreRow]
    ) throws -> Bool {
        guard let order = PageFileEncodedSortOrder(request.sortDescriptors ?? [], layout: entity.layout), limit > 0
        else { return false }
        var heap = PageFileTopRowHeap(order: order, capacity: limit)
        var offsets: [Int] = []
        let leading: [PageFileTopRowHeap.Entry]
        do {
            try matchEncodedRows(of: entity, predicate: request.predicate, in: transaction, codec: codec) {
                bytes, primary, _ in
                try PageFileRowCodec.slotOffsets(bytes, into: &offsets)
                guard try heap.offer(bytes, offsets: offsets, primary: primary) else {
                    throw PageFileEncodedSortOrder.Unsupported()
                }
            }
            leading = try heap.sorted()
        } catch is PageFileEncodedSortOrder.Unsupported {
            return false
        }
        for entry in leading {
            let row = try entry.bytes.withUnsafeBytes {
                try decodedRow($0, primary: entry.primary, entity: entity, codec: codec, intoSlots: intoSlots)
            }
            result.append(row)
        }
        return true
    }
}

/// The order of a request's sort descriptors over the encoded slots of one entity's rows.
struct PageFileEncodedSortOrder {
    /// Thrown out of a scan to abandon the encoded sort for the full path.
    struct Unsupported: Error {}

    struct Step {
        let slot: Int
        let type: NSAttributeType
        let ascending: Bool
    }

    let steps: [Step]

    /// The order of `descriptors`; nil when one of them is not a `compare:` of an integer,
    /// boolean, date or string attribute named by its key.
    init?(_ descriptors: [NSSortDescriptor], layout: EntityLayout) {
        guard !descriptors.isEmpty else { return nil }
        var steps: [Step] = []
        for descriptor in descriptors {
            guard descriptor.comparator == nil, descriptor.comparison == .compare, let key = descriptor.key,
                let slot = layout.slotsByName[key], slot < layout.attributeBySlot.count,
                let attribute = layout.attributeBySlot[slot]
            else { return nil }
            switch attribute.attributeType {
            case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .booleanAttributeType,
                .dateAttributeType, .stringAttributeType:
                steps.append(Step(slot: slot, type: attribute.attributeType, ascending: descriptor.ascending))
            default: return nil
            }
        }
        self.steps = steps
    }

    /// One sort value read from a row: what the context's sort compares. A string is the
    /// range of its bytes in the buffer it was read from, checked to be ASCII when read.
    enum Value {
        case null
        case integer(Int64)
        case seconds(Double)
        case text(start: Int, count: Int)
    }

    /// Appends to `values` the sort values of the row `bytes` (slots at `offsets`), one per
    /// step, string ranges shifted by `base` (where `bytes` starts in the buffer the
    /// comparisons read).
    ///
    /// - Throws: ``Unsupported`` for a value this order does not compare (a string beyond
    ///   ASCII, a NaN date): the full path sorts the fetch instead.
    func appendValues(
        of bytes: UnsafeRawBufferPointer, offsets: [Int], base: Int, to values: inout [Value]
    ) throws {
        for step in steps {
            // A row written before the entity gained the attribute holds no slot for it: nil.
            guard step.slot < offsets.count else {
                values.append(.null)
                continue
            }
            values.append(try Self.value(bytes, at: offsets[step.slot], step, base: base))
        }
    }

    /// The value of `step` at `offset` of `bytes`.
    private static func value(_ bytes: UnsafeRawBufferPointer, at offset: Int, _ step: Step, base: Int) throws
        -> Value
    {
        guard offset < bytes.count else { return .null }
        let tag = bytes[offset]
        if tag == PageFileRowCodec.Tag.null.rawValue { return .null }
        switch step.type {
        case .stringAttributeType:
            guard let text = PageFileRowCodec.stringBytes(bytes, at: offset) else { throw Unsupported() }
            // Beyond ASCII, Swift's String order is not one a heap can keep: strings not in
            // NFC compare inconsistently ("e\u{301}" is neither below nor above "\u{E9}K",
            // yet equals "\u{E9}", which is below it), so the context's sort of them
            // depends on its algorithm. Only the full path gives its answer.
            guard !text.contains(where: { $0 >= 0x80 }) else { throw Unsupported() }
            guard let start = text.baseAddress, let origin = bytes.baseAddress, !text.isEmpty else {
                return .text(start: base, count: 0)
            }
            return .text(start: base + (start - origin), count: text.count)
        case .dateAttributeType:
            guard let seconds = PageFileEncodedClause.dateSeconds(bytes, offset, tag), !seconds.isNaN else {
                throw Unsupported()
            }
            return .seconds(seconds)
        default:
            guard let integer = PageFileEncodedClause.attributeInteger(bytes, offset, tag, type: step.type) else {
                throw Unsupported()
            }
            return .integer(integer)
        }
    }

    /// Whether the row whose values are `first` (strings in `firstBytes`), key `firstKey`,
    /// sorts before the row of `second`: the values are the steps' in order.
    ///
    /// - Throws: ``Unsupported`` for two values of different kinds.
    func precedes(
        _ first: ArraySlice<Value>, in firstBytes: UnsafeRawBufferPointer, _ firstKey: Int64,
        _ second: ArraySlice<Value>, in secondBytes: UnsafeRawBufferPointer, _ secondKey: Int64
    ) throws -> Bool {
        var a = first.startIndex
        var b = second.startIndex
        for step in steps {
            let order = try Self.order(first[a], firstBytes, second[b], secondBytes)
            if order != 0 { return step.ascending ? order < 0 : order > 0 }
            a += 1
            b += 1
        }
        return firstKey < secondKey
    }

    /// -1, 0 or 1 as `a` sorts before, with or after `b` ascending.
    private static func order(
        _ a: Value, _ aBytes: UnsafeRawBufferPointer, _ b: Value, _ bBytes: UnsafeRawBufferPointer
    ) throws -> Int {
        switch (a, b) {
        case (.null, .null): return 0
        case (.null, _): return -1
        case (_, .null): return 1
        case (.integer(let x), .integer(let y)): return x == y ? 0 : (x < y ? -1 : 1)
        case (.seconds(let x), .seconds(let y)): return x == y ? 0 : (x < y ? -1 : 1)
        case (.text(let xStart, let xCount), .text(let yStart, let yCount)):
            // ASCII (checked when read): Swift's order is the bytes' order.
            let common = min(xCount, yCount)
            var index = 0
            while index < common {
                let (p, q) = (aBytes[xStart + index], bBytes[yStart + index])
                if p != q { return p < q ? -1 : 1 }
                index += 1
            }
            return xCount == yCount ? 0 : (xCount < yCount ? -1 : 1)
        default: throw Unsupported()
        }
    }
}

/// The best `capacity` rows offered so far, as copies of their bytes: a max-heap whose
/// top is the worst kept row, so a row that does not beat it costs one comparison.
///
/// Each kept row's sort values are read once, when it is offered; the heap orders slot
/// numbers, so sifting moves integers, and the kept bytes live in one buffer (compacted
/// when replaced rows fill most of it).
struct PageFileTopRowHeap {
    struct Entry {
        let bytes: [UInt8]
        let primary: Int64
    }

    /// Where a kept row's bytes lie in `kept`, and its key.
    private struct Kept {
        var start: Int
        let count: Int
        let primary: Int64
    }

    private let order: PageFileEncodedSortOrder
    private let capacity: Int
    private let width: Int
    /// The kept rows' bytes, appended as rows are kept.
    private var kept: [UInt8] = []
    /// The bytes of `kept` that belong to rows still kept.
    private var liveBytes = 0
    private var rows: [Kept] = []
    /// `width` values per slot, the slot's row's sort values.
    private var values: [PageFileEncodedSortOrder.Value] = []
    /// Slot numbers, the worst row's first.
    private var heap: [Int] = []
    /// The offered row's values, reused.
    private var offered: [PageFileEncodedSortOrder.Value] = []

    init(order: PageFileEncodedSortOrder, capacity: Int) {
        self.order = order
        self.capacity = capacity
        width = order.steps.count
    }

    private func valuesOf(_ slot: Int) -> ArraySlice<PageFileEncodedSortOrder.Value> {
        values[slot * width..<(slot + 1) * width]
    }

    /// Whether the row of slot `a` sorts before the row of slot `b`.
    private func precedes(_ a: Int, _ b: Int, in bytes: UnsafeRawBufferPointer) throws -> Bool {
        try order.precedes(valuesOf(a), in: bytes, rows[a].primary, valuesOf(b), in: bytes, rows[b].primary)
    }

    /// Keeps the row `bytes` when it is among the best; false when its sort values are not
    /// ones the order compares.
    mutating func offer(_ bytes: UnsafeRawBufferPointer, offsets: [Int], primary: Int64) throws -> Bool {
        do {
            offered.removeAll(keepingCapacity: true)
            try order.appendValues(of: bytes, offsets: offsets, base: 0, to: &offered)
            if heap.count == capacity, let worst = heap.first {
                let better = try kept.withUnsafeBytes { keptBytes in
                    try order.precedes(
                        offered[...], in: bytes, primary, valuesOf(worst), in: keptBytes, rows[worst].primary)
                }
                guard better else { return true }
                liveBytes += bytes.count - rows[worst].count
                if kept.count > 4 * Swift.max(liveBytes, 4_096) { compact() }
                rows[worst] = Kept(start: kept.count, count: bytes.count, primary: primary)
                for step in 0..<width { values[worst * width + step] = shifted(offered[step], by: kept.count) }
                kept.append(contentsOf: bytes)
                try siftDown(0)
                return true
            }
            let slot = rows.count
            rows.append(Kept(start: kept.count, count: bytes.count, primary: primary))
            for value in offered { values.append(shifted(value, by: kept.count)) }
            kept.append(contentsOf: bytes)
            liveBytes += bytes.count
            heap.append(slot)
            try siftUp(heap.count - 1)
            return true
        } catch is PageFileEncodedSortOrder.Unsupported {
            return false
        }
    }

    /// `value` with its string range moved by `base`.
    private func shifted(_ value: PageFileEncodedSortOrder.Value, by base: Int) -> PageFileEncodedSortOrder.Value {
        if case .text(let start, let count) = value { return .text(start: start + base, count: count) }
        return value
    }

    /// Copies the kept rows to a buffer of their own, dropping the bytes of replaced ones.
    private mutating func compact() {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(liveBytes)
        for slot in rows.indices {
            let old = rows[slot].start
            buffer.append(contentsOf: kept[old..<old + rows[slot].count])
            rows[slot].start = buffer.count - rows[slot].count
            for position in slot * width..<(slot + 1) * width {
                if case .text(let start, let count) = values[position] {
                    values[position] = .text(start: start - old + rows[slot].start, count: count)
                }
            }
        }
        kept = buffer
    }

    private mutating func siftUp(_ start: Int) throws {
        let bytes = kept
        try bytes.withUnsafeBytes { bytes in
            var child = start
            while child > 0 {
                let parent = (child - 1) / 2
                guard try precedes(heap[parent], heap[child], in: bytes) else { return }
                heap.swapAt(parent, child)
                child = parent
            }
        }
    }

    private mutating func siftDown(_ start: Int) throws {
        let bytes = kept
        try bytes.withUnsafeBytes { bytes in
            var parent = start
            while true {
                var worst = parent
                let left = 2 * parent + 1
                if left < heap.count, try precedes(heap[worst], heap[left], in: bytes) { worst = left }
                if left + 1 < heap.count, try precedes(heap[worst], heap[left + 1], in: bytes) { worst = left + 1 }
                if worst == parent { return }
                heap.swapAt(parent, worst)
                parent = worst
            }
        }
    }

    /// The kept rows, best first.
    func sorted() throws -> [Entry] {
        var failure: Error?
        let ordered = kept.withUnsafeBytes { bytes in
            heap.sorted { a, b in
                do {
                    return try precedes(a, b, in: bytes)
                } catch {
                    failure = error
                    return false
                }
            }
        }
        if let failure { throw failure }
        return ordered.map { slot in
            let row = rows[slot]
            return Entry(bytes: Array(kept[row.start..<row.start + row.count]), primary: row.primary)
        }
    }
}
