// @Managed: typed properties of managed object subclasses, where Core Data uses
// @NSManaged (which needs the Objective-C runtime).
//
// The wrapper's static enclosing-instance subscript receives the storage key path,
// not the property's name. The name is found once per key path: a marker is written
// into that storage, the object is reflected with Mirror, and the child holding the
// marker names the property ("_age" -> "age"). The slot number is then cached per
// (key path, entity layout) pair, by identity. (Caching it in each object's storage
// was slower: reading and writing through a class key path costs more than the
// shared lookup, and most objects are touched only a few times.)
import Foundation
import Synchronization

/// A typed property of a managed object subclass, backed by the entity's property of the same name.
///
/// ```swift
/// final class Employee: NSManagedObject {
///     @Managed var name: String?
///     @Managed var age: Int16
///     @Managed var company: Company?
///     @Managed var projects: Set<Project>
/// }
/// ```
///
/// Attributes use their Swift type (optional or not); to-one relationships the
/// destination class, optional; to-many relationships `Set<Destination>`
/// (ordered: `NSOrderedSet`). Assigning a relationship keeps its inverse consistent.
/// A non-optional property reads the type's zero value while it has none.
@propertyWrapper
public struct Managed<Value>: ManagedStorage {
    /// Written only while the property's name is looked up (see ManagedPropertyNames).
    var probe: Int = 0

    /// A property backed by the entity's property of the same name.
    public init() {}

    /// Unavailable: `@Managed` works only on properties of `NSManagedObject` subclasses.
    @available(*, unavailable, message: "@Managed can only be applied to properties of NSManagedObject subclasses")
    public var wrappedValue: Value {
        get { fatalError("unreachable") }
        // swift-format-ignore
        set { fatalError("unreachable") }
    }

    /// Reads and writes the entity property backing the wrapped property of `object`.
    ///
    /// Inlinable so that the client module specializes it for its property's type:
    /// unspecialized, every read would look up `Optional<Value>`'s metadata at run time.
    @inlinable
    public static subscript<Object: NSManagedObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Managed<Value>>
    ) -> Value {
        get {
            let slot = ManagedPropertyNames.slot(of: storageKeyPath, in: object, valueType: Value.self).slot
            return object.typedValue(slot: slot, as: Value.self)
        }
        set {
            let entry = ManagedPropertyNames.entry(of: storageKeyPath, in: object, valueType: Value.self)
            let slot = entry.slot
            // The attribute's own type needs no conversion, check or inverse: stored as is,
            // in its typed case when it has one (chosen at compile time: no cast).
            if let typed = SlotValue.typed(newValue), object.storeTyped(typed, slot: slot) { return }
            // A to-one's destination class (or its optional) is one object reference: read
            // as such, with no cast through `Any` (checked once per key path and layout).
            if entry.isToOneReference {
                object.setManagedToOne(unsafeBitCast(newValue, to: NSManagedObject?.self), slot: slot)
                return
            }
            let isOptional = entry.isOptional
            if !isOptional, object.storeCanonical(newValue, slot: slot) { return }
            // Only an optional Value needs the (costlier) dynamic cast that unwraps it.
            let value: Any? = isOptional ? dynamicCast(newValue, to: Any?.self) ?? nil : newValue
            object.setTypedValue(value, slot: slot)
        }
    }

    @usableFromInline
    var probeSlot: Int {
        get { probe }
        set { probe = newValue }
    }

}

/// The wrapper storage, as Mirror sees it.
@usableFromInline
protocol ManagedStorage {
    var probeSlot: Int { get set }
}

/// The slots of one entity layout's `@Managed` properties by storage key path identity.
/// An entity has few properties, so a short list scanned costs less than hashing the key
/// path on every property access; and it is scanned without a lock: every `@Managed`
/// read and write looks its slot up here (under a mutex that cost ~150 instructions per
/// property access, as much as the rest of a read).
///
/// The list readers scan is a snapshot, published whole and never changed after: a new
/// entry publishes a longer copy (an entity has a handful of properties, so a layout
/// makes a handful of snapshots). A snapshot is one allocation, its count first, then its
/// pairs; every snapshot published lives as long as the cache, since a reader may still
/// be scanning an older one.
final class ManagedSlotCache: Sendable {
    private typealias Pair = (keyPath: ObjectIdentifier, entry: ManagedPropertyNames.Entry)

    /// The latest snapshot's address (0 before the first entry): an integer, as an atomic
    /// pointer is not Sendable.
    private let published = Atomic<UInt>(0)
    /// Every snapshot published, under the lock that orders the writers.
    private let snapshots = Mutex<[UnsafeMutableRawPointer]>([])

