// A batch update's quick forms (BatchUpdateQuickForm.swift) made into edits of the row
// bytes (SPEC.md §3.2), once per request and entity:
//
//   constant   its row form encoded once, copied into every row
//   copy       the source slot's stored bytes copied as they are (same attribute type,
//              so they hold the value the evaluator would write)
//   shift      the source slot's integer read from its tag and varint, the sum encoded
//              as the codec writes an integer
//
// A step declines a row exactly where its quick form declines the row's value (a nil, an
// overflow, a value out of the attribute's range): the caller then computes that row's
// changes with BatchUpdateChanges and patches it from them, with the evaluator's results
// and errors.
import Foundation

/// The edits one batch update makes to a stored row, as bytes.
struct PageFileRowPatch {
    private enum Step {
        case constant(slot: Int, encoded: [UInt8], value: StoreValue)
        case copy(slot: Int, from: Int)
        case shift(slot: Int, from: Int, offset: Int64, range: ClosedRange<Int64>)

        var slot: Int {
            switch self {
            case .constant(let slot, _, _), .copy(let slot, _), .shift(let slot, _, _, _): slot
            }
        }
    }

    /// By ascending slot.
    private let steps: [Step]
    private let codec: PageFileRowCodec

    /// The patch of `changes`' quick forms, or nil when some changed attribute has none.
    init?(_ changes: BatchUpdateChanges, codec: PageFileRowCodec) {
        guard let forms = changes.quickFormsBySlot else { return nil }
        var steps: [Step] = []
        steps.reserveCapacity(forms.count)
        for (slot, form) in forms {
            switch form {
            case .constant(let value):
                var writer = StoreByteWriter()
                PageFileRowCodec.appendValue(value, declaredEntity: nil, to: &writer)
                steps.append(.constant(slot: slot, encoded: writer.bytes, value: value))
            case .copy(let source): steps.append(.copy(slot: slot, from: source))
            case .shift(let source, let offset, let range):
                steps.append(.shift(slot: slot, from: source, offset: offset, range: range))
            }
        }
        self.steps = steps
        self.codec = codec
    }

    /// Writes into `writer` (emptied first, its capacity kept) the row `bytes` (slot
    /// offsets `offsets`) with its version raised and every step applied; each changed
    /// slot in `keySlots` (flags by slot) gets its new value in `keyValues`. Returns false
    /// when a step declines the row; `writer` and the changed slots of `keyValues` are
    /// then unspecified.
    ///
    /// - Throws: `NSFileReadCorruptFileError` for a damaged row version or source value.
    func write(
        _ bytes: UnsafeRawBufferPointer, offsets: [Int], into writer: inout StoreByteWriter, keySlots: [Bool],
        keyValues: inout [StoreValue]
    ) throws -> Bool {
        try PageFileStore.beginPatch(bytes, into: &writer)
        var slot = 0
        for step in steps {
            let target = step.slot
            PageFileStore.copyStored(bytes, offsets: offsets, from: slot, to: target, into: &writer)
            let isKey = target < keySlots.count && keySlots[target]
            switch step {
            case .constant(_, let encoded, let value):
                writer.append(encoded)
                if isKey { keyValues[target] = value }
            case .copy(_, let source):
                guard let range = try Self.storedRange(bytes, offsets: offsets, slot: source) else { return false }
                writer.append(UnsafeRawBufferPointer(rebasing: bytes[range]))
                if isKey { keyValues[target] = try codec.decodeValue(bytes, at: range.lowerBound, declaredEntity: nil) }
            case .shift(_, let source, let offset, let range):
                guard source < offsets.count, let number = try Self.integer(bytes, at: offsets[source]) else {
                    return false
                }
                let (sum, overflow) = number.addingReportingOverflow(offset)
                guard !overflow, range.contains(sum) else { return false }
                PageFileRowCodec.appendValue(.integer(sum), declaredEntity: nil, to: &writer)
                if isKey { keyValues[target] = .integer(sum) }
            }
            slot = target + 1
        }
        PageFileStore.copyStored(bytes, offsets: offsets, from: slot, to: offsets.count, into: &writer)
        return true
    }

    /// The bytes of slot `slot`'s value, or nil when the slot holds no value a copy
    /// takes (none stored, null, or kept outside the row).
    private static func storedRange(_ bytes: UnsafeRawBufferPointer, offsets: [Int], slot: Int) throws -> Range<Int>? {
        guard slot < offsets.count else { return nil }
        let start = offsets[slot]
        let end = slot + 1 < offsets.count ? offsets[slot + 1] : bytes.count
        guard start < end else { throw StoreByteReader(row: bytes, from: start).damaged("a value is missing") }
        switch bytes[start] {
        case PageFileRowCodec.Tag.null.rawValue, PageFileRowCodec.Tag.externalBinary.rawValue,
            PageFileRowCodec.Tag.externalToMany.rawValue:
            return nil
        default: return start..<end
        }
    }

    /// The integer stored at `offset`, or nil when the value there is not an integer.
    private static func integer(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws -> Int64? {
        var reader = StoreByteReader(row: bytes, from: offset)
        let tag = try reader.byte()
        if tag >= PageFileRowCodec.smallIntegerBase { return Int64(tag - PageFileRowCodec.smallIntegerBase) }
        guard tag == PageFileRowCodec.Tag.integer.rawValue else { return nil }
        return try reader.signed()
    }
}

extension PageFileStore {
    /// Empties `writer` (keeping its capacity) and writes the version of the row `bytes`
    /// raised by one: the start of every patched row.
    ///
    /// - Throws: `NSFileReadCorruptFileError` for a damaged row version.
    static func beginPatch(_ bytes: UnsafeRawBufferPointer, into writer: inout StoreByteWriter) throws {
        var reader = StoreByteReader(row: bytes)
        let version = try reader.varint()
        // The limit a decoded row is held to (SPEC.md §3.2), so a forged version cannot wrap
        // and a patched row is refused exactly where writer.update's decoded row would be.
        guard version <= UInt64(StoreCounterLimit.maximum) else {
            throw reader.damaged("its version \(version) is out of range (at most \(StoreCounterLimit.maximum))")
        }
        writer.bytes.removeAll(keepingCapacity: true)
        writer.bytes.reserveCapacity(bytes.count + 16)
        writer.varint(version + 1)
    }

    /// Appends the stored slots `first..<limit` of the row `bytes` in one run, and a null
    /// for each of them a row written before the entity gained its attribute lacks.
    @inline(__always)
    static func copyStored(
        _ bytes: UnsafeRawBufferPointer, offsets: [Int], from first: Int, to limit: Int,
        into writer: inout StoreByteWriter
    ) {
        let stored = offsets.count
        if first < min(limit, stored) {
            let end = limit < stored ? offsets[limit] : bytes.count
            writer.append(UnsafeRawBufferPointer(rebasing: bytes[offsets[first]..<end]))
        }
        let missing = max(first, stored)
        if limit > missing {
            for _ in missing..<limit { writer.byte(PageFileRowCodec.Tag.null.rawValue) }
        }
    }
}
