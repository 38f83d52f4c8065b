// The default store's quick batch-update path (PageFileRowPatch: constants encoded once,
// copies of stored bytes, integer shifts on the tag and varint) against the general path
// it stands in for (the row decoded, BatchUpdateChanges evaluating every value, the row
// patched from them): on random rows (nils, extreme integers, rows shorter than the
// entity) and random propertiesToUpdate, the quick path writes the same bytes and the
// same new index values, and declines every row the general path refuses.
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

@Suite struct PageFileRowPatchTests {
    static let model: NSManagedObjectModel = {
        let sample = NSEntityDescription()
        sample.name = "Sample"
        sample.properties = [
            BatchFixtures.attribute("small", .integer16AttributeType),
            BatchFixtures.attribute("wide", .integer64AttributeType),
            BatchFixtures.attribute("other", .integer16AttributeType),
            BatchFixtures.attribute("flag", .booleanAttributeType, optional: false),
            BatchFixtures.attribute("name", .stringAttributeType),
            BatchFixtures.attribute("label", .stringAttributeType),
            BatchFixtures.attribute("when", .dateAttributeType),
        ]
        let model = NSManagedObjectModel()
        model.entities = [sample]
        return model
    }()

    static func randomValues(_ random: inout SeededRandom) -> [StoreValue] {
        func integer(_ range: ClosedRange<Int64>) -> StoreValue {
            switch random.int(in: 0...5) {
            case 0: .null
            case 1: .integer(range.upperBound - Int64(random.int(in: 0...3)))
            case 2: .integer(range.lowerBound + Int64(random.int(in: 0...3)))
            case 3: .integer(Int64(random.int(in: 0...200)))
            default: .integer(min(max(Int64(random.int(in: -70_000...70_000)), range.lowerBound), range.upperBound))
            }
        }
        func text() -> StoreValue {
            random.chance(0.2) ? .null : .string(String(repeating: "é", count: random.int(in: 0...70)))
        }
        let values: [StoreValue] = [
            integer(Int64(Int16.min)...Int64(Int16.max)), integer(Int64.min...Int64.max),
            integer(Int64(Int16.min)...Int64(Int16.max)), .boolean(random.chance(0.5)), text(), text(),
            random.chance(0.2)
                ? .null : .date(Date(timeIntervalSinceReferenceDate: Double(random.int(in: -9_999...9_999)) / 4)),
        ]
        // A row written before the entity gained its last attributes holds fewer slots.
        return random.chance(0.2) ? Array(values.prefix(random.int(in: 0...values.count))) : values
    }

    static func randomProperties(_ random: inout SeededRandom) -> [AnyHashable: Any] {
        var properties: [AnyHashable: Any] = [:]
        let delta = random.pick([0, 1, -1, 100, -40_000, 32_767])
        if random.chance(0.6) {
            properties["small"] = random.pick(
                [
                    NSExpression(format: "small + %d", delta), NSExpression(format: "other - %d", delta),
                    NSExpression(forKeyPath: "other"), NSExpression(forConstantValue: Int16(delta % 30_000)),
                    NSNull(), Int16(7),
                ] as [Any])
        }
        if random.chance(0.5) {
            properties["wide"] = random.pick(
                [
                    NSExpression(format: "wide + %lld", Int64.max - 2), NSExpression(format: "wide - %d", delta),
                    NSExpression(format: "small + %d", delta), Int64.min,
                ] as [Any])
        }
        if random.chance(0.5) { properties["flag"] = random.chance(0.5) }
        if random.chance(0.5) {
            properties["name"] = random.pick([NSExpression(forKeyPath: "label"), "plain", NSNull()] as [Any])
        }
        if random.chance(0.3) {
            properties["when"] = random.pick(
                [
                    NSExpression(forKeyPath: "when"), Date(timeIntervalSinceReferenceDate: 12.5),
                ] as [Any])
        }
        if properties.isEmpty { properties["flag"] = true }
        return properties
    }

    @Test func theQuickPathWritesWhatTheGeneralPathWrites() throws {
        let entity = try #require(Self.model.entitiesByName["Sample"])
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.model)
        let store = try coordinator.addPersistentStore(
            ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
        let codec = PageFileRowCodec(
            entityNamed: { Self.model.entitiesByName[$0] }, makeObjectID: { store.newObjectID(for: $0, key: $1) })
        var random = SeededRandom(environmentOr: 0x9A7C_4ED)
        let slotCount = entity.layout.properties.count
        var (quickRows, declined) = (0, 0)
        for round in 0..<300 {
            let properties = Self.randomProperties(&random)
            let changes = try BatchUpdateChanges(properties, entity: entity)
            let patch = try #require(PageFileRowPatch(changes, codec: codec), "every form here is quick")
            let keySlots = (0..<slotCount).map { _ in random.chance(0.7) }
            for row in 0..<20 {
                let hint = Comment(rawValue: "round \(round), row \(row), \(random.replayHint), \(properties)")
                let values = Self.randomValues(&random)
                let stored = PageFileRowCodec.encode(
                    values: values, version: Int64(random.int(in: 1...300)), layout: entity.layout)
                try stored.withUnsafeBytes { bytes in
                    var offsets: [Int] = []
                    try PageFileRowCodec.slotOffsets(bytes, into: &offsets)
                    var quick = StoreByteWriter()
                    var keyValues = Array(repeating: StoreValue.unresolved, count: slotCount)
                    let patched = try patch.write(
                        bytes, offsets: offsets, into: &quick, keySlots: keySlots, keyValues: &keyValues)
                    // The general path: decoded, evaluated, patched from the changes.
                    let decoded = try codec.decode(bytes, entity: entity)
                    let storeRow = StoreRow(
                        objectID: store.newObjectID(for: entity, key: Int64(row + 1)), version: decoded.version,
                        values: decoded.values)
                    let view = StoreRowView(row: storeRow, resolve: { _ in nil }, resolveToMany: { _, _ in [] })
                    let evaluated = Result { try changes.changes(for: storeRow) { view } }
                    guard patched else {
                        declined += 1
                        return
                    }
                    quickRows += 1
                    let general = try #require(
                        try? evaluated.get(),
                        Comment(rawValue: "the quick path wrote a row the evaluator refuses: \(hint.rawValue)"))
                    var slow = StoreByteWriter()
                    try PageFileStore.patch(bytes, offsets: offsets, changes: general, into: &slow)
                    #expect(quick.bytes == slow.bytes, hint)
                    for change in general where keySlots[change.slot] {
                        #expect(keyValues[change.slot] == change.value, hint)
                    }
                    for slot in 0..<slotCount where !general.contains(where: { $0.slot == slot }) {
                        #expect(
                            keyValues[slot] == .unresolved,
                            Comment(rawValue: "an unchanged slot's key value was written: \(hint.rawValue)"))
                    }
                }
            }
        }
        // Both outcomes were exercised.
        #expect(quickRows > 1_000)
        #expect(declined > 100)
    }
}
