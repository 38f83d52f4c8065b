// What a store reports when it refuses a save: the rows and versions involved, by
// object ID. The saving context turns these into NSMergeConflict and
// NSConstraintConflict objects, which need its live objects.
import Foundation

/// A row changed in the store since the saving context read it (optimistic locking).
struct StoreVersionConflict: Sendable {
    /// The object the save updates or deletes.
    let objectID: NSManagedObjectID
    /// The row as stored now; nil when it is gone.
    let persistedRow: StoreRow?
    /// The version the saving context last saw.
    let expectedVersion: Int64
}

/// An insert or update that would give a uniqueness constraint's values to a second row.
struct StoreConstraintConflict: Sendable {
    /// The constraint's property names.
    let constraint: [String]
    /// The constraint's values in the conflicting row (stored form), by property name.
    let constraintValues: [String: StoreValue]
    /// The row already holding those values.
    let databaseRow: StoreRow?
    /// The objects of the save that clash with it.
    let conflictingObjectIDs: [NSManagedObjectID]
}
