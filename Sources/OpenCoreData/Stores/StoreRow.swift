// What crosses the store boundary: rows of typed values addressed by property slot,
// never live objects. A context turns its object changes into these; a store turns
// them into its own storage.
import Foundation

/// One stored value, typed, as a store keeps it.
///
/// Attributes map to the case of their type (all integer widths to `.integer`).
/// A to-one relationship is `.objectID` or `.null`; a to-many relationship is
/// `.objectIDs` (in order for an ordered relationship) or `.unresolved` when the
/// store computes it on demand through
/// ``NSPersistentStore/objectIDs(forRelationship:of:)``.
public enum StoreValue: Sendable, Hashable {
    /// No value.
    case null
    /// An integer of any width, or a Boolean stored as 0/1 by stores that prefer it.
    case integer(Int64)
    /// A double-precision number.
    case double(Double)
    /// A single-precision number.
    case float(Float)
    /// A Boolean.
    case boolean(Bool)
    /// A string.
    case string(String)
    /// A decimal number.
    case decimal(Decimal)
    /// A date.
    case date(Date)
    /// Bytes (binary data, or a transformable value after its transformer).
    case binary(Data)
    /// A UUID.
    case uuid(UUID)
    /// A URL.
    case uri(URL)
    /// An object ID attribute, or a to-one relationship's destination.
    case objectID(NSManagedObjectID)
    /// A to-many relationship's destinations.
    case objectIDs([NSManagedObjectID])
    /// A to-many relationship the store resolves on demand. In an update's changes it keeps
    /// the stored list: a save of this module's stores sends it for an unordered to-many
    /// whose inverse is a to-one, which the to-ones of the save decide.
    case unresolved
}

/// One object's stored state: its ID, its version and one value per property slot.
///
/// Slot `k` holds the value of the `k`-th property of the entity, inherited
/// properties first (a sub-entity's slots extend its superentity's). Transient
/// properties have slots too and are always `.null` in a store.
public struct StoreRow: Sendable {
    /// The object's ID (its entity is `objectID.entity`).
    public var objectID: NSManagedObjectID
    /// Incremented by the store at each saved update; used for optimistic locking.
    public var version: Int64
    /// One value per property slot.
    ///
    /// A row the default store decoded straight into an object's values
    /// (StoreRowSlots.swift) makes these from them when read, and keeps them once changed.
    public var values: [StoreValue] {
        get {
            guard let slots else { return storedValues }
            return slots.storeValues(layout: objectID.entity.layout)
        }
        set {
            storedValues = newValue
            slots = nil
        }
        _modify {
            if let slots {
                storedValues = slots.storeValues(layout: objectID.entity.layout)
                self.slots = nil
            }
            yield &storedValues
        }
    }
    /// The values when the row holds them in stored form (empty while `slots` holds them).
    private var storedValues: [StoreValue]
    /// The row's values in the form a managed object holds them, when a store decoded them
    /// that way; nil for a row of ``values``.
    var slots: StoreRowSlots?

    /// A row of `values` for `objectID` at `version`.
    public init(objectID: NSManagedObjectID, version: Int64, values: [StoreValue]) {
        self.objectID = objectID
        self.version = version
        self.storedValues = values
        self.slots = nil
    }

    /// A row of `slots`, values decoded straight into an object's form, for `objectID` at `version`.
    init(objectID: NSManagedObjectID, version: Int64, slots: StoreRowSlots) {
        self.objectID = objectID
        self.version = version
        self.storedValues = []
        self.slots = slots
    }
}

/// The changed properties of one updated object.
public struct StoreRowUpdate: Sendable {
    /// The updated object.
    public var objectID: NSManagedObjectID
    /// The row version the context last saw; a store checking versions refuses a different one.
    public var expectedVersion: Int64
    /// The changed slots and their new values, in slot order.
    public var changes: [(slot: Int, value: StoreValue)]

