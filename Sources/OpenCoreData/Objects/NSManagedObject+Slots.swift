// Slot-level access: loading faults, resolving relationships, recording changes and
// keeping both sides of a relationship consistent on every edit.
import Foundation

extension NSManagedObject {
    /// Loads the object's values when it is a fault.
    @inline(__always) func fireFaultIfNeeded() {
        ConcurrencyDebug.check(self, "reading a property of \(entity.name ?? "an object")")
        if state.isFault { fireFault() }
    }

    /// Loads the object's values before a read of `slot`.
    @inline(__always) func fireFaultIfNeeded(reading slot: Int) {
        ConcurrencyDebug.check(self, "reading a property of \(entity.name ?? "an object")")
        if state.isFault { fireFault(reading: slot) }
    }

    private func fireFault(reading slot: Int? = nil) {
        if let context = managedObjectContext {
            context.fulfillFault(self)
        }
        guard state.isFault else { return }
        // A forgotten object's context is gone: the read is a mistake, reported once.
        if state.isForgotten, let slot, slot < layout.properties.count {
            ObjectLifecycle.noteForgottenRead(of: self, key: layout.properties[slot].name)
        }
        // Nothing to load from: the object's row or context is gone. Its values read as defaults.
        ObjectLifecycle.loadDefaults(self)
    }

    /// The current value of `slot`, relationships resolved into objects.
    func slotValue(_ slot: Int) -> Any? {
        fireFaultIfNeeded(reading: slot)
        guard slot < values.count else { return nil }
        let value = values.storage[slot]
        if case .unresolved(let unresolved) = value, layout.relationshipBySlot[slot] != nil {
            return resolve(slot: slot, unresolved)
        }
        return value.anyValue
    }

    private func resolve(slot: Int, _ unresolved: UnresolvedRelationship) -> Any? {
        guard let relationship = layout.relationshipBySlot[slot] else { return nil }
        var objects: [NSManagedObject] = []
        if let context = managedObjectContext, unresolved.destination == nil {
            let ids = unresolved.objectIDs ?? context.destinationIDs(of: relationship, for: objectID)
            if relationship.isToMany && !relationship.isOrdered && !unresolved.hasEdits {
                // The set built while registering: the same members as the general path's
                // array turned into a set.
                return replace(
                    unresolved, in: slot, by: .objects(context.toManyDestinationSet(ids, of: self, slot: slot)))
            }
            objects =
                relationship.isToMany
                ? context.toManyDestinations(ids, of: self, slot: slot) : context.objects(with: ids)
        } else if let context = managedObjectContext, let destination = unresolved.destination {
            objects = [context.object(with: destination)]
        }
        objects = unresolved.applyingEdits(to: objects)
        // Stored in its case: no `Any` made and opened again.
        let resolved: SlotValue
        if !relationship.isToMany {
            resolved = objects.first.map(SlotValue.object) ?? .null
        } else if relationship.isOrdered {
            resolved = .orderedObjects(objects)
        } else {
            resolved = .objects(Set(objects))
        }
        return replace(unresolved, in: slot, by: resolved)
    }

    /// Replaces `unresolved` in `slot` (and in the committed values while they share it) by
    /// `resolved`, returned as a value.
    private func replace(_ unresolved: UnresolvedRelationship, in slot: Int, by resolved: SlotValue) -> Any? {
        values.storage[slot] = resolved
        if let stored = committed, slot < stored.count, case .unresolved(let kept) = stored.storage[slot],
            kept === unresolved
        {
            committed?.storage[slot] = resolved
        }
        return resolved.anyValue
    }

    /// The unordered to-many `slot`'s set of objects, resolved first if need be; nil when
    /// it holds another form (a value set through key-value coding).
    func resolvedObjectSet(_ slot: Int) -> Set<NSManagedObject>? {
        fireFaultIfNeeded(reading: slot)
        guard slot < values.count else { return nil }
        if case .unresolved = values.storage[slot] { _ = slotValue(slot) }
        if case .objects(let set) = values.storage[slot] { return set }
        return nil
    }

