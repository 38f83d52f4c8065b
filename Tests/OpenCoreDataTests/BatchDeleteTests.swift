// NSBatchDeleteRequest on every store: by fetch request (predicate, sort, offset, limit,
// sub-entities) and by object IDs, each result type, and the graph kept consistent:
// inverses nullified, cascades followed, Deny not enforced, mandatory inverses refused,
// blobs and join entries gone with their rows, history with tombstones.
import Foundation
import Testing

@testable import OpenCoreData

@Suite struct BatchDeleteTests {
    /// A box holding items I0...I9 (count = index; I8, I9 Specials), tags on some, ordered
    /// steps on I0, a group of I1 and I2, and a holder pinning I3.
    struct Graph {
        let context: NSManagedObjectContext
        let coordinator: NSPersistentStoreCoordinator
        let box: NSManagedObject
        let items: [NSManagedObject]
        let tags: [NSManagedObject]
        let group: NSManagedObject
        let holder: NSManagedObject
        let steps: [NSManagedObject]
    }

    static func graph(_ storeType: String) throws -> Graph {
        let coordinator = try BatchFixtures.coordinator(storeType)
        let context = BatchFixtures.context(coordinator)
        let box = BatchFixtures.object("Box", context, ["label": "box"])
        let items = (0..<10).map { index in
            BatchFixtures.item(
                context, "I\(index)", code: "c\(index)", count: Int32(index), entity: index >= 8 ? "Special" : "Item")
        }
        for item in items { item.setValue(box, forKey: "box") }
        items[4].setValue(Data(repeating: 4, count: 70_000), forKey: "payload")
        let tags = ["red", "blue"].map { BatchFixtures.object("Tag", context, ["word": $0]) }
        tags[0].setValue(Set([items[0], items[4], items[5]]), forKey: "items")
        tags[1].setValue(Set([items[5], items[6]]), forKey: "items")
        let group = BatchFixtures.object("Group", context, ["title": "g"])
        group.setValue(Set([items[1], items[2]]), forKey: "members")
        let holder = BatchFixtures.object("Holder", context, ["title": "h", "pin": items[3]])
        let steps = (0..<3).map { BatchFixtures.object("Step", context, ["title": "s\($0)"]) }
        items[0].setValue(NSOrderedSet(array: steps), forKey: "steps")
        try context.save()
        return Graph(
            context: context, coordinator: coordinator, box: box, items: items, tags: tags, group: group,
            holder: holder, steps: steps)
    }

    static func names(_ entity: String, _ coordinator: NSPersistentStoreCoordinator) throws -> [String] {
        let key = ["Item": "name", "Special": "name", "Tag": "word", "Box": "label"][entity] ?? "title"
        let reader = BatchFixtures.context(coordinator)
        return try BatchFixtures.fetch(entity, reader).compactMap { $0.value(forKey: key) as? String }.sorted()
    }

    @Test(arguments: BatchFixtures.storeTypes)
    func byFetchRequestWithEachResultType(storeType: String) throws {
        let graph = try Self.graph(storeType)
        let context = graph.context
        let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Item")
        request.predicate = NSPredicate(format: "count >= 5 AND count < 8")
        let byFetch = NSBatchDeleteRequest(fetchRequest: request)
        #expect(byFetch.resultType == .resultTypeStatusOnly && byFetch.requestType == .batchDeleteRequestType)
        byFetch.resultType = .resultTypeObjectIDs
        let ids = try #require((try context.execute(byFetch) as? NSBatchDeleteResult)?.result as? [NSManagedObjectID])
        #expect(Set(ids) == Set(graph.items[5..<8].map(\.objectID)))
        let left = try Self.names("Item", graph.coordinator)
        #expect(left == ["I0", "I1", "I2", "I3", "I4", "I8", "I9"])

        let counted = NSBatchDeleteRequest(objectIDs: [graph.items[9].objectID, graph.items[8].objectID])
        counted.resultType = .resultTypeCount
        #expect((try context.execute(counted) as? NSBatchDeleteResult)?.result as? Int == 2)
        let status = NSBatchDeleteRequest(objectIDs: [graph.items[4].objectID])
        #expect((try context.execute(status) as? NSBatchDeleteResult)?.result as? Bool == true)
        // Gone already: nothing to delete, no error.
        let again = NSBatchDeleteRequest(objectIDs: [graph.items[4].objectID])
        again.resultType = .resultTypeCount
        #expect((try context.execute(again) as? NSBatchDeleteResult)?.result as? Int == 0)
        #expect(try Self.names("Item", graph.coordinator) == ["I0", "I1", "I2", "I3"])
        // Registered objects stay until merged.
        #expect(!graph.items[5].isDeleted && graph.items[5].managedObjectContext === context)
        try BatchFixtures.verify(graph.coordinator)
    }

