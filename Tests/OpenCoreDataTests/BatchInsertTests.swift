// NSBatchInsertRequest on every store: each form (objects, dictionary handler, managed
// object handler), each result type, defaults, sub-entities, large values, upserts under
// each merge policy, history, and the context left alone until a merge.
import Foundation
import OpenCoreData
import Testing

@Suite struct BatchInsertTests {
    static var rows: [[String: Any]] {
        (0..<40).map { index in
            ["name": "I\(index)", "code": "c\(index)", "count": index, "score": Double(index) / 2]
        }
    }

    @Test(arguments: BatchFixtures.storeTypes)
    func objectsWithEachResultType(storeType: String) throws {
        let context = try BatchFixtures.freshContext(storeType)
        let status = NSBatchInsertRequest(entityName: "Item", objects: Array(Self.rows[0..<10]))
        #expect(status.resultType == .statusOnly && status.requestType == .batchInsertRequestType)
        let statusResult = try #require(try context.execute(status) as? NSBatchInsertResult)
        #expect(statusResult.result as? Bool == true && statusResult.resultType == .statusOnly)

        let entity = try #require(context.persistentStoreCoordinator?.managedObjectModel.entitiesByName["Item"])
        let withIDs = NSBatchInsertRequest(entity: entity, objects: Array(Self.rows[10..<30]))
        withIDs.resultType = .objectIDs
        let ids = try #require((try context.execute(withIDs) as? NSBatchInsertResult)?.result as? [NSManagedObjectID])
        #expect(ids.count == 20 && Set(ids).count == 20)
        #expect(ids.allSatisfy { !$0.isTemporaryID && $0.entity.name == "Item" })

        let counted = NSBatchInsertRequest(entity: entity, objects: Array(Self.rows[30..<40]))
        counted.resultType = .count
        #expect((try context.execute(counted) as? NSBatchInsertResult)?.result as? Int == 10)

        #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Item")) == 40)
        let fetched = try context.existingObject(with: ids[3])
        #expect(fetched.value(forKey: "name") as? String == "I13")
        #expect(fetched.value(forKey: "code") as? String == "c13")
        #expect(fetched.value(forKey: "count") as? Int32 == 13)
        #expect(fetched.value(forKey: "score") as? Double == 6.5)
        // Omitted: defaults for count/flag, nil for optional ones.
        #expect(fetched.value(forKey: "flag") as? Bool == true)
        #expect(fetched.value(forKey: "note") == nil && fetched.value(forKey: "created") == nil)
        // The indexed attribute is found through its index.
        #expect(try BatchFixtures.fetch("Item", context, "count >= 35").count == 5)
        try BatchFixtures.verify(try #require(context.persistentStoreCoordinator))
    }

    @Test(arguments: BatchFixtures.storeTypes)
    func dictionaryHandlerIsCalledUntilItReturnsTrue(storeType: String) throws {
        let context = try BatchFixtures.freshContext(storeType)
        var calls = 0
        let request = NSBatchInsertRequest(entityName: "Item") { (dictionary: NSMutableDictionary) -> Bool in
            calls += 1
            if calls > 25 {
                // The last dictionary is not inserted, whatever it holds.
                dictionary["name"] = "never"
                return true
            }
            dictionary.addEntries(from: ["name": "H\(calls)", "count": calls, "flag": calls % 2 == 0])
            return false
        }
        request.resultType = .count
        #expect((try context.execute(request) as? NSBatchInsertResult)?.result as? Int == 25)
        #expect(calls == 26)
        let all = try BatchFixtures.fetch("Item", context)
        #expect(all.count == 25 && !all.contains { $0.value(forKey: "name") as? String == "never" })
        let h4 = try #require(try BatchFixtures.fetch("Item", context, "name == %@", "H4").first)
        #expect(h4.value(forKey: "count") as? Int32 == 4 && h4.value(forKey: "flag") as? Bool == true)
    }

    @Test(arguments: BatchFixtures.storeTypes)
    func managedObjectHandlerFillsObjectsOfTheEntity(storeType: String) throws {
        let context = try BatchFixtures.freshContext(storeType)
        var made = 0
        let request = NSBatchInsertRequest(entityName: "Special") { (object: NSManagedObject) -> Bool in
            guard made < 12 else { return true }
            #expect(object.entity.name == "Special" && object.managedObjectContext == nil)
            object.setValue("M\(made)", forKey: "name")
            object.setValue(Int32(made * 10), forKey: "count")
            if made == 3 { object.setValue(Int16(7), forKey: "level") }
            made += 1
            return false
        }
        request.resultType = .objectIDs
        let ids = try #require((try context.execute(request) as? NSBatchInsertResult)?.result as? [NSManagedObjectID])
        #expect(ids.count == 12 && ids.allSatisfy { $0.entity.name == "Special" })
        let m3 = try context.existingObject(with: ids[3])
        #expect(m3.value(forKey: "name") as? String == "M3" && m3.value(forKey: "count") as? Int32 == 30)
        #expect(m3.value(forKey: "level") as? Int16 == 7)
        #expect(try context.existingObject(with: ids[4]).value(forKey: "level") as? Int16 == 1)
        // A fetch of the superentity finds the sub-entity's rows.
        #expect(try BatchFixtures.fetch("Item", context).count == 12)
    }

    @Test(arguments: BatchFixtures.storeTypes)
    func largeBinaryValuesAndDates(storeType: String) throws {
        let context = try BatchFixtures.freshContext(storeType)
        let large = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 * 7) })
        let small = Data([1, 2, 3])
        let when = Date(timeIntervalSinceReferenceDate: 12_345.5)
        let request = NSBatchInsertRequest(
            entityName: "Item",
            objects: [
                ["name": "large", "payload": large, "created": when],
                ["name": "small", "payload": small as NSData, "created": NSDate(timeIntervalSinceReferenceDate: 1)],
            ])
        try context.execute(request)
        let items = try BatchFixtures.fetch("Item", context)
        let byName = Dictionary(uniqueKeysWithValues: items.map { ($0.value(forKey: "name") as? String ?? "", $0) })
        #expect(byName["large"]?.value(forKey: "payload") as? Data == large)
        #expect(byName["large"]?.value(forKey: "created") as? Date == when)
        #expect(byName["small"]?.value(forKey: "payload") as? Data == small)
        try BatchFixtures.verify(try #require(context.persistentStoreCoordinator))
    }

    @Test(arguments: BatchFixtures.storeTypes)
    func registeredObjectsAreLeftAloneAndHistoryRecordsTheBatch(storeType: String) throws {
        let coordinator = try BatchFixtures.coordinator(storeType)
        let context = BatchFixtures.context(coordinator)
        context.transactionAuthor = "importer"
        context.name = "import context"
        try context.execute(NSBatchInsertRequest(entityName: "Item", objects: [["name": "seed"]]))
        let before = coordinator.currentPersistentHistoryToken(fromStores: nil)
        let empty = NSBatchInsertRequest(entityName: "Item", objects: [])
        empty.resultType = .count
        #expect((try context.execute(empty) as? NSBatchInsertResult)?.result as? Int == 0)
        #expect(coordinator.currentPersistentHistoryToken(fromStores: nil) == before, "an empty batch records nothing")

        let request = NSBatchInsertRequest(entityName: "Item", objects: Array(Self.rows[0..<5]))
        request.resultType = .objectIDs
        let ids = try #require((try context.execute(request) as? NSBatchInsertResult)?.result as? [NSManagedObjectID])
        #expect(context.registeredObjects.isEmpty || !context.registeredObjects.contains { ids.contains($0.objectID) })
        #expect(!context.hasChanges)
        let result = try context.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: before))
        let transactions = try #require(
            (result as? NSPersistentHistoryResult)?.result as? [NSPersistentHistoryTransaction])
        #expect(transactions.count == 1)
        #expect(transactions.first?.author == "importer" && transactions.first?.contextName == "import context")
        let inserted = (transactions.first?.changes ?? []).filter { $0.changeType == .insert }.map(\.changedObjectID)
        #expect(Set(inserted) == Set(ids))
    }

    /// With a unique code and a trump policy, a batch row whose code is taken updates the
    /// row holding it: same ID, relationships kept, only the given attributes written.
    @Test(arguments: BatchFixtures.storeTypes)
    func upsertsKeepTheExistingRowAndWriteOnlyTheGivenAttributes(storeType: String) throws {
        let coordinator = try BatchFixtures.coordinator(storeType)
        let context = BatchFixtures.context(coordinator)
        let box = BatchFixtures.object("Box", context, ["label": "B"])
        let existing = BatchFixtures.item(context, "old", code: "k1", count: 5)
        existing.setValue("kept note", forKey: "note")
        existing.setValue(box, forKey: "box")
        try context.save()
        let before = coordinator.currentPersistentHistoryToken(fromStores: nil)

        context.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        let upsert = NSBatchInsertRequest(
            entityName: "Item",
            objects: [
                ["name": "new", "code": "k1", "count": 9],
                ["name": "fresh", "code": "k2"],
                ["name": "fresher", "code": "k2", "score": 1.5],
            ])
        upsert.resultType = .objectIDs
        let ids = try #require((try context.execute(upsert) as? NSBatchInsertResult)?.result as? [NSManagedObjectID])
        #expect(ids.count == 3 && ids[0] == existing.objectID && ids[1] == ids[2])

        let reader = BatchFixtures.context(coordinator)
        let items = try BatchFixtures.fetch("Item", reader)
        #expect(items.count == 2)
        let k1 = try reader.existingObject(with: existing.objectID)
        #expect(k1.value(forKey: "name") as? String == "new" && k1.value(forKey: "count") as? Int32 == 9)
        #expect(k1.value(forKey: "note") as? String == "kept note", "an attribute the dictionary leaves out is kept")
        #expect((k1.value(forKey: "box") as? NSManagedObject)?.objectID == box.objectID, "relationships are kept")
        let k2 = try reader.existingObject(with: ids[1])
        #expect(k2.value(forKey: "name") as? String == "fresher" && k2.value(forKey: "score") as? Double == 1.5)

        let history = try BatchFixtures.history(reader, after: before)
        let id1 = BatchFixtures.key(existing.objectID)
        let id2 = BatchFixtures.key(ids[1])
        #expect(history == [["insert \(id2)", "update \(id1) count,name", "update \(id2) name,score"].sorted()])
        try BatchFixtures.verify(coordinator)
    }

    @Test(arguments: BatchFixtures.storeTypes)
    func aClashUnderTheErrorPolicyWritesNothing(storeType: String) throws {
        let coordinator = try BatchFixtures.coordinator(storeType)
        let context = BatchFixtures.context(coordinator)
        BatchFixtures.item(context, "old", code: "k1")
        try context.save()
        let before = try BatchFixtures.snapshot(coordinator)
        let request = NSBatchInsertRequest(
            entityName: "Item", objects: [["name": "a", "code": "k0"], ["name": "b", "code": "k1"], ["name": "c"]])
        let error = #expect(throws: NSError.self) { try context.execute(request) }
        #expect(error?.code == NSManagedObjectConstraintMergeError)
        #expect(try BatchFixtures.snapshot(coordinator) == before)
        // Two rows of one batch with one key clash with each other too.
        let twice = NSBatchInsertRequest(
            entityName: "Item", objects: [["name": "x", "code": "k9"], ["name": "y", "code": "k9"]])
        #expect(throws: NSError.self) { try context.execute(twice) }
        #expect(try BatchFixtures.snapshot(coordinator) == before)
        try BatchFixtures.verify(coordinator)
    }

    @Test(arguments: BatchFixtures.storeTypes)
    func underAStoreTrumpPolicyTheStoredRowWins(storeType: String) throws {
        let coordinator = try BatchFixtures.coordinator(storeType)
        let context = BatchFixtures.context(coordinator)
        let existing = BatchFixtures.item(context, "stored", code: "k1", count: 1)
        try context.save()
        context.mergePolicy = NSMergeByPropertyStoreTrumpMergePolicy
        let request = NSBatchInsertRequest(entityName: "Item", objects: [["name": "batch", "code": "k1", "count": 2]])
        request.resultType = .objectIDs
        let ids = (try context.execute(request) as? NSBatchInsertResult)?.result as? [NSManagedObjectID]
        #expect(ids == [existing.objectID])
        let reader = BatchFixtures.context(coordinator)
        let stored = try reader.existingObject(with: existing.objectID)
        #expect(stored.value(forKey: "name") as? String == "stored" && stored.value(forKey: "count") as? Int32 == 1)
        #expect(try BatchFixtures.fetch("Item", reader).count == 1)
    }
}
