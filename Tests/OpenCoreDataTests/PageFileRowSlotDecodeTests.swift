// The default store decodes the rows a context fills objects from straight into the
// objects' slot form (PageFileRowCodec+Slots.swift, StoreRowSlots.swift). Every object
// loaded that way must hold exactly what the general path (a StoreValue decode, then the
// context's conversion) gives it: for every attribute type and stored form, nulls, to-ones,
// to-manys kept in the row or outside it, sub-entities, values the slot form declines
// (Decimal, Float, URI, transformables, blobs), damaged rows (the same error), and through
// every path that loads objects: fetches, faults, batches of faults, to-many traversal.
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

@Suite struct PageFileRowSlotDecodeTests {
    // MARK: Describing values

    static func name(_ id: NSManagedObjectID) -> String { "\(id.entity.name ?? "?") \(id.key)" }

    /// A stored value as a test compares it: IDs by entity and key, numbers by their bits.
    static func describe(_ value: StoreValue) -> String {
        switch value {
        case .objectID(let id): "id \(name(id))"
        case .objectIDs(let ids): "ids \(ids.map(name))"
        case .double(let number): "double \(number.bitPattern)"
        case .float(let number): "float \(number.bitPattern)"
        default: String(reflecting: value)
        }
    }

    /// An object's slot value as a test compares it: a to-one resolved to its object reads
    /// like one naming the object's ID.
    static func describe(_ value: SlotValue) -> String {
        switch value {
        case .unresolved(let relationship):
            if let destination = relationship.destination { return "to \(name(destination))" }
            return "unresolved \(relationship.objectIDs.map { $0.map(name) } as Any) edits \(relationship.hasEdits)"
        case .object(let object): return "to \(name(object.objectID))"
        case .double(let number): return "double \(number.bitPattern)"
        case .other(let box):
            if let number = box.value as? Float { return "Float \(number.bitPattern)" }
            return StoredValueConversionTests.comparable(box.value)
        default: return StoredValueConversionTests.comparable(value.anyValue)
        }
    }

    // MARK: The codec, row by row

    struct Codec {
        let entity = StoredValueConversionTests.makeEntity()
        let store: NSPersistentStore
        let codec: PageFileRowCodec

        init() throws {
            let store = try #require(try TestStack.coordinator().persistentStores.first)
            let entity = self.entity
            self.store = store
            codec = PageFileRowCodec(
                entityNamed: { $0 == entity.name ? entity : nil },
                makeObjectID: { NSManagedObjectID(entity: $0, store: store, key: $1) })
        }

        func id(_ key: Int64) -> NSManagedObjectID { NSManagedObjectID(entity: entity, store: store, key: key) }

        /// A value of `slot`'s own kind, as saves store it; nulls included.
        func plainValue(_ random: inout SeededRandom, slot: Int) -> StoreValue {
            if random.chance(0.15) { return .null }
            switch entity.layout.storedValueConversions[slot] {
            case .attribute(let type):
                switch type {
                case .integer16AttributeType: return .integer(Int64(random.int(in: -32_768...32_767)))
                case .integer32AttributeType: return .integer(Int64(random.int(in: -2_000_000_000...2_000_000_000)))
                case .integer64AttributeType:
                    return .integer(
                        random.chance(0.5) ? Int64(random.int(in: 0...127)) : Int64(bitPattern: random.next()))
                case .doubleAttributeType: return .double(random.pick([0.5, -2, .nan, .infinity, 1e300, 3]))
                case .stringAttributeType:
                    return .string(
                        random.pick(["", "short", "a string longer than sixty-three bytes, held with its length", "é"]))
                case .booleanAttributeType: return .boolean(random.chance(0.5))
                case .dateAttributeType:
                    return .date(Date(timeIntervalSinceReferenceDate: random.pick([0, 1.5, -86_400, 7e8, 1e12])))
                case .binaryDataAttributeType: return .binary(Data(random.bytes(random.int(in: 0...20))))
                case .UUIDAttributeType: return .uuid(UUID())
                default: return .null
                }
            case .toOne: return .objectID(id(Int64(random.int(in: 1...40))))
            case .toMany:
                return random.chance(0.3)
                    ? .unresolved
                    : .objectIDs((0..<random.int(in: 0...3)).map { _ in id(Int64(random.int(in: 1...40))) })
            case .none: return .null
            }
        }