    @Test(arguments: BatchFixtures.storeTypes)
    func sortOffsetLimitAndSubentitiesAreHonoured(storeType: String) throws {
        let graph = try Self.graph(storeType)
        let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Item")
        request.predicate = NSPredicate(format: "count != 3")
        request.sortDescriptors = [NSSortDescriptor(key: "count", ascending: false)]
        request.fetchOffset = 1
        request.fetchLimit = 3
        let delete = NSBatchDeleteRequest(fetchRequest: request)
        delete.resultType = .resultTypeObjectIDs
        let ids = (try graph.context.execute(delete) as? NSBatchDeleteResult)?.result as? [NSManagedObjectID]
        #expect(ids == [graph.items[8], graph.items[7], graph.items[6]].map(\.objectID))

        let itemsOnly = NSFetchRequest<NSFetchRequestResult>(entityName: "Item")
        itemsOnly.predicate = NSPredicate(format: "count >= 9")
        itemsOnly.includesSubentities = false
        let none = NSBatchDeleteRequest(fetchRequest: itemsOnly)
        none.resultType = .resultTypeCount
        #expect((try graph.context.execute(none) as? NSBatchDeleteResult)?.result as? Int == 0)
        #expect(try Self.names("Item", graph.coordinator) == ["I0", "I1", "I2", "I3", "I4", "I5", "I9"])
    }

    @Test(arguments: BatchFixtures.storeTypes)
    func inversesAreNullifiedAndDenyIsNotEnforced(storeType: String) throws {
        let graph = try Self.graph(storeType)
        // Items: the box's and the tags' to-manys drop them (join entries and references).
        try graph.context.execute(
            NSBatchDeleteRequest(objectIDs: [graph.items[5].objectID, graph.items[6].objectID]))
        var reader = BatchFixtures.context(graph.coordinator)
        let box = try reader.existingObject(with: graph.box.objectID)
        #expect((box.value(forKey: "items") as? Set<NSManagedObject>)?.count == 8)
        let red = try reader.existingObject(with: graph.tags[0].objectID)
        let redItems = (red.value(forKey: "items") as? Set<NSManagedObject>)?.compactMap {
            $0.value(forKey: "name") as? String
        }
        #expect(Set(redItems ?? []) == ["I0", "I4"])
        // A tag whose items deny its deletion goes anyway; the items' tags drop it.
        try graph.context.execute(NSBatchDeleteRequest(objectIDs: [graph.tags[0].objectID]))
        // The group: its members' to-one becomes nil.
        try graph.context.execute(NSBatchDeleteRequest(objectIDs: [graph.group.objectID]))
        reader = BatchFixtures.context(graph.coordinator)
        let i0 = try reader.existingObject(with: graph.items[0].objectID)
        #expect((i0.value(forKey: "tags") as? Set<NSManagedObject>)?.isEmpty == true)
        let i1 = try reader.existingObject(with: graph.items[1].objectID)
        #expect(i1.value(forKey: "group") == nil)
        #expect(try BatchFixtures.fetch("Item", reader, "group != nil").isEmpty)
        #expect(try BatchFixtures.fetch("Item", reader, "ANY tags.word == %@", "red").isEmpty)
        try BatchFixtures.verify(graph.coordinator)
    }

