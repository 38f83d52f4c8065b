// Transformable attributes on every store: values go through the default transformer
// (property-list values) or the one named by valueTransformerName on save, come back on
// fault firing and fetch in another context and after reopening; a transformer that
// rejects a value or returns something other than Data fails the save naming the
// attribute; stored bytes that do not decode fail the fetch, read as nil on a fault and
// survive a save; the stored bytes are the golden keyed archive of SPEC.md §3.2.
import Foundation
import Testing

@testable import OpenCoreData

/// A value the guide keeps in a transformable attribute.
struct PostalAddress: Codable, Equatable {
    let street: String
    let city: String
}

/// A Foundation-style transformer (no Codable helper): Address to JSON and back.
final class PostalAddressTransformer: ValueTransformer {
    override class func transformedValueClass() -> AnyClass { NSData.self }
    override class func allowsReverseTransformation() -> Bool { true }
    override func transformedValue(_ value: Any?) -> Any? {
        guard let address = value as? PostalAddress else { return nil }
        return try? JSONEncoder().encode(address)
    }
    override func reverseTransformedValue(_ value: Any?) -> Any? {
        guard let data = value as? Data else { return nil }
        return try? JSONDecoder().decode(PostalAddress.self, from: data)
    }
}

/// Stores data as it is and reads it back as it is.
final class PassThroughTransformer: ValueTransformer {
    override class func allowsReverseTransformation() -> Bool { true }
    override func transformedValue(_ value: Any?) -> Any? { value }
    override func reverseTransformedValue(_ value: Any?) -> Any? { value }
}

/// Throws its own error for every value.
final class RefusingTransformer: ValueTransformer, ThrowingValueTransformer {
    struct Refusal: Error {}
    override class func allowsReverseTransformation() -> Bool { true }
    func transformedValueThrowing(_ value: Any?) throws -> Any? { throw Refusal() }
    func reverseTransformedValueThrowing(_ value: Any?) throws -> Any? { throw Refusal() }
}

@Suite struct TransformableAttributeTests {
    static let storeTypes = TestStack.storeTypes

    /// A model of one entity, Profile: a name and transformable attributes named after
    /// their transformer (`plain` uses the default one).
    static func model(transformers: [String: String?]) -> NSManagedObjectModel {
        let entity = NSEntityDescription()
        entity.name = "Profile"
        var properties: [NSPropertyDescription] = [TestStack.attribute("name", .stringAttributeType)]
        for (name, transformer) in transformers.sorted(by: { $0.key < $1.key }) {
            let attribute = TestStack.attribute(name, .transformableAttributeType)
            attribute.valueTransformerName = transformer
            properties.append(attribute)
        }
        entity.properties = properties
        let model = NSManagedObjectModel()
        model.entities = [entity]
        return model
    }

    /// A store of `type` for `model` (in a new directory unless in memory), and a way to
    /// open it again (the same coordinator for the in-memory store).
    static func open(_ type: String, _ model: NSManagedObjectModel, at url: URL) throws -> NSPersistentStoreCoordinator
    {
        try TestStack.coordinator(
            type, model: model, in: url.deletingLastPathComponent(), name: url.lastPathComponent)
    }

    static func scratchURL() throws -> URL {
        try TestStack.scratchDirectory("transformable").appendingPathComponent("Profiles.store")
    }

    static func profiles(_ context: NSManagedObjectContext, asFaults: Bool = true) throws -> [NSManagedObject] {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Profile")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        request.returnsObjectsAsFaults = asFaults
        return try context.fetch(request)
    }

