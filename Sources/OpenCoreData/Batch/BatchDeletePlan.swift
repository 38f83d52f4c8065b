// What a batch delete changes besides the rows it selects, decided before anything is
// written, the same for every store:
//
//   1. cascade   a relationship with the Cascade rule deletes its destinations too, and
//                theirs in turn, as a context delete does (Core Data does not say whether
//                its batch delete cascades; README "Porting from Core Data")
//   2. nullify   every surviving row on the inverse side of a relationship to a deleted
//                row loses it: a to-one becomes nil, a to-many drops it. The rule of the
//                deleted row's relationship does not matter: Deny is not enforced (as in
//                Core Data) and No Action would leave a dangling reference in the store
//   3. refuse    a non-optional inverse left empty (a to-one set to nil, a to-many with
//                no destination left) fails the whole batch, nothing written, as Core
//                Data's store does ("mandatory ... nullify inverse")
//
// The plan is a save request: deleted rows, and updates of the surviving rows' inverse
// slots, exactly what a context's save of the same deletions sends, so the store's save
// path applies it and writes its history (deletes with tombstones, updates naming the
// changed relationships).
import Foundation

/// The rows a batch delete removes and the surviving rows it changes, in one store.
struct BatchDeletePlan {
    /// The rows to delete: the selected ones, then those cascades reach.
    private(set) var deleted: [StoreRow] = []
    /// The surviving rows whose inverse relationships lose deleted destinations.
    private(set) var updates: [StoreRowUpdate] = []

    /// Plans the deletion of `selected` (rows of `store`, read through `rows`).
    ///
    /// - Throws: `NSValidationMissingMandatoryPropertyError` (1570) for a non-optional to-one
    ///   and `NSValidationRelationshipLacksMinimumCountError` (1580) for a non-optional
    ///   to-many left empty; the store's read errors.
    init(selected: [StoreRow], rows: StoreBatchRows, store: NSPersistentStore) throws {
        var deletedIDs = Set(selected.map(\.objectID))
        deleted = selected
        var index = 0
        while index < deleted.count {
            let row = deleted[index]
            index += 1
            let layout = row.objectID.entity.layout
            for slot in layout.relationshipSlots where layout.relationshipBySlot[slot]?.deleteRule == .cascadeDeleteRule
            {
                for destination in try rows.destinations(ofSlot: slot, in: row)
                where destination.persistentStore === store && !deletedIDs.contains(destination) {
                    guard let reached = try rows.row(destination) else { continue }
                    deletedIDs.insert(destination)
                    deleted.append(reached)
                }
            }
        }
        // Survivors in the order first met, each with the deleted rows its inverse slots lose.
        var survivors: [NSManagedObjectID] = []
        var lost: [NSManagedObjectID: [(slot: Int, deleted: NSManagedObjectID)]] = [:]
        for row in deleted {
            let layout = row.objectID.entity.layout
            for slot in layout.relationshipSlots {
                guard let inverse = layout.relationshipBySlot[slot]?.inverseRelationship else { continue }
                for destination in try rows.destinations(ofSlot: slot, in: row)
                where destination.persistentStore === store && !deletedIDs.contains(destination) {
                    guard let inverseSlot = destination.entity.layout.slotsByName[inverse.name] else { continue }
                    if lost[destination] == nil { survivors.append(destination) }
                    lost[destination, default: []].append((inverseSlot, row.objectID))
                }
            }
        }
        for survivor in survivors {
            guard let row = try rows.row(survivor), let losses = lost[survivor] else { continue }
            let changes = try Self.changes(of: row, losing: losses, rows: rows)
            if !changes.isEmpty {
                updates.append(StoreRowUpdate(objectID: survivor, expectedVersion: row.version, changes: changes))
            }
        }
    }

    /// The new values of the inverse slots of the surviving `row` that lose `losses`.
    private static func changes(
        of row: StoreRow, losing losses: [(slot: Int, deleted: NSManagedObjectID)], rows: StoreBatchRows
    ) throws -> [(slot: Int, value: StoreValue)] {
        let layout = row.objectID.entity.layout
        var bySlot: [Int: Set<NSManagedObjectID>] = [:]
        for loss in losses { bySlot[loss.slot, default: []].insert(loss.deleted) }
        var changes: [(slot: Int, value: StoreValue)] = []
        for (slot, gone) in bySlot.sorted(by: { $0.key < $1.key }) {
            guard let relationship = layout.relationshipBySlot[slot] else { continue }
            let current = try rows.destinations(ofSlot: slot, in: row)
            let remaining = current.filter { !gone.contains($0) }
            // An inverse that no longer names the deleted row (damage, or no inverse kept) stays.
            guard remaining.count < current.count else { continue }
            if remaining.isEmpty, !relationship.isOptional || relationship.minCount > 0 {
                throw mandatoryError(row.objectID, relationship, gone)
            }
            changes.append((slot, relationship.isToMany ? .objectIDs(remaining) : .null))
        }
        return changes
    }

    private static func mandatoryError(
        _ survivor: NSManagedObjectID, _ relationship: NSRelationshipDescription, _ gone: Set<NSManagedObjectID>
    ) -> NSError {
        let deleted = gone.sorted { $0.key < $1.key }
        let what = relationship.isToMany ? "would have no destination left" : "would be nil"
        return CoreDataError.make(
            relationship.isToMany
                ? NSValidationRelationshipLacksMinimumCountError : NSValidationMissingMandatoryPropertyError,
            "batch delete: '\(relationship.name)' of \(survivor) is not optional and \(what) once "
                + "\(deleted.map(\.description).joined(separator: ", ")) \(deleted.count == 1 ? "is" : "are") deleted; "
                + "nothing was deleted (reassign it, or delete it in the same request)",
            userInfo: [NSValidationKeyErrorKey: relationship.name, NSAffectedObjectsErrorKey: [survivor] + deleted])
    }

    /// The plan as a save request, attributed to `author` and `contextName` in history.
    func saveRequest(author: String?, contextName: String?) -> StoreSaveRequest {
        var request = StoreSaveRequest()
        request.deletedObjects = deleted.map { ($0.objectID, $0.version) }
        request.updatedRows = updates
        request.checksVersions = true
        request.transactionAuthor = author
        request.contextName = contextName
        return request
    }
}