        /// Row bytes: mostly values of their slots' kinds, some of any form, some rows short.
        func randomRow(_ random: inout SeededRandom) -> [UInt8] {
            let layout = entity.layout
            let count = random.chance(0.1) ? random.int(in: 0...layout.properties.count) : layout.properties.count
            let values = (0..<count).map { slot in
                random.chance(0.97)
                    ? plainValue(&random, slot: slot) : StoredValueConversionTests.randomValue(&random, entity)
            }
            return PageFileRowCodec.encode(
                values: values, version: Int64(random.int(in: 1...1_000)), layout: layout,
                externalToMany: random.chance(0.5))
        }

        /// The row decoded into the slot form when it takes it.
        func slotRow(_ bytes: UnsafeRawBufferPointer) throws -> StoreRow {
            try codec.row(bytes, entity: entity, intoSlots: true) { id(1) }
        }
    }

    @Test func slotFormHoldsWhatTheGeneralPathGives() throws {
        var random = SeededRandom(environmentOr: 0x5107_DEC0)
        let codec = try Codec()
        let layout = codec.entity.layout
        var (taken, declined) = (0, 0)
        for round in 0..<3_000 {
            let bytes = codec.randomRow(&random)
            try bytes.withUnsafeBytes { raw in
                let general = try codec.codec.decode(raw, entity: codec.entity)
                let row = try codec.slotRow(raw)
                #expect(row.version == general.version)
                guard let slots = row.slots else {
                    declined += 1
                    #expect(row.values.map(Self.describe) == general.values.map(Self.describe))
                    return
                }
                taken += 1
                let hint = Comment(rawValue: "round \(round), \(random.replayHint), stored \(general.values)")
                let expected = layout.objectValues(fromStored: general.values).storage.map(Self.describe)
                #expect(slots.values.storage.map(Self.describe) == expected, hint)
                // The stored values made back from the slot form are the ones it was decoded from.
                #expect(row.values.map(Self.describe) == general.values.map(Self.describe), hint)
                for slot in 0..<layout.properties.count {
                    #expect(Self.describe(row.storeValue(atSlot: slot)) == Self.describe(general.values[slot]), hint)
                }
            }
        }
        // Both paths run: most rows take the slot form, rows of other forms decline it.
        #expect(taken > 1_500, "\(taken) rows took the slot form")
        #expect(declined > 300, "\(declined) rows declined it")
    }

    /// A codec naming one object (a batch of a to-many's members, PageFileStore's
    /// `codec(naming:)`) decodes a to-one naming it into the one shared relationship, and
    /// every other to-one into one of its own: both as the general decode gives them.
    @Test func toOnesNamingTheNamedObjectShareOneRelationship() throws {
        var random = SeededRandom(environmentOr: 0x5A3E_D701)
        let base = try Codec()
        let entity = base.entity
        let named = base.id(5)
        var codec = PageFileRowCodec(
            entityNamed: base.codec.entityNamed,
            makeObjectID: { $0 === entity && $1 == 5 ? named : base.codec.makeObjectID($0, $1) })
        let shared = UnresolvedRelationship(destination: named)
        codec.namedToOne = shared
        let layout = entity.layout
        var (sharing, own) = (0, 0)
        for round in 0..<2_000 {
            let bytes = base.randomRow(&random)
            try bytes.withUnsafeBytes { raw in
                let general = try codec.decode(raw, entity: entity)
                guard let slots = try codec.decodeSlots(raw, layout: layout)?.slots else { return }
                let hint = Comment(rawValue: "round \(round), \(random.replayHint), stored \(general.values)")
                let expected = layout.objectValues(fromStored: general.values).storage.map(Self.describe)
                #expect(slots.values.storage.map(Self.describe) == expected, hint)
                for (slot, value) in slots.values.storage.enumerated() {
                    guard case .toOne = layout.storedValueConversions[slot],
                        case .unresolved(let relationship) = value, let destination = relationship.destination
                    else { continue }
                    let namesNamed = destination.key == 5
                    #expect((relationship === shared) == namesNamed, hint)
                    if namesNamed { sharing += 1 } else { own += 1 }
                }
            }
        }
        #expect(sharing > 20 && own > 200, "\(sharing) shared, \(own) of their own")
    }