    private static var pairsOffset: Int {
        max(MemoryLayout<Int>.stride, MemoryLayout<Pair>.alignment)
    }

    deinit {
        // A pair is plain data (an ObjectIdentifier and an Entry of integers and flags):
        // freeing a snapshot needs no deinitialization of its pairs.
        snapshots.withLock { list in
            for snapshot in list { snapshot.deallocate() }
        }
    }

    func entry(for keyPath: ObjectIdentifier) -> ManagedPropertyNames.Entry? {
        guard let snapshot = UnsafeMutableRawPointer(bitPattern: published.load(ordering: .acquiring)) else {
            return nil
        }
        let count = snapshot.load(as: Int.self)
        let pairs = (snapshot + Self.pairsOffset).assumingMemoryBound(to: Pair.self)
        for index in 0..<count where pairs[index].keyPath == keyPath { return pairs[index].entry }
        return nil
    }

    func store(_ entry: ManagedPropertyNames.Entry, for keyPath: ObjectIdentifier) {
        snapshots.withLock { list in
            let current = UnsafeMutableRawPointer(bitPattern: published.load(ordering: .acquiring))
            let count = current?.load(as: Int.self) ?? 0
            let pairs = current.map { ($0 + Self.pairsOffset).assumingMemoryBound(to: Pair.self) }
            if let pairs, (0..<count).contains(where: { pairs[$0].keyPath == keyPath }) { return }
            let next = UnsafeMutableRawPointer.allocate(
                byteCount: Self.pairsOffset + (count + 1) * MemoryLayout<Pair>.stride,
                alignment: max(MemoryLayout<Int>.alignment, MemoryLayout<Pair>.alignment))
            next.storeBytes(of: count + 1, as: Int.self)
            let nextPairs = (next + Self.pairsOffset).bindMemory(to: Pair.self, capacity: count + 1)
            if let pairs { nextPairs.initialize(from: pairs, count: count) }
            (nextPairs + count).initialize(to: (keyPath, entry))
            list.append(next)
            // Released only once whole: a reader acquiring it sees every pair.
            published.store(UInt(bitPattern: next), ordering: .releasing)
        }
    }
}

/// Storage key path to property name (found once per key path with Mirror), and to
/// slot number per entity layout (cached in the layout's ``ManagedSlotCache``).
@usableFromInline
enum ManagedPropertyNames {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var names: [AnyKeyPath: String] = [:]
    /// Keeps every key path cached by identity alive, so its identifier stays unique.
    nonisolated(unsafe) private static var retained: [AnyObject] = []

    /// A cached slot, and what the property's type is.
    @usableFromInline
    struct Entry: Sendable {
        @usableFromInline let slot: Int
        /// Whether the property's type is an Optional.
        @usableFromInline let isOptional: Bool
        /// Whether the slot is a to-one relationship and the property's type a managed
        /// object class or its optional: a value of it is one object reference (or nil).
        @usableFromInline let isToOneReference: Bool
    }
    private static let marker = Int.min + 7

    /// The slot of the property stored at `storage` in `object`'s entity.
    @usableFromInline
    static func slot<Object: NSManagedObject, Storage: ManagedStorage, Value>(
        of storage: ReferenceWritableKeyPath<Object, Storage>, in object: Object, valueType: Value.Type
    ) -> (slot: Int, isOptional: Bool) {
        let known = entry(of: storage, in: object, valueType: valueType)
        return (known.slot, known.isOptional)
    }

    /// The cached entry of the property stored at `storage` in `object`'s entity.
    @usableFromInline
    static func entry<Object: NSManagedObject, Storage: ManagedStorage, Value>(
        of storage: ReferenceWritableKeyPath<Object, Storage>, in object: Object, valueType: Value.Type
    ) -> Entry {
        let cache = object.layout.managedSlots
        if let known = cache.entry(for: ObjectIdentifier(storage)) { return known }
        let name = name(of: storage, in: object)
        guard let slot = object.layout.slotsByName[name] else {
            preconditionFailure(
                "OpenCoreData: @Managed var \(name) of \(type(of: object)): entity "
                    + "'\(object.entity.name ?? "?")' has no property named '\(name)'")
        }
        lock.lock()
        retained.append(storage)
        lock.unlock()
        let isOptional = Value.self is ExpressibleByNilLiteral.Type
        let isToOne = object.layout.relationshipBySlot[slot].map { !$0.isToMany } ?? false
        let isReference =
            Value.self is ManagedObjectReference.Type
            && MemoryLayout<Value>.size == MemoryLayout<NSManagedObject?>.size
        let entry = Entry(slot: slot, isOptional: isOptional, isToOneReference: isToOne && isReference)
        cache.store(entry, for: ObjectIdentifier(storage))
        return entry
    }

