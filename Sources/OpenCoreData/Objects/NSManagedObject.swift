// Managed objects: the live, context-bound form of a stored row.
//
// An object keeps one value per property slot (see EntityLayout): attributes in
// their canonical Swift type, a to-one relationship as its destination object, a
// to-many one as Set<NSManagedObject> (ordered: [NSManagedObject]), and a
// relationship not yet loaded as an UnresolvedRelationship, each in its typed case
// of SlotValue (no `Any` box per value; SlotValues.swift). `committed` is the state
// last saved or fetched; `dirtySlots` the slots changed since.
import Foundation

/// A relationship value not yet turned into objects: resolved on first access.
@usableFromInline
final class UnresolvedRelationship {
    /// The destinations, or nil when the store computes them on demand.
    var objectIDs: [NSManagedObjectID]? {
        if let destination { return [destination] }
        return list
    }
    /// The one destination of a to-one read from a store: kept without an array, since
    /// every fetched object holds one of these per to-one and most are never resolved.
    let destination: NSManagedObjectID?
    private let list: [NSManagedObjectID]?
    /// Destinations the context added or removed since (PendingToManyEdits.swift), by
    /// identity; the two never share an object. Object sets, not dictionaries: a delete
    /// of thousands of employees records one removal each, and SipHash per entry cost more
    /// than the rest of the edit.
    /// Unchecked exclusivity, as the object's own values: confined to the context's queue.
    @exclusivity(unchecked) var added = ObjectSet()
    @exclusivity(unchecked) var removed = ObjectSet()

    init(objectIDs: [NSManagedObjectID]?) {
        self.destination = nil
        self.list = objectIDs
    }

    /// A relationship naming the one object `destination` (what a stored to-one holds).
    init(destination: NSManagedObjectID) {
        self.destination = destination
        self.list = nil
    }

    /// `value` when it is an unresolved relationship. The exact type is compared first:
    /// on Linux, casting a set to a class bridges the whole set to an NSSet before failing,
    /// which made every to-many edit cost as much as copying the relationship.
    @inline(__always)
    static func from(_ value: Any?) -> UnresolvedRelationship? {
        guard let value, ObjectIdentifier(type(of: value)) == ObjectIdentifier(UnresolvedRelationship.self) else {
            return nil
        }
        return value as? UnresolvedRelationship
    }
}

// The hot stored properties below skip dynamic exclusivity checks: an object is
// confined to its context's queue and the library never holds overlapping accesses.

/// An object of an entity, registered in a managed object context.
///
/// Subclass it with `@Managed` properties for typed access, or use it directly with
/// key-value coding:
///
/// ```swift
/// final class Person: NSManagedObject {
///     @Managed var name: String?
///     @Managed var age: Int16
/// }
/// let person = Person(context: context)
/// person.name = "Ada"
/// person.setValue(36, forKey: "age")
/// ```
///
/// An object is confined to its context: use it only on the context's queue.
open class NSManagedObject: NSObject, NSFetchRequestResult, KeyValueReadable {
    /// The entity describing the object.
    public let entity: NSEntityDescription
    let layout: EntityLayout
    private var storedObjectID: NSManagedObjectID?
    /// The context the object is registered in; nil once deleted and saved, or never inserted.
    public internal(set) var managedObjectContext: NSManagedObjectContext? {
        get { contextHandle?.target }
        set { contextHandle = newValue?.referenceHandle }
    }
    /// The context's handle instead of a `weak` reference (WeakHandle.swift).
    @exclusivity(unchecked) private var contextHandle: WeakHandle<NSManagedObjectContext>?

    /// Whether the object is registered in `context`, as `managedObjectContext === context`
    /// answers while `context` is alive (the caller holds it): the handles compared, no lock
    /// and no retain of the context, which a fault batch paid per member.
    @inline(__always)
    func isRegistered(in context: NSManagedObjectContext) -> Bool { contextHandle === context.referenceHandle }