    /// A batch naming an object of another entity with a key the rows' references also use
    /// shares nothing with them: a reference to the declared destination is the named
    /// object only when the named object's entity is that destination.
    @Test func toOnesNamingAnotherEntitysObjectOfTheSameKeyShareNothing() throws {
        var random = SeededRandom(environmentOr: 0x5A3E_D702)
        let base = try Codec()
        let other = NSEntityDescription()
        other.name = "Other"
        let named = NSManagedObjectID(entity: other, store: base.store, key: 5)
        var codec = PageFileRowCodec(
            entityNamed: base.codec.entityNamed,
            makeObjectID: { $0 === other && $1 == 5 ? named : base.codec.makeObjectID($0, $1) })
        let shared = UnresolvedRelationship(destination: named)
        codec.namedToOne = shared
        let layout = base.entity.layout
        var keyFive = 0
        for round in 0..<1_000 {
            let bytes = base.randomRow(&random)
            try bytes.withUnsafeBytes { raw in
                guard let slots = try codec.decodeSlots(raw, layout: layout)?.slots else { return }
                let general = try codec.decode(raw, entity: base.entity)
                let hint = Comment(rawValue: "round \(round), \(random.replayHint)")
                let expected = layout.objectValues(fromStored: general.values).storage.map(Self.describe)
                #expect(slots.values.storage.map(Self.describe) == expected, hint)
                for value in slots.values.storage {
                    guard case .unresolved(let relationship) = value, let destination = relationship.destination
                    else { continue }
                    #expect(relationship !== shared && destination.entity === base.entity, hint)
                    if destination.key == 5 { keyFive += 1 }
                }
            }
        }
        #expect(keyFive > 10, "\(keyFive) references to key 5")
    }

    /// A reference's entity name read without a String when it is empty gives what the
    /// string read gives: the declared entity for the empty name, the named entity
    /// otherwise, and for bytes cut short the same error.
    @Test func referencesReadTheirEntityNameAsTheStringReadDoes() throws {
        let base = try Codec()
        let entity = base.entity
        let entityName = try #require(entity.name)
        func general(_ bytes: [UInt8]) -> Result<(String, Int64), NSError> {
            bytes.withUnsafeBytes { raw in
                var reader = StoreByteReader(row: raw)
                return Result {
                    let name = try reader.string()
                    let named = name.isEmpty ? entity : base.codec.entityNamed(name)
                    guard let named else { throw reader.damaged("unknown entity") }
                    return (named.name ?? "", try reader.signed())
                }.mapError { $0 as NSError }
            }
        }
        func direct(_ bytes: [UInt8]) -> Result<(String, Int64), NSError> {
            bytes.withUnsafeBytes { raw in
                var reader = StoreByteReader(row: raw)
                return Result {
                    let id = try #require(try base.codec.reference(&reader, declaredEntity: entity))
                    return (id.entity.name ?? "", id.key)
                }.mapError { $0 as NSError }
            }
        }
        var writer = StoreByteWriter()
        writer.string("")
        writer.signed(42)
        let unnamed = writer.bytes
        writer = StoreByteWriter()
        writer.string(entityName)
        writer.signed(-7)
        let named = writer.bytes
        for bytes in [unnamed, named] {
            for end in 0...bytes.count {
                let cut = Array(bytes[..<end])
                switch (general(cut), direct(cut)) {
                case (.success(let expected), .success(let read)):
                    #expect(read == expected, "\(cut)")
                case (.failure(let expected), .failure(let error)):
                    #expect(error.code == expected.code && error.localizedDescription == expected.localizedDescription)
                default: Issue.record("the reads disagree on \(cut)")
                }
            }
        }
        #expect(try direct(unnamed).get() == (entityName, 42))
        #expect(try direct(named).get() == (entityName, -7))
    }