    /// Sets `slot` to `value` without touching inverses, and records the change.
    func storeSlot(_ slot: Int, _ value: Any?) {
        fireFaultIfNeeded()
        guard slot < values.count else { return }
        ObjectLifecycle.change(self, slot: slot, to: value)
    }

    /// Stores `value` in attribute `slot` when `Value` is exactly the attribute's canonical
    /// type (nothing to convert, check or keep inverse): the typed setters' fast path. False,
    /// storing nothing, when the general path must run (a fault, a relationship, another type).
    @inline(__always)
    @usableFromInline
    func storeCanonical<Value>(_ value: Value, slot: Int) -> Bool {
        guard !state.isFault, slot < values.count, slot < layout.canonicalTypeBySlot.count,
            let expected = layout.canonicalTypeBySlot[slot], expected == ObjectIdentifier(Value.self)
        else { return false }
        ObjectLifecycle.change(self, slot: slot, to: value)
        return true
    }

    /// Stores `value`, a typed case, in attribute `slot` when the case is the attribute's
    /// canonical type: the `@Managed` setters' fast path, no `Any` made. False, storing
    /// nothing, when the general path must run (a fault, a relationship, another type).
    @usableFromInline
    func storeTyped(_ value: SlotValue, slot: Int) -> Bool {
        guard !state.isFault, slot < values.count, slot < layout.canonicalTypeBySlot.count,
            let expected = layout.canonicalTypeBySlot[slot], expected == value.typedCaseType
        else { return false }
        ObjectLifecycle.change(self, slot: slot, toTyped: value)
        return true
    }

    // MARK: Relationships

    /// The destinations of a to-many slot, in order.
    func toManyObjects(_ slot: Int) -> [NSManagedObject] {
        switch slotValue(slot) {
        case let set as Set<NSManagedObject>: Array(set)
        case let array as [NSManagedObject]: array
        default: []
        }
    }

    func toOneObject(_ slot: Int) -> NSManagedObject? {
        fireFaultIfNeeded(reading: slot)
        // A resolved to-one is read in its case: no `Any` made and cast back per edit.
        if slot < values.count {
            switch values.storage[slot] {
            case .object(let object): return object
            case .null: return nil
            default: break
            }
        }
        return slotValue(slot) as? NSManagedObject
    }

    /// Sets `slot` to `value`, already in its case, without touching inverses, and records
    /// the change (``storeSlot(_:_:)`` without an `Any` made).
    func storeSlot(_ slot: Int, typed value: SlotValue) {
        fireFaultIfNeeded()
        guard slot < values.count else { return }
        ObjectLifecycle.change(self, slot: slot, toTyped: value)
    }

    /// Sets a to-one relationship and keeps its inverse consistent.
    func setToOne(_ slot: Int, _ destination: NSManagedObject?) {
        let old = toOneObject(slot)
        if old === destination { return }
        storeSlot(slot, typed: destination.map(SlotValue.object) ?? .null)
        // A slot with an inverse slot has an inverse relationship; its kind is read from the layout.
        guard let inverseSlot = layout.inverseSlotBySlot[slot] else { return }
        let inverseIsToMany = layout.inverseIsToManyBySlot[slot]
        if let old { old.detach(self, inverseSlot: inverseSlot, inverseIsToMany: inverseIsToMany) }
        if let destination {
            destination.attach(self, inverseSlot: inverseSlot, inverseIsToMany: inverseIsToMany, backSlot: slot)
        }
    }

    /// Sets a to-many relationship to `destinations` and keeps the inverses consistent.
    func setToMany(_ slot: Int, _ destinations: [NSManagedObject]) {
        guard let relationship = layout.relationshipBySlot[slot] else { return }
        let old = toManyObjects(slot)
        let oldSet = Set(old)
        let newSet = Set(destinations)
        if relationship.isOrdered {
            var seen: Set<NSManagedObject> = []
            let unique = destinations.filter { seen.insert($0).inserted }
            if unique == old { return }
            storeSlot(slot, unique)
        } else {
            if oldSet == newSet { return }
            storeSlot(slot, newSet)
        }
        guard let inverseSlot = layout.inverseSlotBySlot[slot], let inverse = relationship.inverseRelationship else {
            return
        }
        for removed in old where !newSet.contains(removed) {
            removed.detach(self, inverseSlot: inverseSlot, inverseIsToMany: inverse.isToMany)
        }
        for added in destinations where !oldSet.contains(added) {
            added.attach(self, inverseSlot: inverseSlot, inverseIsToMany: inverse.isToMany, backSlot: slot)
        }
    }

