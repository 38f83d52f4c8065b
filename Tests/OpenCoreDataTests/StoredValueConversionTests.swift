// Fetched objects load through the layout's per-slot conversion
// (EntityLayout.objectValues(fromStored:)); it must give exactly what the general
// conversion (NSManagedObject.objectValues(from:)) gives, for every attribute type,
// every stored form (matching the type or not), and every relationship shape.
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

@Suite struct StoredValueConversionTests {
    static let attributeTypes: [NSAttributeType] = [
        .undefinedAttributeType, .integer16AttributeType, .integer32AttributeType, .integer64AttributeType,
        .decimalAttributeType, .doubleAttributeType, .floatAttributeType, .stringAttributeType,
        .booleanAttributeType, .dateAttributeType, .binaryDataAttributeType, .UUIDAttributeType,
        .URIAttributeType, .transformableAttributeType, .objectIDAttributeType,
    ]

    /// An entity with one attribute of every type and a to-one, a to-many and an
    /// ordered to-many relationship.
    static func makeEntity() -> NSEntityDescription {
        let entity = NSEntityDescription()
        entity.name = "Everything"
        var properties: [NSPropertyDescription] = []
        for (index, type) in attributeTypes.enumerated() {
            let attribute = NSAttributeDescription()
            attribute.name = "a\(index)"
            attribute.attributeType = type
            properties.append(attribute)
        }
        for (name, toMany, ordered) in [("one", false, false), ("many", true, false), ("list", true, true)] {
            let relationship = NSRelationshipDescription()
            relationship.name = name
            relationship.destinationEntity = entity
            relationship.maxCount = toMany ? 0 : 1
            relationship.isOrdered = ordered
            properties.append(relationship)
        }
        entity.properties = properties
        let model = NSManagedObjectModel()
        model.entities = [entity]
        return entity
    }

    static func randomValue(_ random: inout SeededRandom, _ entity: NSEntityDescription) -> StoreValue {
        let id = NSManagedObjectID.temporary(for: entity)
        switch random.int(in: 0...13) {
        case 0: return .null
        case 1: return .integer(Int64(bitPattern: random.next()) >> random.int(in: 0...63))
        case 2: return .double(random.pick([0.5, -2, .nan, .infinity, 1e300, 3]))
        case 3: return .float(random.pick([Float(0.25), -7, .nan]))
        case 4: return .boolean(random.chance(0.5))
        case 5: return .string(random.pick(["", "short", "a longer string than fifteen bytes", "é"]))
        case 6: return .decimal(Decimal(random.int(in: -1_000...1_000)) / 10)
        case 7: return .date(Date(timeIntervalSinceReferenceDate: Double(random.int(in: -1_000_000...1_000_000))))
        case 8: return .binary(Data(random.bytes(random.int(in: 0...8))))
        case 9:
            return .uuid(
                UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, UInt8(random.int(in: 0...255)))))
        case 10: return .uri(URL(string: "https://example.com/\(random.int(in: 0...9))")!)
        case 11: return .objectID(id)
        case 12: return .objectIDs(random.chance(0.5) ? [] : [id, NSManagedObjectID.temporary(for: entity)])
        default: return .unresolved
        }
    }

    /// A value as a test can compare it: its dynamic type and its description, or the
    /// destinations of a relationship still to resolve.
    static func comparable(_ value: Any?) -> String {
        guard let value else { return "nil" }
        if let unresolved = value as? UnresolvedRelationship {
            return "unresolved \(unresolved.objectIDs.map { $0.map { $0.uriRepresentation().absoluteString } } as Any)"
        }
        return "\(type(of: value)): \(String(reflecting: value))"
    }

    @Test func everyStoredFormConvertsAsTheGeneralConversionDoes() {
        var random = SeededRandom(environmentOr: 0x5107)
        let entity = Self.makeEntity()
        let object = NSManagedObject(entity: entity, insertInto: nil)
        let layout = object.layout
        #expect(layout.storedValueConversions.count == Self.attributeTypes.count + 3)
        for _ in 0..<2_000 {
            // Sometimes short: missing trailing values read as null.
            let count = random.chance(0.1) ? random.int(in: 0...layout.properties.count) : layout.properties.count
            let stored = (0..<count).map { _ in Self.randomValue(&random, entity) }
            let fast = layout.objectValues(fromStored: stored).map(Self.comparable)
            let general = object.objectValues(from: stored).map(Self.comparable)
            #expect(fast == general, "stored \(stored) (\(random.replayHint))")
            if fast != general { return }
        }
    }

    @Test func fetchedObjectsReadTheirStoredValues() throws {
        let context = try TestStack.freshContext()
        let employee = TEmployee(context: context)
        employee.name = "Ada"
        employee.age = 36
        employee.salary = 1.5
        let company = TCompany(context: context)
        company.name = "Acme"
        employee.company = company
        try context.save()
        context.reset()
        let fetched = try context.fetch(TestStack.request("Employee", TEmployee.self))
        #expect(fetched.count == 1)
        #expect(fetched.first?.name == "Ada")
        #expect(fetched.first?.age == 36)
        #expect(fetched.first?.salary == 1.5)
        #expect(fetched.first?.company?.name == "Acme")
        #expect(fetched.first?.projects.isEmpty == true)
    }
}