    @Test(arguments: storeTypes) func valuesRoundTripThroughTheirTransformers(type: String) throws {
        let addressName = "TransformableAttributeTests.address.\(type)"
        let codableName = "TransformableAttributeTests.codable.\(type)"
        ValueTransformer.setValueTransformer(PostalAddressTransformer(), forName: NSValueTransformerName(addressName))
        CodableValueTransformer<PostalAddress>.register(forName: NSValueTransformerName(codableName))
        defer {
            ValueTransformer.setValueTransformer(nil, forName: NSValueTransformerName(addressName))
            ValueTransformer.setValueTransformer(nil, forName: NSValueTransformerName(codableName))
        }
        let model = Self.model(transformers: ["plain": nil, "address": addressName, "codable": codableName])
        let url = try Self.scratchURL()
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let home = PostalAddress(street: "1 Fjord Road", city: "Oslo")
        let when = Date(timeIntervalSinceReferenceDate: 12_345)
        var coordinator = try Self.open(type, model, at: url)
        let writer = TestStack.context(coordinator)
        try writer.performAndWait {
            let full = NSEntityDescription.insertNewObject(forEntityName: "Profile", into: writer)
            full.setValue("a", forKey: "name")
            full.setValue(["Swift", "Core Data"], forKey: "plain")
            full.setValue(home, forKey: "address")
            full.setValue(home, forKey: "codable")
            let mixed = NSEntityDescription.insertNewObject(forEntityName: "Profile", into: writer)
            mixed.setValue("b", forKey: "name")
            mixed.setValue(["n": 7, "d": when, "b": Data([1, 2]), "s": ["x"]] as [String: Any], forKey: "plain")
            let empty = NSEntityDescription.insertNewObject(forEntityName: "Profile", into: writer)
            empty.setValue("c", forKey: "name")
            try writer.save()
        }
        for round in 0..<2 {
            if round == 1 && type != NSInMemoryStoreType { coordinator = try Self.open(type, model, at: url) }
            for asFaults in [true, false] {
                let reader = TestStack.context(coordinator)
                try reader.performAndWait {
                    let found = try Self.profiles(reader, asFaults: asFaults)
                    #expect(found.count == 3)
                    guard found.count == 3 else { return }
                    #expect(found[0].value(forKey: "plain") as? [String] == ["Swift", "Core Data"])
                    #expect(found[0].value(forKey: "address") as? PostalAddress == home)
                    #expect(found[0].value(forKey: "codable") as? PostalAddress == home)
                    let mixed = try #require(found[1].value(forKey: "plain") as? [String: Any])
                    #expect(mixed["n"] as? Int == 7 && mixed["d"] as? Date == when)
                    #expect(mixed["b"] as? Data == Data([1, 2]) && mixed["s"] as? [String] == ["x"])
                    #expect(found[2].value(forKey: "plain") == nil && found[2].value(forKey: "address") == nil)
                }
            }
        }
        // A child context gets the values through its parent.
        let parent = TestStack.context(coordinator)
        let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        child.parent = parent
        try child.performAndWait {
            let found = try Self.profiles(child)
            #expect(found.first?.value(forKey: "address") as? PostalAddress == home)
            found.first?.setValue(["Linux"], forKey: "plain")
            try child.save()
        }
        try parent.performAndWait { try parent.save() }
        let last = TestStack.context(coordinator)
        try last.performAndWait {
            let found = try Self.profiles(last)
            #expect(found.first?.value(forKey: "plain") as? [String] == ["Linux"])
        }
    }

    @Test(arguments: storeTypes) func aTransformerThatFailsIsASaveErrorNamingTheAttribute(type: String) throws {
        let refusing = "TransformableAttributeTests.refusing.\(type)"
        let notData = "TransformableAttributeTests.notData.\(type)"
        ValueTransformer.setValueTransformer(RefusingTransformer(), forName: NSValueTransformerName(refusing))
        ValueTransformer.setValueTransformer(NotDataTransformer(), forName: NSValueTransformerName(notData))
        defer {
            ValueTransformer.setValueTransformer(nil, forName: NSValueTransformerName(refusing))
            ValueTransformer.setValueTransformer(nil, forName: NSValueTransformerName(notData))
        }
        let model = Self.model(transformers: [
            "plain": nil, "refused": refusing, "wrong": notData, "missing": "TransformableAttributeTests.unregistered",
        ])
        let url = try Self.scratchURL()
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let coordinator = try Self.open(type, model, at: url)
        let context = TestStack.context(coordinator)
        try context.performAndWait {
            let cases: [(key: String, value: Any, code: Int)] = [
                ("plain", NSObject(), NSManagedObjectValidationError),
                ("plain", PostalAddress(street: "s", city: "c"), NSManagedObjectValidationError),
                ("refused", "anything", NSManagedObjectValidationError),
                ("wrong", "anything", NSManagedObjectValidationError),
                ("missing", "anything", NSCoreDataError),
            ]
            for (key, value, code) in cases {
                let profile = NSEntityDescription.insertNewObject(forEntityName: "Profile", into: context)
                profile.setValue(key, forKey: "name")
                profile.setValue(value, forKey: key)
                let error = try #require(throws: NSError.self) { try context.save() }
                #expect(error.code == code, "\(key): \(error)")
                #expect(error.localizedDescription.contains("Profile.\(key)"), "\(key): \(error.localizedDescription)")
                #expect(error.userInfo[NSValidationKeyErrorKey] as? String == key)
                context.rollback()
            }
            #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Profile")) == 0)
        }
    }

