// Typed slot storage: a managed object's values without an `Any` box per value.
//
// Each slot holds a SlotValue: the common attribute types (integers, Double, Bool,
// String, Date, UUID, Data) and the relationship forms (an object, a set or array of
// objects, destinations not yet resolved) in their own case, anything else
// (transformables, Decimal, Float, URL, a value of the wrong type set through
// key-value coding) boxed once in `.other` with its exact type kept. The `Any?` view
// (SlotValues' subscript) gives back exactly the value stored, type for type, so code
// that reads and writes `Any?` sees no difference; the hot paths (`@Managed` accessors,
// loading a fetched row, encoding a row at save) use the cases directly, with no
// dynamic cast, existential copy or metadata lookup per value.
import Foundation

/// One slot's value (see the file comment).
@usableFromInline
enum SlotValue {
    case null
    case int16(Int16)
    case int32(Int32)
    case int64(Int64)
    case double(Double)
    case bool(Bool)
    case string(String)
    case date(Date)
    case uuid(UUID)
    case data(Data)
    case object(NSManagedObject)
    case objects(Set<NSManagedObject>)
    case orderedObjects([NSManagedObject])
    case unresolved(UnresolvedRelationship)
    case other(SlotValueBox)

    /// `value` in its case, its exact type kept.
    @usableFromInline
    init(_ value: Any?) {
        guard let value else {
            self = .null
            return
        }
        self = openedSlotValue(value)
    }

    /// The value as `Any?`, of the type it was stored with.
    @usableFromInline
    var anyValue: Any? {
        switch self {
        case .null: nil
        case .int16(let value): value
        case .int32(let value): value
        case .int64(let value): value
        case .double(let value): value
        case .bool(let value): value
        case .string(let value): value
        case .date(let value): value
        case .uuid(let value): value
        case .data(let value): value
        case .object(let value): value
        case .objects(let value): value
        case .orderedObjects(let value): value
        case .unresolved(let value): value
        case .other(let box): box.value
        }
    }

    /// Whether the slot holds no value.
    var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The stored form of an attribute value whose case is `type`'s canonical type (as
    /// `StoreValue(canonical:of:)` gives it); nil for any other value.
    func canonicalStoreValue(of type: NSAttributeType) -> StoreValue? {
        attributeType == type ? attributeStoreValue : nil
    }

    /// The attribute type whose canonical Swift type this case holds; nil for the cases
    /// that are not attribute values of a typed case.
    private var attributeType: NSAttributeType? {
        switch self {
        case .string: .stringAttributeType
        case .int16: .integer16AttributeType
        case .int32: .integer32AttributeType
        case .int64: .integer64AttributeType
        case .double: .doubleAttributeType
        case .bool: .booleanAttributeType
        case .date: .dateAttributeType
        case .data: .binaryDataAttributeType
        case .uuid: .UUIDAttributeType
        default: nil
        }
    }

    /// The stored form of a typed attribute case; nil for every other case.
    var attributeStoreValue: StoreValue? {
        switch self {
        case .string(let value): .string(value)
        case .int16(let value): .integer(Int64(value))
        case .int32(let value): .integer(Int64(value))
        case .int64(let value): .integer(value)
        case .double(let value): .double(value)
        case .bool(let value): .boolean(value)
        case .date(let value): .date(value)
        case .data(let value): .binary(value)
        case .uuid(let value): .uuid(value)
        default: nil
        }
    }

    /// The value as `Value` (or `Optional<Value>`) when its case holds exactly that type:
    /// specialized for one `Value`, all but one comparison folds away, leaving no cast.
    @inlinable @inline(__always)
    func typed<Value>(as type: Value.Type) -> Value? {
        switch self {
        case .int16(let value): SlotValue.reinterpret(value, as: type)
        case .int32(let value): SlotValue.reinterpret(value, as: type)
        case .int64(let value): SlotValue.reinterpret(value, as: type)
        case .double(let value): SlotValue.reinterpret(value, as: type)
        case .bool(let value): SlotValue.reinterpret(value, as: type)
        case .string(let value): SlotValue.reinterpret(value, as: type)
        case .date(let value): SlotValue.reinterpret(value, as: type)
        case .uuid(let value): SlotValue.reinterpret(value, as: type)
        case .data(let value): SlotValue.reinterpret(value, as: type)
        default: nil
        }
    }

    @inlinable @inline(__always)
    static func reinterpret<Stored, Value>(_ value: Stored, as type: Value.Type) -> Value? {
        // Each reinterpretation follows a check that the two types are the same.
        if Value.self == Stored.self { return unsafeBitCast(value, to: Value.self) }
        if Value.self == Stored?.self { return unsafeBitCast(Stored?.some(value), to: Value.self) }
        return nil
    }

    /// `value`'s case when `Value` (or the `Wrapped` of an optional `Value`, holding a
    /// value) is one of the typed cases' types; nil otherwise (nil values included).
    @inlinable @inline(__always)
    static func typed<Value>(_ value: Value) -> SlotValue? {
        if let value = unwrap(value, as: String.self) { return .string(value) }
        if let value = unwrap(value, as: Int64.self) { return .int64(value) }
        if let value = unwrap(value, as: Int16.self) { return .int16(value) }
        if let value = unwrap(value, as: Int32.self) { return .int32(value) }
        if let value = unwrap(value, as: Double.self) { return .double(value) }
        if let value = unwrap(value, as: Bool.self) { return .bool(value) }
        if let value = unwrap(value, as: Date.self) { return .date(value) }
        if let value = unwrap(value, as: UUID.self) { return .uuid(value) }
        if let value = unwrap(value, as: Data.self) { return .data(value) }
        return nil
    }