    @Test func outOfRangeIntegersAndOtherFormsDeclineTheSlotForm() throws {
        let codec = try Codec()
        let layout = codec.entity.layout
        let slotOf = { (type: NSAttributeType) in
            try #require(StoredValueConversionTests.attributeTypes.firstIndex(of: type))
        }
        // An Int16 attribute holding 70,000 (the general path truncates it), a Boolean
        // attribute holding an integer, a Float: each keeps its row in stored form.
        for (slot, value) in [
            (try slotOf(.integer16AttributeType), StoreValue.integer(70_000)),
            (try slotOf(.integer32AttributeType), .integer(1 << 40)),
            (try slotOf(.booleanAttributeType), .integer(2)),
            (try slotOf(.floatAttributeType), .float(1.5)),
            (try slotOf(.decimalAttributeType), .decimal(Decimal(string: "1.25")!)),
            (try slotOf(.URIAttributeType), .uri(URL(string: "https://example.com")!)),
            (try slotOf(.doubleAttributeType), .integer(3)),
        ] {
            var values = [StoreValue](repeating: .null, count: layout.properties.count)
            values[slot] = value
            let bytes = PageFileRowCodec.encode(values: values, version: 1, layout: layout)
            try bytes.withUnsafeBytes { raw in
                let row = try codec.slotRow(raw)
                #expect(row.slots == nil, "\(value) in slot \(slot)")
                let general = try codec.codec.decode(raw, entity: codec.entity)
                #expect(row.values.map(Self.describe) == general.values.map(Self.describe))
            }
        }
    }

    @Test func damagedRowsThrowTheGeneralDecodesError() throws {
        var random = SeededRandom(environmentOr: 0xDA3A_6ED)
        let codec = try Codec()
        var failures = 0
        for round in 0..<3_000 {
            var bytes = codec.randomRow(&random)
            switch random.int(in: 0...2) {
            case 0: bytes.removeLast(random.int(in: 0...min(bytes.count, 6)))
            case 1 where !bytes.isEmpty: bytes[random.int(in: 0...(bytes.count - 1))] = UInt8(random.int(in: 0...255))
            default: bytes.append(contentsOf: random.bytes(random.int(in: 1...4)))
            }
            bytes.withUnsafeBytes { raw in
                let hint = Comment(rawValue: "round \(round), \(random.replayHint), bytes \(Array(raw))")
                let general = Result { try codec.codec.decode(raw, entity: codec.entity) }
                let direct = Result { try codec.slotRow(raw) }
                switch (general, direct) {
                case (.failure(let expected), .failure(let error)):
                    failures += 1
                    #expect((error as NSError).code == (expected as NSError).code, hint)
                    #expect(error.localizedDescription == expected.localizedDescription, hint)
                case (.success(let expected), .success(let row)):
                    #expect(row.version == expected.version, hint)
                    #expect(row.values.map(Self.describe) == expected.values.map(Self.describe), hint)
                default:
                    Issue.record("the paths disagree: general \(general), slot form \(direct); \(hint)")
                }
            }
        }
        #expect(failures > 300, "\(failures) damaged rows")
    }
}
