// NSBatchUpdateRequest on every store: constants and expressions per row, each result
// type, sub-entities, index and uniqueness upkeep, large values, history, and the
// context left alone until a merge.
import Foundation
import OpenCoreData
import Testing

@Suite struct BatchUpdateTests {
    /// Items I0...I19 (count = index, code c<index>), every third a Special.
    static func seeded(_ storeType: String) throws -> (NSManagedObjectContext, NSPersistentStoreCoordinator) {
        let coordinator = try BatchFixtures.coordinator(storeType)
        let context = BatchFixtures.context(coordinator)
        for index in 0..<20 {
            BatchFixtures.item(
                context, "I\(index)", code: "c\(index)", count: Int32(index),
                entity: index % 3 == 0 ? "Special" : "Item")
        }
        try context.save()
        return (context, coordinator)
    }

    @Test(arguments: BatchFixtures.storeTypes)
    func constantsAndExpressionsWithEachResultType(storeType: String) throws {
        let (context, coordinator) = try Self.seeded(storeType)
        let i5 = try #require(try BatchFixtures.fetch("Item", context, "name == %@", "I5").first)
        #expect(i5.value(forKey: "count") as? Int32 == 5)

        let update = NSBatchUpdateRequest(entityName: "Item")
        #expect(update.resultType == .statusOnlyResultType && update.requestType == .batchUpdateRequestType)
        update.predicate = NSPredicate(format: "count >= %d", 5)
        update.propertiesToUpdate = [
            "count": NSExpression(format: "count + 100"), "note": NSExpression(forKeyPath: "name"), "flag": false,
        ]
        update.resultType = .updatedObjectIDsResultType
        let ids = try #require((try context.execute(update) as? NSBatchUpdateResult)?.result as? [NSManagedObjectID])
        #expect(ids.count == 15 && ids.contains(i5.objectID))

        // The registered object is stale until merged; a fresh context reads the store.
        #expect(i5.value(forKey: "count") as? Int32 == 5)
        let reader = BatchFixtures.context(coordinator)
        let stored = try reader.existingObject(with: i5.objectID)
        #expect(stored.value(forKey: "count") as? Int32 == 105 && stored.value(forKey: "note") as? String == "I5")
        #expect(stored.value(forKey: "flag") as? Bool == false)
        // The index on count follows: ranges find the new values, not the old.
        #expect(try BatchFixtures.fetch("Item", reader, "count >= 100").count == 15)
        #expect(try BatchFixtures.fetch("Item", reader, "count >= 5 AND count < 100").isEmpty)
        #expect(try BatchFixtures.fetch("Item", reader, "count < 5 AND flag == YES").count == 5)

        let counted = NSBatchUpdateRequest(entity: try #require(coordinator.managedObjectModel.entitiesByName["Item"]))
        counted.predicate = NSPredicate(format: "name BEGINSWITH %@", "I1")
        counted.propertiesToUpdate = ["score": 2.5]
        counted.resultType = .updatedObjectsCountResultType
        #expect((try context.execute(counted) as? NSBatchUpdateResult)?.result as? Int == 11)

        let status = NSBatchUpdateRequest(entityName: "Item")
        status.propertiesToUpdate = ["created": Date(timeIntervalSinceReferenceDate: 9)]
        #expect((try context.execute(status) as? NSBatchUpdateResult)?.result as? Bool == true)
        #expect(
            try BatchFixtures.fetch("Item", reader, "created == %@", Date(timeIntervalSinceReferenceDate: 9) as NSDate)
                .count == 20)

        let none = NSBatchUpdateRequest(entityName: "Item")
        none.predicate = NSPredicate(format: "name == %@", "nobody")
        none.propertiesToUpdate = ["score": 1.0]
        none.resultType = .updatedObjectsCountResultType
        #expect((try context.execute(none) as? NSBatchUpdateResult)?.result as? Int == 0)
        try BatchFixtures.verify(coordinator)
    }

    @Test(arguments: BatchFixtures.storeTypes)
    func subentitiesAreIncludedUnlessExcluded(storeType: String) throws {
        let (context, coordinator) = try Self.seeded(storeType)
        let onlyItems = NSBatchUpdateRequest(entityName: "Item")
        onlyItems.includesSubentities = false
        onlyItems.propertiesToUpdate = ["note": "item"]
        onlyItems.resultType = .updatedObjectsCountResultType
        #expect((try context.execute(onlyItems) as? NSBatchUpdateResult)?.result as? Int == 13)
        let specials = NSBatchUpdateRequest(entityName: "Special")
        specials.propertiesToUpdate = ["level": NSExpression(format: "level + count")]
        specials.resultType = .updatedObjectsCountResultType
        #expect((try context.execute(specials) as? NSBatchUpdateResult)?.result as? Int == 7)
        let reader = BatchFixtures.context(coordinator)
        #expect(try BatchFixtures.fetch("Item", reader, "note == %@", "item").count == 13)
        let i9 = try #require(try BatchFixtures.fetch("Special", reader, "name == %@", "I9").first)
        #expect(i9.value(forKey: "level") as? Int16 == 10 && i9.value(forKey: "note") == nil)
    }

