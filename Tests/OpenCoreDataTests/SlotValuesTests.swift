// Typed slot storage (SlotValues.swift): every value stored reads back as exactly the
// value and type stored, the typed fast paths agree with the general ones, and an
// update rewrites only the index entries whose keys it changes.
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

/// The typed-storage tests' object (top level: the entity names its class).
final class SlotValuesItem: NSManagedObject {
    @Managed var name: String?
    @Managed var count: Int64
    @Managed var small: Int16
    @Managed var loose: Int
}

@Suite struct SlotValuesTests {
    static func described(_ value: Any?) -> String {
        guard let value else { return "nil" }
        return "\(type(of: value)): \(String(reflecting: value))"
    }

    @Test func everyValueReadsBackWithItsExactType() {
        let entity = NSEntityDescription()
        entity.name = "Thing"
        let object = NSManagedObject(entity: entity, insertInto: nil)
        let values: [Any?] = [
            nil, Int16(-3), Int32(4), Int64(5), Int(6), 2.5, Float(1.5), true, "text", "",
            Date(timeIntervalSinceReferenceDate: 42),
            UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)),
            Data([1, 2, 3]), Decimal(string: "3.25"), URL(string: "https://example.com"),
            Set<NSManagedObject>([object]),
            [object], object, String?.none as Any, String?.some("wrapped") as Any, NSString(string: "bridged"),
            NSNumber(value: 3), [1, 2] as [Int], UnresolvedRelationship(objectIDs: nil),
        ]
        for value in values {
            let slot = SlotValue(value)
            #expect(Self.described(slot.anyValue) == Self.described(value))
        }
        var storage: SlotValues = [Int64(1), "two", nil]
        storage[2] = Decimal(3)
        storage[0] = storage[1]
        #expect(
            storage.map(Self.described) == [Self.described("two"), Self.described("two"), Self.described(Decimal(3))])
    }

    @Test func typedAccessAgreesWithCasts() {
        #expect(SlotValue.int16(7).typed(as: Int16.self) == 7)
        #expect(SlotValue.int16(7).typed(as: Int16?.self) == .some(7))
        #expect(SlotValue.int16(7).typed(as: Int64.self) == nil)
        #expect(SlotValue.string("a").typed(as: String?.self) == .some("a"))
        #expect(SlotValue.null.typed(as: String?.self) == nil)
        if case .string("b") = SlotValue.typed(String?.some("b")) {} else { Issue.record("String? not typed") }
        #expect(SlotValue.typed(String?.none) == nil)
        #expect(SlotValue.typed(Decimal(1)) == nil)
        #expect(SlotValue.typed(Int(1)) == nil)
        let stored: [(Any, NSAttributeType)] = [
            (Int16(1), .integer16AttributeType), (Int32(2), .integer32AttributeType),
            (Int64(3), .integer64AttributeType), (4.5, .doubleAttributeType), (false, .booleanAttributeType),
            ("s", .stringAttributeType), (Date(timeIntervalSince1970: 9), .dateAttributeType),
            (Data([9]), .binaryDataAttributeType), (UUID(), .UUIDAttributeType),
        ]
        for (value, type) in stored {
            #expect(SlotValue(value).canonicalStoreValue(of: type) == StoreValue(canonical: value, of: type))
            // A value of another attribute's type is not canonical for this one.
            #expect(SlotValue(value).canonicalStoreValue(of: .floatAttributeType) == nil)
        }
    }

    static func itemModel() -> NSManagedObjectModel {
        let entity = NSEntityDescription()
        entity.name = "SlotValuesItem"
        entity.managedObjectClassName = NSStringFromClass(SlotValuesItem.self)
        func attribute(_ name: String, _ type: NSAttributeType) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.isOptional = true
            return attribute
        }
        entity.properties = [
            attribute("name", .stringAttributeType), attribute("count", .integer64AttributeType),
            attribute("small", .integer16AttributeType), attribute("loose", .integer64AttributeType),
        ]
        entity.indexes = [
            NSFetchIndexDescription(
                name: "byCount",
                elements: [NSFetchIndexElementDescription(property: entity.properties[1], collationType: .binary)]),
            NSFetchIndexDescription(
                name: "byName",
                elements: [NSFetchIndexElementDescription(property: entity.properties[0], collationType: .binary)]),
        ]
        let model = NSManagedObjectModel()
        model.entities = [entity]
        return model
    }

    @Test func managedAccessorsStoreTheAttributesTypes() throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.itemModel())
        try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let item = SlotValuesItem(context: context)
        item.name = "first"
        item.count = 12
        item.small = 3
        item.loose = 7
        #expect(Self.described(item.value(forKey: "name")) == Self.described("first"))
        #expect(Self.described(item.value(forKey: "count")) == Self.described(Int64(12)))
        #expect(Self.described(item.value(forKey: "small")) == Self.described(Int16(3)))
        // An Int property of an Int64 attribute is converted, not stored as an Int.
        #expect(Self.described(item.value(forKey: "loose")) == Self.described(Int64(7)))
        try context.save()
        item.name = nil
        item.count += 1
        #expect(item.changedValues().keys.sorted() == ["count", "name"])
        #expect(item.name == nil && item.count == 13)
        context.rollback()
        #expect(item.name == "first" && item.count == 12)
    }

    @Test func anUpdateMovesOnlyTheIndexEntriesItChanges() throws {
        let directory = try TestScratch.directory("slot-values")
        defer { try? FileManager.default.removeItem(at: directory) }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.itemModel())
        try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: directory.appendingPathComponent("items.store"),
            options: nil)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        for index in 0..<20 {
            let item = SlotValuesItem(context: context)
            item.name = "n\(index)"
            item.count = Int64(index)
        }
        try context.save()
        func names(_ format: String, _ arguments: Any...) throws -> [String] {
            let request = NSFetchRequest<SlotValuesItem>(entityName: "SlotValuesItem")
            request.predicate = NSPredicate(format: format, argumentArray: arguments)
            return try context.fetch(request).compactMap(\.name).sorted()
        }
        let five = try #require(
            try context.fetch(NSFetchRequest<SlotValuesItem>(entityName: "SlotValuesItem")).first { $0.count == 5 })
        five.small = 9
        try context.save()
        #expect(try names("count == %lld", Int64(5)) == ["n5"])
        #expect(try names("name == %@", "n5") == ["n5"])
        five.count = 50
        try context.save()
        #expect(try names("count == %lld", Int64(5)).isEmpty)
        #expect(try names("count == %lld", Int64(50)) == ["n5"])
        #expect(try names("name == %@", "n5") == ["n5"])
        five.name = "renamed"
        five.count = 5
        try context.save()
        #expect(try names("name == %@", "n5").isEmpty)
        #expect(try names("name == %@", "renamed") == ["renamed"])
        #expect(try names("count == %lld", Int64(5)) == ["renamed"])
        #expect(try names("count BETWEEN {0, 100}").count == 20)
        // Every index entry is the one its row's keys name, and none is left over.
        try BatchFixtures.verify(coordinator, "after updates of one indexed attribute at a time")
    }
}

