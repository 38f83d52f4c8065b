// The save path's fast paths give exactly what the general paths give: typed setters of
// an attribute's own type (stored as is) against key-value coding (converted and
// checked), and the default store's bulk index writes across inserts, updates and
// deletes of one save.
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

/// Every attribute type with a canonical Swift type, set through `@Managed`.
final class WriteSample: NSManagedObject {
    @Managed var small: Int16
    @Managed var medium: Int32
    @Managed var large: Int64
    @Managed var ratio: Double
    @Managed var fraction: Float
    @Managed var flag: Bool
    @Managed var text: String
    @Managed var when: Date
    @Managed var amount: Decimal
    @Managed var blob: Data
    @Managed var token: UUID
    @Managed var link: URL
    @Managed var note: String?
}

@Suite struct WritePathTests {
    static let keys = [
        "small", "medium", "large", "ratio", "fraction", "flag", "text", "when", "amount", "blob", "token", "link",
        "note",
    ]

    static let model: NSManagedObjectModel = {
        func attribute(_ name: String, _ type: NSAttributeType, optional: Bool = false, indexed: Bool = false)
            -> NSAttributeDescription
        {
            PageFileFixtures.attribute(name, type, optional: optional, indexed: indexed)
        }
        let sample = NSEntityDescription()
        sample.name = "WriteSample"
        sample.managedObjectClassName = NSStringFromClass(WriteSample.self)
        sample.properties = [
            attribute("small", .integer16AttributeType, indexed: true), attribute("medium", .integer32AttributeType),
            attribute("large", .integer64AttributeType), attribute("ratio", .doubleAttributeType),
            attribute("fraction", .floatAttributeType), attribute("flag", .booleanAttributeType),
            attribute("text", .stringAttributeType, indexed: true), attribute("when", .dateAttributeType),
            attribute("amount", .decimalAttributeType), attribute("blob", .binaryDataAttributeType),
            attribute("token", .UUIDAttributeType), attribute("link", .URIAttributeType),
            attribute("note", .stringAttributeType, optional: true),
        ]
        let model = NSManagedObjectModel()
        model.entities = [sample]
        return model
    }()

    /// One random value per key, of the attribute's own type.
    static func randomValues(_ random: inout SeededRandom) -> [String: Any?] {
        let texts = ["", "a", "Zoë", "e\u{301}", "日本", "x\u{0}y", String(repeating: "long ", count: 60)]
        return [
            "small": Int16(truncatingIfNeeded: random.int(in: -40_000...40_000)),
            "medium": Int32(truncatingIfNeeded: random.int(in: -3_000_000_000...3_000_000_000)),
            "large": Int64(bitPattern: random.next()),
            "ratio": random.chance(0.1) ? -0.0 : Double(random.int(in: -1_000_000...1_000_000)) / 7,
            "fraction": Float(random.int(in: -1000...1000)) / 3,
            "flag": random.chance(0.5),
            "text": random.pick(texts) + String(random.int(in: 0...99)),
            "when": Date(timeIntervalSinceReferenceDate: Double(random.int(in: -1_000_000_000...1_000_000_000))),
            "amount": Decimal(random.int(in: -100_000...100_000)) / 100,
            "blob": Data(random.bytes(random.int(in: 0...40))),
            "token": UUID(),
            "link": URL(string: "https://example.com/\(random.int(in: 0...9999))")!,
            "note": random.chance(0.3) ? nil : "note \(random.int(in: 0...9))",
        ]
    }

    static func fillTyped(_ object: WriteSample, _ values: [String: Any?]) {
        object.small = values["small"] as? Int16 ?? 0
        object.medium = values["medium"] as? Int32 ?? 0
        object.large = values["large"] as? Int64 ?? 0
        object.ratio = values["ratio"] as? Double ?? 0
        object.fraction = values["fraction"] as? Float ?? 0
        object.flag = values["flag"] as? Bool ?? false
        object.text = values["text"] as? String ?? ""
        object.when = values["when"] as? Date ?? Date()
        object.amount = values["amount"] as? Decimal ?? 0
        object.blob = values["blob"] as? Data ?? Data()
        object.token = values["token"] as? UUID ?? UUID()
        object.link = values["link"] as? URL ?? URL(fileURLWithPath: "/")
        object.note = values["note"] as? String
    }

    /// Sets through key-value coding; whole numbers go in as `Int`, so they take the converting path.
    static func fillByKey(_ object: NSManagedObject, _ values: [String: Any?]) {
        for key in keys {
            switch values[key] ?? nil {
            case let number as Int16: object.setValue(Int(number), forKey: key)
            case let number as Int32: object.setValue(Int(number), forKey: key)
            case let value: object.setValue(value, forKey: key)
            }
        }
    }

