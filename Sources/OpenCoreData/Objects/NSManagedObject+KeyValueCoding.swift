// Key-value coding of managed objects, implemented by the object layer itself
// (there is no Objective-C runtime on Linux).
//
// Two families:
// - Core Data's non-throwing value(forKey:) / setValue(_:forKey:): an unknown key is
//   a programming error and stops the program with a message naming the key and the
//   entity (Core Data raises NSUnknownKeyException). A value of the wrong type is
//   stored and fails validation at save (NSManagedObjectValidationError, 1550).
// - readValue(forKey:) / writeValue(_:forKey:) throw instead: use them for keys and
//   values that come from users, files or the network.
import Foundation

extension NSManagedObject {
    // MARK: Non-throwing (Core Data's)

    /// The value of the property `key`: attributes as their Swift type, a to-one
    /// relationship as its object, a to-many one as `Set<NSManagedObject>`
    /// (`NSOrderedSet` when ordered).
    ///
    /// - Precondition: the entity has a property `key`. Use ``readValue(forKey:)`` for untrusted keys.
    public func value(forKey key: String) -> Any? {
        guard let slot = layout.slotsByName[key] else { unknownKey(key) }
        return publicValue(slot)
    }

    /// Sets the property `key` to `value`, keeping relationship inverses consistent.
    ///
    /// Numbers convert to the attribute's type when exact (`Int` 30 into an Integer 16
    /// attribute). A value of another type is kept and fails validation at save.
    ///
    /// - Precondition: the entity has a property `key`, a relationship value is a managed
    ///   object (or a set or array of them) of the same context. Use
    ///   ``writeValue(_:forKey:)`` to get thrown errors instead.
    public func setValue(_ value: Any?, forKey key: String) {
        guard let slot = layout.slotsByName[key] else { unknownKey(key) }
        do {
            try assign(value, slot: slot, strict: false)
        } catch {
            preconditionFailure("OpenCoreData: setValue(_:forKey: \"\(key)\"): \(error.localizedDescription)")
        }
    }

    /// The value at the dotted `keyPath` (`"company.name"`); to-many steps collect arrays.
    ///
    /// - Precondition: every key names a property. Use ``readValue(forKeyPath:)`` for untrusted key paths.
    public func value(forKeyPath keyPath: String) -> Any? {
        do {
            return try readValue(forKeyPath: keyPath)
        } catch {
            preconditionFailure("OpenCoreData: value(forKeyPath: \"\(keyPath)\"): \(error)")
        }
    }

    /// Sets the value at the dotted `keyPath`; every step before the last must be a to-one relationship.
    ///
    /// - Precondition: every key names a property.
    public func setValue(_ value: Any?, forKeyPath keyPath: String) {
        let keys = keyPath.split(separator: ".").map(String.init)
        var target: NSManagedObject = self
        for key in keys.dropLast() {
            guard let next = target.value(forKey: key) as? NSManagedObject else { return }
            target = next
        }
        target.setValue(value, forKey: keys.last ?? keyPath)
    }

    /// The values of `keys` (`NSNull` for nil), as Core Data's `dictionaryWithValues(forKeys:)`.
    public func dictionaryWithValues(forKeys keys: [String]) -> [String: Any] {
        var result: [String: Any] = [:]
        for key in keys { result[key] = value(forKey: key) ?? NSNull() }
        return result
    }

    // MARK: Throwing

    /// The value of the property `key`, as ``value(forKey:)``.
    ///
    /// - Throws: `KeyValueCodingError.unknownKey` when the entity has no property `key`;
    ///   `NSCoderReadCorruptError` (4864) naming the attribute for stored transformable
    ///   bytes its transformer cannot read;
    ///   `NSManagedObjectReferentialIntegrityError` (133000) when the object's context was
    ///   reset or deallocated (its values are gone; ``value(forKey:)`` reads default values).
    public func readValue(forKey key: String) throws -> Any? {
        guard let slot = layout.slotsByName[key] else {
            throw KeyValueCodingError.unknownKey(key, in: entity.name ?? "entity")
        }
        if state.isForgotten && managedObjectContext == nil {
            throw CoreDataError.make(
                NSManagedObjectReferentialIntegrityError,
                "cannot read '\(key)' of \(entity.name ?? "?") \(objectID.uriRepresentation().absoluteString): "
                    + "its context was reset or deallocated; fetch the object again in a live context",
                userInfo: [NSAffectedObjectsErrorKey: [objectID]])
        }
        if layout.attributeTypeBySlot[slot] == .transformableAttributeType,
            let undecodable = slotValue(slot) as? UndecodableTransformableValue
        {
            throw undecodable.error
        }
        return publicValue(slot)
    }

