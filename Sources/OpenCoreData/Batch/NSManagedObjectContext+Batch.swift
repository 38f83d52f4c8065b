// Executing batch requests: the context resolves the request against its coordinator's
// model into a store operation (StoreBatch.swift), the coordinator runs it in each store
// under its lock and posts the stores' remote-change notifications. The context's own
// objects are left as they are, as in Core Data: the caller merges the result's object
// IDs (mergeChanges(fromRemoteContextSave:into:)) or reads history.
import Foundation

extension NSManagedObjectContext {
    func executeBatchInsert(_ request: NSBatchInsertRequest) throws -> StoreBatchOutcome {
        let coordinator = try batchCoordinator()
        let entity = try request.resolvedEntity(in: coordinator.managedObjectModel)
        if entity.isAbstract {
            throw CoreDataError.make(
                NSManagedObjectValidationError, "batch insert: entity \(entity.name ?? "?") is abstract")
        }
        guard let store = (request.affectedStores ?? coordinator.persistentStores).first else {
            throw CoreDataError.make(
                NSPersistentStoreSaveError, "batch insert: the coordinator has no persistent store to insert into")
        }
        let insert = StoreBatchInsert(
            entity: entity, rows: try BatchInsertRowSource(request, entity: entity),
            mergePolicyType: (mergePolicy as? NSMergePolicy)?.mergeType ?? .errorMergePolicyType,
            reporting: batchReporting(returnsObjectIDs: request.resultType == .objectIDs))
        return try coordinator.executeBatch(.insert(insert), in: [store])
    }

    func executeBatchUpdate(_ request: NSBatchUpdateRequest) throws -> StoreBatchOutcome {
        let coordinator = try batchCoordinator()
        let entity = try request.resolvedEntity(in: coordinator.managedObjectModel)
        if let predicate = request.predicate {
            // Malformed or unknown keys fail here, before any store is touched.
            _ = try predicate.compiled(for: entity.frozenLayoutIfAny)
        }
        let update = StoreBatchUpdate(
            entity: entity, predicate: request.predicate, includesSubentities: request.includesSubentities,
            changes: try BatchUpdateChanges(request.propertiesToUpdate, entity: entity),
            reporting: batchReporting(returnsObjectIDs: request.resultType == .updatedObjectIDsResultType))
        return try coordinator.executeBatch(
            .update(update), in: request.affectedStores ?? coordinator.persistentStores)
    }

    func executeBatchDelete(_ request: NSBatchDeleteRequest) throws -> StoreBatchOutcome {
        let coordinator = try batchCoordinator()
        let selection: StoreBatchDelete.Selection
        var stores = request.affectedStores ?? coordinator.persistentStores
        if let ids = request.objectIDs {
            guard let first = ids.first else { return StoreBatchOutcome() }
            let root = Self.rootEntityName(of: first.entity)
            for id in ids {
                if id.isTemporaryID {
                    throw CoreDataError.make(
                        NSCoreDataError, "batch delete: \(id) is a temporary ID of an object never saved",
                        userInfo: [NSAffectedObjectsErrorKey: [id]])
                }
                if Self.rootEntityName(of: id.entity) != root {
                    throw CoreDataError.make(
                        NSCoreDataError,
                        "batch delete: the object IDs are of more than one entity (\(first.entity.name ?? "?") and "
                            + "\(id.entity.name ?? "?")); delete each entity's objects with a request of its own",
                        userInfo: [NSAffectedObjectsErrorKey: [first, id]])
                }
            }
            stores = stores.filter { store in ids.contains { $0.persistentStore === store } }
            selection = .objectIDs(ids)
        } else {
            let fetch = request.fetchRequest
            let entity = try resolveEntity(of: fetch)
            if let predicate = fetch.predicate { _ = try predicate.compiled(for: entity.frozenLayoutIfAny) }
            selection = .fetch(fetch, entity: entity)
        }
        let delete = StoreBatchDelete(
            selection: selection,
            reporting: batchReporting(returnsObjectIDs: request.resultType == .resultTypeObjectIDs))
        return try coordinator.executeBatch(.delete(delete), in: stores)
    }

    /// A batch's reporting: its result type's object IDs, attributed to this context.
    private func batchReporting(returnsObjectIDs: Bool) -> StoreBatchReporting {
        StoreBatchReporting(returnsObjectIDs: returnsObjectIDs, transactionAuthor: transactionAuthor, contextName: name)
    }

    private func batchCoordinator() throws -> NSPersistentStoreCoordinator {
        guard let coordinator = persistentStoreCoordinator else { throw CoreDataError.noCoordinator }
        return coordinator
    }

    private static func rootEntityName(of entity: NSEntityDescription) -> String {
        var root = entity
        while let parent = root.superentity { root = parent }
        return root.name ?? ""
    }
}

extension NSPersistentStoreCoordinator {
    /// Runs `operation` in each of `stores` (those of this coordinator), under the lock,
    /// then posts the remote-change notifications of the stores it changed.
    ///
    /// - Throws: the first store's error; stores before it keep what they did (a batch is
    ///   atomic per store, as a save is).
    func executeBatch(_ operation: StoreBatchOperation, in stores: [NSPersistentStore]) throws -> StoreBatchOutcome {
        var changed: [NSPersistentStore] = []
        let outcome = try withStores { () throws -> StoreBatchOutcome in
            var total = StoreBatchOutcome()
            // A batch touching derived values runs as one save with them added, so derived
            // values follow batch requests as they follow saves (README, "Porting").
            let plan = derivedPlan.flatMap { $0.isAffected(by: operation) ? $0 : nil }
            for store in stores where persistentStores.contains(where: { $0 === store }) {
                let part =
                    try plan.map { plan in
                        try store.executeBatchThroughSave(operation) {
                            try self.addingDerivedValues(to: $0, plan: plan)
                        }
                    } ?? store.executeBatch(operation)
                total.count += part.count
                total.objectIDs.append(contentsOf: part.objectIDs)
                if part.count > 0 { changed.append(store) }
            }
            return total
        }
        postRemoteChangeNotifications(for: changed)
        return outcome
    }
}

/// Resolving a batch request's entity in the coordinator's model.
enum BatchEntity {
    /// The model's entity named `name` (the instance the stores use), checking that a
    /// given `entity` is that one's namesake.
    ///
    /// - Throws: `NSCoreDataError` (134060) naming the entity when the model lacks it.
    static func resolve(
        _ entity: NSEntityDescription?, named name: String, in model: NSManagedObjectModel, request: String
    ) throws -> NSEntityDescription {
        guard let resolved = model.entitiesByName[entity?.name ?? name] else {
            throw CoreDataError.make(
                NSCoreDataError, "\(request): the model has no entity named '\(entity?.name ?? name)'",
                userInfo: ["entityName": entity?.name ?? name])
        }
        return resolved
    }
}