    /// Adds one destination to a to-many relationship, maintaining the inverse.
    func addToMany(_ slot: Int, _ destination: NSManagedObject) {
        var current = toManyObjects(slot)
        if current.contains(destination) { return }
        current.append(destination)
        setToMany(slot, current)
    }

    /// Removes one destination from a to-many relationship, maintaining the inverse.
    func removeFromToMany(_ slot: Int, _ destination: NSManagedObject) {
        var current = toManyObjects(slot)
        guard let index = current.firstIndex(of: destination) else { return }
        current.remove(at: index)
        setToMany(slot, current)
    }

    /// `source` no longer points here through the relationship whose inverse is `inverseSlot`.
    func detach(_ source: NSManagedObject, inverseSlot: Int, inverseIsToMany: Bool) {
        // A destination of another entity can only come from a primitive setter: no inverse to keep.
        guard layout.relationshipBySlot.indices.contains(inverseSlot) else { return }
        if inverseIsToMany {
            rawRemove(source, slot: inverseSlot)
        } else if toOneObject(inverseSlot) === source {
            storeSlot(inverseSlot, nil)
        }
    }

    /// `source` now points here through its `backSlot`; make the inverse at `inverseSlot` point back.
    func attach(_ source: NSManagedObject, inverseSlot: Int, inverseIsToMany: Bool, backSlot: Int) {
        guard layout.relationshipBySlot.indices.contains(inverseSlot) else { return }
        if inverseIsToMany {
            rawAdd(source, slot: inverseSlot)
            return
        }
        let previous = toOneObject(inverseSlot)
        if previous === source { return }
        // One-to-one or many-to-one: the previous source loses this object from its back slot.
        if let previous, previous.layout.relationshipBySlot.indices.contains(backSlot),
            let relationship = previous.layout.relationshipBySlot[backSlot]
        {
            if relationship.isToMany {
                previous.rawRemove(self, slot: backSlot)
            } else if previous.toOneObject(backSlot) === self {
                previous.storeSlot(backSlot, nil)
            }
        }
        storeSlot(inverseSlot, source)
    }

    func rawAdd(_ object: NSManagedObject, slot: Int) {
        guard layout.relationshipBySlot.indices.contains(slot) else { return }
        if editSetInPlace(slot, { $0.insertGrowingAhead(object) }) != nil { return }
        if editUnresolvedToMany(slot, object, adding: true) { return }
        switch slotValue(slot) {
        case var set as Set<NSManagedObject>:
            if set.insert(object).inserted { storeSlot(slot, set) }
        case var array as [NSManagedObject]:
            if !array.contains(object) {
                array.append(object)
                storeSlot(slot, array)
            }
        default:
            let ordered = layout.relationshipBySlot[slot]?.isOrdered ?? false
            storeSlot(slot, ordered ? [object] as Any : Set([object]) as Any)
        }
    }

    func rawRemove(_ object: NSManagedObject, slot: Int) {
        guard layout.relationshipBySlot.indices.contains(slot) else { return }
        if editSetInPlace(slot, { $0.remove(object) != nil }) != nil { return }
        if editUnresolvedToMany(slot, object, adding: false) { return }
        switch slotValue(slot) {
        case var set as Set<NSManagedObject>:
            if set.remove(object) != nil { storeSlot(slot, set) }
        case var array as [NSManagedObject]:
            if let index = array.firstIndex(of: object) {
                array.remove(at: index)
                storeSlot(slot, array)
            }
        default:
            break
        }
    }

