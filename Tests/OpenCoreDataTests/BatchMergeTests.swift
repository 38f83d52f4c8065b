// Merging batch results into contexts with mergeChanges(fromRemoteContextSave:into:):
// object IDs or their URIs; updated objects refreshed, inserted ones registered and
// reported, deleted ones gone; nested contexts; unsaved changes kept as the context's
// merge policy says; one objects-did-change notification per context.
import Foundation
import OpenCoreData
import Testing

@Suite struct BatchMergeTests {
    /// Records the objects-did-change notifications of one context.
    final class Recorder: @unchecked Sendable {
        private let lock = NSLock()
        private var received: [[AnyHashable: Any]] = []
        private var token: NSObjectProtocol?

        init(_ context: NSManagedObjectContext) {
            token = NotificationCenter.default.addObserver(
                forName: .NSManagedObjectContextObjectsDidChange, object: context, queue: nil
            ) { [weak self] note in
                guard let self else { return }
                self.lock.withLock { self.received.append(note.userInfo ?? [:]) }
            }
        }

        deinit { if let token { NotificationCenter.default.removeObserver(token) } }

        var notes: [[AnyHashable: Any]] { lock.withLock { received } }

        func objects(_ key: String, in note: [AnyHashable: Any]) -> Set<NSManagedObjectID> {
            Set(((note[key] as? Set<NSManagedObject>) ?? []).map(\.objectID))
        }
    }

    @Test(arguments: BatchFixtures.storeTypes)
    func idsAndURIsRefreshRegisterAndRemove(storeType: String) throws {
        let coordinator = try BatchFixtures.coordinator(storeType)
        let context = BatchFixtures.context(coordinator)
        let kept = BatchFixtures.item(context, "kept", count: 1)
        let gone = BatchFixtures.item(context, "gone", count: 2)
        try context.save()
        let worker = BatchFixtures.context(coordinator)
        let update = NSBatchUpdateRequest(entityName: "Item")
        update.predicate = NSPredicate(format: "name == %@", "kept")
        update.propertiesToUpdate = ["count": 10]
        update.resultType = .updatedObjectIDsResultType
        let updated = try #require((try worker.execute(update) as? NSBatchUpdateResult)?.result as? [NSManagedObjectID])
        let delete = NSBatchDeleteRequest(objectIDs: [gone.objectID])
        delete.resultType = .resultTypeObjectIDs
        let deleted = try #require((try worker.execute(delete) as? NSBatchDeleteResult)?.result as? [NSManagedObjectID])
        let insert = NSBatchInsertRequest(entityName: "Item", objects: [["name": "new", "count": 3]])
        insert.resultType = .objectIDs
        let inserted = try #require(
            (try worker.execute(insert) as? NSBatchInsertResult)?.result as? [NSManagedObjectID])
        #expect(kept.value(forKey: "count") as? Int32 == 1 && gone.managedObjectContext === context)

        let recorder = Recorder(context)
        NSManagedObjectContext.mergeChanges(
            fromRemoteContextSave: [
                NSUpdatedObjectsKey: updated.map { $0.uriRepresentation() },
                NSDeletedObjectsKey: deleted.map { $0.uriRepresentation().absoluteString },
                NSInsertedObjectsKey: inserted,
            ], into: [context])
        #expect(kept.value(forKey: "count") as? Int32 == 10, "an updated object is refreshed (IDs given as URLs)")
        #expect(gone.managedObjectContext == nil || gone.isDeleted, "a deleted object leaves (IDs given as strings)")
        #expect(!context.registeredObjects.contains(gone))
        let newcomer = try #require(context.registeredObject(for: inserted[0]))
        #expect(newcomer.value(forKey: "name") as? String == "new", "an inserted object is available")
        #expect(!context.hasChanges)
        #expect(recorder.notes.count == 1)
        let note = try #require(recorder.notes.first)
        #expect(recorder.objects(NSRefreshedObjectsKey, in: note) == [kept.objectID])
        #expect(recorder.objects(NSInsertedObjectsKey, in: note) == [inserted[0]])
        #expect(recorder.objects(NSDeletedObjectsKey, in: note) == [gone.objectID])
    }

    @Test(arguments: BatchFixtures.storeTypes)
    func nestedContextsAreMergedParentsFirst(storeType: String) throws {
        let coordinator = try BatchFixtures.coordinator(storeType)
        let root = BatchFixtures.context(coordinator)
        let item = BatchFixtures.item(root, "nested", count: 1)
        try root.save()
        let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        child.parent = root
        let inChild = try child.performAndWait { try child.existingObject(with: item.objectID) }
        #expect(child.performAndWait { inChild.value(forKey: "count") as? Int32 } == 1)

        let update = NSBatchUpdateRequest(entityName: "Item")
        update.propertiesToUpdate = ["count": 2]
        update.resultType = .updatedObjectIDsResultType
        let ids = try #require((try root.execute(update) as? NSBatchUpdateResult)?.result as? [NSManagedObjectID])
        // The child comes first in the list; the parent is merged before it anyway.
        NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSUpdatedObjectsKey: ids], into: [child, root])
        #expect(item.value(forKey: "count") as? Int32 == 2)
        #expect(child.performAndWait { inChild.value(forKey: "count") as? Int32 } == 2)
    }

    /// Unsaved changes of a merged object: kept (error and object-trump policies, as
    /// Core Data's refresh keeps them), or beaten by the store's values where the store
    /// changed them (store trump) or everywhere (rollback).
    @Test(arguments: BatchFixtures.storeTypes)
    func unsavedChangesFollowTheMergePolicy(storeType: String) throws {
        let policies: [(Any, name: String, count: Int32, note: String?, score: Double?)] = [
            (NSErrorMergePolicy, "mine", 5, "mine", 0.5),
            (NSMergeByPropertyObjectTrumpMergePolicy, "mine", 5, "mine", 0.5),
            (NSMergeByPropertyStoreTrumpMergePolicy, "store", 5, "mine", 0.5),
            (NSRollbackMergePolicy, "store", 5, nil, 0.5),
        ]
        for (policy, name, count, note, score) in policies {
            let coordinator = try BatchFixtures.coordinator(storeType)
            let context = BatchFixtures.context(coordinator)
            context.mergePolicy = policy
            let item = BatchFixtures.item(context, "original", count: 1)
            try context.save()
            item.setValue("mine", forKey: "name")
            item.setValue("mine", forKey: "note")
            let update = NSBatchUpdateRequest(entityName: "Item")
            update.propertiesToUpdate = ["name": "store", "count": 5, "score": 0.5]
            update.resultType = .updatedObjectIDsResultType
            let ids = try #require(
                (try context.execute(update) as? NSBatchUpdateResult)?.result as? [NSManagedObjectID])
            NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSUpdatedObjectsKey: ids], into: [context])
            let comment = Comment(rawValue: "\(storeType), \((policy as? NSMergePolicy)?.mergeType.rawValue ?? 0)")
            #expect(item.value(forKey: "name") as? String == name, comment)
            #expect(item.value(forKey: "note") as? String == note, comment)
            #expect(item.value(forKey: "count") as? Int32 == count, comment)
            #expect(item.value(forKey: "score") as? Double == score, comment)
            try context.save()
            let reader = BatchFixtures.context(coordinator)
            let stored = try reader.existingObject(with: item.objectID)
            #expect(stored.value(forKey: "name") as? String == name, comment)
            #expect(stored.value(forKey: "count") as? Int32 == 5, comment)
        }
    }
}