    static func name<Object: NSManagedObject, Storage: ManagedStorage>(
        of storage: ReferenceWritableKeyPath<Object, Storage>, in object: Object
    ) -> String {
        lock.lock()
        let known = names[storage]
        lock.unlock()
        if let known { return known }
        let saved = object[keyPath: storage].probeSlot
        object[keyPath: storage].probeSlot = marker
        defer { object[keyPath: storage].probeSlot = saved }
        var mirror: Mirror? = Mirror(reflecting: object)
        while let current = mirror {
            for child in current.children {
                guard let label = child.label, let value = child.value as? any ManagedStorage,
                    value.probeSlot == marker
                else { continue }
                let name = label.hasPrefix("_") ? String(label.dropFirst()) : label
                lock.lock()
                names[storage] = name
                lock.unlock()
                return name
            }
            mirror = current.superclassMirror
        }
        preconditionFailure("OpenCoreData: could not find the @Managed property of \(type(of: object)) by reflection")
    }
}

/// A managed object class, or the optional of one: a value is one object reference
/// (or nil), the layout of `NSManagedObject?`.
protocol ManagedObjectReference {}
extension NSManagedObject: ManagedObjectReference {}
extension Optional: ManagedObjectReference where Wrapped: NSManagedObject {}

/// `Set<Destination>` for a managed object class `Destination`: the type of a `@Managed`
/// unordered to-many.
protocol ManagedObjectSet {
    /// `set` as a set of this type when every member is a `Destination`; nil otherwise.
    static func reinterpreting(_ set: Set<NSManagedObject>) -> Self?
}

extension Set: ManagedObjectSet where Element: NSManagedObject {
    static func reinterpreting(_ set: Set<NSManagedObject>) -> Set<Element>? {
        for member in set where !(member is Element) { return nil }
        // The same storage under the subclass's element type, shared, not copied: a set
        // of class references is laid out, hashed (NSObject's `hash`, which subclasses
        // inherit) and compared (`isEqual`) alike for every element class, and a
        // mutation of either copy first copies the storage it shares.
        return unsafeBitCast(set, to: Set<Element>.self)
    }
}

/// Types with a zero value that a non-optional `@Managed` property reads while unset.
protocol ManagedZeroValue {
    static var managedZero: Any { get }
}

extension Int16: ManagedZeroValue { static var managedZero: Any { Int16(0) } }
extension Int32: ManagedZeroValue { static var managedZero: Any { Int32(0) } }
extension Int64: ManagedZeroValue { static var managedZero: Any { Int64(0) } }
extension Int: ManagedZeroValue { static var managedZero: Any { 0 } }
extension Double: ManagedZeroValue { static var managedZero: Any { 0.0 } }
extension Float: ManagedZeroValue { static var managedZero: Any { Float(0) } }
extension Bool: ManagedZeroValue { static var managedZero: Any { false } }
extension String: ManagedZeroValue { static var managedZero: Any { "" } }
extension Decimal: ManagedZeroValue { static var managedZero: Any { Decimal(0) } }
extension Data: ManagedZeroValue { static var managedZero: Any { Data() } }
extension Date: ManagedZeroValue { static var managedZero: Any { Date(timeIntervalSinceReferenceDate: 0) } }
extension UUID: ManagedZeroValue {
    static var managedZero: Any { UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) }
}
extension Set: ManagedZeroValue { static var managedZero: Any { Set<Element>() } }
extension Array: ManagedZeroValue { static var managedZero: Any { [Element]() } }
extension NSOrderedSet: ManagedZeroValue { static var managedZero: Any { NSOrderedSet() } }

/// `value as? T` where the compiler cannot see `T` (it would fold a literal `as? Any?`).
/// A cast to `Optional<Any>` flattens an optional value (nil stays nil); it is cheaper
/// than a cast to a protocol existential.
@usableFromInline @inline(__always)
func dynamicCast<T>(_ value: some Any, to type: T.Type) -> T? {
    value as? T
}

extension NSManagedObject {
    /// The value of `slot` as `Value` for a `@Managed` property.
    @inlinable
    func typedValue<Value>(slot: Int, as type: Value.Type) -> Value {
        // An attribute's stored value is its public value (only relationships resolve or wrap):
        // read it in place; a typed case of `Value`'s type is returned without a cast.
        let stored = storedAttributeSlot(slot)
        if let value = stored.typed(as: Value.self) { return value }
        if let any = stored.anyValue, let value = any as? Value { return value }
        return typedValueSlowly(slot: slot, as: type)
    }

