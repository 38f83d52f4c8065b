// Both sides of every relationship in the default store: a save's steps record the links
// they add and remove (PageFileWriter.linkChanges), and before the transaction commits
// the integrity pass (StoreRelationshipIntegrity.swift) makes the other sides agree.
// An unordered to-many whose inverse is a to-one is derived from that to-one's reference
// index (SPEC.md §3.2 R1), so it always agrees and is never written here; join trees and
// to-ones in rows are.
import Foundation
import StorageEngine

extension PageFileWriter {
    /// Records the links of the deleted `row`: its to-ones (but those whose inverse to-many
    /// is derived from them: the integrity pass skips such a removal, see
    /// StoreRelationshipIntegrity.repair), and the rows whose to-one names it through a
    /// to-many derived from that to-one (its join entries record themselves).
    mutating func noteDeletedLinks(of row: StoreRow, info: PageFileCatalog.EntityInfo) throws {
        let layout = row.objectID.entity.layout
        let toOnes = info.deletedToOneLinkSlots
        if !toOnes.isEmpty {
            recordLinks { StoreLinkChange.append(row.objectID, before: row.values, after: nil, slots: toOnes, to: &$0) }
        }
        for slot in info.externalSlots {
            guard let relationship = layout.relationshipBySlot[slot],
                case .inverse(let inverse) = PageFileToMany.storage(of: relationship)
            else { continue }
            for source in try reader.inverseSources(of: inverse, pointingAt: row.objectID.key) {
                linkChanges?.append(
                    StoreLinkChange(
                        source: row.objectID, relationship: relationship, destination: source, isAdded: false))
            }
        }
    }

    /// Runs the integrity pass over the links the save's steps recorded; rows only it
    /// changes get their new version in `result` and an update in `history`.
    mutating func repairRelationships(
        of request: StoreSaveRequest, replaced: [NSManagedObjectID: NSManagedObjectID],
        result: inout StoreSaveResult, history: inout PersistentHistoryRecord?
    ) throws {
        let changes = linkChanges ?? []
        linkChanges = nil
        guard !changes.isEmpty else { return }
        let rows = PageFileWrittenRows(request: request, replaced: replaced)
        // A save of a few rows asks its request; a larger one builds the set at once.
        let built = rows.count > PageFileWrittenRows.scanLimit ? rows.set() : nil
        let deleted = Set(request.deletedObjects.map(\.objectID))
        let plan = StoreRelationshipIntegrity.plan(
            changes, deleted: deleted, isWritten: { built?.contains($0) ?? rows.contains($0) }, replaced: replaced,
            derivesFromInverse: PageFileRelationshipAccess.derivesFromInverse)
        // Most saves' links need nothing (a new row's to-one, its list derived from it): the
        // writer is not moved into an access, nor the written rows into a set, for them.
        guard !plan.isEmpty else { return }
        let written = built ?? rows.set()
        var access = PageFileRelationshipAccess(writer: self, written: written)
        try StoreRelationshipIntegrity.repair(plan, deleted: deleted, written: written, access: &access)
        self = access.writer
        for (objectID, slots) in access.repairedRows {
            if let version = access.versions[objectID] { result.versions[objectID] = version }
            history?.noteUpdate(of: objectID, slots: slots.sorted())
        }
    }
}

/// The rows a save writes, which exist after it: its updated rows, and its inserted rows
/// but for upserts the rows that absorbed them, when the inserted values win (an upsert
/// whose stored values won changed no row).
struct PageFileWrittenRows {
    /// Past this many rows, ``set()`` is built rather than the request scanned per question.
    static let scanLimit = 8

    let request: StoreSaveRequest
    let replaced: [NSManagedObjectID: NSManagedObjectID]
    let valuesWin: Bool

    init(request: StoreSaveRequest, replaced: [NSManagedObjectID: NSManagedObjectID]) {
        self.request = request
        self.replaced = replaced
        valuesWin = StoreUniqueness.insertedValuesWin(request.mergePolicyType)
    }

    /// The rows of the request (an upper bound of the written ones).
    var count: Int { request.insertedRows.count + request.updatedRows.count }

    /// The row an inserted row wrote: itself, the row that absorbed it when its values won,
    /// or none.
    private func writtenRow(of inserted: NSManagedObjectID) -> NSManagedObjectID? {
        guard !replaced.isEmpty, let existingID = replaced[inserted] else { return inserted }
        return valuesWin ? existingID : nil
    }

    /// Whether the save writes the row of `objectID`, by a scan of the request.
    func contains(_ objectID: NSManagedObjectID) -> Bool {
        let key = objectID.registryKey
        if request.updatedRows.contains(where: { $0.objectID.registryKey == key }) { return true }
        return request.insertedRows.contains { writtenRow(of: $0.objectID)?.registryKey == key }
    }

    /// The written rows as a set.
    func set() -> ObjectIDSet {
        var written = ObjectIDSet(minimumCapacity: count)
        for update in request.updatedRows { written.insert(update.objectID) }
        for row in request.insertedRows {
            if let id = writtenRow(of: row.objectID) { written.insert(id) }
        }
        return written
    }
}

