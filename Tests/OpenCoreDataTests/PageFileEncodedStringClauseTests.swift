// The scan's string test (`PageFileEncodedStringClause`) reads ASCII rows eight bytes at a
// time and finds a CONTAINS[c] match by the pattern's first byte in both cases: rows
// longer than a word with a hazard (CR, a byte >= 0x80 of ß, İ, ﬀ, K, é) at every
// position, fetched and counted by string operators with and without [c], must give what
// `evaluate(with:)` gives. A lone clause reads its slot straight from the row, and
// CONTAINS of a pattern of at most 8 bytes in a string of at most 8 is one word's test
// (read as the 8 bytes ending the string): checked against a byte loop with junk of every
// kind before and after the string, against the slot walk it skips on damaged rows, and
// as fetches and counts of short names in the first and in a later slot.
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

@Suite struct PageFileEncodedStringClauseTests {
    static let hazards = ["\r", "\r\n", "ß", "İ", "ı", "ﬀ", "\u{212A}", "é", "e\u{301}", "🚀", "\u{7F}", "@", "[", "`"]

    @Test func longRowsWithAHazardAnywhereAgreeWithTheEvaluator() throws {
        let url = try PageFileFixtures.temporaryURL()
        let context = PageFileFixtures.context(try PageFileFixtures.coordinator(PageFileEncodedScanTests.model, url))
        try context.performAndWait {
            let base = "JacksonStrassesonFFkIi"
            var names: [String] = [base, base.lowercased(), base.uppercased(), "strasse", "STRASSE son"]
            for hazard in Self.hazards {
                for position in 0...base.count {
                    var name = base
                    name.insert(contentsOf: hazard, at: name.index(name.startIndex, offsetBy: position))
                    names.append(name)
                }
            }
            for name in names {
                NSEntityDescription.insertNewObject(forEntityName: "Person", into: context).setValue(
                    name, forKey: "name")
            }
            try context.save()
            context.reset()
            let everyone = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
            #expect(everyone.count == names.count)
            let patterns = [
                "son", "SON", "ss", "SS", "ß", "strasse", "ff", "ﬀ", "k", "K", "i", "I", "İ", "e", "\r", "@", "sonff",
                "sss", "fffk", "kk",
            ]
            typealias Operator = OpenCoreData.NSComparisonPredicate.Operator
            typealias Options = OpenCoreData.NSComparisonPredicate.Options
            let operators: [(String, Operator, Options)] = [
                ("CONTAINS", .contains, []), ("CONTAINS[c]", .contains, .caseInsensitive),
                ("CONTAINS[cd]", .contains, [.caseInsensitive, .diacriticInsensitive]),
                ("BEGINSWITH[c]", .beginsWith, .caseInsensitive), ("ENDSWITH[c]", .endsWith, .caseInsensitive),
                ("==[c]", .equalTo, .caseInsensitive), ("!=[c]", .notEqualTo, .caseInsensitive),
            ]
            var matched = 0
            for pattern in patterns {
                for (operation, type, options) in operators {
                    let predicate = NSPredicate(format: "name \(operation) %@", pattern)
                    let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
                    request.predicate = predicate
                    let expected = try everyone.filter { try predicate.evaluateThrowing(with: $0) }.count
                    // The Unicode path alone (no byte-level shortcut), so a wrong shortcut
                    // shared by the evaluator and the scan still fails here.
                    let general = ComparisonOperation(type: type, options: options)
                    let unicode = try names.filter { try general.evaluate($0, pattern) }.count
                    #expect(unicode == expected, "evaluation of \(predicate.predicateFormat)")
                    // And a model sharing no code with either (grapheme clusters folded by the
                    // options, compared scalar by scalar), on every sixth row: it is slow, and
                    // the hazard's position still varies across the sample.
                    for (row, object) in everyone.enumerated() where row % 6 == 0 {
                        let name = object.value(forKey: "name") as? String ?? ""
                        let modelled = StringOperatorOracle.evaluate(
                            type, subject: name, pattern: pattern, options: options)
                        #expect(
                            try modelled == predicate.evaluateThrowing(with: object),
                            "the oracle's answer to \(predicate.predicateFormat) on \(name.debugDescription)")
                    }
                    #expect(try context.count(for: request) == expected, "count of \(predicate.predicateFormat)")
                    #expect(try context.fetch(request).count == expected, "fetch of \(predicate.predicateFormat)")
                    if expected > 0, expected < names.count { matched += 1 }
                }
            }
            #expect(matched > 40, "too few predicates matched some rows but not all")
        }
    }

    /// The one-word CONTAINS against a plain byte loop: subjects of 0 to 40 bytes (one word
    /// up to 8, windows past that) after 0 to 9 bytes of anything (read with the subject
    /// when it ends 8 or more bytes in, and which must not count), patterns of 1 to 8 bytes
    /// holding NUL and the bytes around A-Z and a-z; nil exactly when the subject holds a
    /// byte >= 0x80 or CR.
    @Test func oneWordContainsAgreesWithAByteLoop() {
        var random = SeededRandom(environmentOr: 2_828)
        let subjectBytes: [UInt8] = Array("sStT1aA@[`{zZ".utf8) + [0x00, 0x0A, 0x0D, 0x7F, 0xC3, 0xA9, 0xFF]
        let patternBytes: [UInt8] = Array("sStT1aA@[`{zZ".utf8) + [0x00, 0x0A, 0x7F]
        var found = 0
        var missed = 0
        var refused = 0
        for _ in 0..<40_000 {
            let prefix = random.bytes(random.int(in: 0...9))
            var subject = (0..<random.int(in: random.chance(0.5) ? 0...8 : 9...40)).map { _ in
                random.chance(0.9) ? random.pick(subjectBytes.prefix(13)) : random.pick(subjectBytes)
            }
            if random.chance(0.02) { subject = [] }
            var pattern = (0..<random.int(in: 1...8)).map { _ in random.pick(patternBytes) }
            if random.chance(0.5), !subject.isEmpty {
                let start = random.int(in: 0...(subject.count - 1))
                pattern = Array(subject[start..<min(subject.count, start + random.int(in: 1...8))])
                if random.chance(0.3) { pattern = pattern.map { $0 ^ 0x20 } }
                if pattern.contains(where: { $0 >= 0x80 || $0 == 0x0D }) { pattern = [0x73] }
            }
            let caseInsensitive = random.chance(0.7)
            let folded = caseInsensitive ? pattern.map(ASCIIStringMatcher.lowercased) : pattern
            // The reference: every start tried, byte by byte.
            let expected: Bool?
            if subject.contains(where: { $0 >= 0x80 || $0 == 0x0D }) {
                expected = nil
            } else {
                let text = caseInsensitive ? subject.map(ASCIIStringMatcher.lowercased) : subject
                expected =
                    text.count >= folded.count
                    && (0...(text.count - folded.count)).contains { Array(text[$0..<($0 + folded.count)]) == folded }
            }
            let bytes = prefix + subject + random.bytes(random.int(in: 0...3))
            let words = folded.map(ASCIIWordSearch.broadcast)
            let actual = words.withUnsafeBufferPointer { words in
                bytes.withUnsafeBytes { buffer in
                    ASCIIWordSearch.isContained(
                        patternWords: words.baseAddress!, packed: ASCIIWordSearch.packed(folded), length: words.count,
                        caseInsensitive: caseInsensitive,
                        in: buffer, start: prefix.count, count: subject.count)
                }
            }
            #expect(
                actual == expected,
                "\(folded) in \(subject) after \(prefix), [c] \(caseInsensitive) (\(random.replayHint))")
            switch expected {
            case true: found += 1
            case false: missed += 1
            default: refused += 1
            }
        }
        #expect(
            found > 5_000 && missed > 5_000 && refused > 2_000, "\(found) found, \(missed) missed, \(refused) refused")
    }

    /// The windowed CONTAINS of subjects over 8 bytes, exhaustively: a pattern of every
    /// length 1-8 placed at every start of a subject of every length 9-40 is found (in its
    /// case, and in the other case under [c]); with its last byte changed, or flipped by
    /// 0x20 where that is not a case ('@' and '`'), it is not; a byte >= 0x80 or CR at any
    /// place answers nil, found or not. The subject lies between bytes >= 0x80: a window
    /// read past either end would answer nil.
    @Test func longSubjectsFindEveryStartAndRefuseEveryHazard() {
        let letters = Array("ab@defgh".utf8)
        var checked = 0
        for count in 9...40 {
            for length in 1...8 {
                let pattern = Array(letters.prefix(length))
                for caseInsensitive in [false, true] {
                    let folded = pattern.map(ASCIIStringMatcher.lowercased)
                    let words = folded.map(ASCIIWordSearch.broadcast)
                    func search(_ subject: [UInt8]) -> Bool? {
                        let bytes = [0xFF, 0x80] + subject + [0xC3, 0xFF, 0x0D]
                        return words.withUnsafeBufferPointer { words in
                            bytes.withUnsafeBytes {
                                ASCIIWordSearch.isContained(
                                    patternWords: words.baseAddress!, packed: ASCIIWordSearch.packed(folded),
                                    length: length,
                                    caseInsensitive: caseInsensitive, in: $0, start: 2, count: subject.count)
                            }
                        }
                    }
                    for start in 0...(count - length) {
                        var subject = [UInt8](repeating: 0x78, count: count)
                        let placed = caseInsensitive ? pattern.map { $0 == 0x40 ? $0 : $0 ^ 0x20 } : pattern
                        subject.replaceSubrange(start..<(start + length), with: placed)
                        #expect(search(subject) == true, "\(pattern) at \(start) of \(count), [c] \(caseInsensitive)")
                        var changed = subject
                        changed[start + length - 1] = 0x79
                        #expect(search(changed) == false, "\(changed), [c] \(caseInsensitive)")
                        if length >= 3 {
                            changed = subject
                            changed[start + 2] = 0x60  // '`' for '@': not the same letter in either case
                            #expect(search(changed) == false, "\(changed), [c] \(caseInsensitive)")
                        }
                        let hazardAt = (start * 7 + length) % count
                        for hazard: UInt8 in [0x0D, 0x80, 0xC3, 0xFF] {
                            var hazardous = subject
                            hazardous[hazardAt] = hazard
                            #expect(search(hazardous) == nil, "\(hazardous), [c] \(caseInsensitive)")
                        }
                        checked += 1
                    }
                    // A hazard at every place, before, inside and after a match.
                    var subject = [UInt8](repeating: 0x78, count: count)
                    subject.replaceSubrange(0..<length, with: pattern)
                    for place in 0..<count {
                        var hazardous = subject
                        hazardous[place] = 0x0D
                        #expect(search(hazardous) == nil, "\(hazardous), [c] \(caseInsensitive)")
                        hazardous[place] = 0xE9
                        #expect(search(hazardous) == nil, "\(hazardous), [c] \(caseInsensitive)")
                    }
                }
            }
        }
        #expect(checked > 5_000)
    }

    /// A lone string clause's answer from the whole row (``PageFileEncodedPredicate/evaluate(row:slots:codec:)``,
    /// which finds the slot without the walk's offsets and tests short strings in one
    /// word) is the slot walk's and the encoded predicate's answer, or its failure, on
    /// intact and damaged rows; on intact rows it is the compiled predicate's on the
    /// decoded row. Every string operator with and without [c], [d] and [cd], in the first
    /// slot and a later one behind values of every kind, on nil, empty, short, long and
    /// non-ASCII strings and patterns longer than the value.
    @Test func rowLevelStringTestAgreesWithTheSlotWalk() throws {
        var random = SeededRandom(environmentOr: 2_929)
        let model = PageFileEncodedScanTests.model
        let entity = try #require(model.entitiesByName["Person"])
        let layout = entity.layout
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(
            ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
        let codec = PageFileRowCodec(
            entityNamed: { model.entitiesByName[$0] }, makeObjectID: { store.newObjectID(for: $0, key: $1) })
        let letters = ["s", "S", "t", "T", "1", "a", "@", "`", "[", "{", "z", " ", "\0", "\u{7F}"]
        let hazards = ["\r\n", "\r", "é", "e\u{301}", "ß", "\u{212A}", "🚀", "ﬆ", "\u{17F}"]
        func text(_ pieces: ClosedRange<Int>) -> String {
            var text = ""
            for _ in 0..<random.int(in: pieces) {
                text += random.chance(0.92) ? random.pick(letters) : random.pick(hazards)
            }
            return text
        }
        let slots = PageFileRowSlots(capacity: 3)
        var direct = 0
        var oneWord = 0
        var windowed = 0
        var compared = 0
        for step in 0..<10_000 {
            let key = random.pick(["name", "note"])
            let slot = key == "name" ? 0 : 5
            var subject = text(0...9)
            if random.chance(0.3) { subject = text(9...40) }
            var pattern = text(0...3)
            if random.chance(0.5), !subject.isEmpty {
                let characters = Array(subject)
                let start = random.int(in: 0...(characters.count - 1))
                pattern = String(characters[start..<min(characters.count, start + random.int(in: 1...10))])
                if random.chance(0.5) { pattern = random.chance(0.5) ? pattern.uppercased() : pattern.lowercased() }
            }
            if random.chance(0.05) { pattern = subject + random.pick(letters) }
            let op = random.pick([
                "CONTAINS", "CONTAINS", "CONTAINS", "BEGINSWITH", "ENDSWITH", "==", "!=", "LIKE", "MATCHES",
            ])
            let options = random.pick(["", "[c]", "[c]", "[d]", "[cd]"])
            let predicate = OpenCoreData.NSPredicate(format: "\(key) \(op)\(options) %@", argumentArray: [pattern])
            guard predicate.validationError == nil,
                let compiled = try? predicate.compiled(for: entity.frozenLayoutIfAny),
                let encoded = PageFileEncodedPredicate(predicate, layout: layout)
            else { continue }
            var values = (0..<6).map { PageFileEncodedScanTests.randomValue($0, &random, wide: true) }
            values[slot] = random.chance(0.08) ? .null : .string(subject)
            let width = random.chance(0.1) ? random.int(in: 0...6) : 6
            var bytes = PageFileRowCodec.encode(values: Array(values.prefix(width)), version: 3, layout: layout)
            let damaged = random.chance(0.2)
            if damaged {
                switch random.int(in: 0...2) {
                case 0: bytes[random.int(in: 0...(bytes.count - 1))] = UInt8(random.int(in: 0...255))
                case 1: bytes.removeLast(random.int(in: 0...min(3, bytes.count - 1)))
                default: bytes.append(UInt8(random.int(in: 0...255)))
                }
            }
            let hint = "\(predicate.predicateFormat) on \(bytes) (\(random.replayHint))"
            let (walked, scanned, answer) = bytes.withUnsafeBytes { buffer in
                (
                    Result { () throws -> Bool in
                        try slots.walk(buffer, through: encoded.lastSlot)
                        return try encoded.evaluate(buffer, offsets: slots.offsets, codec: codec)
                    },
                    Result { try encoded.evaluate(row: buffer, slots: slots, codec: codec) },
                    encoded.evaluateOnlyString(buffer)
                )
            }
            switch (walked, scanned) {
            case (.success(let a), .success(let b)): #expect(a == b, "\(hint)")
            case (.failure, .failure): break
            default: Issue.record("the walk \(walked) but the row's test \(scanned): \(hint)")
            }
            if let answer {
                direct += 1
                #expect(encoded.isOnlyString)
                if case .success(let walkedAnswer) = walked {
                    #expect(walkedAnswer == answer, "direct: \(hint)")
                } else {
                    Issue.record("the walk fails but the direct test answers: \(hint)")
                }
                let utf8 = subject.utf8
                if op == "CONTAINS", case .string = values[slot], width > slot, utf8.count <= 63,
                    (1...8).contains(pattern.utf8.count)
                {
                    if utf8.count > 8 { windowed += 1 } else { oneWord += 1 }
                }
            }
            guard !damaged else { continue }
            let row = StoreRow(
                objectID: store.newObjectID(for: entity, key: Int64(step)), version: 3,
                values: Array(values.prefix(width)) + Array(repeating: .null, count: 6 - width))
            let view = StoreRowView(row: row, resolve: { _ in nil }, resolveToMany: { _, _ in [] })
            let expected = Result { try compiled.evaluate(record: view) }
            compared += 1
            switch (expected, scanned) {
            case (.success(let a), .success(let b)): #expect(a == b, "compiled: \(hint)")
            case (.failure, .failure): break
            default: Issue.record("compiled \(expected) but the row's test \(scanned): \(hint)")
            }
        }
        #expect(
            direct > 3_000 && oneWord > 1_000 && windowed > 300 && compared > 5_000,
            "\(direct) direct, \(oneWord) in one word, \(windowed) in windows")
    }

    /// Row-tree keys checked inline (``PageFileKey/isRowKey(_:)``, every scanned row) agree
    /// with ``PageFileKey/primaryLength(_:)`` on arbitrary bytes of every length.
    @Test func rowKeyCheckAgreesWithThePrimaryLength() {
        var random = SeededRandom(environmentOr: 3_030)
        var accepted = 0
        for _ in 0..<20_000 {
            var bytes = random.bytes(random.int(in: 0...12))
            // Mostly well formed ends, so both answers are often yes.
            if bytes.count >= 2, random.chance(0.6) {
                let header = bytes[bytes.count - 1]
                bytes[0] = header
                if random.chance(0.7) {
                    let count = bytes.count - 2
                    let fixed = random.chance(0.5) ? UInt8(0x80 + min(count, 0x7F)) : UInt8(0x7F - min(count, 0x7F))
                    bytes[0] = fixed
                    bytes[bytes.count - 1] = fixed
                }
            }
            bytes.withUnsafeBytes { buffer in
                let expected = PageFileKey.primaryLength(buffer) == buffer.count
                #expect(PageFileKey.isRowKey(buffer) == expected, "\(bytes) (\(random.replayHint))")
                if expected { accepted += 1 }
            }
        }
        #expect(accepted > 3_000, "\(accepted) row keys")
    }

    /// Short names (at most 8 bytes, where CONTAINS is one word's test) with a hazard at
    /// every position, nil and empty values, in the first slot and behind values of every
    /// kind, fetched and counted: the store's answers are `evaluate(with:)`'s and the
    /// oracle's.
    @Test func shortNamesInAnySlotAgreeWithTheEvaluator() throws {
        let url = try PageFileFixtures.temporaryURL()
        let context = PageFileFixtures.context(try PageFileFixtures.coordinator(PageFileEncodedScanTests.model, url))
        try context.performAndWait {
            var names: [String?] = [
                nil, "", "s", "St1", "First123", "FIRST12", "first1", "ST1ST1ST", "xst1", "AbC@[`{",
            ]
            for base in ["Fst1rst", "aSt1B"] {
                for hazard in Self.hazards {
                    for position in 0...base.count {
                        var name = base
                        name.insert(contentsOf: hazard, at: name.index(name.startIndex, offsetBy: position))
                        names.append(name)
                    }
                }
            }
            for (index, name) in names.enumerated() {
                let person = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
                person.setValue(name, forKey: "name")
                person.setValue(name.map { String($0.reversed()) }, forKey: "note")
                person.setValue(index % 3 == 0 ? nil : NSNumber(value: index * 37 - 400), forKey: "age")
                person.setValue(Double(index) / 3, forKey: "score")
                person.setValue(Date(timeIntervalSinceReferenceDate: Double(index) * 1_000.5), forKey: "born")
                person.setValue(index % 2 == 0, forKey: "flag")
            }
            try context.save()
            context.reset()
            let everyone = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
            #expect(everyone.count == names.count)
            let patterns = [
                "st1", "ST1", "s", "1", "t1r", "first123", "first1234", "@[", "`{", "ß", "é", "\r", "k", "",
            ]
            typealias Operator = OpenCoreData.NSComparisonPredicate.Operator
            typealias Options = OpenCoreData.NSComparisonPredicate.Options
            let operators: [(String, Operator, Options)] = [
                ("CONTAINS", .contains, []), ("CONTAINS[c]", .contains, .caseInsensitive),
                ("CONTAINS[d]", .contains, .diacriticInsensitive),
                ("CONTAINS[cd]", .contains, [.caseInsensitive, .diacriticInsensitive]),
                ("BEGINSWITH[c]", .beginsWith, .caseInsensitive),
                (
                    "ENDSWITH[cd]", .endsWith,
                    [
                        .caseInsensitive, .diacriticInsensitive,
                    ]
                ), ("==[c]", .equalTo, .caseInsensitive), ("LIKE[c]", .like, .caseInsensitive),
            ]
            var matched = 0
            for key in ["name", "note"] {
                for pattern in patterns {
                    for (operation, type, options) in operators {
                        let predicate = NSPredicate(format: "\(key) \(operation) %@", pattern)
                        let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
                        request.predicate = predicate
                        let expected = try everyone.filter { try predicate.evaluateThrowing(with: $0) }.count
                        for object in everyone {
                            guard let value = object.value(forKey: key) as? String else { continue }
                            let modelled = StringOperatorOracle.evaluate(
                                type, subject: value, pattern: pattern, options: options)
                            #expect(
                                try modelled == predicate.evaluateThrowing(with: object),
                                "the oracle's answer to \(predicate.predicateFormat) on \(value.debugDescription)")
                        }
                        #expect(try context.count(for: request) == expected, "count of \(predicate.predicateFormat)")
                        #expect(try context.fetch(request).count == expected, "fetch of \(predicate.predicateFormat)")
                        if expected > 0, expected < names.count { matched += 1 }
                    }
                }
            }
            #expect(matched > 60, "too few predicates matched some rows but not all")
        }
    }
}
