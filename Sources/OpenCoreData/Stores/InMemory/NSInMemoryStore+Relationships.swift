// Both sides of every relationship in the in-memory store (and so the binary store): the
// save records the links it changed, row before and after, and the integrity pass
// (StoreRelationshipIntegrity.swift) makes the other sides agree. To-manys are lists in
// the rows here, so every side is written; none is derived from its inverse.
import Foundation

extension NSInMemoryStore {
    /// Makes the other side of every link in `changes` agree, on the rows as the save left
    /// them (`written`: the rows it inserted or updated); rows only this changes get a new
    /// version and a history update.
    func repairRelationships(
        _ changes: [StoreLinkChange], written: ObjectIDSet, deleted: Set<NSManagedObjectID>,
        replaced: [NSManagedObjectID: NSManagedObjectID], history: inout PersistentHistoryRecord?,
        result: inout StoreSaveResult
    ) throws {
        guard !changes.isEmpty else { return }
        var access = InMemoryRelationshipAccess(store: self, written: written)
        try StoreRelationshipIntegrity.repair(
            changes, deleted: deleted, written: written, replaced: replaced, access: &access)
        for (objectID, slots) in access.repairedRows {
            guard let version = rowsByEntity[ObjectIdentifier(objectID.entity)]?[objectID.key]?.version else {
                continue
            }
            result.versions[objectID] = version
            history?.noteUpdate(of: objectID, slots: slots.sorted())
        }
    }
}

/// The in-memory store's rows as the integrity pass reads and writes them.
private struct InMemoryRelationshipAccess: StoreRelationshipAccess {
    unowned let store: NSInMemoryStore
    let written: ObjectIDSet
    /// Rows the save did not write that this pass changed, with the changed slots.
    var repairedRows: [NSManagedObjectID: Set<Int>] = [:]
    /// The keys listed by to-manys looked up, by row key and slot.
    private var listed: [Int64: [Int: Set<Int64>]] = [:]

    init(store: NSInMemoryStore, written: ObjectIDSet) {
        self.store = store
        self.written = written
    }

    private func row(_ objectID: NSManagedObjectID) -> StoreRow? {
        store.rowsByEntity[ObjectIdentifier(objectID.entity)]?[objectID.key]
    }

    private func slot(of relationship: NSRelationshipDescription, in objectID: NSManagedObjectID) -> Int? {
        objectID.entity.layout.slotsByName[relationship.name]
    }

    func exists(_ objectID: NSManagedObjectID) -> Bool { row(objectID) != nil }

    func derivesFromInverse(_ relationship: NSRelationshipDescription) -> Bool { false }

    func destination(of relationship: NSRelationshipDescription, in objectID: NSManagedObjectID)
        -> NSManagedObjectID?
    {
        guard let row = row(objectID), let slot = slot(of: relationship, in: objectID), slot < row.values.count,
            case .objectID(let destination) = row.values[slot]
        else { return nil }
        return destination
    }

    mutating func contains(
        _ destination: NSManagedObjectID, in relationship: NSRelationshipDescription, of objectID: NSManagedObjectID
    ) -> Bool {
        guard let slot = slot(of: relationship, in: objectID) else { return false }
        if let keys = listed[objectID.key]?[slot] { return keys.contains(destination.key) }
        guard let row = row(objectID), slot < row.values.count else { return false }
        let keys = Set(StoreLinkChange.destinations(row.values[slot]).map(\.key))
        listed[objectID.key, default: [:]][slot] = keys
        return keys.contains(destination.key)
    }

    mutating func setDestination(
        _ destination: NSManagedObjectID?, of relationship: NSRelationshipDescription, in objectID: NSManagedObjectID
    ) {
        guard let slot = slot(of: relationship, in: objectID) else { return }
        change(objectID, slot: slot, of: relationship) { $0 = destination.map(StoreValue.objectID) ?? .null }
    }

    mutating func insert(
        _ destination: NSManagedObjectID, into relationship: NSRelationshipDescription, of objectID: NSManagedObjectID
    ) {
        guard let slot = slot(of: relationship, in: objectID) else { return }
        change(objectID, slot: slot, of: relationship) { value in
            var list = StoreLinkChange.destinations(value)
            if !list.contains(destination) { list.append(destination) }
            value = .objectIDs(list)
        }
        listed[objectID.key]?[slot]?.insert(destination.key)
    }

    mutating func remove(
        _ destination: NSManagedObjectID, from relationship: NSRelationshipDescription, of objectID: NSManagedObjectID
    ) {
        guard let slot = slot(of: relationship, in: objectID) else { return }
        change(objectID, slot: slot, of: relationship) { value in
            value = .objectIDs(StoreLinkChange.destinations(value).filter { $0 != destination })
        }
        listed[objectID.key]?[slot]?.remove(destination.key)
    }

    /// Changes one slot of a stored row; a row the save did not write gets a new version,
    /// once, unless the slot is an unordered to-many whose inverse is a to-one: the default
    /// store derives that list from the to-ones and its rows keep their versions, and so do
    /// these (a list the to-ones decide need not make other contexts merge).
    private mutating func change(
        _ objectID: NSManagedObjectID, slot: Int, of relationship: NSRelationshipDescription,
        _ body: (inout StoreValue) -> Void
    ) {
        let entity = ObjectIdentifier(objectID.entity)
        guard var row = store.rowsByEntity[entity]?[objectID.key], slot < row.values.count else { return }
        body(&row.values[slot])
        let derived =
            relationship.isToMany && !relationship.isOrdered && relationship.inverseRelationship?.isToMany == false
        if !written.contains(objectID) && !derived {
            if repairedRows[objectID] == nil { row.version += 1 }
            repairedRows[objectID, default: []].insert(slot)
        }
        store.rowsByEntity[entity]?[objectID.key] = row
    }
}
