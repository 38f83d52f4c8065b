// The details of a failed save, as Core Data reports them under
// NSPersistentStoreSaveConflictsErrorKey and hands them to a merge policy.
import Foundation

/// An optimistic locking failure: an object the save changes was changed in the store
/// since the context read it.
open class NSMergeConflict: NSObject, @unchecked Sendable {
    /// The object in the saving context.
    public let sourceObject: NSManagedObject
    /// The object's current values in the context, by property name (`NSNull` for nil).
    public let objectSnapshot: [String: Any]?
    /// The values the context last read or saved, by property name.
    public let cachedSnapshot: [String: Any]?
    /// The values in the store now, by property name; nil when the object was deleted there.
    public let persistedSnapshot: [String: Any]?
    /// The version of the object in the store now.
    public let newVersionNumber: Int
    /// The version the context last saw.
    public let oldVersionNumber: Int
    /// The stored row behind `persistedSnapshot`, for the built-in policies.
    let persistedValues: [StoreValue]?

    /// A conflict of `sourceObject` between the version the context saw and the stored one.
    public init(
        source sourceObject: NSManagedObject, newVersion: Int, oldVersion: Int, cachedSnapshot: [String: Any]?,
        persistedSnapshot: [String: Any]?
    ) {
        self.sourceObject = sourceObject
        self.objectSnapshot = sourceObject.snapshot(of: sourceObject.values)
        self.cachedSnapshot = cachedSnapshot
        self.persistedSnapshot = persistedSnapshot
        self.newVersionNumber = newVersion
        self.oldVersionNumber = oldVersion
        self.persistedValues = nil
        super.init()
    }

    init(source sourceObject: NSManagedObject, conflict: StoreVersionConflict) {
        self.sourceObject = sourceObject
        self.objectSnapshot = sourceObject.snapshot(of: sourceObject.values)
        self.cachedSnapshot = sourceObject.committed.map { sourceObject.snapshot(of: $0) }
        self.persistedValues = conflict.persistedRow?.values
        self.persistedSnapshot = conflict.persistedRow.map {
            sourceObject.snapshot(of: sourceObject.objectValues(from: $0.values))
        }
        self.newVersionNumber = Int(conflict.persistedRow?.version ?? 0)
        self.oldVersionNumber = Int(conflict.expectedVersion)
        super.init()
    }

    /// A description naming the object and both versions.
    open override var description: String {
        "NSMergeConflict (\(sourceObject.objectID)) old version \(oldVersionNumber), new version \(newVersionNumber)"
    }
}

/// A uniqueness constraint violation: objects of the save share a constraint's values
/// with each other or with a stored object.
open class NSConstraintConflict: NSObject, @unchecked Sendable {
    /// The constraint's property names.
    public let constraint: [String]
    /// The shared values, by property name.
    public let constraintValues: [String: Any]
    /// The stored object holding the values, when the clash is with the store.
    public let databaseObject: NSManagedObject?
    /// The stored object's values, by property name.
    public let databaseSnapshot: [String: Any]?
    /// The objects of the save holding the values.
    public let conflictingObjects: [NSManagedObject]
    /// The values of each conflicting object, in the order of `conflictingObjects`.
    public let conflictingSnapshots: [[AnyHashable: Any]]
    /// Set by the built-in policies: the inserted conflicting objects become updates of
    /// the object holding the values (an upsert, done by the store when the save is retried).
    var resolvedByUpsert = false

    /// A conflict on `constraint` between `conflictingObjects` and `databaseObject`.
    public init(
        constraint: [String], database databaseObject: NSManagedObject?, databaseSnapshot: [AnyHashable: Any]?,
        conflictingObjects: [NSManagedObject], conflictingSnapshots: [Any]
    ) {
        self.constraint = constraint
        self.databaseObject = databaseObject
        var snapshot: [String: Any]?
        if let databaseSnapshot {
            snapshot = [:]
            for (key, value) in databaseSnapshot { if let name = key.base as? String { snapshot?[name] = value } }
        }
        self.databaseSnapshot = snapshot
        self.conflictingObjects = conflictingObjects
        self.conflictingSnapshots = conflictingSnapshots.compactMap { $0 as? [AnyHashable: Any] }
        var values: [String: Any] = [:]
        if let first = conflictingObjects.first {
            for name in constraint { values[name] = first.value(forKeyPath: name) ?? NSNull() }
        }
        self.constraintValues = values
        super.init()
    }

    init(
        _ conflict: StoreConstraintConflict, databaseObject: NSManagedObject?, conflictingObjects: [NSManagedObject]
    ) {
        self.constraint = conflict.constraint
        self.databaseObject = databaseObject
        self.conflictingObjects = conflictingObjects
        var values: [String: Any] = [:]
        if let entity = conflictingObjects.first?.entity ?? databaseObject?.entity {
            // A name is an attribute or a composite element's key path (`location.latitude`).
            for (name, stored) in conflict.constraintValues {
                guard let attribute = entity.attribute(atKeyPath: name) else { continue }
                values[name] = attribute.attributeValue(stored) ?? NSNull()
            }
        }
        self.constraintValues = values
        if let row = conflict.databaseRow, let object = databaseObject ?? conflictingObjects.first {
            self.databaseSnapshot = object.snapshot(of: object.objectValues(from: row.values))
        } else {
            self.databaseSnapshot = nil
        }
        self.conflictingSnapshots = conflictingObjects.map { object in
            var result: [AnyHashable: Any] = [:]
            for (key, value) in object.snapshot(of: object.values) { result[key] = value }
            return result
        }
        super.init()
    }

    /// A description naming the constraint and its values.
    open override var description: String {
        "NSConstraintConflict (\(constraint)) values \(constraintValues), database object "
            + "\(databaseObject.map { "\($0.objectID)" } ?? "nil"), \(conflictingObjects.count) conflicting object(s)"
    }
}

extension NSManagedObject {
    /// `values` by property name: attributes as values (`NSNull` for nil), relationships
    /// as object IDs (to-one) or arrays of object IDs (to-many), transient properties left out.
    func snapshot(of values: SlotValues) -> [String: Any] {
        var result: [String: Any] = [:]
        for slot in layout.properties.indices where slot < values.count && !layout.transientBySlot[slot] {
            let name = layout.properties[slot].name
            if layout.attributeBySlot[slot] != nil {
                result[name] = values[slot] ?? NSNull()
                continue
            }
            switch (try? storeValue(slot: slot, of: values, mapping: [:])) ?? .null {
            case .objectID(let id): result[name] = id
            case .objectIDs(let ids): result[name] = ids
            default: result[name] = NSNull()
            }
        }
        return result
    }
}

extension CoreDataError {
    /// `NSManagedObjectMergeError` (133020) carrying `conflicts` as Core Data does: the
    /// conflicts and the IDs of their objects.
    static func mergeConflicts(_ conflicts: [NSMergeConflict], _ message: String) -> NSError {
        make(
            NSManagedObjectMergeError, message,
            userInfo: [
                NSPersistentStoreSaveConflictsErrorKey: conflicts,
                NSAffectedObjectsErrorKey: conflicts.map(\.sourceObject.objectID),
            ])
    }
}