    /// Applies `edit` to the unordered to-many set in `slot` in place and records the change
    /// when `edit` returns true; nil, touching nothing, when the slot holds no resolved set
    /// or an observer (undo) needs the old value. The set is moved out of `values` for the
    /// edit so its storage is uniquely referenced: one element touched, not a copy of the
    /// whole relationship per change (a copy is made at most once, while `committed`
    /// still shares the storage).
    private func editSetInPlace(_ slot: Int, _ edit: (inout Set<NSManagedObject>) -> Bool) -> Bool? {
        fireFaultIfNeeded()
        // The exact type first: a cast that fails would try bridging; the set is bound
        // straight from the slot, so no other binding keeps its storage referenced.
        // The set is read in its case: no `Any` made and cast back (a cast that fails
        // would try bridging), and bound straight from the slot, so no other binding keeps
        // its storage referenced once the slot lets go of it.
        // The slot's case before the context's observer: most slots a delete rule edits are
        // unresolved to-manys, and the context is a weak reference, dearer to read.
        // The context is read once (a weak handle's read, ~100 instructions) for the
        // observer check and the change's record.
        guard slot < values.count, case .objects(var set) = values.storage[slot] else { return nil }
        let context = managedObjectContext
        guard context?.lifecycle.observer == nil else { return nil }
        values.storage[slot] = .null
        let changed = edit(&set)
        values.storage[slot] = .objects(set)
        if changed { ObjectLifecycle.changedInPlace(self, slot: slot, context: context) }
        return changed
    }

    // MARK: Context-neutral values

    /// The object's values in stored form (relationships as object IDs), for a store row
    /// or a child context. `map` replaces IDs (temporary to permanent at save).
    ///
    /// A stored attribute whose value is of its type's canonical case, and a to-one holding
    /// its object, are stored straight from the slot, read in place (no copy of the value),
    /// after one read of the layout's per-slot form; every other slot goes through
    /// ``storeValue(slot:of:mapping:)``, which gives the same for those two.
    func storeValues(mapping map: TemporaryIDMapping = [:]) throws -> [StoreValue] {
        fireFaultIfNeeded()
        let current = values
        let forms = layout.storeFormBySlot
        // The result is allocated at its size and filled in place (a reserved empty array
        // went through the general grow path, ~330 instructions per object).
        return try current.storage.withUnsafeBufferPointer { slots in
            try [StoreValue](unsafeUninitializedCapacity: slots.count) { result, initialized in
                guard let base = result.baseAddress else { return }
                for slot in slots.indices {
                    let stored: StoreValue
                    switch slot < forms.count ? forms[slot] : .none {
                    case .attribute(let type):
                        stored =
                            try slots[slot].canonicalStoreValue(of: type)
                            ?? storeValue(slot: slot, of: current, mapping: map)
                    case .toOne:
                        if case .object(let destination) = slots[slot] {
                            let id = destination.objectID
                            stored = .objectID(map[id] ?? id)
                        } else {
                            stored = try storeValue(slot: slot, of: current, mapping: map)
                        }
                    case .toMany, .none:
                        stored = try storeValue(slot: slot, of: current, mapping: map)
                    }
                    (base + slot).initialize(to: stored)
                    initialized += 1
                }
            }
        }
    }

    /// The stored form of one slot.
    func storeValue(slot: Int, mapping map: TemporaryIDMapping) throws -> StoreValue {
        try storeValue(slot: slot, of: values, mapping: map)
    }

