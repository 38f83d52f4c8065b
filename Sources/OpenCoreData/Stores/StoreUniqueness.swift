// Uniqueness constraints, shared by every store: which constraints an entity has, which
// keys clash, the 133021 error a clash raises, and how an upsert folds an inserted row
// into the row already holding its key. The page-file store keeps the keys in unique
// index trees; the in-memory store keeps them in dictionaries for the length of a save.
// The rules are the same; the stores meet in the small StoreUniquenessConstraint protocol.
import Foundation

/// A uniqueness constraint as a store checks it: the slots it covers and the key their
/// values make. The page-file store's unique indexes are ones; so are ``StoreUniqueKey``s.
protocol StoreUniquenessConstraint {
    /// The constraint's name among its entity's (its property names joined by `+`).
    var name: String { get }
    /// The constrained attributes or composite elements, in the constraint's order.
    var fields: [StoreKeyField] { get }
    /// The key of a row's `values`: equal keys clash; nil when a value is nil (no clash,
    /// as in SQL).
    func key(for values: [StoreValue], primaryKey: Int64) -> [UInt8]?
}

/// One uniqueness constraint of an entity: its exact key is each value's row encoding
/// (strings in Unicode normalization form C), length-prefixed.
struct StoreUniqueKey: StoreUniquenessConstraint {
    let name: String
    let fields: [StoreKeyField]

    func key(for values: [StoreValue], primaryKey: Int64) -> [UInt8]? {
        var key = StoreByteWriter()
        guard StoreUniqueKey.appendKey(of: values, fields: fields, to: &key) else { return nil }
        return key.bytes
    }

    /// Appends the exact key of `values` at `fields`; false when a value is nil.
    static func appendKey(of values: [StoreValue], fields: [StoreKeyField], to key: inout StoreByteWriter) -> Bool {
        for field in fields {
            var value = field.value(in: values)
            if case .null = value { return false }
            // Equal strings in either normalization form are one key.
            if case .string(let string) = value { value = .string(string.precomposedStringWithCanonicalMapping) }
            appendExact(value, to: &key)
        }
        return true
    }

    /// Appends `value`'s exact row encoding, length-prefixed: an element compared for
    /// equality only, where no two distinct numbers share a key (SPEC.md §3.4).
    static func appendExact(_ value: StoreValue, to key: inout StoreByteWriter) {
        var element = StoreByteWriter()
        PageFileRowCodec.appendValue(value, declaredEntity: nil, to: &element)
        key.lengthPrefixed(element.bytes)
    }

    /// The constraints of `entity`, inherited ones included: from the root entity down,
    /// each set of slots once.
    static func constraints(of entity: NSEntityDescription) -> [StoreUniqueKey] {
        var seen: Set<[StoreKeyField]> = []
        var result: [StoreUniqueKey] = []
        for ancestor in lineage(of: entity) {
            for constraint in declared(by: ancestor, in: entity.layout) where seen.insert(constraint.fields).inserted {
                result.append(StoreUniqueKey(name: constraint.name, fields: constraint.fields))
            }
        }
        return result
    }

    /// The constraints `declaring` (one entity of a lineage) declares, resolved in `layout`;
    /// a constraint naming something other than an attribute or a composite element of the
    /// layout is left out.
    static func declared(by declaring: NSEntityDescription, in layout: EntityLayout)
        -> [(name: String, fields: [StoreKeyField], attributeTypes: [NSAttributeType])]
    {
        declaring.uniquenessConstraints.compactMap { constraint in
            let names = constraint.compactMap { ($0 as? String) ?? ($0 as? NSPropertyDescription)?.name }
            guard let resolved = layout.keyFields(named: names) else { return nil }
            return (names.joined(separator: "+"), resolved.fields, resolved.attributeTypes)
        }
    }

    /// `entity` and its superentities, the root first.
    static func lineage(of entity: NSEntityDescription) -> [NSEntityDescription] {
        var chain: [NSEntityDescription] = []
        var current: NSEntityDescription? = entity
        while let candidate = current {
            chain.insert(candidate, at: 0)
            current = candidate.superentity
        }
        return chain
    }
}

enum StoreUniqueness {
    /// The details of `row` clashing on `constraint` with `databaseRow`, the row holding the key.
    static func conflict(row: StoreRow, constraint: some StoreUniquenessConstraint, databaseRow: StoreRow?)
        -> StoreConstraintConflict
    {
        let layout = row.objectID.entity.layout
        var storedValues: [String: StoreValue] = [:]
        for field in constraint.fields where field.slot < row.values.count {
            storedValues[layout.keyPath(of: field)] = field.value(in: row.values)
        }
        return StoreConstraintConflict(
            constraint: constraint.fields.map(layout.keyPath(of:)), constraintValues: storedValues,
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
    /// new object keeps the stored one; with `slots`, only those slots are written) and
    /// returns the slots that changed.
    static func absorb(_ inserted: StoreRow, into existing: inout StoreRow, slots: [Int]? = nil) -> [Int] {
        let layout = inserted.objectID.entity.layout
        var changedSlots: [Int] = []
        for slot in slots ?? Array(inserted.values.indices)
        where slot < inserted.values.count && slot < existing.values.count {
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