    /// The value at the dotted `keyPath`; a to-many step collects the next values into an array.
    ///
    /// - Throws: `KeyValueCodingError.unknownKey` for a key that names no property.
    public func readValue(forKeyPath keyPath: String) throws -> Any? {
        try checkKeyPath(keyPath)
        var current: [Any] = [self]
        var collecting = false
        for key in keyPath.split(separator: ".").map(String.init) {
            var next: [Any] = []
            for item in current {
                // A composite attribute's value: the next key is an element.
                if let composite = item as? [String: Any] {
                    if let element = composite[key] { next.append(element) }
                    continue
                }
                guard let object = item as? NSManagedObject else { continue }
                let value = try object.readValue(forKey: key)
                switch value {
                case let set as Set<NSManagedObject>:
                    collecting = true
                    next.append(contentsOf: set.map { $0 as Any })
                case let ordered as NSOrderedSet:
                    collecting = true
                    next.append(contentsOf: ordered.array)
                case .some(let single):
                    next.append(single)
                case .none:
                    break
                }
            }
            current = next
        }
        return collecting ? current : current.first
    }

    /// Sets the property `key` to `value`, checking everything first.
    ///
    /// - Throws: `KeyValueCodingError.unknownKey` for an unknown key;
    ///   `NSManagedObjectValidationError` (1550) with `NSValidationKeyErrorKey` and
    ///   `NSValidationValueErrorKey` for a value of the wrong type or a managed object
    ///   of another context, or for a derived attribute (the store computes it; `setValue`
    ///   stores the value, which the next save replaces).
    public func writeValue(_ value: Any?, forKey key: String) throws {
        guard let slot = layout.slotsByName[key] else {
            throw KeyValueCodingError.unknownKey(key, in: entity.name ?? "entity")
        }
        if layout.properties[slot] is NSDerivedAttributeDescription {
            throw CoreDataError.make(
                NSManagedObjectValidationError,
                "\(entity.name ?? "entity").\(key) is a derived attribute: the store computes it when the object is "
                    + "saved, and the app cannot set it",
                userInfo: [NSValidationKeyErrorKey: key])
        }
        try assign(value, slot: slot, strict: true)
    }

    // MARK: Primitive access (no inverse maintenance)

    /// The value of `key` as stored, without announcing an access.
    ///
    /// - Precondition: the entity has a property `key`.
    public func primitiveValue(forKey key: String) -> Any? {
        guard let slot = layout.slotsByName[key] else { unknownKey(key) }
        return publicValue(slot)
    }

    /// Sets the value of `key` without maintaining relationship inverses.
    ///
    /// - Precondition: the entity has a property `key`.
    public func setPrimitiveValue(_ value: Any?, forKey key: String) {
        guard let slot = layout.slotsByName[key] else { unknownKey(key) }
        if let attribute = layout.attributeBySlot[slot],
            case .value(let coerced) = attribute.attributeType.coerce(value)
        {
            storeSlot(slot, coerced)
        } else if let relationship = layout.relationshipBySlot[slot], relationship.isToMany,
            let objects = NSManagedObject.objects(in: value)
        {
            storeSlot(slot, relationship.isOrdered ? objects as Any : Set(objects) as Any)
        } else {
            storeSlot(slot, value)
        }
    }

    // MARK: Mutable relationship proxies

    /// A mutable set whose edits change the to-many relationship `key` (inverses maintained).
    ///
    /// - Precondition: `key` names a to-many relationship.
    public func mutableSetValue(forKey key: String) -> NSMutableSet {
        RelationshipMutableSet(owner: self, slot: toManySlot(key, accessor: "mutableSetValue"))
    }

    /// A mutable ordered set whose edits change the ordered to-many relationship `key`.
    ///
    /// - Precondition: `key` names a to-many relationship.
    public func mutableOrderedSetValue(forKey key: String) -> NSMutableOrderedSet {
        RelationshipMutableOrderedSet(owner: self, slot: toManySlot(key, accessor: "mutableOrderedSetValue"))
    }

    /// The slot of the to-many relationship `key`, for the proxy `accessor` returns.
    private func toManySlot(_ key: String, accessor: String) -> Int {
        guard let slot = layout.slotsByName[key], layout.relationshipBySlot[slot]?.isToMany == true else {
            preconditionFailure(
                "OpenCoreData: \(accessor)(forKey: \"\(key)\"): \(entity.name ?? "entity") has no to-many "
                    + "relationship '\(key)'")
        }
        return slot
    }

    // MARK: Changes

