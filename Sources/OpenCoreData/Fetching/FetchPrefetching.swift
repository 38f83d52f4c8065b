// relationshipKeyPathsForPrefetching: after a fetch, the destinations along each key
// path are loaded with ONE batch store call per relationship step (rows(for:)), never
// one call per object. A batched result (fetchBatchSize) prefetches for each batch when
// the batch loads, so prefetching does not load the whole result at once. Destinations become faults holding their row (Faulting.swift),
// so touching them later costs no store call. Reading the relationship of a source
// never fires it: IDs come from the source's fetched row or loaded values. Only a
// to-many relationship a store leaves `.unresolved` costs a call per source
// (objectIDs(forRelationship:of:)), since the store computes it on demand.
import Foundation

extension NSManagedObjectContext {
    /// Checks that every step of `keyPaths` is a relationship, starting at `entity` (or a
    /// sub-entity), before any object loads: batched results prefetch later, batch by batch.
    ///
    /// - Throws: `NSCoreDataError` (134060) naming the first step that is not a relationship.
    func validatePrefetching(_ keyPaths: [String], from entity: NSEntityDescription) throws {
        for keyPath in keyPaths {
            var entities = entity.hierarchy(includingSubentities: true)
            for name in keyPath.split(separator: ".").map(String.init) {
                let relationships = entities.compactMap { $0.relationshipsByName[name] }
                guard !relationships.isEmpty else {
                    throw CoreDataError.make(
                        NSCoreDataError,
                        "relationshipKeyPathsForPrefetching: '\(name)' in '\(keyPath)' is not a relationship of "
                            + "entity '\(entities.first?.name ?? "?")'")
                }
                entities = relationships.compactMap(\.destinationEntity).flatMap {
                    $0.hierarchy(includingSubentities: true)
                }
            }
        }
    }

    /// Loads the destinations of `objects` along each of `keyPaths` ("department",
    /// "department.company", "employees").
    ///
    /// - Throws: the store's error (check the key paths first with `validatePrefetching`).
    func prefetch(_ keyPaths: [String], of objects: [NSManagedObject]) throws {
        // A child context's objects load through its parent, which may hold newer values.
        guard parent == nil, !objects.isEmpty else { return }
        let steps = keyPaths.map { $0.split(separator: ".").map(String.init) }
        // The rows loaded here resolve only the to-manys some key path follows: a company
        // prefetched for its people does not read its employees too.
        let followed = Set(steps.joined())
        for names in steps {
            var sources = objects
            for name in names {
                if sources.isEmpty { break }
                try attachRows(toFaults: sources, resolvingToMany: followed)
                var destinations: [NSManagedObjectID] = []
                var seen: Set<NSManagedObjectID> = []
                for source in sources {
                    // validatePrefetching checked the key path; a source of a sibling
                    // sub-entity may lack a step that another sub-entity has.
                    guard let slot = source.layout.slotsByName[name], source.layout.relationshipBySlot[slot] != nil
                    else { continue }
                    for id in try destinationIDs(of: source, slot: slot) where seen.insert(id).inserted {
                        destinations.append(id)
                    }
                }
                try attachRows(to: destinations, resolvingToMany: followed)
                sources = destinations.map { object(with: $0) }
            }
        }
    }

    /// Gives every fault among `objects` without a pending row its row, in one store call.
    private func attachRows(toFaults objects: [NSManagedObject], resolvingToMany names: Set<String>) throws {
        try attachRows(to: objects.filter { $0.isFault }.map(\.objectID), resolvingToMany: names)
    }

    /// Registers `objectIDs` and gives those that are faults without a fetched row their
    /// row, in one store call that resolves only the to-manys named in `names`.
    private func attachRows(to objectIDs: [NSManagedObjectID], resolvingToMany names: Set<String>) throws {
        var needed: [NSManagedObject] = []
        for id in objectIDs where !id.isTemporaryID {
            let object = self.object(with: id)
            guard object.isFault else { continue }
            if case .row = object.pendingFault { continue }
            needed.append(object)
        }
        guard !needed.isEmpty else { return }
        let rows = try loadRows(needed.map(\.objectID), resolvingToMany: names)
        for (object, row) in zip(needed, rows) {
            if let row { object.pendingFault = .row(row) }
        }
    }

    /// The destination IDs of relationship `slot` of `source`, read without firing it.
    private func destinationIDs(of source: NSManagedObject, slot: Int) throws -> [NSManagedObjectID] {
        if source.isFault {
            guard case .row(let row) = source.pendingFault else { return [] }
            // One slot read, not every slot made: the row may be in the slot form.
            switch row.storeValue(atSlot: slot) {
            case .objectID(let id): return [id]
            case .objectIDs(let ids): return ids
            case .unresolved:
                guard let relationship = source.layout.relationshipBySlot[slot] else { return [] }
                return destinationIDs(of: relationship, for: source.objectID)
            default: return []
            }
        }
        guard slot < source.values.count else { return [] }
        // By the slot's case: no dynamic cast for the forms a relationship slot holds.
        switch source.values.storage[slot] {
        case .unresolved(let unresolved):
            if let ids = unresolved.objectIDs { return ids }
            guard let relationship = source.layout.relationshipBySlot[slot] else { return [] }
            return destinationIDs(of: relationship, for: source.objectID)
        case .objects(let set): return set.map(\.objectID)
        case .orderedObjects(let array): return array.map(\.objectID)
        case .object(let object): return [object.objectID]
        case .other(let box): return Self.destinationIDs(boxed: box.value)
        default: return []
        }
    }

    /// The destination IDs of a relationship value held in no case of its own (a set typed
    /// by a subclass, say).
    private static func destinationIDs(boxed value: Any) -> [NSManagedObjectID] {
        switch value {
        // Collections first: casting a set to a class bridges it to an NSSet on Linux.
        case let set as Set<NSManagedObject>: return set.map(\.objectID)
        case let array as [NSManagedObject]: return array.map(\.objectID)
        case let object as NSManagedObject: return [object.objectID]
        default: return []
        }
    }
}