@Suite struct RelationshipStoreValueTests {
    /// Each relationship form a slot holds (an object, a set, an ordered array, nil) gives
    /// its stored IDs by case, ordered ones in order; the switch names every case.
    @Test func relationshipSlotsGiveTheirIDsByCase() throws {
        let context = try TestStack.freshContext()
        try context.performAndWait {
            let project = NSEntityDescription.insertNewObject(forEntityName: "Project", into: context)
            let tasks = (0..<3).map { _ in NSEntityDescription.insertNewObject(forEntityName: "Task", into: context) }
            let ordered = [tasks[2], tasks[0], tasks[1]]
            project.setValue(NSOrderedSet(array: ordered), forKey: "tasks")
            let member = NSEntityDescription.insertNewObject(forEntityName: "Employee", into: context)
            project.setValue(Set([member]), forKey: "members")
            let layout = project.layout
            let tasksSlot = try #require(layout.slotsByName["tasks"])
            let membersSlot = try #require(layout.slotsByName["members"])
            #expect(try project.storeValue(slot: tasksSlot, mapping: [:]) == .objectIDs(ordered.map(\.objectID)))
            #expect(try project.storeValue(slot: membersSlot, mapping: [:]) == .objectIDs([member.objectID]))
            let taskSlot = try #require(tasks[0].layout.slotsByName["project"])
            #expect(try tasks[0].storeValue(slot: taskSlot, mapping: [:]) == .objectID(project.objectID))
            project.setValue(nil, forKey: "tasks")
            #expect(try project.storeValue(slot: tasksSlot, mapping: [:]) == .objectIDs([]))
            try context.save()
            context.refresh(project, mergeChanges: false)
            #expect((project.value(forKey: "tasks") as? NSOrderedSet)?.count == 0)
        }
    }
}
