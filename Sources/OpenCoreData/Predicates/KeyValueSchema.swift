// The resolution hook between compiled predicates / sort descriptors and the object
// layer. A predicate compiled for a schema resolves each key once, at compile time,
// to a slot index; evaluating it against a record of that schema reads slots by
// index — no string lookups per object. Records of another schema, and values that
// are not records at all, go through `KeyValueReadable` / dictionaries as usual.
//
// The fetch path, in short:
//
//   let filter = try request.predicate?.compiled(for: layout)   // parse error, unknown key: thrown here
//   let order = try NSSortDescriptor.compiled(request.sortDescriptors ?? [], for: layout)
//   let matches = try rows.filter { try filter?.evaluate(record: $0) ?? true }
//   let sorted = try order.sort(records: matches)

/// A layout of named properties in numbered slots — for the object layer, an entity.
///
/// The object layer adopts this for its entity descriptions (or a per-entity layout
/// object) so that `NSPredicate.compiled(for:)` and `NSSortDescriptor.compiled(_:for:)`
/// resolve keys once:
///
/// ```swift
/// final class EntityLayout: KeyValueSchema {
///     let schemaName = "Person"
///     func slot(forKey key: String) -> KeyValueSlot? {
///         key == "age" ? KeyValueSlot(index: 0, kind: .attribute) : nil
///     }
/// }
/// ```
public protocol KeyValueSchema: AnyObject {
    /// The name used in error messages (the entity name).
    var schemaName: String { get }
    /// The slot holding `key`, or nil when the schema has no such property (an unknown key).
    func slot(forKey key: String) -> KeyValueSlot?

    /// Whether records of this schema hold every slot of `schema` at the same index, so a
    /// predicate compiled for `schema` may read them by slot — a sub-entity's layout answers
    /// true for its super-entity's. The default answers false (records are read by key).
    func sharesSlots(with schema: any KeyValueSchema) -> Bool
}

extension KeyValueSchema {
    /// False: only records of the very schema a predicate was compiled for are read by slot.
    public func sharesSlots(with schema: any KeyValueSchema) -> Bool { false }
}

/// Whether a record of `recordSchema` can be read by slots resolved for `compiledSchema`.
func slotsMatch(_ recordSchema: any KeyValueSchema, _ compiledSchema: any KeyValueSchema) -> Bool {
    recordSchema === compiledSchema || recordSchema.sharesSlots(with: compiledSchema)
}

/// Where a property lives in a `KeyValueSlotReadable` record and what it holds.
public struct KeyValueSlot {
    /// What a slot holds.
    public enum Kind {
        /// An attribute value (a Swift value or nil).
        case attribute
        /// A to-one relationship: another record (of `destination`, when known) or nil.
        case toOne(destination: (any KeyValueSchema)?)
        /// A to-many relationship: a Swift `Set`, an array or an `NSOrderedSet` of records.
        case toMany(destination: (any KeyValueSchema)?)
    }

    /// The index passed to `KeyValueSlotReadable.readValue(atSlot:)`.
    public let index: Int
    /// What the slot holds.
    public let kind: Kind

    /// A slot at `index` holding `kind`.
    public init(index: Int, kind: Kind) {
        self.index = index
        self.kind = kind
    }
}

/// A record whose properties are read by slot index; managed objects and store rows adopt it.
///
/// Compiled predicates check `keyValueSchema === schema` (one pointer comparison) before
/// reading by slot, so a record of another schema is still read correctly, by key.
public protocol KeyValueSlotReadable: KeyValueReadable {
    /// The layout of this record's slots.
    var keyValueSchema: any KeyValueSchema { get }
    /// The value in `slot` (an index the schema returned), nil when it has none.
    /// Relationships come as another record (to-one) or a collection of records (to-many).
    func readValue(atSlot slot: Int) -> Any?
}

/// A value that compares in predicates by an identity rather than by object equality.
///
/// The object layer adopts it so that `company == %@` matches whether the argument is the
/// managed object or its object ID, as Core Data allows: a managed object answers its
/// `objectID`, an object ID answers itself. Two values compare equal when both adopt this
/// protocol and their identities are equal.
public protocol PredicateIdentifiable {
    /// The identity compared by `==`, `!=`, `IN` and `CONTAINS`.
    var predicateIdentity: AnyHashable { get }
}