    /// The values of `object` as comparable text, key by key.
    static func snapshot(_ object: NSManagedObject) -> [String] {
        keys.map { key in "\(key)=\(object.value(forKey: key).map { String(describing: $0) } ?? "nil")" }
    }

    @Test func typedSettersAndKeyValueCodingSaveIdenticalRowsAndIndexes() throws {
        var random = SeededRandom(environmentOr: 0x5EED_0501)
        let hint = random.replayHint
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = try PageFileFixtures.coordinator(Self.model, url, type: NSSQLiteStoreType)
        let context = PageFileFixtures.context(coordinator)
        var pairs: [(typed: WriteSample, byKey: NSManagedObject, values: [String: Any?])] = []
        for _ in 0..<120 {
            let values = Self.randomValues(&random)
            let typed = WriteSample(context: context)
            Self.fillTyped(typed, values)
            let byKey = NSEntityDescription.insertNewObject(forEntityName: "WriteSample", into: context)
            Self.fillByKey(byKey, values)
            #expect(typed.isInserted && byKey.isInserted, "\(hint)")
            #expect(Self.snapshot(typed) == Self.snapshot(byKey), "\(hint)")
            pairs.append((typed, byKey, values))
        }
        try context.save()

        // Updates of half the pairs, one side typed and the other by key, with deletes in the same save.
        for (index, pair) in pairs.enumerated() where index % 2 == 0 {
            let values = Self.randomValues(&random)
            Self.fillTyped(pair.typed, values)
            Self.fillByKey(pair.byKey, values)
            #expect(pair.typed.isUpdated && pair.byKey.isUpdated, "\(hint)")
            #expect(
                Set(pair.typed.changedValues().keys) == Set(pair.byKey.changedValues().keys),
                "changed keys differ, \(hint)")
            pairs[index].values = values
        }
        for (index, pair) in pairs.enumerated() where index % 5 == 1 {
            context.delete(pair.typed)
            context.delete(pair.byKey)
        }
        try context.save()