/// The default store's rows and join trees as the integrity pass reads and writes them,
/// through the save's writer.
private struct PageFileRelationshipAccess: StoreRelationshipAccess {
    var writer: PageFileWriter
    let written: ObjectIDSet
    /// Rows the save did not write that this pass changed, with the changed slots.
    var repairedRows: [NSManagedObjectID: Set<Int>] = [:]
    /// The new versions of those rows.
    var versions: [NSManagedObjectID: Int64] = [:]

    init(writer: PageFileWriter, written: ObjectIDSet) {
        self.writer = writer
        self.written = written
    }

    private func row(_ objectID: NSManagedObjectID) throws -> StoreRow? {
        try writer.reader.row(objectID.entity, key: objectID.key, resolvingBlobs: false)
    }

    private func slot(of relationship: NSRelationshipDescription, in objectID: NSManagedObjectID) -> Int? {
        objectID.entity.layout.slotsByName[relationship.name]
    }

    mutating func exists(_ objectID: NSManagedObjectID) throws -> Bool {
        let info = try writer.info(for: objectID.entity)
        guard let tree = try writer.transaction.tree(named: info.treeName) else { return false }
        return try tree.contains(PageFileKey.primary(objectID.key))
    }

    func derivesFromInverse(_ relationship: NSRelationshipDescription) -> Bool {
        Self.derivesFromInverse(relationship)
    }

    static func derivesFromInverse(_ relationship: NSRelationshipDescription) -> Bool {
        if case .inverse = PageFileToMany.storage(of: relationship) { return true }
        return false
    }

    mutating func destination(of relationship: NSRelationshipDescription, in objectID: NSManagedObjectID) throws
        -> NSManagedObjectID?
    {
        guard let row = try row(objectID), let slot = slot(of: relationship, in: objectID), slot < row.values.count,
            case .objectID(let destination) = row.values[slot]
        else { return nil }
        return destination
    }

    mutating func contains(
        _ destination: NSManagedObjectID, in relationship: NSRelationshipDescription, of objectID: NSManagedObjectID
    ) throws -> Bool {
        switch PageFileToMany.storage(of: relationship) {
        case .inverse(let inverse):
            return try self.destination(of: inverse, in: destination) == objectID
        case .join(let treeName, let ordered):
            guard ordered else {
                let key = PageFileToMany.joinKey(source: objectID.key, order: nil, destination: destination.key)
                return try writer.transaction.tree(named: treeName)?.contains(key) ?? false
            }
            return try writer.reader.joinEntries(
                treeName, ordered: true, relationship: relationship, source: objectID.key
            )
            .contains { $0.destination.key == destination.key }
        case nil:
            return try self.destination(of: relationship, in: objectID) == destination
        }
    }

    mutating func setDestination(
        _ destination: NSManagedObjectID?, of relationship: NSRelationshipDescription, in objectID: NSManagedObjectID
    ) throws {
        guard let slot = slot(of: relationship, in: objectID), let stored = try row(objectID),
            slot < stored.values.count
        else { return }
        let info = try writer.info(for: objectID.entity)
        var changed = stored
        changed.values[slot] = destination.map(StoreValue.objectID) ?? .null
        if isNewlyRepaired(objectID) { changed.version += 1 }
        note(objectID, slot: slot, version: changed.version)
        try writer.removeIndexEntries(of: stored, info: info)
        try writer.write(changed, info: info)
    }

    mutating func insert(
        _ destination: NSManagedObjectID, into relationship: NSRelationshipDescription, of objectID: NSManagedObjectID
    ) throws {
        try changeJoin(relationship, of: objectID) { current in
            if !current.contains(destination) { current.append(destination) }
        }
    }

    mutating func remove(
        _ destination: NSManagedObjectID, from relationship: NSRelationshipDescription, of objectID: NSManagedObjectID
    ) throws {
        try changeJoin(relationship, of: objectID) { current in current.removeAll { $0 == destination } }
    }

    /// Changes the join entries of `relationship` of the row (by difference), and gives a row
    /// the save did not write a new version.
    private mutating func changeJoin(
        _ relationship: NSRelationshipDescription, of objectID: NSManagedObjectID,
        _ body: (inout [NSManagedObjectID]) -> Void
    ) throws {
        guard case .join(let treeName, let ordered) = PageFileToMany.storage(of: relationship),
            let slot = slot(of: relationship, in: objectID)
        else { return }
        var destinations = try writer.reader.joinEntries(
            treeName, ordered: ordered, relationship: relationship, source: objectID.key
        ).map(\.destination)
        body(&destinations)
        try writer.setToMany(relationship, of: objectID.key, to: destinations, isNew: false)
        guard isNewlyRepaired(objectID) else {
            note(objectID, slot: slot, version: nil)
            return
        }
        guard var row = try row(objectID) else { return }
        row.version += 1
        note(objectID, slot: slot, version: row.version)
        try writer.storeRow(row, info: try writer.info(for: objectID.entity))
    }

    /// Whether `objectID` is a row neither the save nor this pass has written yet.
    private func isNewlyRepaired(_ objectID: NSManagedObjectID) -> Bool {
        !written.contains(objectID) && repairedRows[objectID] == nil
    }

    private mutating func note(_ objectID: NSManagedObjectID, slot: Int, version: Int64?) {
        guard !written.contains(objectID) else { return }
        repairedRows[objectID, default: []].insert(slot)
        if let version { versions[objectID] = version }
    }
}