    @Test(arguments: BatchFixtures.storeTypes)
    func cascadesAreFollowedWithBlobsAndJoinEntries(storeType: String) throws {
        let graph = try Self.graph(storeType)
        // The holder's mandatory pin and the group's mandatory members would be left empty.
        try graph.context.execute(NSBatchDeleteRequest(objectIDs: [graph.holder.objectID]))
        try graph.context.execute(NSBatchDeleteRequest(objectIDs: [graph.group.objectID]))
        let token = graph.coordinator.currentPersistentHistoryToken(fromStores: nil)
        let delete = NSBatchDeleteRequest(objectIDs: [graph.box.objectID])
        delete.resultType = .resultTypeObjectIDs
        let ids = try #require(
            (try graph.context.execute(delete) as? NSBatchDeleteResult)?.result as? [NSManagedObjectID])
        let expected = [graph.box] + graph.items + graph.steps
        #expect(Set(ids) == Set(expected.map(\.objectID)) && ids.first == graph.box.objectID)
        #expect(try Self.names("Item", graph.coordinator).isEmpty && Self.names("Step", graph.coordinator).isEmpty)
        let reader = BatchFixtures.context(graph.coordinator)
        for tag in graph.tags {
            #expect(
                (try reader.existingObject(with: tag.objectID).value(forKey: "items") as? Set<NSManagedObject>)?.isEmpty
                    == true)
        }
        let history = try BatchFixtures.history(reader, after: token)
        #expect(history.count == 1)
        let changes = history.first ?? []
        #expect(changes.filter { $0.hasPrefix("delete ") }.count == expected.count)
        #expect(
            changes.contains("delete \(BatchFixtures.key(graph.items[4].objectID)) code=c4"), "tombstones keep the code"
        )
        #expect(
            Set(changes.filter { $0.hasPrefix("update ") })
                == Set(graph.tags.map { "update \(BatchFixtures.key($0.objectID)) items" }))
        try BatchFixtures.verify(graph.coordinator)
        if storeType == NSSQLiteStoreType {
            let store = try #require(graph.coordinator.persistentStores.first as? PageFileStore)
            let blobs = try store.openDatabase().read { try $0.tree(named: PageFileStore.blobTreeName)?.count ?? 0 }
            #expect(blobs == 0, "the deleted item's large value went with it")
        }
    }

    @Test(arguments: BatchFixtures.storeTypes)
    func aMandatoryInverseLeftEmptyFailsTheWholeBatch(storeType: String) throws {
        let graph = try Self.graph(storeType)
        let before = try BatchFixtures.snapshot(graph.coordinator)
        let token = graph.coordinator.currentPersistentHistoryToken(fromStores: nil)
        let pinned = NSBatchDeleteRequest(objectIDs: [graph.items[0].objectID, graph.items[3].objectID])
        let error = #expect(throws: NSError.self) { try graph.context.execute(pinned) }
        #expect(error?.code == NSValidationMissingMandatoryPropertyError)
        #expect(error?.userInfo[NSValidationKeyErrorKey] as? String == "pin")
        let members = NSFetchRequest<NSFetchRequestResult>(entityName: "Item")
        members.predicate = NSPredicate(format: "group != nil")
        let emptied = #expect(throws: NSError.self) {
            try graph.context.execute(NSBatchDeleteRequest(fetchRequest: members))
        }
        #expect(emptied?.code == NSValidationRelationshipLacksMinimumCountError)
        #expect(try BatchFixtures.snapshot(graph.coordinator) == before)
        #expect(graph.coordinator.currentPersistentHistoryToken(fromStores: nil) == token)
        // One member may go; once the holder is gone, the item it pinned may go.
        try graph.context.execute(NSBatchDeleteRequest(objectIDs: [graph.items[1].objectID]))
        let both = NSBatchDeleteRequest(objectIDs: [graph.items[3].objectID])
        #expect(throws: NSError.self) { try graph.context.execute(both) }
        try graph.context.execute(NSBatchDeleteRequest(objectIDs: [graph.holder.objectID]))
        try graph.context.execute(both)
        #expect(try Self.names("Item", graph.coordinator) == ["I0", "I2", "I4", "I5", "I6", "I7", "I8", "I9"])
        try BatchFixtures.verify(graph.coordinator)
    }

    @Test(arguments: BatchFixtures.storeTypes)
    func objectIDsOfMoreThanOneEntityAreRefused(storeType: String) throws {
        let graph = try Self.graph(storeType)
        let before = try BatchFixtures.snapshot(graph.coordinator)
        let mixed = NSBatchDeleteRequest(objectIDs: [graph.items[0].objectID, graph.tags[1].objectID])
        let error = #expect(throws: NSError.self) { try graph.context.execute(mixed) }
        #expect(error?.code == NSCoreDataError)
        let unsaved = BatchFixtures.item(graph.context, "unsaved")
        #expect(throws: NSError.self) { try graph.context.execute(NSBatchDeleteRequest(objectIDs: [unsaved.objectID])) }
        #expect(try BatchFixtures.snapshot(graph.coordinator) == before)
        // An entity and its sub-entity are one entity's objects.
        let family = NSBatchDeleteRequest(objectIDs: [graph.items[7].objectID, graph.items[8].objectID])
        family.resultType = .resultTypeCount
        #expect((try graph.context.execute(family) as? NSBatchDeleteResult)?.result as? Int == 2)
        #expect(
            (try graph.context.execute(NSBatchDeleteRequest(objectIDs: [])) as? NSBatchDeleteResult)?.result as? Bool
                == true)
    }
}
