// Batch updates and deletes of entities without relationships or blobs, which the default
// store applies on encoded rows (patched slots, moved index entries, rows removed from
// their bytes): against the same changes made with objects and save(), on every store,
// with the store checked (index entries match rows) after every step.
import Foundation
import OpenCoreData
import TestSupport
import Testing

@Suite struct BatchEncodedRowTests {
    /// Reading: name (indexed), code (unique), count (Int16, indexed), score, flag, note;
    /// Special a sub-entity with level (kept in history on deletion). No relationships.
    static let model: NSManagedObjectModel = {
        let reading = NSEntityDescription()
        reading.name = "Reading"
        let special = NSEntityDescription()
        special.name = "Special"
        reading.properties = [
            BatchFixtures.attribute("name", .stringAttributeType, optional: false, indexed: true),
            BatchFixtures.attribute("code", .stringAttributeType),
            BatchFixtures.attribute("count", .integer16AttributeType, optional: false, defaultValue: 0, indexed: true),
            BatchFixtures.attribute("score", .doubleAttributeType),
            BatchFixtures.attribute("flag", .booleanAttributeType, optional: false, defaultValue: true),
            BatchFixtures.attribute("note", .stringAttributeType),
        ]
        reading.uniquenessConstraints = [["code"]]
        let level = BatchFixtures.attribute("level", .integer16AttributeType, optional: false, defaultValue: 1)
        level.preservesValueInHistoryOnDeletion = true
        special.properties = [level]
        reading.subentities = [special]
        let model = NSManagedObjectModel()
        model.entities = [reading, special]
        return model
    }()

    static func coordinator(_ type: String) throws -> NSPersistentStoreCoordinator {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let location = type == NSInMemoryStoreType ? nil : try BatchFixtures.temporaryURL(type)
        try coordinator.addPersistentStore(
            ofType: type, configurationName: nil, at: location,
            options: [NSPersistentHistoryTrackingKey: true as NSNumber, PageFileStoreDurabilityOption: "off"])
        return coordinator
    }

    static func seed(_ context: NSManagedObjectContext) throws {
        for index in 0..<60 {
            let entity = index % 4 == 3 ? "Special" : "Reading"
            var values: [String: Any] = [
                "name": "R\(index)", "code": "c\(index)", "count": Int16(index % 15), "score": Double(index) / 4,
            ]
            if index % 3 == 0 { values["note"] = "n\(index)" }
            if entity == "Special" { values["level"] = Int16(index) }
            _ = BatchFixtures.object(entity, context, values)
        }
        try context.save()
    }

    /// Every stored object as text, sorted, read through a fresh context.
    static func snapshot(_ coordinator: NSPersistentStoreCoordinator) throws -> [String] {
        let reader = BatchFixtures.context(coordinator)
        var lines: [String] = []
        for entity in model.entities {
            let request = NSFetchRequest<NSManagedObject>(entityName: entity.name ?? "")
            request.includesSubentities = false
            for object in try reader.fetch(request) {
                let values = entity.propertiesByName.keys.sorted().map { "\($0)=\(object.value(forKey: $0) ?? "nil")" }
                lines.append("\(BatchFixtures.key(object.objectID)) \(values.joined(separator: " "))")
            }
        }
        return lines.sorted()
    }

