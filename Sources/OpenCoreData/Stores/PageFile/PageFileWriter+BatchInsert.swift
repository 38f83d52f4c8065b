// A batch insert's new rows on the writer's shortest path. A row of an entity without
// unique indexes or blob attributes, written while no links are recorded, has nothing to
// check and nothing stored apart: it is its bytes, its ordinary index entries, and no
// object ID (the caller makes one only when the request returns them). Everything else
// takes insert(_:) (PageFileWriter.swift).
//
// The rows of a chunk are encoded back to back into one reused buffer as they come, with
// the values part of each index entry, before the chunk's keys are allocated (a key per
// row, no gap); then each row goes to its tree (appended: new keys are the largest) and
// each entry, its primary key added, to a flat list per index that is sorted and written
// in key order (PageFileBatchIndexEntries): no array, row object or key array per row.
import Foundation
import StorageEngine

/// Rows of one entity encoded for ``PageFileWriter/writePlainRows(_:firstKey:info:entries:)``.
struct PageFilePlainRows {
    /// The encoded rows (SPEC.md §3.2), back to back.
    private(set) var rows = StoreByteWriter()
    /// Where each row ends in `rows`.
    private(set) var rowEnds: [Int] = []
    /// By position in the entity's indexes: each row's entry values part, back to back.
    private(set) var entryValues: [StoreByteWriter]
    /// By position in the entity's indexes: where each row's part ends (an empty part:
    /// the index holds no entry for the row).
    private(set) var entryEnds: [[Int]]
    private let info: PageFileCatalog.EntityInfo
    private let externalToMany: Bool

    init(info: PageFileCatalog.EntityInfo) {
        self.info = info
        externalToMany = !info.externalSlots.isEmpty
        entryValues = Array(repeating: StoreByteWriter(), count: info.indexes.count)
        entryEnds = Array(repeating: [], count: info.indexes.count)
    }

    /// The number of rows held.
    var count: Int { rowEnds.count }

    /// Forgets the rows, keeping the buffers.
    mutating func removeAll() {
        rows.bytes.removeAll(keepingCapacity: true)
        rowEnds.removeAll(keepingCapacity: true)
        for position in entryValues.indices {
            entryValues[position].bytes.removeAll(keepingCapacity: true)
            entryEnds[position].removeAll(keepingCapacity: true)
        }
    }

    /// Encodes a new row (version 1) holding `values`; its to-manys (empty: a batch insert
    /// sets none) are marked kept outside the row, in `values` too.
    mutating func append(_ values: inout [StoreValue]) {
        // To-manys live in join trees or come from their inverse (SPEC.md §3.2 R1).
        for slot in info.externalSlots where slot < values.count { values[slot] = .unresolved }
        PageFileRowCodec.encode(
            values: values, version: 1, layout: info.entity.layout, externalToMany: externalToMany, into: &rows)
        rowEnds.append(rows.bytes.count)
        for (position, index) in info.indexes.enumerated() {
            let start = entryValues[position].bytes.count
            if !index.appendEntryValues(of: values, to: &entryValues[position]) {
                entryValues[position].bytes.removeLast(entryValues[position].bytes.count - start)
            }
            entryEnds[position].append(entryValues[position].bytes.count)
        }
    }
}

extension PageFileWriter {
    /// Whether new rows of `info`'s entity may be written by ``writePlainRows(_:firstKey:info:entries:)``.
    func takesPlainRows(_ info: PageFileCatalog.EntityInfo) -> Bool {
        linkChanges == nil && info.blobSlots.isEmpty && !info.indexes.contains(where: \.isUnique)
    }

    /// Writes `rows`, of the entity ``takesPlainRows(_:)`` accepted for `info`, as the
    /// rows `firstKey`, `firstKey + 1`, ... with their index entries, which go to `entries`
    /// (by position in `info.indexes`) and are written when it holds enough of them.
    mutating func writePlainRows(
        _ rows: PageFilePlainRows, firstKey: Int64, info: PageFileCatalog.EntityInfo,
        entries: inout [PageFileBatchIndexEntries]
    ) throws {
        let tree = try transaction.openTree(named: info.treeName)
        try rows.rows.bytes.withUnsafeBytes { encoded in
            var start = 0
            for (row, end) in rows.rowEnds.enumerated() {
                try PageFileKey.withPrimary(firstKey + Int64(row)) { key in
                    try tree.setValue(UnsafeRawBufferPointer(rebasing: encoded[start..<end]), forKey: key)
                }
                start = end
            }
        }
        for (position, index) in info.indexes.enumerated() {
            rows.entryValues[position].bytes.withUnsafeBytes { values in
                var start = 0
                for (row, end) in rows.entryEnds[position].enumerated() where end > start {
                    entries[position].append(
                        UnsafeRawBufferPointer(rebasing: values[start..<end]), primaryKey: firstKey + Int64(row))
                    start = end
                }
            }
            if entries[position].count >= Self.pendingIndexKeyLimit {
                try entries[position].write(to: transaction.openTree(named: index.treeName))
            }
        }
    }
}

/// The ordinary entries a batch insert adds to one index, in one flat buffer: written in
/// key order when there are enough of them (a bounded number is held, as the writer's
/// pending keys are) and at the end.
///
/// Every entry ends with the primary key of a new row, so no two are equal.
struct PageFileBatchIndexEntries {
    private var bytes: [UInt8] = []
    /// One per entry: its first eight bytes as a big-endian word (zeros past its end), then
    /// where it is in `bytes`: most comparisons are one integer comparison.
    private var records: [Record] = []

    private struct Record {
        let prefix: UInt64
        let start: Int32
        let length: Int32
    }

    /// The number of entries held.
    var count: Int { records.count }

    /// Adds the entry of values part `values` and primary key `primaryKey`.
    mutating func append(_ values: UnsafeRawBufferPointer, primaryKey: Int64) {
        let start = bytes.count
        bytes.append(contentsOf: values)
        PageFileKey.appendPrimary(primaryKey, to: &bytes)
        let length = bytes.count - start
        var prefix: UInt64 = 0
        for offset in start..<(start + min(length, 8)) { prefix = prefix << 8 | UInt64(bytes[offset]) }
        if length < 8 { prefix <<= UInt64(8 * (8 - length)) }
        records.append(Record(prefix: prefix, start: Int32(start), length: Int32(length)))
    }

    /// Writes the entries into `tree` (an index tree: empty values) in key order and
    /// forgets them.
    mutating func write(to tree: Tree) throws {
        defer {
            bytes.removeAll(keepingCapacity: true)
            records.removeAll(keepingCapacity: true)
        }
        guard !records.isEmpty else { return }
        try bytes.withUnsafeBytes { base in
            records.sort { first, second in
                if first.prefix != second.prefix { return first.prefix < second.prefix }
                return Self.precedes(first, second, in: base)
            }
            let empty = UnsafeRawBufferPointer(start: nil, count: 0)
            for record in records {
                let start = Int(record.start)
                let key = UnsafeRawBufferPointer(rebasing: base[start..<(start + Int(record.length))])
                try tree.setValue(empty, forKey: key)
            }
        }
    }

    /// Byte order (the engine's) of two entries whose first eight bytes are equal.
    private static func precedes(_ first: Record, _ second: Record, in base: UnsafeRawBufferPointer) -> Bool {
        let common = Int(min(first.length, second.length))
        if common > 8, let address = base.baseAddress {
            let order = memcmp(address + Int(first.start) + 8, address + Int(second.start) + 8, common - 8)
            if order != 0 { return order < 0 }
        }
        return first.length < second.length
    }
}
