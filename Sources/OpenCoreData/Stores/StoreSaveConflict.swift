// What a store reports when it refuses a save: the rows and versions involved, by
// object ID. The saving context turns these into NSMergeConflict and
// NSConstraintConflict objects, which need its live objects.
import Foundation

/// A row changed in the store since the saving context read it (optimistic locking).
///
/// A store refusing a stale save throws `NSManagedObjectMergeError` (133020) with an
/// array of these under `NSPersistentStoreSaveConflictsErrorKey`; the saving context
/// hands them to its merge policy as ``NSMergeConflict`` objects and saves again.
public struct StoreVersionConflict: Sendable {
    /// The object the save updates or deletes.
    public let objectID: NSManagedObjectID
    /// The row as stored now; nil when it is gone.
    public let persistedRow: StoreRow?
    /// The version the saving context last saw.
    public let expectedVersion: Int64

    /// A conflict of `objectID`, seen at `expectedVersion` and stored now as `persistedRow`.
    public init(objectID: NSManagedObjectID, persistedRow: StoreRow?, expectedVersion: Int64) {
        self.objectID = objectID
        self.persistedRow = persistedRow
        self.expectedVersion = expectedVersion
    }

    /// The conflict of an update whose row is gone from the store (deleted since the
    /// context read it: no persisted row, version 0), when `request` checks versions.
    ///
    /// - Throws: `NSManagedObjectReferentialIntegrityError` (133000) when it does not.
    public static func rowGone(for update: StoreRowUpdate, in request: StoreSaveRequest) throws
        -> StoreVersionConflict
    {
        guard request.checksVersions else {
            throw CoreDataError.make(
                NSManagedObjectReferentialIntegrityError,
                "cannot update \(update.objectID): the store has no such object (deleted elsewhere?)")
        }
        return StoreVersionConflict(
            objectID: update.objectID, persistedRow: nil, expectedVersion: update.expectedVersion)
    }
}

/// An insert or update that would give a uniqueness constraint's values to a second row.
///
/// A store throws `NSManagedObjectConstraintMergeError` (133021) with an array of these
/// under `NSPersistentStoreSaveConflictsErrorKey`; the saving context reports them as
/// ``NSConstraintConflict`` objects.
public struct StoreConstraintConflict: Sendable {
    /// The constraint's property names.
    public let constraint: [String]
    /// The constraint's values in the conflicting row (stored form), by property name.
    public let constraintValues: [String: StoreValue]
    /// The row already holding those values.
    public let databaseRow: StoreRow?
    /// The objects of the save that clash with it.
    public let conflictingObjectIDs: [NSManagedObjectID]

    /// A clash on `constraint` between `conflictingObjectIDs` and `databaseRow`.
    public init(
        constraint: [String], constraintValues: [String: StoreValue], databaseRow: StoreRow?,
        conflictingObjectIDs: [NSManagedObjectID]
    ) {
        self.constraint = constraint
        self.constraintValues = constraintValues
        self.databaseRow = databaseRow
        self.conflictingObjectIDs = conflictingObjectIDs
    }
}

extension StoreSaveRequest {
    /// Optimistic locking as every store checks it: each row the request updates or
    /// deletes must still be at the version the saving context read. An update of a row
    /// that is gone is a conflict too; a delete of one is not (it is already done).
    ///
    /// - Parameters:
    ///   - storedRow: The stored row of an object, for `update` (nil: the request deletes
    ///     it), or nil when the store has none; only its version is compared.
    ///   - persistedRow: The row as a conflict reports it (a store that keeps parts of rows
    ///     elsewhere, such as blobs, resolves them here).
    /// - Throws: `NSManagedObjectMergeError` (133020) with a ``StoreVersionConflict`` for
    ///   every stale or missing row, all at once; 133000 for an update of a missing row when
    ///   versions are not checked.
    func checkVersions(
        storedRow: (_ objectID: NSManagedObjectID, _ update: StoreRowUpdate?) throws -> StoreRow?,
        persistedRow: (StoreRow) throws -> StoreRow = { $0 }
    ) throws {
        var conflicts: [StoreVersionConflict] = []
        for update in updatedRows {
            guard let row = try storedRow(update.objectID, update) else {
                conflicts.append(try StoreVersionConflict.rowGone(for: update, in: self))
                continue
            }
            if checksVersions, row.version != update.expectedVersion {
                conflicts.append(
                    StoreVersionConflict(
                        objectID: update.objectID, persistedRow: try persistedRow(row),
                        expectedVersion: update.expectedVersion))
            }
        }
        for deleted in deletedObjects {
            guard let row = try storedRow(deleted.objectID, nil) else { continue }
            if checksVersions, row.version != deleted.expectedVersion {
                conflicts.append(
                    StoreVersionConflict(
                        objectID: deleted.objectID, persistedRow: try persistedRow(row),
                        expectedVersion: deleted.expectedVersion))
            }
        }
        guard !conflicts.isEmpty else { return }
        throw CoreDataError.make(
            NSManagedObjectMergeError,
            "optimistic locking failure: \(conflicts.count) object(s) changed in the store since they were read",
            userInfo: [
                NSAffectedObjectsErrorKey: conflicts.map(\.objectID), NSPersistentStoreSaveConflictsErrorKey: conflicts,
            ])
    }
}
