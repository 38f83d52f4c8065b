// A short string a row holds is read by loading its bytes straight into a small string's
// two words, which checks them for ASCII on the way (StoreBytes.swift): every length a
// small string takes, a non-ASCII or invalid byte at every position of either word, and
// never a byte past the string's own; and a row's slot values move out of the row into
// the object that takes them (StoreRowSlots.swift).
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

@Suite struct StoreByteReaderStringTests {
    /// `bytes` read as a row's string, from a buffer where bytes no ASCII check passes
    /// follow it: a read past the string's end would change the answer.
    static func read(_ bytes: [UInt8]) -> String? {
        let padded = [0xFF, 0xFE] + bytes + [0xFF, 0x80, 0xC3, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        return padded.withUnsafeBytes { raw in
            StoreByteReader.validatedString(UnsafeRawBufferPointer(rebasing: raw[2..<(2 + bytes.count)]))
        }
    }

    @Test func everyShortLengthReadsAsTheStandardLibraryReadsIt() {
        for length in 0...17 {
            let ascii = (0..<length).map { UInt8(0x61 + $0 % 26) }
            #expect(Self.read(ascii) == String(validating: ascii, as: UTF8.self), "\(ascii)")
            // The edges of ASCII: NUL and DEL are ASCII, 0x80 and 0xFF are not UTF-8 alone.
            for position in 0..<length {
                for replacement: UInt8 in [0x00, 0x7F, 0x80, 0xC3, 0xFF] {
                    var bytes = ascii
                    bytes[position] = replacement
                    #expect(Self.read(bytes) == String(validating: bytes, as: UTF8.self), "\(bytes)")
                }
                // A valid two-byte character (é) ending at every position it fits.
                if position >= 1 {
                    var bytes = ascii
                    bytes[position - 1] = 0xC3
                    bytes[position] = 0xA9
                    let expected = String(validating: bytes, as: UTF8.self)
                    #expect(expected != nil && Self.read(bytes) == expected, "\(bytes)")
                }
            }
        }
    }

    /// A row's short string (`shortString`, read straight from the row) reads as
    /// `string(length:)` does, at every length a string tag holds, ASCII or not, and a
    /// length past the row's end throws the same error at the same place.
    @Test func shortStringsReadAsTheCheckedReadDoes() {
        func both(_ row: [UInt8], length: Int) -> (Result<String, NSError>, Result<String, NSError>, Int, Int) {
            row.withUnsafeBytes { raw in
                var direct = StoreByteReader(row: raw, from: 1)
                var checked = StoreByteReader(row: raw, from: 1)
                let a = Result { try direct.shortString(length: length) }.mapError { $0 as NSError }
                let b = Result { try checked.string(length: length) }.mapError { $0 as NSError }
                return (a, b, direct.offset, checked.offset)
            }
        }
        for length in 0...63 {
            let ascii = [0x40 + UInt8(length)] + (0..<length).map { UInt8(0x41 + $0 % 26) } + [0xFF, 0xFF]
            var rows = [ascii, Array(ascii.prefix(1 + length / 2))]
            for position in stride(from: 1, through: length, by: 3) {
                var changed = ascii
                changed[position] = 0xC3
                rows.append(changed)
                if position < length {
                    changed[position + 1] = 0xA9
                    rows.append(changed)
                }
            }
            for row in rows {
                let (direct, checked, directOffset, checkedOffset) = both(row, length: length)
                switch (direct, checked) {
                case (.success(let a), .success(let b)):
                    #expect(a == b && directOffset == checkedOffset, "\(row)")
                case (.failure(let a), .failure(let b)):
                    #expect(a.code == b.code && a.localizedDescription == b.localizedDescription, "\(row)")
                default: Issue.record("\(row): \(direct) against \(checked)")
                }
            }
        }
    }

    @Test func shortStringsReadFromWordsBehaveAsMadeOnes() throws {
        for length in 0...15 {
            let bytes = (0..<length).map { UInt8(0x30 + $0) }
            let made = String(decoding: bytes, as: UTF8.self)
            let read = try #require(Self.read(bytes))
            #expect(unsafeBitCast(read, to: (UInt64, UInt64).self) == unsafeBitCast(made, to: (UInt64, UInt64).self))
            #expect(read == made && read.hashValue == made.hashValue && read.count == length)
            #expect(read.uppercased() == made.uppercased() && read + "ü" == made + "ü")
        }
    }

    /// A row's slot values move into the object: the row keeps none, the values are the
    /// row's own, and a to-one naming the source object holds it.
    @Test func objectValuesTakeTheRowsSlotValues() throws {
        let stack = try TestStack.coordinator()
        let context = TestStack.context(stack)
        let entity = try #require(stack.managedObjectModel.entitiesByName["Employee"])
        let layout = entity.layout
        let toOneSlot = try #require(
            layout.storedValueConversions.indices.first {
                if case .toOne = layout.storedValueConversions[$0] { return true }
                return false
            })
        let destinationEntity = try #require(layout.relationshipBySlot[toOneSlot]?.destinationEntity)
        let store = try #require(stack.persistentStores.first)
        let sourceID = NSManagedObjectID(entity: destinationEntity, store: store, key: 7)
        let source = context.object(with: sourceID)
        var storage = [SlotValue](repeating: .null, count: layout.storedValueConversions.count)
        storage[toOneSlot] = .unresolved(UnresolvedRelationship(destination: sourceID))
        let otherSlot = toOneSlot == 0 ? 1 : 0
        storage[otherSlot] = .string("kept")
        let id = NSManagedObjectID(entity: entity, store: store, key: 3)
        var row = StoreRow(objectID: id, version: 4, slots: StoreRowSlots(values: SlotValues(slots: storage)))
        let values = layout.objectValues(taking: &row, source: ToOneSource(slot: toOneSlot, destination: source))
        #expect(row.slots == nil && row.version == 4)
        guard case .object(let object) = values.storage[toOneSlot] else {
            Issue.record("the to-one holds \(values.storage[toOneSlot]), not the source")
            return
        }
        #expect(object === source)
        guard case .string("kept") = values.storage[otherSlot] else {
            Issue.record("slot \(otherSlot) holds \(values.storage[otherSlot])")
            return
        }
        // Taken again, the row has no slot form left and reads as its stored values.
        #expect(row.values.isEmpty)
    }
}
