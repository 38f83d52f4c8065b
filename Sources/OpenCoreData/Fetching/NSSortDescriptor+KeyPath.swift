// NSSortDescriptor(keyPath: \Trip.startDate, ascending: false): a sort descriptor from a
// Swift key path to an @Managed property, as Core Data code writes it.
//
// Foundation on Apple platforms turns the key path into its string through the
// Objective-C runtime (`_kvcKeyPathString`); Swift on Linux has no such string. The
// property's name is found by asking the key path itself: an object of the root class
// is made outside any context, each attribute's slot in turn is given a marker value
// (all others a different one), and the key path is read: the slot whose marker comes
// back is the property. Done once per key path and remembered.
//
// Limits: the key path must name one @Managed attribute of a class some model in use
// maps an entity to (`managedObjectClassName`), of a type with two distinct values
// (every attribute type but transformable and object ID). A key path through a
// relationship (`\Trip.destination.name`), to a relationship, or to a property that is
// not @Managed is not resolved: the descriptor's key then names the key path in angle
// brackets, and a fetch sorting by it fails with NSCoreDataError's unknown-key error.
// A computed property that returns one attribute unchanged resolves to that attribute.
import Foundation

extension NSSortDescriptor {
    /// A descriptor ordering by the @Managed attribute `keyPath` names, with `compare:`.
    ///
    /// ```swift
    /// request.sortDescriptors = [NSSortDescriptor(keyPath: \Trip.startDate, ascending: false)]
    /// ```
    ///
    /// The attribute's name is found once per key path (see the file comment for what
    /// resolves); `key` holds it.
    public convenience init<Root: NSManagedObject, Value>(keyPath: KeyPath<Root, Value>, ascending: Bool) {
        self.init(key: ManagedKeyPathNames.name(of: keyPath), ascending: ascending)
    }

    /// A descriptor ordering by the @Managed attribute `keyPath` names, with `compare:`.
    ///
    /// Foundation on Linux declares `init(keyPath:ascending:)` for `Comparable` values,
    /// which sorts objects in memory and names no key a fetch can use; this more
    /// specialized form wins for managed objects, so `\Person.age` resolves as above.
    public convenience init<Root: NSManagedObject, Value: Comparable>(keyPath: KeyPath<Root, Value>, ascending: Bool) {
        self.init(key: ManagedKeyPathNames.name(of: keyPath), ascending: ascending)
    }

    /// A descriptor ordering by the @Managed attribute `keyPath` names with `comparator`,
    /// which sees only non-nil values (nil sorts first).
    public convenience init<Root: NSManagedObject, Value>(
        keyPath: KeyPath<Root, Value>, ascending: Bool, comparator: @escaping Comparator
    ) {
        self.init(key: ManagedKeyPathNames.name(of: keyPath), ascending: ascending, comparator: comparator)
    }
}

/// Attribute names of Swift key paths to @Managed properties, found by probing (see the
/// file comment) and remembered.
enum ManagedKeyPathNames {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var names: [AnyKeyPath: String] = [:]

    /// The attribute name `keyPath` reads, or its description in angle brackets when it
    /// cannot be found (a key no entity has, so a fetch names it in its error).
    static func name<Root: NSManagedObject, Value>(of keyPath: KeyPath<Root, Value>) -> String {
        lock.lock()
        let known = names[keyPath]
        lock.unlock()
        if let known { return known }
        guard let name = probe(keyPath) else { return "<unresolved key path \(keyPath) of \(Root.self)>" }
        lock.lock()
        names[keyPath] = name
        lock.unlock()
        return name
    }

    private static func probe<Root: NSManagedObject, Value>(_ keyPath: KeyPath<Root, Value>) -> String? {
        guard let entity = ClassEntityRegistry.entities(for: Root.self).last else { return nil }
        let object = Root(entity: entity, insertInto: nil)
        ObjectLifecycle.loadDefaults(object)
        let layout = object.layout
        var markers: [(slot: Int, base: Any, marked: AnyHashable)] = []
        for (slot, attribute) in layout.attributeBySlot.enumerated() {
            guard let attribute, slot < object.values.count,
                let pair = markerValues(for: attribute.attributeType)
            else { continue }
            object.values[slot] = pair.base
            markers.append((slot, pair.base, pair.marked))
        }
        for marker in markers {
            object.values[marker.slot] = marker.marked.base
            let read = unwrapOptional(object[keyPath: keyPath])
            object.values[marker.slot] = marker.base
            if let read = read as? AnyHashable, read == marker.marked { return layout.properties[marker.slot].name }
        }
        return nil
    }

    /// Two distinct values of an attribute type's Swift type: one every probed slot holds,
    /// and the marker.
    private static func markerValues(for type: NSAttributeType) -> (base: Any, marked: AnyHashable)? {
        switch type {
        case .integer16AttributeType: (Int16(0), Int16(7))
        case .integer32AttributeType: (Int32(0), Int32(7))
        case .integer64AttributeType: (Int64(0), Int64(7))
        case .decimalAttributeType: (Decimal(0), Decimal(7))
        case .doubleAttributeType: (0.0, 7.5)
        case .floatAttributeType: (Float(0), Float(7.5))
        case .stringAttributeType: ("", "\u{1F}marker")
        case .booleanAttributeType: (false, true)
        case .dateAttributeType: (Date(timeIntervalSinceReferenceDate: 0), Date(timeIntervalSinceReferenceDate: 7))
        case .binaryDataAttributeType: (Data(), Data([7]))
        case .UUIDAttributeType:
            (
                UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
                UUID(uuid: (7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7))
            )
        case .URIAttributeType:
            (URL(string: "probe:a") as Any, URL(string: "probe:b").map(AnyHashable.init) ?? AnyHashable(7))
        default: nil
        }
    }
}