    @Test(arguments: BatchFixtures.storeTypes)
    func batchesMatchObjectSaves(storeType: String) throws {
        var random = SeededRandom(environmentOr: 0xE4C0_DE)
        var sides = try BatchSides({ try Self.coordinator(storeType) }, seed: Self.seed)
        let (batchSide, objectSide) = (sides.batchSide, sides.objectSide)
        let batch = BatchFixtures.context(batchSide)
        let objects = BatchFixtures.context(objectSide)
        for step in 0..<30 {
            let hint = Comment(rawValue: "step \(step), \(random.replayHint)")
            let low = Int16(random.int(in: 0...14))
            let high = low + Int16(random.int(in: 1...5))
            // Exact index ranges, ranges tested again on the row, and scans.
            let predicate: OpenCoreData.NSPredicate
            switch random.int(in: 0...3) {
            case 0: predicate = NSPredicate(format: "count >= %d AND count < %d", low, high)
            case 1: predicate = NSPredicate(format: "count >= %d AND count < %d AND flag == YES", low, high)
            case 2: predicate = NSPredicate(format: "note != nil OR score > %f", Double(low) * 2)
            default: predicate = NSPredicate(format: "name BEGINSWITH %@ AND count < %d", "R1", high)
            }
            let includesSubentities = random.chance(0.7)
            if random.chance(0.6) {
                let delta = Int16(random.int(in: -3...3))
                let flag = random.chance(0.5)
                var properties: [AnyHashable: Any] = [
                    "count": NSExpression(format: "count + %d", delta), "flag": flag,
                    "note": NSExpression(forKeyPath: "name"),
                ]
                let renames = random.chance(0.3)
                // A new name moves index entries; a new code goes through the unique check.
                if renames { properties["name"] = "X\(step)" }
                let recodes = random.chance(0.2)
                if recodes { properties["code"] = NSExpression(forKeyPath: "name") }
                let update = NSBatchUpdateRequest(entityName: "Reading")
                update.predicate = predicate
                update.includesSubentities = includesSubentities
                update.propertiesToUpdate = properties
                try batch.execute(update)
                let request = NSFetchRequest<NSManagedObject>(entityName: "Reading")
                request.predicate = predicate
                request.includesSubentities = includesSubentities
                for object in try objects.fetch(request) {
                    let name = object.value(forKey: "name")
                    object.setValue((object.value(forKey: "count") as? Int16 ?? 0) + delta, forKey: "count")
                    object.setValue(flag, forKey: "flag")
                    object.setValue(name, forKey: "note")
                    if renames { object.setValue("X\(step)", forKey: "name") }
                    if recodes { object.setValue(name, forKey: "code") }
                }
            } else {
                let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Reading")
                request.predicate = predicate
                request.includesSubentities = includesSubentities
                if !includesSubentities, random.chance(0.5) {
                    request.fetchOffset = random.int(in: 0...2)
                    request.fetchLimit = random.int(in: 1...4)
                }
                try batch.execute(NSBatchDeleteRequest(fetchRequest: request))
                let all = NSFetchRequest<NSManagedObject>(entityName: "Reading")
                all.predicate = predicate
                all.includesSubentities = includesSubentities
                // The batch side counts offset and limit in key order: the same here.
                let victims = try objects.fetch(all).sorted {
                    Self.primaryKey($0.objectID) < Self.primaryKey($1.objectID)
                }
                let start = min(request.fetchOffset, victims.count)
                let end = request.fetchLimit > 0 ? min(start + request.fetchLimit, victims.count) : victims.count
                for object in victims[start..<end] { objects.delete(object) }
            }
            try objects.save()
            #expect(try Self.snapshot(batchSide) == Self.snapshot(objectSide), hint)
            let history = try sides.newHistory()
            #expect(history.batch == history.objects, hint)
            try BatchFixtures.verify(batchSide, hint)
            // Index entries moved with the values: a fetch by the index finds what a scan finds.
            let byIndex = try BatchFixtures.fetch("Reading", batch, "count >= %d AND count < %d", low, high)
            let byScan = try BatchFixtures.fetch("Reading", batch, "count + 0 >= %d AND count + 0 < %d", low, high)
            #expect(Set(byIndex.map(\.objectID)) == Set(byScan.map(\.objectID)), hint)
            batch.reset()
        }
    }

    static func primaryKey(_ objectID: NSManagedObjectID) -> Int {
        Int(objectID.uriRepresentation().lastPathComponent.dropFirst()) ?? -1
    }

