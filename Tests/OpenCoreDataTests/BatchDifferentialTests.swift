// A batch request against the same change made with objects and save(): two stores of one
// type get the same seeded graph and the same random steps, one through batch requests,
// the other through a context (fetch, change or delete each object, save). After every
// step both hold the same graph and the same history.
import Foundation
import OpenCoreData
import TestSupport
import Testing

@Suite struct BatchDifferentialTests {
    /// A box of items with tags and ordered steps: the same keys in every store seeded alike.
    static func seed(_ context: NSManagedObjectContext) throws {
        let boxes = (0..<3).map { BatchFixtures.object("Box", context, ["label": "B\($0)"]) }
        let tags = (0..<4).map { BatchFixtures.object("Tag", context, ["word": "T\($0)"]) }
        for index in 0..<30 {
            let item = BatchFixtures.item(
                context, "I\(index)", code: "c\(index)", count: Int32(index % 12),
                entity: index % 5 == 4 ? "Special" : "Item")
            item.setValue(boxes[index % 3], forKey: "box")
            item.setValue(Set(tags.enumerated().filter { (index + $0.offset) % 3 == 0 }.map(\.element)), forKey: "tags")
            if index % 4 == 0 {
                let steps = (0..<2).map { BatchFixtures.object("Step", context, ["title": "S\(index).\($0)"]) }
                item.setValue(NSOrderedSet(array: steps), forKey: "steps")
            }
        }
        try context.save()
    }

    @Test(arguments: BatchFixtures.storeTypes)
    func batchesMatchObjectSaves(storeType: String) throws {
        var random = SeededRandom(environmentOr: 0xBA7C_4)
        var sides = try BatchSides({ try BatchFixtures.coordinator(storeType) }, seed: Self.seed)
        let (batchSide, objectSide) = (sides.batchSide, sides.objectSide)
        let batch = BatchFixtures.context(batchSide)
        let objects = BatchFixtures.context(objectSide)
        var counter = 0
        for step in 0..<24 {
            let hint = Comment(rawValue: "step \(step), \(random.replayHint)")
            let low = Int32(random.int(in: 0...11))
            let high = low + Int32(random.int(in: 1...4))
            let predicate = NSPredicate(format: "count >= %d AND count < %d", low, high)
            switch random.int(in: 0...3) {
            case 0:
                let rows: [[String: Any]] = (0..<random.int(in: 1...6)).map { _ in
                    counter += 1
                    return ["name": "N\(counter)", "code": "n\(counter)", "count": counter % 12, "note": "batch"]
                }
                let entity = random.chance(0.3) ? "Special" : "Item"
                try batch.execute(NSBatchInsertRequest(entityName: entity, objects: rows))
                for row in rows { _ = BatchFixtures.object(entity, objects, row) }
            case 1:
                let delta = Int32(random.int(in: 1...3))
                let flag = random.chance(0.5)
                let update = NSBatchUpdateRequest(entityName: "Item")
                update.predicate = predicate
                update.includesSubentities = random.chance(0.8)
                update.propertiesToUpdate = [
                    "count": NSExpression(format: "count + %d", delta), "flag": flag,
                    "note": NSExpression(forKeyPath: "name"),
                ]
                try batch.execute(update)
                let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
                request.predicate = predicate
                request.includesSubentities = update.includesSubentities
                for object in try objects.fetch(request) {
                    object.setValue((object.value(forKey: "count") as? Int32 ?? 0) + delta, forKey: "count")
                    object.setValue(flag, forKey: "flag")
                    object.setValue(object.value(forKey: "name"), forKey: "note")
                }
            case 2:
                let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Item")
                request.predicate = predicate
                try batch.execute(NSBatchDeleteRequest(fetchRequest: request))
                for object in try BatchFixtures.fetch("Item", objects, "count >= %d AND count < %d", low, high) {
                    objects.delete(object)
                }
            default:
                let entity = random.chance(0.5) ? "Box" : "Tag"
                let victims = try BatchFixtures.fetch(entity, objects)
                guard let victim = victims.isEmpty ? nil : random.pick(victims) else { continue }
                try batch.execute(NSBatchDeleteRequest(objectIDs: [Self.counterpart(victim.objectID, in: batchSide)]))
                // A batch delete does not enforce Deny (a tag's items): empty it first here.
                if entity == "Tag" { victim.setValue(Set<NSManagedObject>(), forKey: "items") }
                objects.delete(victim)
            }
            try objects.save()
            #expect(try BatchFixtures.snapshot(batchSide) == BatchFixtures.snapshot(objectSide), hint)
            let history = try sides.newHistory()
            #expect(history.batch == history.objects, hint)
            try BatchFixtures.verify(batchSide, hint)
        }
    }

    /// The ID in `coordinator`'s store of the object with `objectID`'s entity and key.
    static func counterpart(_ objectID: NSManagedObjectID, in coordinator: NSPersistentStoreCoordinator) throws
        -> NSManagedObjectID
    {
        let store = try #require(coordinator.persistentStores.first)
        let path = objectID.uriRepresentation().path
        let uri = try #require(URL(string: "x-coredata://\(store.identifier ?? "")\(path)"))
        return try #require(coordinator.managedObjectID(forURIRepresentation: uri))
    }
}