    @Test(arguments: storeTypes) func storedBytesThatDoNotDecodeAreAnErrorAndAreKept(type: String) throws {
        // Saved raw through one transformer, read through the default archiving one
        // registered under the same name afterwards: bytes that are no archive.
        let name = NSValueTransformerName("TransformableAttributeTests.swapped.\(type)")
        ValueTransformer.setValueTransformer(PassThroughTransformer(), forName: name)
        defer { ValueTransformer.setValueTransformer(nil, forName: name) }
        let model = Self.model(transformers: ["payload": name.rawValue])
        let url = try Self.scratchURL()
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let coordinator = try Self.open(type, model, at: url)
        let garbage = Data([0x62, 0x70, 0x6c, 0x69, 0x73, 0x74, 0x30, 0x30, 0xff, 0x00, 0x13])
        let writer = TestStack.context(coordinator)
        let id = try writer.performAndWait {
            let profile = NSEntityDescription.insertNewObject(forEntityName: "Profile", into: writer)
            profile.setValue("a", forKey: "name")
            profile.setValue(garbage, forKey: "payload")
            try writer.save()
            return profile.objectID
        }
        ValueTransformer.setValueTransformer(NSSecureUnarchiveFromDataTransformer(), forName: name)
        let reader = TestStack.context(coordinator)
        try reader.performAndWait {
            for asFaults in [true, false] {
                let error = try #require(throws: NSError.self) { try Self.profiles(reader, asFaults: asFaults) }
                #expect(error.code == CocoaError.Code.coderReadCorrupt.rawValue, "\(error)")
                #expect(error.localizedDescription.contains("Profile.payload"), "\(error.localizedDescription)")
            }
            // A fault fired by a property access: nil to readers that cannot throw.
            let profile = reader.object(with: id)
            #expect(profile.value(forKey: "payload") == nil)
            #expect(profile.value(forKey: "name") as? String == "a")
            #expect(throws: NSError.self) { try profile.readValue(forKey: "payload") }
            profile.setValue("b", forKey: "name")
            try reader.save()
        }
        ValueTransformer.setValueTransformer(PassThroughTransformer(), forName: name)
        let last = TestStack.context(coordinator)
        try last.performAndWait {
            let found = try Self.profiles(last)
            #expect(found.first?.value(forKey: "name") as? String == "b")
            #expect(found.first?.value(forKey: "payload") as? Data == garbage, "the undecodable bytes were kept")
        }
    }

    @Test(arguments: storeTypes) func storesHoldTheKeyedArchiveOfSpecSection3_2(type: String) throws {
        let model = Self.model(transformers: ["plain": nil])
        let url = try Self.scratchURL()
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let coordinator = try Self.open(type, model, at: url)
        let context = TestStack.context(coordinator)
        let id = try context.performAndWait {
            let profile = NSEntityDescription.insertNewObject(forEntityName: "Profile", into: context)
            profile.setValue(["Swift", "Core Data"], forKey: "plain")
            try context.save()
            return profile.objectID
        }
        let row = try #require(try coordinator.rows(for: [id]).first ?? nil)
        let slot = try #require(model.entitiesByName["Profile"]?.layout.slotsByName["plain"])
        guard case .binary(let data) = row.values[slot] else {
            Issue.record("the stored value is not binary: \(row.values[slot])")
            return
        }
        #expect(data.map { String(format: "%02x", $0) }.joined() == GoldenArchive.stringArray)
    }
}
