// The default store's scan reads rows in their encoded form: single slots decoded on
// demand, simple predicates run on the bytes. Each piece is checked against the full
// path it replaces: random rows (strings mixing ASCII, CR LF, combining marks and emoji;
// numbers, dates, nulls, rows shorter than the entity) and random predicates must give
// the compiled predicate's answer on the decoded row, or fail alike.
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

struct PageFileEncodedScanTests {
    static let strings = [
        "", "a", "son", "SON", "Jackson", "JOHNSON", "Berners-Lee", "é", "e\u{301}", "Ärger", "ärger", "🚀son",
        "son\r\n", "\r\nson", "ab\0c", "SonS", "ﬀ", "straße", "STRASSE",
    ]

    static let model: NSManagedObjectModel = {
        func attribute(_ name: String, _ type: NSAttributeType) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.isOptional = true
            return attribute
        }
        let entity = NSEntityDescription()
        entity.name = "Person"
        entity.properties = [
            attribute("name", .stringAttributeType), attribute("age", .integer16AttributeType),
            attribute("score", .doubleAttributeType), attribute("born", .dateAttributeType),
            attribute("flag", .booleanAttributeType), attribute("note", .stringAttributeType),
        ]
        let model = NSManagedObjectModel()
        model.entities = [entity]
        return model
    }()

    /// A random value for `slot`; `wide` adds values that only rows can hold (integers
    /// beyond Int16, floats, NaN, booleans in integer slots and integers in others).
    static func randomValue(_ slot: Int, _ random: inout SeededRandom, wide: Bool = false) -> StoreValue {
        if random.chance(0.1) { return .null }
        switch slot {
        case 0, 5:
            var text = random.pick(strings)
            if random.chance(0.3) { text += random.pick(strings) }
            return .string(text)
        case 1:
            // Beyond Int16 (truncated as the attribute reads it), or a boolean in an integer slot.
            if wide, random.chance(0.05) { return .integer(Int64(random.pick([70_000, -65_535, 1 << 40]))) }
            if wide, random.chance(0.03) { return .boolean(random.chance(0.5)) }
            return .integer(Int64(random.int(in: -3...40)))
        case 2:
            if wide, random.chance(0.05) { return .double(random.pick([.nan, .infinity, -0.0])) }
            if wide, random.chance(0.05) { return .float(Float(random.int(in: -8...8)) / 4) }
            if wide, random.chance(0.05) { return .integer(Int64(random.int(in: -5...5))) }
            return .double(Double(random.int(in: -20...20)) / 4)
        case 3:
            // Whole seconds take the short date form; a fraction the full one.
            let fraction = wide && random.chance(0.3) ? 0.5 : 0
            return .date(Date(timeIntervalSinceReferenceDate: Double(random.int(in: -5...5) * 1000) + fraction))
        default:
            if wide, random.chance(0.05) { return .integer(Int64(random.int(in: 0...3))) }
            return .boolean(random.chance(0.5))
        }
    }

    static func randomPredicate(_ random: inout SeededRandom) -> OpenCoreData.NSPredicate {
        var format = ""
        var arguments: [Any] = []
        for index in 0..<random.int(in: 1...3) {
            if index > 0 { format += random.pick([" AND ", " OR ", " AND NOT "]) }
            switch random.int(in: 0...7) {
            case 0, 1, 2:
                let key = random.pick(["name", "note"])
                let op = random.pick(["==", "!=", "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE", "<", "IN"])
                let options = random.pick(["", "[c]", "[d]", "[cd]"])
                format += "\(key) \(op)\(options) %@"
                arguments.append(op == "IN" ? [random.pick(strings), random.pick(strings)] : random.pick(strings))
            case 3:
                format += "age \(random.pick(["==", "<", ">=", "!="])) %d"
                arguments.append(random.int(in: -3...40))
            case 4:
                // A type mismatch: both paths must throw.
                format += random.chance(0.5) ? "age CONTAINS %@" : "name > %d"
                arguments.append(random.chance(0.5) ? "a" : 3)
            case 5:
                // Integers and booleans: comparisons, BETWEEN, IN (with nil, doubles, strings).
                let key = random.pick(["age", "flag"])
                switch random.int(in: 0...3) {
                case 0:
                    format += "\(key) \(random.pick(["==", "!=", "<", "<=", ">", ">="])) %@"
                    arguments.append(
                        random.pick([NSNumber(value: 3), NSNumber(value: true), NSNumber(value: 4_464), 2.5]))
                case 1:
                    format += "\(key) BETWEEN %@"
                    arguments.append([random.int(in: -3...20), random.int(in: 0...40)])
                case 2:
                    format += "\(key) IN %@"
                    arguments.append([random.int(in: -3...40), random.pick([1, 0, 7]), random.pick(["3", 4.0, 4.5])])
                default:
                    format += "\(key) IN {nil, 1, 4464}"
                }
            case 6:
                // Numbers and dates against constants of their kind (and of another kind: an error).
                let key = random.pick(["score", "born"])
                let op = random.pick(["==", "!=", "<", "<=", ">", ">=", "BETWEEN"])
                format += "\(key) \(op) %@"
                let dates = (0..<2).map { _ in
                    Date(timeIntervalSinceReferenceDate: Double(random.int(in: -5...5) * 1000))
                }
                if op == "BETWEEN" {
                    arguments.append(key == "born" ? dates : [random.int(in: -5...0), 2.5])
                } else {
                    arguments.append(key == "born" && random.chance(0.8) ? dates[0] : random.pick([1.5, -0.0, 3]))
                }
            default:
                format += random.pick([
                    "flag == YES", "flag == NO", "flag != YES", "score > 1.5", "born < %@", "TRUEPREDICATE",
                    "name == nil", "age == nil", "born == nil", "age != nil",
                ])
                if format.hasSuffix("%@") { arguments.append(Date(timeIntervalSinceReferenceDate: 0)) }
            }
        }
        return OpenCoreData.NSPredicate(format: format, argumentArray: arguments)
    }

    @Test func encodedPredicateAgreesWithTheCompiledPredicateOnDecodedRows() throws {
        var random = SeededRandom(environmentOr: 7_373)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.model)
        let store = try coordinator.addPersistentStore(
            ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
        guard let entity = Self.model.entitiesByName["Person"] else {
            Issue.record("no entity")
            return
        }
        let layout = entity.layout
        let codec = PageFileRowCodec(
            entityNamed: { Self.model.entitiesByName[$0] }, makeObjectID: { store.newObjectID(for: $0, key: $1) })
        var covered = 0
        var directAnswers = 0
        var offsets: [Int] = []
        let slots = PageFileRowSlots(capacity: 3)
        for step in 0..<1_000 {
            let predicate = Self.randomPredicate(&random)
            guard predicate.validationError == nil else { continue }
            let compiled = try predicate.compiled(for: entity.frozenLayoutIfAny)
            let encoded = PageFileEncodedPredicate(predicate, layout: layout)
            if encoded != nil { covered += 1 }
            for _ in 0..<8 {
                // Rows written before the entity gained its last slots hold fewer values.
                let width = random.chance(0.1) ? random.int(in: 0...5) : 6
                let values = (0..<width).map { Self.randomValue($0, &random, wide: true) }
                let bytes = PageFileRowCodec.encode(values: values, version: 3, layout: layout)
                let row = StoreRow(
                    objectID: store.newObjectID(for: entity, key: Int64(step)), version: 3,
                    values: values + Array(repeating: .null, count: 6 - width))
                let view = StoreRowView(row: row, resolve: { _ in nil }, resolveToMany: { _, _ in [] })
                let expected = Result { try compiled.evaluate(record: view) }
                let hint = "\(predicate.predicateFormat) on \(values) (\(random.replayHint))"
                try bytes.withUnsafeBytes { buffer in
                    try PageFileRowCodec.slotOffsets(buffer, into: &offsets)
                    for slot in 0..<width {
                        let decoded = try codec.decodeValue(buffer, at: offsets[slot], declaredEntity: nil)
                        if case .double(let number) = values[slot], number.isNaN {
                            guard case .double(let read) = decoded, read.isNaN else {
                                Issue.record("NaN read back as \(decoded)")
                                continue
                            }
                        } else {
                            #expect(decoded == values[slot])
                        }
                    }
                    if let encoded {
                        let actual = Result { try encoded.evaluate(buffer, offsets: offsets, codec: codec) }
                        switch (expected, actual) {
                        case (.success(let a), .success(let b)): #expect(a == b, "\(hint)")
                        case (.failure, .failure): break
                        default: Issue.record("compiled \(expected) but encoded \(actual): \(hint)")
                        }
                        // A lone string clause's direct answer, where it gives one, is the predicate's.
                        // The scan's test of the whole row: the same answer, or the same failure.
                        let scanned = Result { try encoded.evaluate(row: buffer, slots: slots, codec: codec) }
                        switch (expected, scanned) {
                        case (.success(let a), .success(let b)): #expect(a == b, "scan: \(hint)")
                        case (.failure, .failure): break
                        default: Issue.record("compiled \(expected) but the scan \(scanned): \(hint)")
                        }
                        if encoded.isOnlyString, let direct = encoded.evaluateOnlyString(buffer) {
                            directAnswers += 1
                            if case .success(let answer) = expected {
                                #expect(answer == direct, "direct: \(hint)")
                            } else {
                                Issue.record("the predicate throws but the direct test answers: \(hint)")
                            }
                        }
                    }
                    let lazyView = PageFileEncodedRowView(
                        entity: entity, codec: codec,
                        decodeRow: { bytes, key in
                            let decoded = try codec.decode(bytes, entity: entity)
                            return StoreRow(
                                objectID: store.newObjectID(for: entity, key: key), version: decoded.version,
                                values: decoded.values)
                        },
                        makeView: { StoreRowView(row: $0, resolve: { _ in nil }, resolveToMany: { _, _ in [] }) })
                    try lazyView.reset(bytes: buffer, primaryKey: Int64(step))
                    let lazy = Result { try compiled.evaluate(record: lazyView) }
                    switch (expected, lazy) {
                    case (.success(let a), .success(let b)): #expect(a == b, "\(hint)")
                    case (.failure, .failure): break
                    default: Issue.record("compiled \(expected) but lazy view \(lazy): \(hint)")
                    }
                }
            }
        }
        #expect(covered > 500, "the encoded form covered \(covered) predicates (\(random.replayHint))")
        #expect(directAnswers > 300, "lone string clauses answered \(directAnswers) rows directly")
    }

    @Test func stringValidationAgreesWithTheStandardLibrary() {
        var random = SeededRandom(environmentOr: 9_191)
        let pieces: [[UInt8]] = [
            Array("a".utf8), Array("é".utf8), Array("🚀".utf8), [0xFF], [0xC3], [0xE2, 0x82], [0xED, 0xA0, 0x80],
            [0xF4, 0x90, 0x80, 0x80], [0xC0, 0xAF], [0xEF, 0xBF, 0xBD], [0x00], [0x80],
        ]
        for round in 0..<6_000 {
            var bytes: [UInt8] = []
            // Half the rounds long and mostly ASCII, so the word-at-a-time ASCII check meets a
            // lone non-ASCII byte at every position of its words, and its overlapping last word.
            let long = round % 2 == 1
            for _ in 0..<random.int(in: 0...(long ? 24 : 5)) {
                bytes += long && random.chance(0.9) ? [UInt8(random.int(in: 0...0x7F))] : random.pick(pieces)
            }
            let expected = String(validating: bytes, as: UTF8.self)
            let actual = bytes.withUnsafeBytes { StoreByteReader.validatedString($0) }
            #expect(actual == expected, "\(bytes) (\(random.replayHint))")
        }
    }

    /// Short ASCII strings made from their bits (StoreBytes.swift) are the strings the
    /// standard library makes: the same bits, and they compare, hash, grow and read alike.
    @Test func shortASCIIStringsAreTheStandardLibrarysStrings() {
        #expect(StoreByteReader.smallASCIIBitsHold)
        var random = SeededRandom(environmentOr: 9_292)
        for _ in 0..<2_000 {
            let bytes = (0..<random.int(in: 0...15)).map { _ in UInt8(random.int(in: 0...0x7F)) }
            let expected = String(decoding: bytes, as: UTF8.self)
            guard let actual = bytes.withUnsafeBytes({ StoreByteReader.validatedString($0) }) else {
                Issue.record("\(bytes) read as not UTF-8 (\(random.replayHint))")
                continue
            }
            let hint = Comment(rawValue: "\(bytes) (\(random.replayHint))")
            let bits = unsafeBitCast(actual, to: (UInt64, UInt64).self)
            #expect(bits == unsafeBitCast(expected, to: (UInt64, UInt64).self), hint)
            #expect(actual == expected && actual.hashValue == expected.hashValue, hint)
            #expect(Array(actual.utf8) == bytes && actual.count == expected.count, hint)
            var grown = actual
            grown += "é and more than fifteen bytes"
            #expect(grown == expected + "é and more than fifteen bytes", hint)
        }
    }

    @Test func slotOffsetsAgreeWithTheCheckedWalkOnDamagedRows() throws {
        var random = SeededRandom(environmentOr: 3_131)
        guard let layout = Self.model.entitiesByName["Person"]?.layout else { return }
        var offsets: [Int] = []
        // A scan's reusable offsets, with room for fewer slots than most rows hold: rows
        // past it take the growing path, the rest the pointer walk.
        let slots = PageFileRowSlots(capacity: 3)
        for _ in 0..<3_000 {
            let values = (0..<6).map { Self.randomValue($0, &random) }
            var bytes = PageFileRowCodec.encode(values: values, version: 9, layout: layout)
            for _ in 0..<random.int(in: 0...2) {
                switch random.int(in: 0...2) {
                case 0: bytes[random.int(in: 0...(bytes.count - 1))] = UInt8(random.int(in: 0...255))
                case 1: bytes.removeLast(random.int(in: 0...min(3, bytes.count - 1)))
                default: bytes.append(UInt8(random.int(in: 0...255)))
                }
            }
            // The reference: the checked reader, slot by slot.
            let expected = Result { () throws -> [Int] in
                try bytes.withUnsafeBytes { buffer in
                    // Row format 2: the version, then values to the end (SPEC.md §3.2).
                    var reader = StoreByteReader(row: buffer)
                    _ = try reader.varint()
                    var found: [Int] = []
                    while !reader.isAtEnd {
                        found.append(reader.offset)
                        try PageFileRowCodec.skipValue(&reader)
                    }
                    return found
                }
            }
            let actual = Result { () throws -> [Int] in
                try bytes.withUnsafeBytes { try PageFileRowCodec.slotOffsets($0, into: &offsets) }
                return offsets
            }
            let walked = Result { () throws -> [Int] in
                try bytes.withUnsafeBytes { try slots.walk($0) }
                return Array(slots.offsets)
            }
            for (path, actual) in [("slotOffsets", actual), ("PageFileRowSlots", walked)] {
                switch (expected, actual) {
                case (.success(let a), .success(let b)): #expect(a == b, "\(path): \(bytes) (\(random.replayHint))")
                case (.failure, .failure): break
                default:
                    Issue.record("checked \(expected) but \(path) \(actual) for \(bytes) (\(random.replayHint))")
                }
            }
        }
    }

    /// A scan walks a row only through the last slot its predicate reads (SPEC.md §3.5 Q3a):
    /// the offsets it finds, and the damage it refuses, are the checked reader's over those
    /// slots, on intact and damaged rows alike.
    @Test func slotWalkThroughTheLastSlotReadAgreesWithTheCheckedReader() throws {
        var random = SeededRandom(environmentOr: 6_262)
        guard let layout = Self.model.entitiesByName["Person"]?.layout else { return }
        var offsets: [Int] = []
        let slots = PageFileRowSlots(capacity: 3)
        var stoppedBeforeDamage = 0
        for _ in 0..<4_000 {
            let values = (0..<random.int(in: 0...6)).map { Self.randomValue($0, &random, wide: true) }
            var bytes = PageFileRowCodec.encode(values: values, version: 9, layout: layout)
            for _ in 0..<random.int(in: 0...2) {
                switch random.int(in: 0...2) {
                case 0: bytes[random.int(in: 0...(bytes.count - 1))] = UInt8(random.int(in: 0...255))
                case 1: bytes.removeLast(random.int(in: 0...min(3, bytes.count - 1)))
                default: bytes.append(UInt8(random.int(in: 0...255)))
                }
            }
            let lastSlot = random.int(in: -1...6)
            let expected = Result { () throws -> [Int] in
                try bytes.withUnsafeBytes { buffer in
                    var reader = StoreByteReader(row: buffer)
                    _ = try reader.varint()
                    var found: [Int] = []
                    while !reader.isAtEnd, found.count <= lastSlot {
                        found.append(reader.offset)
                        try PageFileRowCodec.skipValue(&reader)
                    }
                    return found
                }
            }
            // The offset of slot `lastSlot` alone, found without noting the others: where the
            // checked reader finds that slot, or nil; never an offset the reader does not reach.
            if lastSlot >= 0 {
                let quick = bytes.withUnsafeBytes { PageFileRowCodec.quickSlotOffset($0, of: lastSlot) }
                if case .success(let found) = expected, found.count > lastSlot {
                    #expect(quick == found[lastSlot], "slot \(lastSlot) of \(bytes) (\(random.replayHint))")
                } else if let quick {
                    // Damage in the slot's own value (which the caller's reading checks), no earlier.
                    let before = Result { () throws -> [Int] in
                        try bytes.withUnsafeBytes { buffer in
                            var reader = StoreByteReader(row: buffer)
                            _ = try reader.varint()
                            var found: [Int] = []
                            while !reader.isAtEnd, found.count <= lastSlot {
                                found.append(reader.offset)
                                if found.count <= lastSlot { try PageFileRowCodec.skipValue(&reader) }
                            }
                            return found
                        }
                    }
                    #expect(
                        (try? before.get())?.count == lastSlot + 1 && (try? before.get())?.last == quick,
                        "slot \(lastSlot) at \(quick) of \(bytes) (\(random.replayHint))")
                }
            }
            let whole = Result { try bytes.withUnsafeBytes { try PageFileRowCodec.slotOffsets($0, into: &offsets) } }
            if case .success = expected, case .failure = whole { stoppedBeforeDamage += 1 }
            let actual = Result { () throws -> [Int] in
                try bytes.withUnsafeBytes { try PageFileRowCodec.slotOffsets($0, into: &offsets, through: lastSlot) }
                return offsets
            }
            let walked = Result { () throws -> [Int] in
                try bytes.withUnsafeBytes { try slots.walk($0, through: lastSlot) }
                return Array(slots.offsets)
            }
            for (path, actual) in [("slotOffsets", actual), ("PageFileRowSlots", walked)] {
                switch (expected, actual) {
                case (.success(let a), .success(let b)):
                    #expect(a == b, "\(path) through \(lastSlot): \(bytes) (\(random.replayHint))")
                case (.failure, .failure): break
                default:
                    Issue.record(
                        "checked \(expected) but \(path) \(actual) through \(lastSlot) for \(bytes) (\(random.replayHint))"
                    )
                }
            }
        }
        #expect(stoppedBeforeDamage > 100, "\(stoppedBeforeDamage) rows damaged only past the slots read")
    }

    /// The one-slot walk skips an integer's varint with one 8-byte load where the row holds
    /// 8 more bytes, else byte by byte: for varints of every length 1-11 (terminated or not),
    /// at every distance from the row's end, behind and before other values, the slot it
    /// finds is the checked reader's, and it finds none the reader does not reach.
    @Test func oneSlotWalkSkipsVarintsOfEveryLengthAsTheCheckedReader() {
        var random = SeededRandom(environmentOr: 6_363)
        var reached = 0
        var refused = 0
        for _ in 0..<20_000 {
            var bytes: [UInt8] = random.chance(0.9) ? [3] : [0x83, 0x01]
            for _ in 0..<random.int(in: 1...4) {
                switch random.int(in: 0...5) {
                case 0: bytes.append(UInt8(random.int(in: 0x80...0xFF)))  // a small integer
                case 1: bytes += [0x42, 0x61, 0x62]  // "ab"
                case 2: bytes.append(random.pick([0, 4, 5]))
                default:
                    // An integer or whole-second date: 0-10 continuation bytes, then (mostly) a last byte.
                    bytes.append(random.pick([1, 0x10]))
                    for _ in 0..<random.int(in: 0...10) { bytes.append(UInt8(random.int(in: 0x80...0xFF))) }
                    if random.chance(0.9) { bytes.append(UInt8(random.int(in: 0...0x7F))) }
                }
            }
            for _ in 0..<random.int(in: 0...12) { bytes.append(UInt8(random.int(in: 0...0xFF))) }
            let slot = random.int(in: 0...4)
            // The checked reader's offsets of the slots before `slot` and of `slot` itself.
            let expected = bytes.withUnsafeBytes { buffer -> [Int] in
                var reader = StoreByteReader(row: buffer)
                guard (try? reader.varint()) != nil else { return [] }
                var found: [Int] = []
                while !reader.isAtEnd, found.count <= slot {
                    found.append(reader.offset)
                    if found.count <= slot {
                        guard (try? PageFileRowCodec.skipValue(&reader)) != nil else { break }
                    }
                }
                return found
            }
            let quick = bytes.withUnsafeBytes { PageFileRowCodec.quickSlotOffset($0, of: slot) }
            if let quick {
                reached += 1
                #expect(
                    expected.count == slot + 1 && expected.last == quick,
                    "slot \(slot) at \(quick) of \(bytes), the reader's \(expected) (\(random.replayHint))")
            } else {
                refused += 1
                // The quick walk refuses only what the reader refuses (before the slot, or in
                // the slot's own value for a tag it hands to the whole walk), or a varint of 10 bytes.
                let ownValue = bytes.withUnsafeBytes { buffer in
                    var reader = StoreByteReader(row: buffer, from: expected.last ?? 0)
                    return (try? PageFileRowCodec.skipValue(&reader)) != nil
                }
                // A varint of 10 bytes (which the reader takes and the quick walks leave to it).
                let longVarint = zip(expected, expected.dropFirst()).contains { $1 - $0 > 10 }
                #expect(
                    expected.count <= slot || !ownValue || longVarint,
                    "slot \(slot) refused in \(bytes), the reader's \(expected) (\(random.replayHint))")
            }
        }
        #expect(reached > 5_000 && refused > 2_000, "\(reached) reached, \(refused) refused")
    }

    /// The byte-level string tests (the two-byte filter of CONTAINS, prefixes, suffixes,
    /// equality; with and without [c] and [d]) on encoded rows answer what the compiled
    /// predicate answers on the decoded row: subjects and patterns mix ASCII letters whose
    /// case folding collides with other bytes under `| 0x20` ('@' and '`', '[' and '{'),
    /// CR LF, long strings (the length-prefixed tag) and non-ASCII text that folds to ASCII
    /// (the Kelvin sign, long s, ligatures), which must take the general path.
    @Test func encodedStringTestsAgreeWithTheCompiledPredicate() throws {
        var random = SeededRandom(environmentOr: 8_484)
        guard let entity = Self.model.entitiesByName["Person"] else { return }
        let layout = entity.layout
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.model)
        let store = try coordinator.addPersistentStore(
            ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
        let codec = PageFileRowCodec(
            entityNamed: { Self.model.entitiesByName[$0] }, makeObjectID: { store.newObjectID(for: $0, key: $1) })
        let letters = ["s", "S", "t", "T", "1", "a", "R", "@", "`", "[", "{", "z", "Z", " "]
        let hazards = ["\u{17F}", "\u{212A}", "k", "ﬆ", "\r\n", "\r", "é", "e\u{301}", "\u{301}", "ß", "🚀", "İ"]
        func text(_ pieces: ClosedRange<Int>) -> String {
            var text = ""
            for _ in 0..<random.int(in: pieces) {
                text += random.chance(0.9) ? random.pick(letters) : random.pick(hazards)
            }
            return text
        }
        var asciiMatches = 0
        var asciiMisses = 0
        var offsets: [Int] = []
        for step in 0..<6_000 {
            // Short strings mostly; some past 63 bytes take the length-prefixed tag.
            var subject = text(0...12)
            if random.chance(0.05) { subject = String(repeating: text(4...8), count: 10) }
            var pattern = text(1...4)
            if random.chance(0.4), !subject.isEmpty {
                let characters = Array(subject)
                let start = random.int(in: 0...(characters.count - 1))
                pattern = String(characters[start..<min(characters.count, start + random.int(in: 1...4))])
                if random.chance(0.5) { pattern = random.chance(0.5) ? pattern.uppercased() : pattern.lowercased() }
            }
            let op = random.pick(["CONTAINS", "BEGINSWITH", "ENDSWITH", "==", "!="])
            let options = random.pick(["", "[c]", "[d]", "[cd]"])
            let predicate = OpenCoreData.NSPredicate(format: "name \(op)\(options) %@", argumentArray: [pattern])
            let compiled = try predicate.compiled(for: entity.frozenLayoutIfAny)
            let encoded = try #require(PageFileEncodedPredicate(predicate, layout: layout))
            let values: [StoreValue] = [.string(subject), .integer(1)]
            let bytes = PageFileRowCodec.encode(values: values, version: 1, layout: layout)
            let row = StoreRow(
                objectID: store.newObjectID(for: entity, key: Int64(step)), version: 1,
                values: values + Array(repeating: .null, count: 4))
            let view = StoreRowView(row: row, resolve: { _ in nil }, resolveToMany: { _, _ in [] })
            let expected = try compiled.evaluate(record: view)
            let (actual, direct) = try bytes.withUnsafeBytes { buffer in
                try PageFileRowCodec.slotOffsets(buffer, into: &offsets, through: encoded.lastSlot)
                return (
                    try encoded.evaluate(buffer, offsets: offsets, codec: codec),
                    encoded.evaluateOnlyString(buffer)
                )
            }
            // The scan's direct answer of a lone string clause, where it gives one.
            #expect(encoded.isOnlyString)
            #expect(direct == nil || direct == actual, "direct \(direct as Any), encoded \(actual)")
            // The compiled predicate takes the same byte-level shortcut for ASCII: the
            // Unicode comparison of folded clusters, which it runs on any other text, is the
            // reference that shares none of it.
            let folding = StringComparisonOptions(
                options == "[c]"
                    ? .caseInsensitive
                    : options == "[d]"
                        ? .diacriticInsensitive : options == "[cd]" ? [.caseInsensitive, .diacriticInsensitive] : [])
            let folded = FoldedString(subject, options: folding)
            let foldedPattern = FoldedPattern(pattern, options: folding)
            let equal =
                folding.folds
                ? folded.scalars == FoldedString(pattern, options: folding).scalars : subject == pattern
            let unicode: Bool
            switch op {
            case "CONTAINS": unicode = folded.contains(foldedPattern)
            case "BEGINSWITH": unicode = folded.hasPrefix(foldedPattern)
            case "ENDSWITH": unicode = folded.hasSuffix(foldedPattern)
            case "==": unicode = equal
            default: unicode = !equal
            }
            #expect(
                actual == expected && actual == unicode,
                "\(predicate.predicateFormat) on \(subject.debugDescription): encoded \(actual), compiled \(expected), Unicode \(unicode) (\(random.replayHint))"
            )
            if actual != expected || actual != unicode { return }
            if (subject + pattern).utf8.allSatisfy({ $0 < 0x80 && $0 != 0x0D }) {
                if expected { asciiMatches += 1 } else { asciiMisses += 1 }
            }
        }
        #expect(asciiMatches > 500 && asciiMisses > 500, "\(asciiMatches) matches, \(asciiMisses) misses")
    }

    /// Row-tree keys read by index (the scan's per-row check) agree with a plain reading of
    /// SPEC.md §3.4 K1 on every key length, and damaged keys are refused alike.
    @Test func rowKeysAgreeWithTheirEncoding() {
        var random = SeededRandom(environmentOr: 4_242)
        var keys: [Int64] = [0, -1, 1, 127, 128, 255, 256, -256, -257, .max, .min, 100_000]
        for _ in 0..<2_000 { keys.append(Int64(bitPattern: random.next()) >> Int64(random.int(in: 0...63))) }
        for key in keys {
            let bytes = PageFileKey.primary(key)
            bytes.withUnsafeBytes { buffer in
                #expect(PageFileKey.rowKey(buffer) == key, "\(key)")
                #expect(PageFileKey.isRowKey(buffer), "\(key)")
                #expect(PageFileKey.primaryKey(buffer) == key, "\(key)")
            }
            // An index key ends in the primary key; a row key is nothing else.
            ([0x30, 0x41, 0x00, 0x00] + bytes).withUnsafeBytes { buffer in
                #expect(PageFileKey.primaryKey(buffer) == key, "\(key)")
                #expect(PageFileKey.rowKey(buffer) == nil, "\(key)")
                #expect(!PageFileKey.isRowKey(buffer), "\(key)")
            }
            var damaged = bytes
            damaged[0] ^= 0x01
            damaged.withUnsafeBytes { buffer in
                #expect(PageFileKey.rowKey(buffer) == nil, "\(key)")
                #expect(!PageFileKey.isRowKey(buffer), "\(key)")
            }
        }
    }

    @Test func damagedRowStructureIsRefused() {
        let layout = Self.model.entitiesByName["Person"]?.layout
        guard let layout else { return }
        // Version 1, "abc" (short string tag 0x43), a long string, the integer 3 (tag 0x83).
        let long = String(repeating: "x", count: 70)
        let bytes = PageFileRowCodec.encode(
            values: [.string("abc"), .string(long), .integer(3)], version: 1, layout: layout)
        let boundaries = [1, 5, 5 + 2 + 70, bytes.count]
        #expect(bytes.count == 1 + 4 + 72 + 1)
        var offsets: [Int] = []
        for cut in 0..<bytes.count {
            let prefix = Array(bytes[0..<cut])
            if let slots = boundaries.firstIndex(of: cut) {
                // A row ends at any value boundary: the missing slots read as nil.
                #expect(throws: Never.self) {
                    try prefix.withUnsafeBytes { try PageFileRowCodec.slotOffsets($0, into: &offsets) }
                }
                #expect(offsets == Array(boundaries.prefix(slots)), "cut at \(cut)")
            } else {
                #expect(throws: (any Error).self, "cut at \(cut)") {
                    try prefix.withUnsafeBytes { try PageFileRowCodec.slotOffsets($0, into: &offsets) }
                }
            }
        }
        var unknownTag = bytes
        unknownTag[unknownTag.count - 1] = 0x20  // reserved (SPEC.md §3.2)
        #expect(throws: (any Error).self) {
            try unknownTag.withUnsafeBytes { try PageFileRowCodec.slotOffsets($0, into: &offsets) }
        }
    }
}