    /// The properties changed since the last save or fetch, with their new values
    /// (`NSNull` for nil). An inserted object reports every property it has a value for.
    public func changedValues() -> [String: Any] {
        fireFaultIfNeeded()
        var result: [String: Any] = [:]
        for slot in dirtySlots.indices where dirtySlots[slot] {
            result[layout.properties[slot].name] = publicValue(slot) ?? NSNull()
        }
        if state.isInserted {
            for slot in values.indices where values[slot] != nil && result[layout.properties[slot].name] == nil {
                result[layout.properties[slot].name] = publicValue(slot)
            }
        }
        return result
    }

    /// The last saved or fetched values of `keys` (all properties when nil), `NSNull` for nil.
    public func committedValues(forKeys keys: [String]?) -> [String: Any] {
        fireFaultIfNeeded()
        var result: [String: Any] = [:]
        let names = keys ?? layout.properties.map(\.name)
        for name in names {
            guard let slot = layout.slotsByName[name] else { continue }
            guard let committed, slot < committed.count else { continue }
            if let relationship = layout.relationshipBySlot[slot] {
                result[name] = publicRelationship(committed[slot], relationship) ?? NSNull()
            } else {
                result[name] = committed[slot] ?? NSNull()
            }
        }
        return result
    }

    // MARK: Internals

    /// Checks every key of `keyPath` against the model, following relationship destinations.
    private func checkKeyPath(_ keyPath: String) throws {
        var entity: NSEntityDescription? = self.entity
        var composite: NSCompositeAttributeDescription?
        for key in keyPath.split(separator: ".").map(String.init) {
            if let owner = composite {
                guard let element = owner.elements.first(where: { $0.name == key }) else {
                    throw KeyValueCodingError.unknownKey(key, in: owner.qualifiedName)
                }
                composite = element as? NSCompositeAttributeDescription
                if composite == nil { return }
                continue
            }
            guard let current = entity else { return }
            guard let property = current.layout.propertiesByName[key] else {
                throw KeyValueCodingError.unknownKey(key, in: current.name ?? "entity")
            }
            composite = property as? NSCompositeAttributeDescription
            entity = (property as? NSRelationshipDescription)?.destinationEntity
        }
    }

    /// The public form of slot: to-many as Set<NSManagedObject> or NSOrderedSet.
    func publicValue(_ slot: Int) -> Any? {
        let value = slotValue(slot)
        if value == nil, layout.attributeTypeBySlot[slot] == nil, layout.relationshipBySlot[slot] == nil,
            let fetched = layout.properties[slot] as? NSFetchedPropertyDescription
        {
            return fetchedPropertyValue(fetched, slot: slot)
        }
        if layout.attributeTypeBySlot[slot] == .transformableAttributeType, value is UndecodableTransformableValue {
            return nil
        }
        if let relationship = layout.relationshipBySlot[slot], relationship.isOrdered,
            let array = value as? [NSManagedObject]
        {
            return NSOrderedSet(array: array)
        }
        return value
    }

    private func publicRelationship(_ value: Any?, _ relationship: NSRelationshipDescription) -> Any? {
        if let unresolved = UnresolvedRelationship.from(value) {
            guard let context = managedObjectContext, let ids = unresolved.objectIDs else { return nil }
            let objects = ids.map { context.object(with: $0) }
            if !relationship.isToMany { return objects.first }
            return relationship.isOrdered ? NSOrderedSet(array: objects) : Set(objects)
        }
        if relationship.isOrdered, let array = value as? [NSManagedObject] { return NSOrderedSet(array: array) }
        return value
    }

    /// Assigns `value` to `slot`; `strict` refuses wrong types instead of storing them.
    func assign(_ value: Any?, slot: Int, strict: Bool) throws {
        let property = layout.properties[slot]
        if let attribute = layout.attributeBySlot[slot] {
            if let value, let expected = layout.canonicalTypeBySlot[slot], ObjectIdentifier(type(of: value)) == expected
            {
                storeSlot(slot, value)
                return
            }
            switch attribute.attributeType.coerce(value) {
            case .value(let coerced):
                storeSlot(slot, coerced)
            case .mismatch:
                if strict { throw wrongType(value, property: property) }
                storeSlot(slot, value)
            }
            return
        }
        guard let relationship = layout.relationshipBySlot[slot] else { return }
        if relationship.isToMany {
            guard let objects = NSManagedObject.objects(in: value) else { throw wrongType(value, property: property) }
            for object in objects { try checkDestination(object, relationship) }
            setToMany(slot, objects)
        } else {
            if value == nil {
                setToOne(slot, nil)
                return
            }
            guard let object = value as? NSManagedObject else { throw wrongType(value, property: property) }
            try checkDestination(object, relationship)
            setToOne(slot, object)
        }
    }