    /// An update of `changes` to the object `objectID` last seen at `expectedVersion`.
    public init(objectID: NSManagedObjectID, expectedVersion: Int64, changes: [(slot: Int, value: StoreValue)]) {
        self.objectID = objectID
        self.expectedVersion = expectedVersion
        self.changes = changes
    }
}

/// One save, all or nothing: what a store must apply atomically.
public struct StoreSaveRequest: Sendable {
    /// New rows; their IDs are already permanent IDs of this store.
    public var insertedRows: [StoreRow] = []
    /// Changed properties of existing rows.
    public var updatedRows: [StoreRowUpdate] = []
    /// Deleted objects with the version the context last saw.
    public var deletedObjects: [(objectID: NSManagedObjectID, expectedVersion: Int64)] = []
    /// Whether a stale `expectedVersion` must fail the save with `NSManagedObjectMergeError`
    /// (133020), its details under `NSPersistentStoreSaveConflictsErrorKey`, rather than the
    /// newer save win. A context always asks for it and resolves the conflicts by its merge
    /// policy before saving again.
    public var checksVersions: Bool = false
    /// The saving context's merge policy, for stores that resolve conflicts themselves
    /// (uniqueness-constraint upserts with a trump policy, store-trump merges).
    public var mergePolicyType: NSMergePolicyType = .errorMergePolicyType
    /// The inserted objects whose uniqueness clash may become an upsert when
    /// `mergePolicyType` is not the error policy; nil allows every inserted object. A
    /// clash the request does not allow is reported (133021) so the context's merge
    /// policy resolves it: a context with a subclassed policy sends only the objects its
    /// policy accepted.
    public var upsertObjectIDs: Set<NSManagedObjectID>?
    /// For inserted rows of a batch insert: the slots an upsert writes into the row holding
    /// the key (the attributes the batch gave). A row not listed writes every slot.
    var upsertedSlots: [NSManagedObjectID: [Int]] = [:]
    /// Inserted rows that insert again an object read from the store (a merge policy's
    /// force insertion of an object another save deleted). Another context may have
    /// inserted the same object again between this save's attempts: its row is then
    /// replaced whole (index entries, join entries and blobs included), not written over.
    var reinsertedObjectIDs: Set<NSManagedObjectID> = []
    /// The saving context's `transactionAuthor`, for history.
    public var transactionAuthor: String?
    /// The saving context's `name`, for history.
    public var contextName: String?

    /// An empty save request.
    public init() {}

    /// Whether the request changes nothing.
    public var isEmpty: Bool { insertedRows.isEmpty && updatedRows.isEmpty && deletedObjects.isEmpty }

    /// Checks, before a store changes anything, that it may apply the request: it is not
    /// read-only and every inserted row has an ID of it.
    ///
    /// - Throws: `NSPersistentStoreSaveError` (134030) naming the problem.
    func checkApplicable(to store: NSPersistentStore) throws {
        if store.isReadOnly {
            throw CoreDataError.make(
                NSPersistentStoreSaveError, "the store at \(store.url?.path ?? "(no file)") was added read-only")
        }
        for inserted in insertedRows where inserted.objectID.persistentStore !== store {
            throw CoreDataError.make(
                NSPersistentStoreSaveError, "inserted row \(inserted.objectID) does not have an ID of this store")
        }
    }
}

/// What a store reports back from a save: the new version of each updated row.
/// Inserted rows start at version 1 and are not listed.
public struct StoreSaveResult: Sendable {
    /// The version of each updated row after the save.
    public var versions: [NSManagedObjectID: Int64]
    /// Inserted objects a store merged into an existing row (a uniqueness-constraint upsert
    /// under a trump merge policy): the inserted ID to the existing row's ID, which the
    /// object takes.
    public var replacedObjectIDs: [NSManagedObjectID: NSManagedObjectID] = [:]

    /// A result reporting `versions`.
    public init(versions: [NSManagedObjectID: Int64] = [:]) {
        self.versions = versions
    }
}