    @Test(arguments: BatchFixtures.storeTypes)
    func aUniqueKeyClashIs133021AndWritesNothing(storeType: String) throws {
        let (context, coordinator) = try Self.seeded(storeType)
        let before = try BatchFixtures.snapshot(coordinator)
        let token = coordinator.currentPersistentHistoryToken(fromStores: nil)
        let same = NSBatchUpdateRequest(entityName: "Item")
        same.predicate = NSPredicate(format: "count < 3")
        same.propertiesToUpdate = ["code": "shared", "note": "touched"]
        let error = #expect(throws: NSError.self) { try context.execute(same) }
        #expect(error?.code == NSManagedObjectConstraintMergeError)
        let taken = NSBatchUpdateRequest(entityName: "Item")
        taken.predicate = NSPredicate(format: "name == %@", "I1")
        taken.propertiesToUpdate = ["code": "c2"]
        #expect(throws: NSError.self) { try context.execute(taken) }
        #expect(try BatchFixtures.snapshot(coordinator) == before)
        #expect(coordinator.currentPersistentHistoryToken(fromStores: nil) == token)

        // Codes moved out of the way, and a code a row keeps, are fine; nil is never a clash.
        let renamed = NSBatchUpdateRequest(entityName: "Item")
        renamed.propertiesToUpdate = ["code": NSExpression(format: "name")]
        try context.execute(renamed)
        let cleared = NSBatchUpdateRequest(entityName: "Item")
        cleared.predicate = NSPredicate(format: "count < 10")
        cleared.propertiesToUpdate = ["code": NSExpression(forConstantValue: nil)]
        try context.execute(cleared)
        let reader = BatchFixtures.context(coordinator)
        #expect(try BatchFixtures.fetch("Item", reader, "code == nil").count == 10)
        #expect(try BatchFixtures.fetch("Item", reader, "code == %@", "I15").count == 1)
        BatchFixtures.item(reader, "new", code: "I14")
        #expect(throws: NSError.self) { try reader.save() }
        try BatchFixtures.verify(coordinator)
    }

    @Test(arguments: BatchFixtures.storeTypes)
    func historyNamesTheAttributesWritten(storeType: String) throws {
        let (context, coordinator) = try Self.seeded(storeType)
        let token = coordinator.currentPersistentHistoryToken(fromStores: nil)
        context.transactionAuthor = "updater"
        let update = NSBatchUpdateRequest(entityName: "Item")
        update.predicate = NSPredicate(format: "count == 4 OR count == 6")
        update.propertiesToUpdate = ["score": 1.0, "note": "n"]
        update.resultType = .updatedObjectIDsResultType
        let ids = try #require((try context.execute(update) as? NSBatchUpdateResult)?.result as? [NSManagedObjectID])
        let history = try BatchFixtures.history(context, after: token)
        #expect(history == [ids.map { "update \(BatchFixtures.key($0)) note,score" }.sorted()])
    }

    @Test(arguments: BatchFixtures.storeTypes)
    func largeValuesAreWrittenAndReplaced(storeType: String) throws {
        let (context, coordinator) = try Self.seeded(storeType)
        let large = Data(repeating: 7, count: 90_000)
        let other = Data(repeating: 9, count: 80_000)
        let first = NSBatchUpdateRequest(entityName: "Item")
        first.propertiesToUpdate = ["payload": large]
        try context.execute(first)
        // A predicate reading the large value, an expression copying it, then a small one.
        let second = NSBatchUpdateRequest(entityName: "Item")
        second.predicate = NSPredicate(format: "payload == %@", large as NSData)
        second.propertiesToUpdate = ["payload": other]
        second.resultType = .updatedObjectsCountResultType
        #expect((try context.execute(second) as? NSBatchUpdateResult)?.result as? Int == 20)
        let third = NSBatchUpdateRequest(entityName: "Item")
        third.predicate = NSPredicate(format: "count < 10 AND payload == %@", other as NSData)
        third.propertiesToUpdate = ["payload": Data([1])]
        try context.execute(third)
        let reader = BatchFixtures.context(coordinator)
        #expect(try BatchFixtures.fetch("Item", reader, "payload == %@", other as NSData).count == 10)
        #expect(try BatchFixtures.fetch("Item", reader, "payload == %@", Data([1]) as NSData).count == 10)
        try BatchFixtures.verify(coordinator)
    }
}
