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

    /// The 133021 error for `row` clashing on `constraint` with `databaseRow` (`existingID`).
    static func constraintError(
        row: StoreRow, constraint: PageFileIndex, existingID: NSManagedObjectID, databaseRow: StoreRow?
    ) -> NSError {
        let layout = row.objectID.entity.layout
        let names = constraint.slots.map { layout.properties[$0].name }
        var values: [String: Any] = [:]
        var storedValues: [String: StoreValue] = [:]
        for slot in constraint.slots where slot < row.values.count {
            values[layout.properties[slot].name] = layout.attributeBySlot[slot]?.attributeValue(row.values[slot])
            storedValues[layout.properties[slot].name] = row.values[slot]
        }
        let detail = StoreConstraintConflict(
            constraint: names, constraintValues: storedValues, databaseRow: databaseRow,
            conflictingObjectIDs: [row.objectID])
        return CoreDataError.make(
            NSManagedObjectConstraintMergeError,
            "uniqueness constraint \(names) of \(row.objectID.entity.name ?? "?") violated: \(values) "
                + "is already held by \(existingID)",
            userInfo: [NSPersistentStoreSaveConflictsErrorKey: [detail], NSAffectedObjectsErrorKey: [row.objectID]])
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
            return FetchEvaluation.entities(destination, includingSubentities: true).contains {
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