        let reader = PageFileFixtures.context(coordinator)
        for (index, pair) in pairs.enumerated() where index % 5 != 1 {
            let typed = try reader.existingObject(with: pair.typed.objectID)
            let byKey = try reader.existingObject(with: pair.byKey.objectID)
            #expect(Self.snapshot(typed) == Self.snapshot(byKey), "pair \(index), \(hint)")
            let expected = WriteSample(context: PageFileFixtures.context(coordinator))
            Self.fillTyped(expected, pair.values)
            #expect(Self.snapshot(typed) == Self.snapshot(expected), "pair \(index), \(hint)")
        }
        // The indexes agree with the rows: each indexed value finds both objects of its pair.
        for (index, pair) in pairs.enumerated() where index % 5 != 1 {
            let request = NSFetchRequest<NSManagedObject>(entityName: "WriteSample")
            request.predicate = NSPredicate(
                format: "small == %d AND text == %@", Int(pair.values["small"] as? Int16 ?? 0),
                pair.values["text"] as? String ?? "")
            let found = Set(try reader.fetch(request).map(\.objectID))
            #expect(found.isSuperset(of: [pair.typed.objectID, pair.byKey.objectID]), "pair \(index), \(hint)")
        }
        let store = try #require(coordinator.persistentStores.first as? PageFileStore)
        let report = try store.verify()
        #expect(report.isClean, "\(report.problems), \(hint)")
    }

    @Test func typedSetterOnAFaultLoadsItFirst() throws {
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = try PageFileFixtures.coordinator(Self.model, url, type: NSSQLiteStoreType)
        let writer = PageFileFixtures.context(coordinator)
        var random = SeededRandom(seed: 7)
        let values = Self.randomValues(&random)
        let original = WriteSample(context: writer)
        Self.fillTyped(original, values)
        try writer.save()

        let editor = PageFileFixtures.context(coordinator)
        let fault = try #require(editor.object(with: original.objectID) as? WriteSample)
        #expect(fault.isFault)
        fault.large = 42
        #expect(!fault.isFault && fault.isUpdated)
        #expect(Set(fault.changedValues().keys) == ["large"])
        #expect(fault.text == values["text"] as? String)
        try editor.save()
        // Kept in a variable: an object's values go with its context (as in Core Data).
        let reader = PageFileFixtures.context(coordinator)
        let check = try #require(try reader.existingObject(with: original.objectID) as? WriteSample)
        #expect(check.large == 42 && check.text == values["text"] as? String)
        #expect(check.small == values["small"] as? Int16)
    }

    @Test func bulkIndexWritesSurviveInsertsUpdatesAndDeletesInOneSave() throws {
        var random = SeededRandom(environmentOr: 0x5EED_0502)
        let hint = random.replayHint
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = try PageFileFixtures.coordinator(Self.model, url, type: NSSQLiteStoreType)
        let memory = try PageFileFixtures.coordinator(Self.model, url, type: NSInMemoryStoreType)
        let contexts = [PageFileFixtures.context(coordinator), PageFileFixtures.context(memory)]
        var objects: [[WriteSample]] = [[], []]
        for round in 0..<4 {
            for _ in 0..<random.int(in: 10...60) {
                let values = Self.randomValues(&random)
                for side in 0..<2 {
                    let object = WriteSample(context: contexts[side])
                    Self.fillTyped(object, values)
                    objects[side].append(object)
                }
            }
            for index in objects[0].indices where random.chance(0.3) {
                let small = Int16(truncatingIfNeeded: random.int(in: -5...5))
                for side in 0..<2 { objects[side][index].small = small }
            }
            for index in objects[0].indices.reversed() where random.chance(0.1) {
                for side in 0..<2 { contexts[side].delete(objects[side].remove(at: index)) }
            }
            for context in contexts { try context.save() }
            for low in stride(from: -40_000, through: 40_000, by: 8_000) {
                let request = NSFetchRequest<NSManagedObject>(entityName: "WriteSample")
                request.predicate = NSPredicate(format: "small >= %d AND small < %d", low, low + 8_000)
                request.sortDescriptors = [NSSortDescriptor(key: "small", ascending: true)]
                let answers = try contexts.map { context in
                    // The reader outlives the reads: an object's values go with its context.
                    let reader = PageFileFixtures.context(context.persistentStoreCoordinator!)
                    return try withExtendedLifetime(reader) {
                        try reader.fetch(request).map {
                            "\($0.value(forKey: "small") ?? "nil") \($0.value(forKey: "large") ?? "nil")"
                        }
                    }
                }
                #expect(answers[0].sorted() == answers[1].sorted(), "round \(round), \(hint)")
            }
        }
        let store = try #require(coordinator.persistentStores.first as? PageFileStore)
        let report = try store.verify()
        #expect(report.isClean, "\(report.problems), \(hint)")
    }

    @Test func objectURIsOfEveryShapeMapBackAsBefore() throws {
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = try PageFileFixtures.coordinator(Self.model, url, type: NSSQLiteStoreType)
        let context = PageFileFixtures.context(coordinator)
        let object = WriteSample(context: context)
        var random = SeededRandom(seed: 3)
        Self.fillTyped(object, Self.randomValues(&random))
        try context.save()
        let id = object.objectID
        let store = try #require(coordinator.persistentStores.first?.identifier)
        let key = try #require(id.storeKey)
        func mapped(_ text: String) -> NSManagedObjectID? {
            URL(string: text).flatMap { coordinator.managedObjectID(forURIRepresentation: $0) }
        }
        #expect(mapped(id.uriRepresentation().absoluteString) == id)
        #expect(mapped("x-coredata://\(store)/WriteSample/p\(key)") == id)
        // Shapes the plain reader leaves to Foundation's parser, which accepts them too.
        #expect(mapped("x-coredata://\(store)/WriteSample/p\(key)/") == id)
        #expect(mapped("x-coredata://\(store)/WriteSample/p00\(key)") == id)
        #expect(mapped("x-coredata://\(store)/Write%53ample/p\(key)") == id)
        #expect(mapped("x-coredata://\(store)/WriteSample/p+\(key)") == id)
        // Not an object of this coordinator.
        for text in [
            "x-coredata://\(store)/WriteSample/t\(key)", "x-coredata://\(store)/WriteSample/p",
            "x-coredata://\(store)/WriteSample/pp1", "x-coredata://\(store)//p\(key)",
            "x-coredata://\(store)/Nothing/p\(key)", "x-coredata://other-store/WriteSample/p\(key)",
            "x-coredata:///WriteSample/p\(key)", "http://\(store)/WriteSample/p\(key)",
            "x-coredata://\(store)/WriteSample/p\(key)/extra",
            "x-coredata://\(store)/WriteSample/p99999999999999999999",
        ] {
            #expect(mapped(text) == nil, "\(text)")
        }
    }

    @Test func rowKeysWrittenInPlaceEqualTheRowKeyEncoding() {
        var random = SeededRandom(environmentOr: 0x5EED_0503)
        let hint = random.replayHint
        var keys: [Int64] = [0, 1, -1, 127, 128, 255, 256, -128, -129, .max, .min, .max - 1, .min + 1]
        for _ in 0..<500 {
            let bits = random.int(in: 0...63)
            keys.append(Int64(bitPattern: random.next()) >> Int64(bits))
        }
        for key in keys {
            let inPlace = PageFileKey.withPrimary(key) { Array($0) }
            #expect(inPlace == PageFileKey.primary(key), "key \(key), \(hint)")
            var appended: [UInt8] = [7]
            PageFileKey.appendPrimary(key, to: &appended)
            #expect(appended == [7] + PageFileKey.primary(key), "key \(key), \(hint)")
        }
    }

    @Test func pendingIndexKeysComeOutInByteOrderOnce() {
        var random = SeededRandom(environmentOr: 0x5EED_0504)
        let hint = random.replayHint
        var pending = PendingIndexKeys()
        var oracle: Set<[UInt8]> = []
        for step in 0..<2_000 {
            // Short and long keys sharing prefixes, so the word prefix and the byte comparison both decide.
            let length = random.pick([0, 1, 7, 8, 9, 23, 24, 25, 40])
            let key = (0..<length).map { _ in UInt8(random.int(in: 0...3)) }
            if step > 500, random.chance(0.2) {
                let removed = pending.remove(key)
                #expect(removed == oracle.contains(key), "\(hint)")
                oracle.remove(key)
            } else {
                pending.insert(key)
                oracle.insert(key)
            }
        }
        let expected = oracle.sorted { $0.lexicographicallyPrecedes($1) }
        #expect(pending.sortedKeys() == expected, "\(hint)")
        // By position (the batch removal's walk): the same keys in the same order, a key
        // added twice side by side.
        let byPosition = pending.withSortedKeys { count, key in (0..<count).map { Array(key($0)) } }
        var once: [[UInt8]] = []
        for key in byPosition where once.last != key { once.append(key) }
        #expect(once == expected, "\(hint)")
    }

    /// One key (a one-row save's entry) comes out as itself, once; taken back, not at all;
    /// a second key after it takes the sorted walk.
    @Test func aSinglePendingIndexKeyComesOutAlone() {
        for key: [UInt8] in [[], [3], [1, 2, 3, 4, 5, 6, 7, 8, 9]] {
            var pending = PendingIndexKeys()
            pending.insert(key)
            #expect(pending.sortedKeys() == [key])
            let removed = pending.remove(key)
            #expect(removed)
            #expect(pending.sortedKeys().isEmpty)
            pending.insert(key)
            #expect(pending.sortedKeys() == [key])
            pending.insert([0] + key)
            #expect(pending.sortedKeys() == [key, [0] + key].sorted { $0.lexicographicallyPrecedes($1) })
        }
    }

    /// A row's entry written in place into the pending keys is the key `key(for:)` makes,
    /// sorted and taken back with keys added as arrays: the fast path and the general one
    /// hold the same keys.
    @Test func pendingEntriesWrittenInPlaceAreTheIndexKeys() {
        var random = SeededRandom(environmentOr: 0x5EED_0514)
        let hint = random.replayHint
        var age = PageFileIndex(
            treeName: "index.P.age", name: "age", fields: [StoreKeyField(slot: 0)],
            attributeTypes: [.integer64AttributeType], isUnique: false)
        age.ordinal = 0
        var name = PageFileIndex(
            treeName: "index.P.name", name: "name", fields: [StoreKeyField(slot: 1)],
            attributeTypes: [.stringAttributeType], isUnique: false)
        name.ordinal = 1
        var reference = PageFileIndex(
            treeName: "rel.P.company", name: "company", fields: [StoreKeyField(slot: 2)], attributeTypes: [],
            isUnique: false)
        reference.isReference = true
        for index in [age, name, reference] {
            var pending = PendingIndexKeys()
            var oracle: Set<[UInt8]> = []
            var added: [[UInt8]] = []
            for step in 0..<1_500 {
                let values: [StoreValue] = [
                    random.chance(0.1) ? .null : .integer(Int64(random.int(in: -300...300))),
                    .string(String(repeating: "ab", count: random.int(in: 0...6))),
                    random.chance(0.2) ? .null : .integer(Int64(random.int(in: 0...40))),
                ]
                let primaryKey = Int64(random.int(in: 1...400))
                if step > 300, random.chance(0.15), let key = added.randomElement(using: &random) {
                    #expect(pending.remove(key) == oracle.contains(key), "\(index.name) \(hint)")
                    oracle.remove(key)
                    continue
                }
                let expected = index.key(for: values, primaryKey: primaryKey)
                if random.chance(0.3) {
                    if let expected { pending.insert(expected) }
                } else {
                    #expect(
                        pending.insertEntry(of: index, values: values, primaryKey: primaryKey) == (expected != nil),
                        "\(index.name) \(hint)")
                }
                if let expected {
                    oracle.insert(expected)
                    added.append(expected)
                }
            }
            let expected = oracle.sorted { $0.lexicographicallyPrecedes($1) }
            #expect(pending.sortedKeys() == expected, "\(index.name) \(hint)")
        }
    }
}
