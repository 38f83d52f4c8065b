// The model record stores keep in their metadata (SPEC.md §3.11): it builds back a model
// with the same version hashes and everything migration needs, its bytes are pinned, a
// damaged record is an error and never a trap, and every store that writes files records
// it (stores written before records existed get one when they next open).
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

@Suite struct ModelRecordTests {
    /// The record's dictionary without class names (records build plain objects by default).
    func withoutClasses(_ model: NSManagedObjectModel) -> NSDictionary {
        var dictionary = ModelRecord.dictionary(of: model)
        dictionary["entities"] = (dictionary["entities"] as? [[String: Any]] ?? []).map { entity in
            var copy = entity
            copy["class"] = nil
            return copy
        }
        return NSDictionary(dictionary: dictionary)
    }

    /// The record's model and the original agree on every input of the version hashes
    /// and on everything else the record holds.
    func expectFaithful(_ model: NSManagedObjectModel, _ what: String) throws {
        let rebuilt = try ModelRecord.model(from: try ModelRecord.encode(model))
        #expect(rebuilt.entityVersionHashesByName == model.entityVersionHashesByName, "\(what): hashes")
        #expect(rebuilt.versionChecksum == model.versionChecksum, "\(what): checksum")
        #expect(rebuilt.versionIdentifiers == Set(ModelRecord.versionIdentifiers(of: model)), "\(what): identifiers")
        #expect(withoutClasses(rebuilt).isEqual(to: withoutClasses(model) as? [AnyHashable: Any] ?? [:]), "\(what)")
        #expect(rebuilt.entities.allSatisfy { $0.managedObjectClassName == "NSManagedObject" }, "\(what): classes")
    }

