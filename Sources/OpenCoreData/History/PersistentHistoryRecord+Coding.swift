// The history record's bytes, format version 1 (SPEC.md §3 "History journal"):
//
//   OFFSET  SIZE  FIELD
//      0      1   format version (1)
//      1      1   flags (0; a reader refuses unknown bits)
//      2      8   timestamp: seconds since 1970, IEEE-754 double, little-endian
//     10      v   string count S, then S × (varint byte length, UTF-8)
//             v   author: 0 = none, else string index + 1
//             v   context name: 0 = none, else string index + 1
//             v   change count C, then C changes:
//                   1  kind: 0 insert, 1 update, 2 delete
//                   v  entity name (string index)
//                   v  primary key (zigzag varint)
//                   update: v count N, N × property name (string index)
//                   delete: v count N, N × (property name (string index), tagged value)
//    end-8    8   XXH64 (seed 0) of every byte before it, little-endian
//
// "v" is an unsigned LEB128 varint; values use the tagged encoding of
// StoreValueCoding.swift. Names go through the string table, so a record of 10,000
// inserts of one entity names the entity once.
import Foundation
import StorageEngine

extension PersistentHistoryRecord {
    /// The current record format version.
    static let formatVersion: UInt8 = 1
    /// The smallest possible record: header, three empty counts... and the checksum.
    static let minimumSize = 10 + 4 + 8

    /// The record's bytes.
    func encoded() -> [UInt8] {
        var strings: [String] = []
        var numbers: [String: Int] = [:]
        func number(_ text: String) -> Int {
            if let known = numbers[text] { return known }
            strings.append(text)
            numbers[text] = strings.count - 1
            return strings.count - 1
        }
        let authorNumber = author.map { number($0) + 1 } ?? 0
        let contextNumber = contextName.map { number($0) + 1 } ?? 0
        var body = StoreByteWriter()
        body.varint(authorNumber)
        body.varint(contextNumber)
        body.varint(changes.count)
        for change in changes {
            body.byte(change.kind.rawValue)
            body.varint(number(change.entityName))
            body.signed(change.key)
            switch change.kind {
            case .insert: break
            case .update:
                body.varint(change.updatedProperties.count)
                for name in change.updatedProperties { body.varint(number(name)) }
            case .delete:
                body.varint(change.tombstone.count)
                for entry in change.tombstone {
                    body.varint(number(entry.name))
                    body.value(entry.value, entityNumber: { number($0.name ?? "") })
                }
            }
        }
        var writer = StoreByteWriter()
        writer.bytes.reserveCapacity(body.bytes.count + strings.count * 16 + 32)
        writer.byte(Self.formatVersion)
        writer.byte(0)
        writer.fixed64(timestamp.timeIntervalSince1970.bitPattern)
        writer.varint(strings.count)
        for text in strings { writer.string(text) }
        writer.bytes.append(contentsOf: body.bytes)
        writer.fixed64(StorageChecksum.xxh64(writer.bytes))
        return writer.bytes
    }

    /// Decodes a record; `what` names it in errors ("history record 12 of store X").
    ///
    /// - Throws: `NSCoreDataError` (134060) naming the damage, for a bad checksum, an
    ///   unknown version or flag, or a length or index out of bounds.
    init(decoding bytes: [UInt8], what: String) throws {
        guard bytes.count >= Self.minimumSize else {
            throw CoreDataError.make(NSCoreDataError, "\(what) is damaged: only \(bytes.count) bytes")
        }
        let bodyEnd = bytes.count - 8
        let body = Array(bytes[..<bodyEnd])
        let stored = try bytes.withUnsafeBytes { raw in
            var trailer = StoreByteReader(raw, from: bodyEnd, what: what)
            return try trailer.fixed64()
        }
        guard stored == StorageChecksum.xxh64(body) else {
            throw CoreDataError.make(NSCoreDataError, "\(what) is damaged: its checksum does not match")
        }
        self = try body.withUnsafeBytes { raw in
            var reader = StoreByteReader(raw, what: what)
            return try Self(reading: &reader, what: what)
        }
    }

    /// Decodes the body of a record whose checksum was checked.
    private init(reading reader: inout StoreByteReader, what: String) throws {
        let version = try reader.byte()
        guard version == Self.formatVersion else {
            throw reader.damaged("format version \(version) is not supported (this library reads version 1)")
        }
        let flags = try reader.byte()
        guard flags == 0 else { throw reader.damaged("unknown flags \(flags)") }
        let timestamp = Date(timeIntervalSince1970: Double(bitPattern: try reader.fixed64()))
        // Each string takes at least its length byte.
        let stringCount = try reader.count(atMost: reader.remaining)
        var strings: [String] = []
        strings.reserveCapacity(stringCount)
        for _ in 0..<stringCount { strings.append(try reader.string()) }
        func string(_ index: Int) throws -> String {
            guard index < strings.count else {
                throw CoreDataError.make(NSCoreDataError, "\(what) is damaged: string index \(index) out of range")
            }
            return strings[index]
        }
        func optionalString(_ number: Int) throws -> String? { number == 0 ? nil : try string(number - 1) }
        let authorIndex = try reader.count(atMost: strings.count)
        let contextIndex = try reader.count(atMost: strings.count)
        let author = try optionalString(authorIndex)
        let contextName = try optionalString(contextIndex)
        // Each change takes at least three bytes.
        let changeCount = try reader.count(atMost: reader.remaining / 3)
        var changes: [Change] = []
        changes.reserveCapacity(changeCount)
        for _ in 0..<changeCount {
            let rawKind = try reader.byte()
            guard let kind = Kind(rawValue: rawKind) else { throw reader.damaged("unknown change kind \(rawKind)") }
            let entityIndex = try reader.count(atMost: strings.count)
            let entityName = try string(entityIndex)
            var change = Change(kind: kind, entityName: entityName, key: try reader.signed())
            switch kind {
            case .insert: break
            case .update:
                let count = try reader.count(atMost: reader.remaining)
                for _ in 0..<count {
                    let index = try reader.count(atMost: strings.count)
                    change.updatedProperties.append(try string(index))
                }
            case .delete:
                let count = try reader.count(atMost: reader.remaining / 2)
                for _ in 0..<count {
                    let nameIndex = try reader.count(atMost: strings.count)
                    let name = try string(nameIndex)
                    let value = try reader.value { _, _ in
                        throw CoreDataError.make(
                            NSCoreDataError, "\(what) is damaged: a tombstone holds an object ID (stored as URIs)")
                    }
                    change.tombstone.append(Tombstone(name: name, value: value))
                }
            }
            changes.append(change)
        }
        guard reader.isAtEnd else { throw reader.damaged("\(reader.remaining) unexpected bytes after the changes") }
        self.init(timestamp: timestamp, author: author, contextName: contextName, changes: changes)
    }
}