    @Test(arguments: BatchFixtures.storeTypes)
    func anExpressionLeavingTheAttributesRangeFailsWithNothingWritten(storeType: String) throws {
        let coordinator = try Self.coordinator(storeType)
        let context = BatchFixtures.context(coordinator)
        try Self.seed(context)
        let before = try Self.snapshot(coordinator)
        let update = NSBatchUpdateRequest(entityName: "Reading")
        update.predicate = NSPredicate(format: "count >= 10")
        update.propertiesToUpdate = ["count": NSExpression(format: "count + 32760"), "flag": false]
        #expect(throws: (any Error).self) { try context.execute(update) }
        #expect(try Self.snapshot(coordinator) == before)
        try BatchFixtures.verify(coordinator)
    }

    @Test(arguments: BatchFixtures.storeTypes)
    func updatedIndexedValuesAreFoundByTheirNewValues(storeType: String) throws {
        let coordinator = try Self.coordinator(storeType)
        let context = BatchFixtures.context(coordinator)
        try Self.seed(context)
        let update = NSBatchUpdateRequest(entityName: "Reading")
        update.predicate = NSPredicate(format: "count >= 5 AND count < 10")
        update.propertiesToUpdate = ["count": NSExpression(format: "count + 100"), "name": "moved"]
        update.resultType = .updatedObjectsCountResultType
        let updated = try #require((try context.execute(update) as? NSBatchUpdateResult)?.result as? Int)
        #expect(updated == 20)
        #expect(try BatchFixtures.fetch("Reading", context, "count >= 5 AND count < 10").isEmpty)
        #expect(try BatchFixtures.fetch("Reading", context, "count >= 105 AND count < 110").count == 20)
        #expect(try BatchFixtures.fetch("Reading", context, "name == 'moved'").count == 20)
        try BatchFixtures.verify(coordinator)
        // Deleted rows free their unique codes and index entries.
        let moved = NSFetchRequest<NSFetchRequestResult>(entityName: "Reading")
        moved.predicate = NSPredicate(format: "name == 'moved'")
        let delete = NSBatchDeleteRequest(fetchRequest: moved)
        delete.resultType = .resultTypeCount
        #expect((try context.execute(delete) as? NSBatchDeleteResult)?.result as? Int == 20)
        #expect(try BatchFixtures.fetch("Reading", context, "name == 'moved'").isEmpty)
        try context.execute(NSBatchInsertRequest(entityName: "Reading", objects: [["name": "again", "code": "c5"]]))
        try BatchFixtures.verify(coordinator)
    }

    /// A batch past the writer's pending index key limit writes its ordinary index entries
    /// in sorted runs during the batch (so its memory stays bounded); every entry is still
    /// there once, and a later delete finds and removes them.
    @Test func aBatchPastThePendingKeyLimitKeepsEveryIndexEntry() throws {
        let coordinator = try Self.coordinator(NSSQLiteStoreType)
        let context = BatchFixtures.context(coordinator)
        let total = 70_000
        var next = 0
        let insert = NSBatchInsertRequest(entityName: "Reading") { (values: NSMutableDictionary) in
            guard next < total else { return true }
            values["name"] = "R\(next)"
            values["count"] = Int16(next % 15)
            next += 1
            return false
        }
        try context.execute(insert)
        #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Reading")) == total)
        let three = NSFetchRequest<NSManagedObject>(entityName: "Reading")
        three.predicate = NSPredicate(format: "count == 3")
        #expect(try context.count(for: three) == (0..<total).filter { $0 % 15 == 3 }.count)
        #expect(try BatchFixtures.fetch("Reading", context, "name == 'R69999'").count == 1)
        try BatchFixtures.verify(coordinator)
        let high = NSFetchRequest<NSFetchRequestResult>(entityName: "Reading")
        high.predicate = NSPredicate(format: "count >= 10")
        try context.execute(NSBatchDeleteRequest(fetchRequest: high))
        #expect(
            try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Reading"))
                == (0..<total).filter { $0 % 15 < 10 }.count)
        try BatchFixtures.verify(coordinator)
    }
}