    /// The managed objects in a set, array, NSSet or NSOrderedSet value (nil is empty).
    static func objects(in value: Any?) -> [NSManagedObject]? {
        switch value {
        case .none: return []
        case let set as Set<NSManagedObject>: return Array(set)
        case let array as [NSManagedObject]: return array
        case let ordered as NSOrderedSet: return ordered.array.compactMap { $0 as? NSManagedObject }
        case let set as NSSet: return set.allObjects.compactMap { $0 as? NSManagedObject }
        case let array as [Any]: return array.compactMap { $0 as? NSManagedObject }
        default: return nil
        }
    }

    /// Checks that `object` may be a destination of `relationship`: right entity, same context.
    func checkDestination(_ object: NSManagedObject, _ relationship: NSRelationshipDescription) throws {
        try checkDestinationEntity(object, relationship)
        try checkSameContext(object, key: relationship.name)
    }

    /// ``checkDestination(_:_:)`` of the relationship in `slot`: an object of exactly the
    /// destination entity (the common case) passes the entity check on the layout's
    /// identity alone, and the relationship's name is read only for an error.
    @inline(__always)
    func checkDestination(_ object: NSManagedObject, slot: Int, _ relationship: NSRelationshipDescription) throws {
        if slot >= layout.destinationIdentityBySlot.count
            || layout.destinationIdentityBySlot[slot] != ObjectIdentifier(object.entity)
        {
            try checkDestinationEntity(object, relationship)
        }
        try checkSameContext(object, key: relationship.name)
    }

    private func checkDestinationEntity(_ object: NSManagedObject, _ relationship: NSRelationshipDescription) throws {
        if let destination = relationship.destinationEntity, object.entity !== destination,
            !object.entity.isKindOf(entity: destination)
        {
            throw CoreDataError.validation(
                NSManagedObjectValidationError,
                "wrong type for '\(relationship.name)' of \(entity.name ?? "entity"): expected a \(destination.name ?? "?"), "
                    + "given a \(object.entity.name ?? "?")",
                object: self, key: relationship.name, value: object)
        }
    }

    /// The key is read only for the error (a relationship's name is a dynamically
    /// dispatched read and a string copy per edit otherwise). Objects of one context (the
    /// common case) compare by their context handles after one read of a context: each
    /// read of `managedObjectContext` takes a handle's lock and a retain.
    func checkSameContext(_ object: NSManagedObject, key: @autoclosure () -> String) throws {
        guard let theirs = object.managedObjectContext, !isRegistered(in: theirs) else { return }
        if let mine = managedObjectContext, mine !== theirs {
            let key = key()
            throw CoreDataError.validation(
                NSManagedObjectValidationError,
                "Illegal attempt to establish a relationship '\(key)' between objects in different contexts "
                    + "(source = \(entity.name ?? "?"), destination = \(object.entity.name ?? "?"))",
                object: self, key: key, value: object)
        }
    }

    private func wrongType(_ value: Any?, property: NSPropertyDescription) -> NSError {
        let expected: String
        if let attribute = property as? NSAttributeDescription {
            expected = attribute.attributeType.swiftTypeName
        } else if let relationship = property as? NSRelationshipDescription {
            expected = relationship.isToMany ? "a set of managed objects" : "a managed object"
        } else {
            expected = "?"
        }
        let given = value.map { "\(type(of: $0))" } ?? "nil"
        return CoreDataError.validation(
            NSManagedObjectValidationError,
            "wrong type for '\(property.name)' of \(entity.name ?? "entity"): expected \(expected), given \(given)",
            object: self, key: property.name, value: value)
    }

    func unknownKey(_ key: String) -> Never {
        preconditionFailure(
            "OpenCoreData: \(KeyValueCodingError.unknownKey(key, in: entity.name ?? "entity")); "
                + "use readValue(forKey:)/writeValue(_:forKey:) to get a thrown error")
    }
}

extension NSManagedObject {
    /// A fetched property's value: its request's results with `$FETCH_SOURCE` this object
    /// and `$FETCHED_PROPERTY` the description, kept until the object is refreshed (as
    /// Core Data keeps it: fetched properties are not updated by later changes). A request
    /// that fails reads as an empty array.
    fileprivate func fetchedPropertyValue(_ fetched: NSFetchedPropertyDescription, slot: Int) -> Any? {
        guard let request = fetched.fetchRequest, let context = managedObjectContext else { return [Any]() }
        let substituted = request.copy(substituting: ["FETCH_SOURCE": self, "FETCHED_PROPERTY": fetched])
        let results = (try? context.fetch(substituted)) ?? []
        // Kept in the slot without recording a change: the stores hold nothing for it.
        if slot < values.count { values[slot] = results }
        return results
    }
}