    @inlinable @inline(__always)
    static func unwrap<Value, Stored>(_ value: Value, as type: Stored.Type) -> Stored? {
        // Each reinterpretation follows a check that the two types are the same.
        if Value.self == Stored.self { return unsafeBitCast(value, to: Stored.self) }
        if Value.self == Stored?.self { return unsafeBitCast(value, to: Stored?.self) }
        return nil
    }

    /// The canonical type of the value's case, to compare with a slot's attribute type.
    @usableFromInline
    var typedCaseType: ObjectIdentifier? {
        switch self {
        case .int16: ObjectIdentifier(Int16.self)
        case .int32: ObjectIdentifier(Int32.self)
        case .int64: ObjectIdentifier(Int64.self)
        case .double: ObjectIdentifier(Double.self)
        case .bool: ObjectIdentifier(Bool.self)
        case .string: ObjectIdentifier(String.self)
        case .date: ObjectIdentifier(Date.self)
        case .uuid: ObjectIdentifier(UUID.self)
        case .data: ObjectIdentifier(Data.self)
        default: nil
        }
    }
}

/// A value of a type without a case of its own, boxed once (immutable, so copies of a
/// slot share it).
@usableFromInline
final class SlotValueBox {
    let value: Any

    init(_ value: Any) {
        self.value = value
    }
}

/// `value` opened: its case chosen by its exact type, no dynamic cast (a free function:
/// this toolchain's compiler crashes on `_openExistential` with a closure).
private func openedSlotValue(_ value: Any) -> SlotValue {
    _openExistential(value, do: slotValueOfOpened)
}

/// The typed attribute case of `value` when `Value` is exactly one of those types (an
/// optional stays out: its type is kept); nil otherwise. The save path's stored form of a
/// canonical value (AttributeValueCoercion.swift) reads it too.
func typedAttributeSlotValue<Value>(_ value: Value) -> SlotValue? {
    // Each reinterpretation below follows a check that `Value` is exactly that type.
    if Value.self == String.self { return .string(unsafeBitCast(value, to: String.self)) }
    if Value.self == Int64.self { return .int64(unsafeBitCast(value, to: Int64.self)) }
    if Value.self == Int16.self { return .int16(unsafeBitCast(value, to: Int16.self)) }
    if Value.self == Int32.self { return .int32(unsafeBitCast(value, to: Int32.self)) }
    if Value.self == Double.self { return .double(unsafeBitCast(value, to: Double.self)) }
    if Value.self == Bool.self { return .bool(unsafeBitCast(value, to: Bool.self)) }
    if Value.self == Date.self { return .date(unsafeBitCast(value, to: Date.self)) }
    if Value.self == UUID.self { return .uuid(unsafeBitCast(value, to: UUID.self)) }
    if Value.self == Data.self { return .data(unsafeBitCast(value, to: Data.self)) }
    return nil
}

private func slotValueOfOpened<Value>(_ value: Value) -> SlotValue {
    if let typed = typedAttributeSlotValue(value) { return typed }
    if Value.self == Set<NSManagedObject>.self { return .objects(unsafeBitCast(value, to: Set<NSManagedObject>.self)) }
    if Value.self == [NSManagedObject].self { return .orderedObjects(unsafeBitCast(value, to: [NSManagedObject].self)) }
    if Value.self == UnresolvedRelationship.self {
        return .unresolved(unsafeDowncast(unsafeBitCast(value, to: AnyObject.self), to: UnresolvedRelationship.self))
    }
    if Value.self is NSManagedObject.Type {
        return .object(unsafeDowncast(unsafeBitCast(value, to: AnyObject.self), to: NSManagedObject.self))
    }
    return .other(SlotValueBox(value))
}

/// A managed object's values, one per slot, read and written as `Any?` by general code
/// and by case on the hot paths.
struct SlotValues: RandomAccessCollection, MutableCollection, ExpressibleByArrayLiteral {
    @usableFromInline var storage: [SlotValue]

    init() { storage = [] }

    init(arrayLiteral elements: Any?...) {
        // `[]` (an object's values while a fault) makes no array of its own.
        storage = elements.isEmpty ? [] : elements.map(SlotValue.init)
    }

    init(_ values: some Sequence<Any?>) {
        storage = values.map(SlotValue.init)
    }

    init(slots: [SlotValue]) {
        storage = slots
    }

    mutating func reserveCapacity(_ count: Int) { storage.reserveCapacity(count) }

    mutating func append(_ value: Any?) { storage.append(SlotValue(value)) }

    mutating func append(slot value: SlotValue) { storage.append(value) }

    var startIndex: Int { 0 }
    var endIndex: Int { storage.count }

    subscript(position: Int) -> Any? {
        get { storage[position].anyValue }
        set { storage[position] = SlotValue(newValue) }
    }
}