    /// Current values by slot (empty while a fault).
    @exclusivity(unchecked) var values: SlotValues
    /// Values as last saved or fetched (nil for an object never saved).
    @exclusivity(unchecked) var committed: SlotValues?
    /// Slots changed since `committed`; empty until the first change.
    @exclusivity(unchecked) var dirtySlots: [Bool] = []
    /// The row version the object's values came from (optimistic locking).
    @exclusivity(unchecked) var version: Int64 = 0

    /// Inserted, deleted, a fault...: set only by the context's ObjectLifecycle.
    @exclusivity(unchecked) var state = ObjectState()
    /// Where a fault's values come from when it fires, if not a lookup of its own (Faulting.swift).
    @exclusivity(unchecked) var pendingFault: PendingFault?

    // MARK: Creating

    /// Creates an object of `entity` and, when `context` is given, inserts it there.
    ///
    /// This is the designated initializer; subclasses inherit it. Core Data calls it
    /// to create objects of your class, and so does this implementation.
    public required init(entity: NSEntityDescription, insertInto context: NSManagedObjectContext?) {
        self.entity = entity
        self.layout = entity.layout
        self.values = SlotValues()
        super.init()
        // Without a context the object starts as a fault (ObjectState's initial value) that
        // loads its defaults on first access: contexts create objects this way and fill in
        // their values themselves.
        if let context { context.insert(self) }
    }

    /// Creates an object of this class's entity in `context`'s model and inserts it.
    ///
    /// Required, so generic code can create objects of any subclass:
    ///
    /// ```swift
    /// func create<T: NSManagedObject>(_ type: T.Type, in context: NSManagedObjectContext) -> T {
    ///     T(context: context)
    /// }
    /// ```
    ///
    /// - Precondition: the model of `context`'s coordinator has an entity whose
    ///   `managedObjectClassName` names this class (Core Data raises otherwise).
    public required convenience init(context: NSManagedObjectContext) {
        let type = Swift.type(of: self)
        guard let entity = context.entity(forClass: type) else {
            preconditionFailure(
                "OpenCoreData: \(type)(context:): no entity of the context's model has managedObjectClassName "
                    + "'\(NSStringFromClass(type))'; set it with NSStringFromClass(\(type).self)")
        }
        self.init(entity: entity, insertInto: context)
    }

    /// A fetch request for this class's entity, untyped: the form Core Data's generated
    /// classes inherit, chosen where the result type says so.
    ///
    /// ```swift
    /// let request: NSFetchRequest<NSFetchRequestResult> = Person.fetchRequest()
    /// let delete = NSBatchDeleteRequest(fetchRequest: request)
    /// ```
    ///
    /// A class's own typed `fetchRequest() -> NSFetchRequest<Person>` (as Xcode generates)
    /// is chosen where the type is `NSFetchRequest<Person>` or not given.
    ///
    /// - Precondition: as ``entity()``: exactly one entity of the models in use names this class.
    open class func fetchRequest() -> NSFetchRequest<NSFetchRequestResult> {
        // By name: the executing context resolves it in its own model's instance.
        NSFetchRequest<NSFetchRequestResult>(entityName: entity().name ?? "")
    }

    /// The entity whose objects are of this class, in the models coordinators use.
    ///
    /// - Precondition: exactly one entity of the process's models in use names this class
    ///   (models built again per use — different instances of the same model — count once
    ///   each: keep one model instance per process, as Core Data recommends).
    open class func entity() -> NSEntityDescription {
        let found = ClassEntityRegistry.entities(for: self)
        let distinct = Set(found.map { $0.name ?? "" })
        guard let entity = found.last, distinct.count == 1 else {
            preconditionFailure(
                "OpenCoreData: \(self).entity(): "
                    + (found.isEmpty
                        ? "no model in use has an entity with managedObjectClassName '\(NSStringFromClass(self))'"
                        : "several entities use this class (\(distinct.sorted().joined(separator: ", ")))"))
        }
        return entity
    }

    // MARK: Identity and state

    /// The object's ID: temporary until the object is saved, then permanent.
    public var objectID: NSManagedObjectID {
        if let storedObjectID { return storedObjectID }
        let temporary = NSManagedObjectID.temporary(for: entity)
        storedObjectID = temporary
        return temporary
    }

