// Uniqueness constraints, shared by every store: which keys clash, the 133021 error a
// clash raises, and how an upsert folds an inserted row into the row already holding its
// key. The page-file store keeps the keys in unique index trees; the in-memory store
// keeps them in dictionaries for the length of a save. The rules are the same.
import Foundation

enum StoreUniqueness {
    /// The uniqueness constraints of `entity`, inherited ones included, as unique index
    /// descriptions (their `key(for:primaryKey:)` is nil when a value is nil: no clash).
    static func constraints(of entity: NSEntityDescription) -> [PageFileIndex] {
        PageFileIndex.indexes(of: entity).filter(\.isUnique)
    }

    /// The details of `row` clashing on `constraint` with `databaseRow`, the row holding the key.
    static func conflict(row: StoreRow, constraint: PageFileIndex, databaseRow: StoreRow?) -> StoreConstraintConflict {
        let layout = row.objectID.entity.layout
        var storedValues: [String: StoreValue] = [:]
        for slot in constraint.slots where slot < row.values.count {
            storedValues[layout.properties[slot].name] = row.values[slot]
        }
        return StoreConstraintConflict(
            constraint: constraint.slots.map { layout.properties[$0].name }, constraintValues: storedValues,
            databaseRow: databaseRow, conflictingObjectIDs: [row.objectID])
    }

    /// The 133021 error reporting `details`, every clash of one save.
    static func constraintError(_ details: [StoreConstraintConflict]) -> NSError {
        let described = details.prefix(3).map { detail in
            let entity = detail.conflictingObjectIDs.first?.entity
            let values = detail.constraintValues.sorted { $0.key < $1.key }.map { name, value in
                let slot = entity?.layout.slotsByName[name]
                let shown = slot.flatMap { entity?.layout.attributeBySlot[$0]?.attributeValue(value) }
                return "\(name) = \(shown.map { "\($0)" } ?? "nil")"
            }
            let holder = detail.databaseRow.map { " is already held by \($0.objectID)" } ?? ""
            return "\(detail.constraint) of \(entity?.name ?? "?"): \(values.joined(separator: ", "))\(holder)"
        }
        let more = details.count > 3 ? " (and \(details.count - 3) more)" : ""
        return CoreDataError.make(
            NSManagedObjectConstraintMergeError,
            "uniqueness constraint violated: \(described.joined(separator: "; "))\(more)",
            userInfo: [
                NSPersistentStoreSaveConflictsErrorKey: details,
                NSAffectedObjectsErrorKey: details.flatMap(\.conflictingObjectIDs),
            ])
    }

    /// Whether `request` lets the clash of inserted `objectID` become an upsert.
    static func upserts(_ objectID: NSManagedObjectID, in request: StoreSaveRequest) -> Bool {
        request.mergePolicyType != .errorMergePolicyType && request.upsertObjectIDs?.contains(objectID) ?? true
    }

    /// Whether an upsert under `policy` writes the inserted values over the existing row
    /// (object trump, overwrite) rather than keeping the stored ones (store trump, rollback).
    static func insertedValuesWin(_ policy: NSMergePolicyType) -> Bool {
        policy == .mergeByPropertyObjectTrumpMergePolicyType || policy == .overwriteMergePolicyType
    }

    /// Writes `inserted`'s values over `existing` (an empty or nil relationship of the
    /// new object keeps the stored one) and returns the slots that changed.
    static func absorb(_ inserted: StoreRow, into existing: inout StoreRow) -> [Int] {
        let layout = inserted.objectID.entity.layout
        var changedSlots: [Int] = []
        for slot in inserted.values.indices where slot < existing.values.count {
            if layout.relationshipBySlot[slot] != nil {
                switch inserted.values[slot] {
                case .null, .unresolved: continue
                case .objectIDs(let ids) where ids.isEmpty: continue
                default: break
                }
            }
            if existing.values[slot] != inserted.values[slot] { changedSlots.append(slot) }
            existing.values[slot] = inserted.values[slot]
        }
        return changedSlots
    }

    /// Records an upsert in history: the inserted object's insert becomes an update of
    /// the existing object, or disappears when nothing changed.
    static func recordUpsert(
        of inserted: NSManagedObjectID, into existingID: NSManagedObjectID, changedSlots: [Int],
        in history: inout PersistentHistoryRecord?
    ) {
        guard
            let position = history?.changes.firstIndex(where: {
                $0.kind == .insert && $0.key == inserted.key && $0.entityName == inserted.entity.name
            })
        else { return }
        if changedSlots.isEmpty {
            history?.changes.remove(at: position)
        } else {
            history?.changes[position] = .update(existingID, slots: changedSlots)
        }
    }

    /// The relationship slots of `entity` that can point at an object of `targets`.
    static func slots(of entity: NSEntityDescription, pointingAt targets: Set<ObjectIdentifier>) -> [Int] {
        let layout = entity.layout
        return layout.relationshipSlots.filter { slot in
            guard let destination = layout.relationshipBySlot[slot]?.destinationEntity else { return false }
            return destination.hierarchy(includingSubentities: true).contains {
                targets.contains(ObjectIdentifier($0))
            }
        }
    }

    /// Points references in `values` (at `slots`) to upserted objects at the rows that
    /// absorbed them; true when something changed.
    static func rewriteReferences(
        in values: inout [StoreValue], slots: [Int], replaced: [NSManagedObjectID: NSManagedObjectID]
    ) -> Bool {
        var changed = false
        for slot in slots where slot < values.count {
            switch values[slot] {
            case .objectID(let id):
                if let new = replaced[id] {
                    values[slot] = .objectID(new)
                    changed = true
                }
            case .objectIDs(let ids):
                if ids.contains(where: { replaced[$0] != nil }) {
                    var seen: Set<NSManagedObjectID> = []
                    values[slot] = .objectIDs(ids.map { replaced[$0] ?? $0 }.filter { seen.insert($0).inserted })
                    changed = true
                }
            default: break
            }
        }
        return changed
    }
}
