// A row a save deletes is read with only the slots its deletion reads, and a to-one read
// only for its reference index entry as its destination's key, no object ID made
// (PageFileDeletedRowReader.swift). That shortcut must give every index the key the row
// read whole gives it: the entries the deletion removes are the row's, nothing is left
// behind and nothing else goes, for references to the declared destination entity (the
// short form), to a sub-entity (named in the row), and for a nil to-one.
import Foundation
import StorageEngine
import TestSupport
import Testing

@testable import OpenCoreData

@Suite struct PageFileDeletedRowReaderTests {
    /// Owner: name (indexed), pet (to-one to Animal, its inverse `owners` derived through a
    /// reference index); Dog is a sub-entity of Animal.
    static let model: NSManagedObjectModel = {
        let (owner, animal, dog) = (NSEntityDescription(), NSEntityDescription(), NSEntityDescription())
        (owner.name, animal.name, dog.name) = ("Owner", "Animal", "Dog")
        let pet = TestStack.relationship("pet", to: animal, toMany: false)
        let owners = TestStack.relationship("owners", to: owner, toMany: true)
        TestStack.pair(pet, owners)
        owner.properties = [PageFileFixtures.attribute("name", .stringAttributeType, indexed: true), pet]
        animal.properties = [PageFileFixtures.attribute("call", .stringAttributeType), owners]
        animal.subentities = [dog]
        let model = NSManagedObjectModel()
        model.entities = [owner, animal, dog]
        return model
    }()

    @Test func aReferenceReadAsAKeyIsTheKeyOfTheReferenceDecodedWhole() throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.model)
        let store = try coordinator.addPersistentStore(
            ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
        let entities = Self.model.entitiesByName
        let (owner, animal, dog) = (
            try #require(entities["Owner"]), try #require(entities["Animal"]), try #require(entities["Dog"])
        )
        let codec = PageFileRowCodec(
            entityNamed: { entities[$0] }, makeObjectID: { store.newObjectID(for: $0, key: $1) })
        let petSlot = try #require(owner.layout.slotsByName["pet"])
        let keys: [Int64] = [0, 1, 63, 64, 127, 128, 300, -1, -129, 1 << 40, .max, .min]
        var references: [StoreValue] = [.null]
        for key in keys {
            references.append(.objectID(store.newObjectID(for: animal, key: key)))
            references.append(.objectID(store.newObjectID(for: dog, key: key)))
        }
        var offsets: [Int] = []
        for reference in references {
            var values = [StoreValue](repeating: .null, count: owner.layout.properties.count)
            values[petSlot] = reference
            let bytes = PageFileRowCodec.encode(values: values, version: 3, layout: owner.layout)
            let (read, whole) = try bytes.withUnsafeBytes { raw in
                try PageFileRowCodec.slotOffsets(raw, into: &offsets)
                return (
                    try codec.decodeReferenceKey(raw, at: offsets[petSlot], declaredEntity: animal),
                    try codec.decodeValue(raw, at: offsets[petSlot], declaredEntity: animal)
                )
            }
            switch whole {
            case .objectID(let destination):
                #expect(read == .integer(destination.key), "\(reference)")
                #expect(destination == reference.objectID, "\(reference)")
            default:
                #expect(read == whole, "\(reference)")
            }
        }
    }

    @Test func aDeletedRowGivesEveryIndexTheKeyOfTheRowReadWhole() throws {
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = try PageFileFixtures.coordinator(Self.model, url)
        let store = try #require(coordinator.persistentStores.first as? PageFileStore)
        let entities = Self.model.entitiesByName
        let (owner, animal, dog) = (
            try #require(entities["Owner"]), try #require(entities["Animal"]), try #require(entities["Dog"])
        )
        let layout = owner.layout
        let (nameSlot, petSlot) = (try #require(layout.slotsByName["name"]), try #require(layout.slotsByName["pet"]))
        let (catalog, codec) = (store.catalog, store.codec)
        var owners: [NSManagedObjectID] = []
        try store.openDatabase().write { transaction in
            var writer = PageFileWriter(transaction: transaction, catalog: catalog, codec: codec)
            for key in Int64(1)...Int64(4) {
                let destination = key % 2 == 0 ? dog : animal
                _ = try writer.insert(
                    StoreRow(
                        objectID: store.newObjectID(for: destination, key: key), version: 1,
                        values: [.string("pet \(key)"), .unresolved]))
            }
            for key in Int64(10)...Int64(40) {
                var values = [StoreValue](repeating: .null, count: layout.properties.count)
                values[nameSlot] = key % 5 == 0 ? .null : .string("Owner \(key % 7)")
                // Every third owner has no pet; the others one of four (two of them dogs).
                let petKey = key % 4 + 1
                if key % 3 != 0 {
                    values[petSlot] = .objectID(store.newObjectID(for: petKey % 2 == 0 ? dog : animal, key: petKey))
                }
                let objectID = store.newObjectID(for: owner, key: key)
                owners.append(objectID)
                _ = try writer.insert(StoreRow(objectID: objectID, version: 1, values: values))
            }
            try writer.finish()
        }
        let info = try catalog.info(for: owner)
        let hasReferenceIndex = info.indexes.contains { $0.isReference }
        #expect(hasReferenceIndex)
        try store.openDatabase().read { transaction in
            let reader = PageFileRowReader(transaction: transaction, catalog: catalog, codec: codec)
            var deleted = PageFileDeletedRowReader(reader: reader)
            for objectID in owners {
                let read = try #require(try deleted.row(objectID))
                let whole = try #require(try reader.completeRow(owner, key: objectID.key))
                #expect(read.version == whole.version)
                for index in info.indexes {
                    #expect(
                        index.key(for: read.values, primaryKey: objectID.key)
                            == index.key(for: whole.values, primaryKey: objectID.key),
                        "\(index.treeName) of \(objectID.key)")
                }
            }
        }
        // Deleted in one save through a context: no entry of theirs is left, and the
        // animals' derived owners are those that remain (named nil, so not deleted).
        let context = PageFileFixtures.context(coordinator)
        try context.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Owner")
            request.predicate = NSPredicate(format: "name != nil")
            for object in try context.fetch(request) { context.delete(object) }
            try context.save()
            context.reset()
            let left = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Owner"))
            let remaining = owners.map(\.key).filter { $0 % 5 == 0 }
            #expect(left.count == remaining.count)
            let pets = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Animal"))
            #expect(pets.count == 4)
            for pet in pets {
                let members = try #require(pet.value(forKey: "owners") as? Set<NSManagedObject>)
                let key = try #require(pet.value(forKey: "call") as? String).split(separator: " ").last.flatMap {
                    Int64($0)
                }
                let expected = remaining.filter { $0 % 3 != 0 && $0 % 4 + 1 == key }
                #expect(members.count == expected.count, "\(pet.objectID)")
            }
        }
        let report = try store.verify()
        #expect(report.isClean, "\(report.problems)")
        let remaining = owners.map(\.key).filter { $0 % 5 == 0 }
        #expect(try store.treeKeys("rel.Owner.pet").count == remaining.filter { $0 % 3 != 0 }.count)
        #expect(try store.treeKeys("index.Owner.name").count == remaining.count)
    }
}

extension StoreValue {
    /// The object ID of an `.objectID` value.
    fileprivate var objectID: NSManagedObjectID? {
        if case .objectID(let id) = self { return id }
        return nil
    }
}