    /// The stored value of attribute `slot` (the fault fired first); null for a relationship
    /// slot or no value.
    @usableFromInline
    func storedAttributeSlot(_ slot: Int) -> SlotValue {
        fireFaultIfNeeded(reading: slot)
        guard slot < values.count, slot < layout.relationshipBySlot.count, layout.relationshipBySlot[slot] == nil
        else { return .null }
        return values.storage[slot]
    }

    /// ``typedValue(slot:as:)`` for relationships, nil values and conversions.
    @usableFromInline
    func typedValueSlowly<Value>(slot: Int, as type: Value.Type) -> Value {
        // A to-many read as `Set<Destination>`: the resolved set handed out as it is, not
        // cast member by member into a new set (which rehashed the whole relationship on
        // every read).
        if slot < layout.relationshipBySlot.count, layout.relationshipBySlot[slot]?.isToMany == true,
            let setType = Value.self as? any ManagedObjectSet.Type, let set = resolvedObjectSet(slot),
            let typed = setType.reinterpreting(set) as? Value
        {
            return typed
        }
        let raw = publicValue(slot)
        if let value = raw as? Value { return value }
        if raw == nil, let zero = (Value.self as? ManagedZeroValue.Type)?.managedZero as? Value { return zero }
        if let relationship = layout.relationshipBySlot[slot], relationship.isToMany,
            let zero = (Value.self as? ManagedZeroValue.Type)?.managedZero as? Value
        {
            return zero
        }
        return substituteValue(slot: slot, holding: raw, as: type)
    }

    /// What a `@Managed` read returns for a value that is not a `Value` (`setValue(_:forKey:)`
    /// accepts one; the save then fails with 1550): the attribute's default value when it is
    /// a `Value`, else nil for an optional property and the type's zero value for another,
    /// with a one-time diagnostic naming the property. Core Data's accessor would hand back
    /// the wrong object, which Swift cannot hold in a `Value`.
    ///
    /// - Precondition: `Value` is optional, has a zero value or is the type of the
    ///   attribute's default value (a non-optional property of another type has no value to give).
    @usableFromInline
    func substituteValue<Value>(slot: Int, holding raw: Any?, as type: Value.Type) -> Value {
        let name = layout.properties[slot].name
        let held = raw.map { "a \(Swift.type(of: $0))" } ?? "no value"
        let substitute: Value? =
            (layout.attributeBySlot[slot]?.defaultValue as? Value)
            ?? ((Value.self as? any ExpressibleByNilLiteral.Type)?.init(nilLiteral: ()) as? Value)
            ?? ((Value.self as? ManagedZeroValue.Type)?.managedZero as? Value)
        guard let substitute else {
            preconditionFailure(
                "OpenCoreData: @Managed var \(name): \(Value.self) of \(entity.name ?? "?") holds \(held), "
                    + "which is not a \(Value.self), and the type has no default or zero value to read instead")
        }
        ObjectDiagnostics.report(
            "@Managed var \(name): \(Value.self) of \(entity.name ?? "?") holds \(held), which is not a "
                + "\(Value.self); it reads as \(String(describing: substitute)) (the save fails with 1550 until "
                + "the value is fixed; readValue(forKey:) returns the value as stored)",
            once: "wrong type \(entity.name ?? "?").\(name) \(Value.self) \(held)")
        return substitute
    }

    /// Sets the to-one `slot` from a `@Managed` property to `destination`, keeping the
    /// inverse (as ``setTypedValue(_:slot:)`` does for an object given as `Any`).
    @usableFromInline
    func setManagedToOne(_ destination: NSManagedObject?, slot: Int) {
        if let destination, let relationship = layout.relationshipBySlot[slot] {
            do {
                try checkDestination(destination, slot: slot, relationship)
            } catch {
                preconditionFailure(
                    "OpenCoreData: @Managed var \(layout.properties[slot].name): \(error.localizedDescription)")
            }
        }
        setToOne(slot, destination)
    }

    /// Sets `slot` from a `@Managed` property (`value` already unwrapped when optional).
    @usableFromInline
    func setTypedValue(_ value: Any?, slot: Int) {
        do {
            try assign(value, slot: slot, strict: false)
        } catch {
            preconditionFailure(
                "OpenCoreData: @Managed var \(layout.properties[slot].name): \(error.localizedDescription)")
        }
    }
}
