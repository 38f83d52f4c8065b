// Re-inserting an object whose row another save deleted, when the merge policy keeps
// the object (object trump, overwrite): the deleting save ran its delete rules, so the
// inverses of the object's relationships no longer point at it. The re-inserted row
// and updates of those inverses, read from the store, go into the same save.
import Foundation

extension NSManagedObjectContext {
    /// Rewrites the rows of `request` that insert objects again (inserted objects with a
    /// permanent ID and a version: they were read from the store) and adds the repairs
    /// of their inverses.
    func addReinsertionRepairs(
        to request: inout StoreSaveRequest, newObjects: [NSManagedObjectID: NSManagedObject],
        mapping: TemporaryIDMapping, repaired: inout [NSManagedObjectID: [Int]]
    ) throws {
        for index in request.insertedRows.indices {
            let id = request.insertedRows[index].objectID
            guard newObjects[id] == nil, let object = registry[id], object.isInserted, object.version > 0
            else { continue }
            request.insertedRows[index] = try reinsertionRow(
                for: object, mapping: mapping, repairing: &request, repaired: &repaired)
            request.reinsertedObjectIDs.insert(id)
        }
    }

    /// The row re-inserting `object`, and updates to `request`'s rows or new ones
    /// pointing the stored inverses of its relationships back at it.
    ///
    /// A destination whose to-one inverse now points at another object stays there, and
    /// one deleted (by this save or another) is gone: the re-inserted row drops them.
    /// Destinations the save inserts are left alone (the context keeps their inverses).
    func reinsertionRow(
        for object: NSManagedObject, mapping: TemporaryIDMapping,
        repairing request: inout StoreSaveRequest, repaired: inout [NSManagedObjectID: [Int]]
    ) throws -> StoreRow {
        guard let coordinator = persistentStoreCoordinator else { throw CoreDataError.noCoordinator }
        let layout = object.layout
        let id = object.objectID
        var values = try object.storeValues(mapping: mapping)
        let deleted = Set(request.deletedObjects.map(\.objectID))
        var insertedIDs: Set<NSManagedObjectID>?
        for slot in layout.relationshipSlots where slot < values.count {
            // A to-many never read has no destinations to restore: the delete detached them.
            if case .unresolved = values[slot] { values[slot] = .objectIDs([]) }
            guard let inverse = layout.relationshipBySlot[slot]?.inverseRelationship else { continue }
            var kept: [NSManagedObjectID] = []
            for destination in destinations(values[slot]) {
                guard !deleted.contains(destination), let row = try coordinator.row(for: destination),
                    let inverseSlot = destination.entity.layout.slotsByName[inverse.name],
                    inverseSlot < row.values.count
                else {
                    // Without a stored row, only a destination this save inserts is kept.
                    if insertedIDs == nil { insertedIDs = Set(request.insertedRows.map(\.objectID)) }
                    if insertedIDs?.contains(destination) == true { kept.append(destination) }
                    continue
                }
                let current = row.values[inverseSlot]
                let restored: StoreValue?
                if inverse.isToMany {
                    let members = self.destinations(current)
                    restored = members.contains(id) ? nil : .objectIDs(members + [id])
                } else if case .objectID(let other) = current, other != id {
                    continue
                } else {
                    restored = current == .objectID(id) ? nil : .objectID(id)
                }
                kept.append(destination)
                guard let restored else { continue }
                repaired[destination, default: []].append(inverseSlot)
                if let index = request.updatedRows.firstIndex(where: { $0.objectID == destination }) {
                    var update = request.updatedRows[index]
                    if let change = update.changes.firstIndex(where: { $0.slot == inverseSlot }) {
                        update.changes[change].value =
                            inverse.isToMany
                            ? .objectIDs(self.destinations(update.changes[change].value).filter { $0 != id } + [id])
                            : .objectID(id)
                    } else {
                        update.changes.append((inverseSlot, restored))
                        update.changes.sort { $0.slot < $1.slot }
                    }
                    request.updatedRows[index] = update
                } else {
                    request.updatedRows.append(
                        StoreRowUpdate(
                            objectID: destination, expectedVersion: row.version, changes: [(inverseSlot, restored)]))
                }
            }
            switch values[slot] {
            case .objectID: values[slot] = kept.first.map(StoreValue.objectID) ?? .null
            case .objectIDs: values[slot] = .objectIDs(kept)
            default: break
            }
        }
        return StoreRow(objectID: id, version: 0, values: values)
    }

    /// After the save: registered objects whose inverses a re-insertion repaired take the
    /// stored relationships (and, when the save did not otherwise change them, the new version).
    func adoptRepairedInverses(_ repaired: [NSManagedObjectID: [Int]], saved: [NSManagedObject]) {
        let savedIDs = Set(saved.map(\.objectID))
        for (id, slots) in repaired {
            guard let object = registry[id], !object.isFault else { continue }
            guard savedIDs.contains(id) else {
                refresh(object, mergeChanges: true)
                continue
            }
            // Saved with its own changes: its version comes with the save; only the slots change.
            guard let row = try? persistentStoreCoordinator?.row(for: id) else { continue }
            lifecycle.adopt(slots, from: row.values, of: object)
        }
    }

    private func destinations(_ value: StoreValue) -> [NSManagedObjectID] {
        switch value {
        case .objectID(let destination): [destination]
        case .objectIDs(let destinations): destinations
        default: []
        }
    }
}