    /// The stored form of `slot` of `values` (the current values, or a snapshot's). The
    /// array, not the slot's value, is passed: reading the value in place spares a copy
    /// of it per slot on every save.
    func storeValue(slot: Int, of values: SlotValues, mapping map: TemporaryIDMapping) throws
        -> StoreValue
    {
        if let attributeType = layout.attributeTypeBySlot[slot] {
            if layout.transientBySlot[slot] { return .null }
            let typed = values.storage[slot]
            if let stored = typed.canonicalStoreValue(of: attributeType) { return stored }
            guard let value = typed.anyValue else { return .null }
            if let expected = layout.canonicalTypeBySlot[slot], ObjectIdentifier(type(of: value)) == expected,
                let stored = StoreValue(canonical: value, of: attributeType)
            {
                return stored
            }
            guard let attribute = layout.attributeBySlot[slot] else { return .null }
            return try attribute.storeValue(value)
        }
        guard layout.relationshipBySlot[slot] != nil else { return .null }
        let toMany = layout.toManyBySlot[slot]
        // Every case by name (no default): a new relationship form must say how it is stored.
        switch values.storage[slot] {
        case .unresolved(let unresolved):
            // Edits of a list the store computes are written through their inverse to-ones.
            if !toMany, !unresolved.hasEdits, let destination = unresolved.destination {
                return .objectID(map[destination] ?? destination)
            }
            guard let ids = unresolved.objectIDs else { return .unresolved }
            let mapped = unresolved.applyingEdits(to: ids, mapping: map)
            return toMany ? .objectIDs(mapped) : mapped.first.map { .objectID($0) } ?? .null
        case .object(let destination):
            if toMany { return .objectIDs([]) }
            let id = destination.objectID
            return .objectID(map[id] ?? id)
        case .objects(let set):
            return toMany ? .objectIDs(set.map { map[$0.objectID] ?? $0.objectID }) : .null
        case .orderedObjects(let array):
            return toMany ? .objectIDs(array.map { map[$0.objectID] ?? $0.objectID }) : .null
        case .null, .int16, .int32, .int64, .double, .bool, .string, .date, .uuid, .data:
            return toMany ? .objectIDs([]) : .null
        case .other(let box):
            // A collection of a subclass (`Set<Person>`, `[Person]`) or a destination set
            // through key-value coding as another type keeps its exact type in the box.
            if toMany {
                let objects: [NSManagedObject]
                switch box.value {
                case let set as Set<NSManagedObject>: objects = Array(set)
                case let array as [NSManagedObject]: objects = array
                default: objects = []
                }
                return .objectIDs(objects.map { map[$0.objectID] ?? $0.objectID })
            }
            guard let destination = box.value as? NSManagedObject else { return .null }
            return .objectID(map[destination.objectID] ?? destination.objectID)
        }
    }

    /// Values for this object from stored form (relationships left unresolved).
    func objectValues(from stored: [StoreValue]) -> SlotValues {
        var result = SlotValues()
        result.reserveCapacity(layout.properties.count)
        for slot in layout.properties.indices {
            let value = slot < stored.count ? stored[slot] : .null
            if let attribute = layout.attributeBySlot[slot] {
                // Strings, dates and nulls read the same for every attribute type (see attributeValue).
                switch value {
                case .string(let string): result.append(string)
                case .date(let date): result.append(date)
                case .null: result.append(nil)
                default: result.append(attribute.attributeValue(value))
                }
            } else if let relationship = layout.relationshipBySlot[slot] {
                switch value {
                case .objectID(let id): result.append(UnresolvedRelationship(destination: id))
                case .objectIDs(let ids): result.append(UnresolvedRelationship(objectIDs: ids))
                case .unresolved: result.append(UnresolvedRelationship(objectIDs: nil))
                default:
                    if relationship.isToMany {
                        result.append(relationship.isOrdered ? [NSManagedObject]() as Any : Set<NSManagedObject>())
                    } else {
                        result.append(nil)
                    }
                }
            } else {
                result.append(nil)
            }
        }
        return result
    }
}

extension Set where Element == NSManagedObject {
    /// Inserts `object`, growing a full set to four times its count first; whether it was
    /// not in the set yet.
    ///
    /// A to-many grows one member per edit (`employee.company = company` adds the employee
    /// to `company.employees`), and a `Set` grows by doubling: every member was hashed
    /// again (SipHash through NSObject's dynamic `hash`) about twice over the set's life,
    /// ~400 instructions per insert at a hundred members. Growing by four moves each
    /// member a third as often; a set has room for at most 5.3 times its members.
    @inline(__always)
    mutating func insertGrowingAhead(_ object: NSManagedObject) -> Bool {
        if count >= capacity { reserveCapacity(Swift.max(8, count * 4)) }
        return insert(object).inserted
    }
}