    func setObjectID(_ objectID: NSManagedObjectID) {
        storedObjectID = objectID
    }

    /// Whether the object was inserted and not yet saved.
    public var isInserted: Bool { state.isInserted }
    /// Whether the object has unsaved changes to its values (and is not inserted or deleted).
    public var isUpdated: Bool { !state.isInserted && !state.isDeleted && hasDirtySlots }
    /// Whether the object will be deleted at the next save.
    public var isDeleted: Bool { state.isDeleted }
    /// Whether the object's values are not loaded yet.
    public var isFault: Bool { state.isFault }
    /// Whether the object is inserted, updated or deleted.
    public var hasChanges: Bool { state.isInserted || state.isDeleted || hasDirtySlots }
    /// Whether the object has changes that are saved (not only transient ones).
    public var hasPersistentChangedValues: Bool {
        state.isInserted || state.isDeleted
            || dirtySlots.indices.contains { dirtySlots[$0] && !layout.properties[$0].isTransient }
    }

    var hasDirtySlots: Bool { dirtySlots.contains(true) }

    /// Whether the relationship `key` is not loaded yet (its destinations are faults to fetch).
    public func hasFault(forRelationshipNamed key: String) -> Bool {
        guard let slot = layout.slotsByName[key] else { return false }
        return state.isFault || UnresolvedRelationship.from(values[slot]) != nil
    }

    // MARK: Validation (override to add rules; call super)

    /// Checks the object before it is first saved. Override to add rules; call super.
    ///
    /// - Throws: a validation error (codes 1550-1680); several at once as
    ///   `NSValidationMultipleErrorsError` (1560) with the list under `NSDetailedErrorsKey`.
    open func validateForInsert() throws {
        if let error = CoreDataError.combining(propertyValidationErrors()) { throw error }
    }

    /// Checks the object before changes to it are saved. Override to add rules; call super.
    ///
    /// - Throws: as ``validateForInsert()``.
    open func validateForUpdate() throws {
        if let error = CoreDataError.combining(propertyValidationErrors()) { throw error }
    }

    /// Checks that the object may be deleted: no deny rule has destinations left.
    ///
    /// - Throws: `NSValidationRelationshipDeniedDeleteError` (1600) naming the relationship.
    open func validateForDelete() throws {
        // Only the deny slots, from the layout: reading each relationship's rule cost a
        // dynamically dispatched property read per relationship of every deleted object.
        let denySlots = layout.denySlots
        if denySlots.isEmpty { return }
        var errors: [Error] = []
        for slot in denySlots {
            guard let relationship = layout.relationshipBySlot[slot] else { continue }
            let remaining = destinations(slot).filter { !$0.isDeleted }
            if !remaining.isEmpty {
                errors.append(
                    CoreDataError.validation(
                        NSValidationRelationshipDeniedDeleteError,
                        "cannot delete \(entity.name ?? "object"): its '\(relationship.name)' relationship has the "
                            + "deny delete rule and still holds \(remaining.count) object(s)",
                        object: self, key: relationship.name, value: remaining))
            }
        }
        if let error = CoreDataError.combining(errors) { throw error }
    }

    // MARK: Life cycle hooks (override them; call super)

    /// Called once when the object is inserted into a context: set initial values here.
    open func awakeFromInsert() {}
    /// Called when the object's values are loaded from a store or parent context.
    open func awakeFromFetch() {}
    /// Called when the object is refreshed or turned back into a fault.
    open func awake(fromSnapshotEvents flags: NSSnapshotEventType) {}
    /// Called before the object is saved.
    open func willSave() {}
    /// Called after the object was saved.
    open func didSave() {}
    /// Called before the object's delete rules are applied.
    open func prepareForDeletion() {}
    /// Called before the object becomes a fault.
    open func willTurnIntoFault() {}
    /// Called after the object became a fault.
    open func didTurnIntoFault() {}

