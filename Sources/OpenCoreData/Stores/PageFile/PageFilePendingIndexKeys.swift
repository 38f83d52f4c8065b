// The ordinary index entries one writer adds, kept until its `finish()` and written in
// key order: a bulk insert then appends to each index tree instead of splitting pages
// at random places, and an entry added and taken back in one transaction is never
// written.
//
// The keys live back to back in one buffer, each known by a record (its first eight
// bytes as a word, where it is): adding a row's entry writes its bytes there directly
// (no array per key), and sorting compares words before bytes.
import Foundation

/// The ordinary index keys a save adds to one index tree, written sorted at the end.
/// Kept as a plain list while the save only adds (a bulk insert); a lookup table is built
/// the first time a key must be taken back (an update or delete of this save).
struct PendingIndexKeys {
    /// The keys, back to back.
    private var storage = StoreByteWriter()
    /// One per key added; a taken-back key's record is marked removed.
    private var records: [Record] = []
    /// The record of each key added, once a key was taken back (nil before).
    private var lookup: [[UInt8]: Int]?

    private struct Record {
        /// The key's first eight bytes as a big-endian word (zeros past its end).
        var prefix: UInt64
        var start: Int
        /// The key's length; -1 once it was taken back.
        var length: Int
    }

    /// Keys added so far (taken-back ones included until the next write).
    var count: Int { records.count }

    mutating func insert(_ key: [UInt8]) {
        let start = storage.bytes.count
        storage.bytes.append(contentsOf: key)
        addRecord(from: start, key: key)
    }

    /// Adds the entry of the ordinary (not unique) `index` for the row `primaryKey`
    /// holding `values`, the key ``PageFileIndex/key(for:primaryKey:)`` makes, written in
    /// place; false when the index holds no entry for the row.
    mutating func insertEntry(of index: PageFileIndex, values: [StoreValue], primaryKey: Int64) -> Bool {
        insertEntry(
            fields: index.fields, isUnique: index.isUnique, isReference: index.isReference, values: values,
            primaryKey: primaryKey)
    }

    /// ``insertEntry(of:values:primaryKey:)`` of an ordinary index of `fields` and
    /// `isReference`, given by its parts (see PageFileIndex.appendEntryValues(of:to:fields:isUnique:isReference:)).
    mutating func insertEntry(
        fields: [StoreKeyField], isUnique: Bool = false, isReference: Bool, values: [StoreValue], primaryKey: Int64
    ) -> Bool {
        let start = storage.bytes.count
        guard
            PageFileIndex.appendEntryValues(
                of: values, to: &storage, fields: fields, isUnique: isUnique, isReference: isReference)
        else {
            storage.bytes.removeLast(storage.bytes.count - start)
            return false
        }
        PageFileKey.appendPrimary(primaryKey, to: &storage.bytes)
        addRecord(from: start, key: lookup == nil ? nil : Array(storage.bytes[start...]))
        return true
    }

    /// Records the key written from `start` to the end of the storage (`key`, its bytes,
    /// when the lookup table is in use: a key already there is not added twice).
    private mutating func addRecord(from start: Int, key: [UInt8]?) {
        let length = storage.bytes.count - start
        if let key, lookup != nil {
            if let known = lookup?[key], records[known].length >= 0 {
                storage.bytes.removeLast(length)
                return
            }
            lookup?[key] = records.count
        }
        var prefix: UInt64 = 0
        storage.bytes.withUnsafeBufferPointer { bytes in
            for offset in start..<(start + min(length, 8)) { prefix = prefix << 8 | UInt64(bytes[offset]) }
        }
        if length < 8 { prefix <<= UInt64(8 * (8 - length)) }
        records.append(Record(prefix: prefix, start: start, length: length))
    }

    /// Takes `key` back; false when this save did not add it.
    mutating func remove(_ key: [UInt8]) -> Bool {
        // Nothing added yet (an update's old entry): no lookup table, adding stays appending.
        if records.isEmpty { return false }
        if lookup == nil {
            var table: [[UInt8]: Int] = [:]
            table.reserveCapacity(records.count)
            for (position, record) in records.enumerated() where record.length >= 0 {
                let key = Array(storage.bytes[record.start..<(record.start + record.length)])
                // A key added twice in the plain list is held once from now on.
                if let earlier = table.updateValue(position, forKey: key) { records[earlier].length = -1 }
            }
            lookup = table
        }
        guard let position = lookup?[key], records[position].length >= 0 else { return false }
        records[position].length = -1
        return true
    }

    /// Calls `body` with each key still added, in byte order, each once.
    func forEachSorted(_ body: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        // One key, a one-row save's entry: in order already, no sorted copy of the records.
        if records.count == 1 {
            let record = records[0]
            guard record.length >= 0 else { return }
            try storage.bytes.withUnsafeBytes { base in try body(Self.bytes(of: record, in: base)) }
            return
        }
        try withSortedRecords { sorted, base in
            var previous: Record?
            for record in sorted {
                // A key added twice (in a plain list) is written once.
                if let previous, previous.prefix == record.prefix, Self.compare(previous, record, in: base) == 0 {
                    continue
                }
                previous = record
                try body(Self.bytes(of: record, in: base))
            }
        }
    }

    /// Calls `body` with the number of keys still added and a function giving the key at
    /// a position of their byte order, in place (a key added twice comes twice, side by
    /// side): a batch removal takes the keys by position, not one call per key.
    func withSortedKeys<Result>(
        _ body: (_ count: Int, _ key: (Int) -> UnsafeRawBufferPointer) throws -> Result
    ) rethrows -> Result {
        try withSortedRecords { sorted, base in try body(sorted.count) { Self.bytes(of: sorted[$0], in: base) } }
    }

    /// Calls `body` with the records of the keys still added, in the keys' byte order, and
    /// the bytes they lie in.
    private func withSortedRecords<Result>(
        _ body: (UnsafeBufferPointer<Record>, UnsafeRawBufferPointer) throws -> Result
    ) rethrows -> Result {
        var order = records.filter { $0.length >= 0 }
        return try storage.bytes.withUnsafeBytes { base in
            if order.count > 1 {
                order.sort { first, second in
                    if first.prefix != second.prefix { return first.prefix < second.prefix }
                    return Self.compare(first, second, in: base) < 0
                }
            }
            return try order.withUnsafeBufferPointer { try body($0, base) }
        }
    }

    /// The bytes of the key `record` in `base`, the pending keys' storage.
    private static func bytes(of record: Record, in base: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: base[record.start..<(record.start + record.length)])
    }

    /// The keys still added, in byte order, each once, each copied out (tests read them;
    /// the writer walks them in place with ``forEachSorted(_:)``).
    func sortedKeys() -> [[UInt8]] {
        var result: [[UInt8]] = []
        result.reserveCapacity(records.count)
        forEachSorted { result.append(Array($0)) }
        return result
    }

    /// Byte order (the engine's: memcmp, then the shorter first) of two keys whose first
    /// eight bytes are equal.
    private static func compare(_ first: Record, _ second: Record, in base: UnsafeRawBufferPointer) -> Int32 {
        let common = min(first.length, second.length)
        if common > 8, let address = base.baseAddress {
            let order = memcmp(address + first.start + 8, address + second.start + 8, common - 8)
            if order != 0 { return order }
        }
        return first.length == second.length ? 0 : first.length < second.length ? -1 : 1
    }
}
