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
        in transaction: ReadTransaction, codec: PageFileRowCodec, into result: inout [StoreRow]
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
                try decodedRow($0, primary: entry.primary, entity: entity, codec: codec)
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

    /// One sort value read from a row: what the context's sort compares.
    private enum Value {
        case null
        case integer(Int64)
        case seconds(Double)
        case text(UnsafeRawBufferPointer)
    }

    /// The value of `step` at `offset` of `bytes`; nil when it is not one this order compares.
    private static func value(_ bytes: UnsafeRawBufferPointer, at offset: Int, _ step: Step) -> Value? {
        guard offset < bytes.count else { return .null }
        let tag = bytes[offset]
        if tag == PageFileRowCodec.Tag.null.rawValue { return .null }
        switch step.type {
        case .stringAttributeType:
            return PageFileRowCodec.stringBytes(bytes, at: offset).map { .text($0) }
        case .dateAttributeType:
            guard let seconds = PageFileEncodedClause.dateSeconds(bytes, offset, tag), !seconds.isNaN else {
                return nil
            }
            return .seconds(seconds)
        default:
            return PageFileEncodedClause.attributeInteger(bytes, offset, tag, type: step.type).map { .integer($0) }
        }
    }

    /// Whether the row `first` (slots at `firstOffsets`, key `firstKey`) sorts before `second`.
    ///
    /// - Throws: ``Unsupported`` for a value this order does not compare.
    func precedes(
        _ first: UnsafeRawBufferPointer, _ firstOffsets: [Int], _ firstKey: Int64,
        _ second: UnsafeRawBufferPointer, _ secondOffsets: [Int], _ secondKey: Int64
    ) throws -> Bool {
        for step in steps {
            // A row written before the entity gained the attribute holds no slot for it: nil.
            let a =
                step.slot < firstOffsets.count ? Self.value(first, at: firstOffsets[step.slot], step) : Value.null
            let b =
                step.slot < secondOffsets.count ? Self.value(second, at: secondOffsets[step.slot], step) : Value.null
            guard let a, let b else { throw Unsupported() }
            let order = try Self.order(a, b)
            if order != 0 { return step.ascending ? order < 0 : order > 0 }
        }
        return firstKey < secondKey
    }

    /// -1, 0 or 1 as `a` sorts before, with or after `b` ascending.
    private static func order(_ a: Value, _ b: Value) throws -> Int {
        switch (a, b) {
        case (.null, .null): return 0
        case (.null, _): return -1
        case (_, .null): return 1
        case (.integer(let x), .integer(let y)): return x == y ? 0 : (x < y ? -1 : 1)
        case (.seconds(let x), .seconds(let y)): return x == y ? 0 : (x < y ? -1 : 1)
        case (.text(let x), .text(let y)):
            // Beyond ASCII, Swift's String order is not one a heap can keep: strings not in
            // NFC compare inconsistently ("e\u{301}" is neither below nor above "\u{E9}K",
            // yet equals "\u{E9}", which is below it), so the context's sort of them
            // depends on its algorithm. Only the full path gives its answer.
            guard let order = asciiOrder(x, y) else { throw Unsupported() }
            return order
        default: throw Unsupported()
        }
    }

    /// The order of two ASCII strings by their bytes (Swift's order for ASCII); nil when
    /// either holds a byte past ASCII.
    private static func asciiOrder(_ x: UnsafeRawBufferPointer, _ y: UnsafeRawBufferPointer) -> Int? {
        let common = min(x.count, y.count)
        var index = 0
        while index < common {
            let (p, q) = (x[index], y[index])
            if p >= 0x80 || q >= 0x80 { return nil }
            if p != q {
                // The rest must be ASCII too for the first difference to decide.
                guard !x[index...].contains(where: { $0 >= 0x80 }), !y[index...].contains(where: { $0 >= 0x80 })
                else { return nil }
                return p < q ? -1 : 1
            }
            index += 1
        }
        if x[common...].contains(where: { $0 >= 0x80 }) || y[common...].contains(where: { $0 >= 0x80 }) { return nil }
        return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
    }
}

/// The best `capacity` rows offered so far, as copies of their bytes: a max-heap whose
/// top is the worst kept row, so a row that does not beat it costs one comparison.
struct PageFileTopRowHeap {
    struct Entry {
        let bytes: [UInt8]
        let offsets: [Int]
        let primary: Int64
    }

    private let order: PageFileEncodedSortOrder
    private let capacity: Int
    private var entries: [Entry] = []

    init(order: PageFileEncodedSortOrder, capacity: Int) {
        self.order = order
        self.capacity = capacity
    }

    private func precedes(_ a: Entry, _ b: Entry) throws -> Bool {
        try a.bytes.withUnsafeBytes { first in
            try b.bytes.withUnsafeBytes { second in
                try order.precedes(first, a.offsets, a.primary, second, b.offsets, b.primary)
            }
        }
    }

    /// Keeps the row `bytes` when it is among the best; false when its sort values are not
    /// ones the order compares.
    mutating func offer(_ bytes: UnsafeRawBufferPointer, offsets: [Int], primary: Int64) throws -> Bool {
        do {
            if entries.count == capacity, let worst = entries.first {
                let better = try worst.bytes.withUnsafeBytes { kept in
                    try order.precedes(bytes, offsets, primary, kept, worst.offsets, worst.primary)
                }
                guard better else { return true }
                entries[0] = Entry(bytes: Array(bytes), offsets: offsets, primary: primary)
                try siftDown(0)
                return true
            }
            entries.append(Entry(bytes: Array(bytes), offsets: offsets, primary: primary))
            try siftUp(entries.count - 1)
            return true
        } catch is PageFileEncodedSortOrder.Unsupported {
            return false
        }
    }

    private mutating func siftUp(_ start: Int) throws {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard try precedes(entries[parent], entries[child]) else { return }
            entries.swapAt(parent, child)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) throws {
        var parent = start
        while true {
            var worst = parent
            for child in [2 * parent + 1, 2 * parent + 2] where child < entries.count {
                if try precedes(entries[worst], entries[child]) { worst = child }
            }
            if worst == parent { return }
            entries.swapAt(parent, worst)
            parent = worst
        }
    }

    /// The kept rows, best first.
    func sorted() throws -> [Entry] {
        var failure: Error?
        let ordered = entries.sorted { a, b in
            do {
                return try precedes(a, b)
            } catch {
                failure = error
                return false
            }
        }
        if let failure { throw failure }
        return ordered
    }
}