    /// Announces a change of `key` (kept for Core Data source compatibility; changes are tracked anyway).
    open func willChangeValue(forKey key: String) {}
    /// Announces the end of a change of `key` (kept for Core Data source compatibility).
    open func didChangeValue(forKey key: String) {}
    /// Announces an access to `key` (kept for Core Data source compatibility).
    open func willAccessValue(forKey key: String?) {}
    /// Announces the end of an access to `key` (kept for Core Data source compatibility).
    open func didAccessValue(forKey key: String?) {}

    /// Managed objects are equal only to themselves (identity), as in Core Data.
    public override func isEqual(_ object: Any?) -> Bool {
        // A class cast, not `as AnyObject` (which bridges): sets of objects compare on every probe.
        // Sets pass the object as an `NSObject`: compared by identity with no cast at all.
        let address = Unmanaged.passUnretained(self).toOpaque()
        if let other = objectAddress(in: object, typedAs: NSObject.self) { return other == address }
        if let other = objectAddress(in: object, typedAs: NSManagedObject.self) { return other == address }
        guard let object else { return false }
        if let identity = openedObjectIdentity(object) { return identity == ObjectIdentifier(self) }
        return (object as? NSManagedObject) === self
    }

    /// A hash of the object's identity: its address (sets hash it again; hashing it here
    /// too would only cost time).
    public override var hash: Int {
        Int(bitPattern: ObjectIdentifier(self))
    }

    open override var description: String {
        var text = "<\(entity.name ?? "?") \(objectID.uriRepresentation().absoluteString)"
        if state.isFault { return text + " fault>" }
        let pairs = layout.attributes.map { attribute -> String in
            let slot = layout.slotsByName[attribute.name] ?? 0
            return
                "\(attribute.name)=\(values.indices.contains(slot) ? String(describing: values[slot] ?? "nil") : "?")"
        }
        text += " " + pairs.joined(separator: ", ") + ">"
        return text
    }
}

/// The identity of the object `value` holds when it is typed `NSObject` or
/// `NSManagedObject` (how sets of objects pass it to `isEqual(_:)`); nil otherwise.
@inline(__always)
private func openedObjectIdentity(_ value: Any) -> ObjectIdentifier? {
    _openExistential(value, do: objectIdentityOfOpened)
}

/// A free function: this toolchain's compiler crashes on `_openExistential` with a closure.
private func objectIdentityOfOpened<Value>(_ value: Value) -> ObjectIdentifier? {
    // Each reinterpretation follows a check that `Value` is exactly that class type.
    guard Value.self == NSObject.self || Value.self == NSManagedObject.self else { return nil }
    return ObjectIdentifier(unsafeBitCast(value, to: AnyObject.self))
}

extension NSManagedObject: KeyValueSlotReadable, PredicateIdentifiable {
    /// The object's entity layout: predicates compiled for it read this object by slot.
    public var keyValueSchema: any KeyValueSchema { layout }

    /// The value in `slot`, as ``value(forKey:)`` returns it.
    public func readValue(atSlot slot: Int) -> Any? {
        publicValue(slot)
    }

    /// Objects compare in predicates by object ID, so an object and its ID match.
    public var predicateIdentity: AnyHashable { objectID }
}

extension NSManagedObjectID: PredicateIdentifiable {
    /// An object ID compares in predicates as itself.
    public var predicateIdentity: AnyHashable { self }
}

/// What changed in an object's snapshot when it awakes.
public struct NSSnapshotEventType: OptionSet, Sendable {
    /// The raw bit mask.
    public let rawValue: UInt
    /// Creates a snapshot event set from its raw value.
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// An undo of an insertion.
    public static let undoInsertion = NSSnapshotEventType(rawValue: 1 << 1)
    /// An undo of a deletion.
    public static let undoDeletion = NSSnapshotEventType(rawValue: 1 << 2)
    /// An undo of an update.
    public static let undoUpdate = NSSnapshotEventType(rawValue: 1 << 3)
    /// A rollback.
    public static let rollback = NSSnapshotEventType(rawValue: 1 << 4)
    /// A refresh.
    public static let refresh = NSSnapshotEventType(rawValue: 1 << 5)
    /// A merge policy resolution.
    public static let mergePolicy = NSSnapshotEventType(rawValue: 1 << 6)
}
