// A fetch's codec finds the stored to-one value of a reference to a slot's declared
// destination by the row's layout, the slot and the key alone (PageFileInternedObjectIDs'
// declared to-ones): every such value must still name what the general decode names, across
// slots whose destinations share keys, references naming a sub-entity by name, sub-entity
// rows (another layout), collisions in the table and rows of every form; and the rows of
// one fetch naming one object in one slot share one value.
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

@Suite struct DeclaredToOneSharingTests {
    /// Source (to-ones `left` to Left and `right` to Right, an age), its sub-entity
    /// SourceSub, Left and its sub-entity LeftSub, and Right.
    static func makeModel() -> [String: NSEntityDescription] {
        func entity(_ name: String) -> NSEntityDescription {
            let entity = NSEntityDescription()
            entity.name = name
            return entity
        }
        let source = entity("Source")
        let sourceSub = entity("SourceSub")
        let left = entity("Left")
        let leftSub = entity("LeftSub")
        let right = entity("Right")
        func toOne(_ name: String, _ destination: NSEntityDescription) -> NSRelationshipDescription {
            let relationship = NSRelationshipDescription()
            relationship.name = name
            relationship.destinationEntity = destination
            relationship.maxCount = 1
            return relationship
        }
        let age = NSAttributeDescription()
        age.name = "age"
        age.attributeType = .integer16AttributeType
        source.properties = [toOne("left", left), age, toOne("right", right)]
        let note = NSAttributeDescription()
        note.name = "note"
        note.attributeType = .stringAttributeType
        sourceSub.properties = [note]
        source.subentities = [sourceSub]
        left.subentities = [leftSub]
        let model = NSManagedObjectModel()
        model.entities = [source, sourceSub, left, leftSub, right]
        return Dictionary(uniqueKeysWithValues: model.entities.map { ($0.name ?? "", $0) })
    }

    @Test func declaredToOnesNameWhatTheGeneralDecodeNames() throws {
        var random = SeededRandom(environmentOr: 0xD3C1_A7ED)
        let entities = Self.makeModel()
        let store = try #require(try TestStack.coordinator().persistentStores.first)
        let codec = PageFileRowCodec(
            entityNamed: { entities[$0] }, makeObjectID: { NSManagedObjectID(entity: $0, store: store, key: $1) })
        let destinations = [
            "left": [entities["Left"]!, entities["LeftSub"]!], "right": [entities["Right"]!],
        ]
        // Rows of both layouts; more keys than the table has entries (a few references
        // each), the same keys in both slots and in Left and LeftSub.
        var rows: [(entity: NSEntityDescription, bytes: [UInt8])] = []
        for _ in 0..<4_000 {
            let entity = random.chance(0.3) ? entities["SourceSub"]! : entities["Source"]!
            let layout = entity.layout
            var values: [StoreValue] = []
            for property in layout.properties {
                if let candidates = destinations[property.name] {
                    let destination = random.pick(candidates)
                    let key = Int64(random.int(in: random.chance(0.2) ? 1...400 : 1...20))
                    values.append(
                        random.chance(0.1)
                            ? .null : .objectID(NSManagedObjectID(entity: destination, store: store, key: key)))
                } else if property.name == "age" {
                    values.append(.integer(Int64(random.int(in: 0...90))))
                } else {
                    values.append(.string("note"))
                }
            }
            rows.append((entity, PageFileRowCodec.encode(values: values, version: 1, layout: layout)))
        }
        var sharedBySlotAndID: [String: UnresolvedRelationship] = [:]
        var (references, shared) = (0, 0)
        try codec.interningReferences { fetching in
            for (index, row) in rows.enumerated() {
                try row.bytes.withUnsafeBytes { raw in
                    let hint = Comment(rawValue: "row \(index), \(random.replayHint)")
                    let general = try codec.decode(raw, entity: row.entity)
                    let layout = row.entity.layout
                    let slots = try #require(try fetching.decodeSlots(raw, layout: layout)?.slots, hint)
                    let expected = layout.objectValues(fromStored: general.values).storage
                    #expect(
                        slots.values.storage.map(PageFileRowSlotDecodeTests.describe)
                            == expected.map(PageFileRowSlotDecodeTests.describe), hint)
                    for (slot, value) in slots.values.storage.enumerated() {
                        guard case .unresolved(let relationship) = value, let destination = relationship.destination
                        else { continue }
                        references += 1
                        // Keyed by the slot's name: both layouts hold `left` and `right` alike.
                        let name = layout.properties[slot].name
                        let key = "\(name) \(PageFileRowSlotDecodeTests.name(destination))"
                        if let earlier = sharedBySlotAndID[key], earlier === relationship { shared += 1 }
                        sharedBySlotAndID[key] = relationship
                    }
                }
            }
        }
        // Most references name an object named before in their slot, and share its value.
        #expect(references > 6_000 && shared > references / 3, "\(shared) shared of \(references)")
    }
}