    @Test func recordsBuildBackTheModelWithItsHashes() throws {
        try expectFaithful(VersionHashTests.libraryInCode(), "library in code")
        try expectFaithful(try ModelFixtures.read(ModelFixtures.everything), "Everything.xcdatamodeld")
        try expectFaithful(try ModelFixtures.read(ModelFixtures.library), "Library.xcdatamodel")
        try expectFaithful(
            try ModelFixtures.read(ModelFixtures.everything.appendingPathComponent("Everything.xcdatamodel")),
            "Everything, version 1")
        let everything = try ModelFixtures.read(ModelFixtures.everything)
        let rebuilt = try ModelRecord.model(from: try ModelRecord.encode(everything), withClasses: true)
        #expect(
            rebuilt.entities.map(\.managedObjectClassName) == everything.entities.map(\.managedObjectClassName),
            "class names are recorded too")
    }

    @Test func defaultsOfEveryTypeSurvive() throws {
        let entity = NSEntityDescription()
        entity.name = "Defaults"
        let values: [(NSAttributeType, Any)] = [
            (.integer16AttributeType, Int16(-7)), (.integer32AttributeType, Int32(70_000)),
            (.integer64AttributeType, Int64.max), (.doubleAttributeType, 2.5), (.floatAttributeType, Float(1.25)),
            (.booleanAttributeType, true), (.stringAttributeType, "général"),
            (.decimalAttributeType, Decimal(string: "12.345")!),
            (.dateAttributeType, Date(timeIntervalSince1970: 12.5)),
            (.binaryDataAttributeType, Data([1, 2, 3])), (.UUIDAttributeType, UUID()),
            (.URIAttributeType, URL(string: "https://example.com/a")!),
        ]
        entity.properties = values.enumerated().map { index, pair in
            TestStack.attribute("a\(index)", pair.0, optional: false, defaultValue: pair.1)
        }
        let model = NSManagedObjectModel()
        model.entities = [entity]
        let rebuilt = try ModelRecord.model(from: try ModelRecord.encode(model))
        let attributes = try #require(rebuilt.entitiesByName["Defaults"]).attributesByName
        for (index, pair) in values.enumerated() {
            let attribute = try #require(attributes["a\(index)"])
            #expect(attribute.attributeType == pair.0)
            #expect(
                try attribute.storeValue(attribute.defaultValue)
                    == (try entity.attributesByName["a\(index)"]?
                        .storeValue(pair.1)),
                "default of type \(pair.0)")
        }
    }

    /// A one-entity model whose record bytes SPEC.md §3.11 shows.
    static func goldenModel() -> NSManagedObjectModel {
        let pet = NSEntityDescription()
        pet.name = "Pet"
        let name = TestStack.attribute("name", .stringAttributeType, optional: false, defaultValue: "Rex")
        name.renamingIdentifier = "title"
        pet.properties = [name]
        let model = NSManagedObjectModel()
        model.entities = [pet]
        model.versionIdentifiers = ["1"]
        return model
    }

    static let goldenHex = [
        // a dictionary of 3 entries
        "08 03",
        // "entities": an array of 1
        "08 656e746974696573 07 01",
        // an entity: a dictionary of 6 entries
        "08 06",
        // "abstract": false
        "08 6162737472616374 03",
        // "class": "NSManagedObject"
        "05 636c617373 00 0f 4e534d616e616765644f626a656374",
        // "indexes": []
        "07 696e6465786573 07 00",
        // "name": "Pet"
        "04 6e616d65 00 03 506574",
        // "properties": [ a dictionary of 10
        "0a 70726f70657274696573 07 01 08 0a",
        // "default": data: string "Rex" (tag 6)
        "07 64656661756c74 05 05 06 03 526578",
        // "external": false
        "08 65787465726e616c 03",
        // "indexed": false
        "07 696e6465786564 03",
        // "kind": "attribute"
        "04 6b696e64 00 09 617474726962757465",
        // "name": "name"
        "04 6e616d65 00 04 6e616d65",
        // "optional": false
        "08 6f7074696f6e616c 03",
        // "preservesOnDeletion": false
        "13 7072657365727665734f6e44656c6574696f6e 03",
        // "renamingIdentifier": "title"
        "12 72656e616d696e674964656e746966696572 00 05 7469746c65",
        // "transient": false
        "09 7472616e7369656e74 03",
        // "type": 700 (zigzag varint) ]
        "04 74797065 01 f80a",
        // "uniquenessConstraints": []
        "15 756e697175656e657373436f6e73747261696e7473 07 00",
        // "format": 1
        "06 666f726d6174 01 02",
        // "versionIdentifiers": ["1"]
        "12 76657273696f6e4964656e74696669657273 07 01 00 01 31",
    ].joined(separator: " ")

    @Test func recordBytesArePinned() throws {
        let hex = try ModelRecord.encode(Self.goldenModel()).map { String(format: "%02x", $0) }.joined()
        #expect(hex == Self.goldenHex.replacingOccurrences(of: " ", with: ""), "\(hex)")
    }

    @Test func damagedRecordsAreErrorsNeverTraps() throws {
        let bytes = Array(try ModelRecord.encode(try ModelFixtures.read(ModelFixtures.everything)))
        var random = SeededRandom(environmentOr: 0x4D0D_E1)
        var refused = 0
        for round in 0..<2_000 {
            var damaged = bytes
            switch round % 3 {
            case 0: damaged = Array(damaged.prefix(random.int(in: 0...(bytes.count - 1))))
            case 1:
                let position = random.int(in: 0...(bytes.count - 1))
                damaged[position] ^= UInt8(truncatingIfNeeded: random.int(in: 1...255))
            default:
                for _ in 0..<4 {
                    damaged[random.int(in: 0...(bytes.count - 1))] = UInt8(truncatingIfNeeded: random.int(in: 0...255))
                }
            }
            do {
                _ = try ModelRecord.model(from: Data(damaged))
            } catch {
                #expect((error as NSError).code == NSFileReadCorruptFileError, "\(error) (\(random.replayHint))")
                refused += 1
            }
        }
        #expect(refused > 1_000)
    }

    @Test func storesRecordTheirModelAndVersionIdentifiers() throws {
        let model = VersionHashTests.libraryInCode()
        model.versionIdentifiers = ["7"]
        let directory = try ModelFixtures.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for type in [NSSQLiteStoreType, NSBinaryStoreType] {
            let url = directory.appendingPathComponent("\(type).store")
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            let store = try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: url, options: nil)
            try coordinator.remove(store)
            let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(
                ofType: type, at: url, options: nil)
            #expect(metadata[NSStoreModelVersionIdentifiersKey] as? [String] == ["7"], "\(type)")
            let record = try #require(metadata[ModelRecord.metadataKey] as? Data, "\(type)")
            #expect(try ModelRecord.model(from: record).versionChecksum == model.versionChecksum, "\(type)")
        }
    }

    @Test func aStoreWrittenBeforeRecordsGetsOneWhenItOpens() throws {
        let model = VersionHashTests.libraryInCode()
        let url = try PageFileFixtures.temporaryURL()
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        var coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
        var metadata = store.metadata ?? [:]
        metadata[ModelRecord.metadataKey] = nil
        metadata[NSStoreModelVersionIdentifiersKey] = nil
        coordinator.setMetadata(metadata, for: store)
        let context = PageFileFixtures.context(coordinator)
        NSEntityDescription.insertNewObject(forEntityName: "Author", into: context).setValue("Ann", forKey: "name")
        try context.save()
        try PageFileFixtures.close(coordinator)
        let before = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: NSSQLiteStoreType, at: url, options: nil)
        #expect(before[ModelRecord.metadataKey] == nil, "the store has no record (as before records existed)")

        coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
        try PageFileFixtures.close(coordinator)
        let after = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: NSSQLiteStoreType, at: url, options: nil)
        let record = try #require(after[ModelRecord.metadataKey] as? Data)
        #expect(try ModelRecord.model(from: record).entityVersionHashesByName == model.entityVersionHashesByName)
    }
}
