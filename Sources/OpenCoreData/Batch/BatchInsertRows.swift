// A batch insert's objects as store rows, one at a time: a dictionary (Swift or
// NSMutableDictionary from a handler) or a managed object a handler filled in becomes
// the stored value of every slot, with the model's defaults where nothing was given, and
// the list of attribute slots that were given (an upsert writes only those).
//
// Checked here, before the store writes anything of the row: every key names a stored
// attribute of the entity (not a relationship), every value fits its attribute's type,
// and every non-optional attribute without a default has a value. Nothing else is
// validated, as in Core Data.
import Foundation

/// One row a batch insert writes.
struct BatchInsertRow {
    /// The stored value of every slot: what was given, else the default.
    var values: [StoreValue]
    /// The attribute slots that were given, ascending (what an upsert writes).
    var givenSlots: [Int]
}

/// Produces a batch insert's rows, one per call, from its objects or its handler.
///
/// Not thread-safe: the store pulls rows on the executing context's thread, and the
/// handlers run there as they do in Core Data.
final class BatchInsertRowSource {
    private var builder: BatchInsertRowBuilder
    private let produce: (inout BatchInsertRowBuilder, inout BatchInsertRow) throws -> Bool

    /// The rows of `request`'s objects or handler, for `entity` (resolved in the store's model).
    ///
    /// - Throws: `NSManagedObjectValidationError` (1550) when the request has neither
    ///   objects nor a handler or a default value does not fit its attribute.
    init(_ request: NSBatchInsertRequest, entity: NSEntityDescription) throws {
        builder = try BatchInsertRowBuilder(entity: entity)
        if let objects = request.objectsToInsert {
            var index = 0
            produce = { builder, row in
                guard index < objects.count else { return false }
                defer { index += 1 }
                try builder.fill(&row, from: objects[index])
                return true
            }
        } else if let handler = request.dictionaryHandler {
            var finished = false
            produce = { builder, row in
                guard !finished else { return false }
                let dictionary = NSMutableDictionary()
                if handler(dictionary) {
                    finished = true
                    return false
                }
                try builder.fill(&row, from: dictionary)
                return true
            }
        } else if let handler = request.managedObjectHandler {
            var finished = false
            let objectClass = entity.layout.objectClass
            produce = { builder, row in
                guard !finished else { return false }
                let object = objectClass.init(entity: entity, insertInto: nil)
                if handler(object) {
                    finished = true
                    return false
                }
                try builder.fill(&row, from: object)
                return true
            }
        } else {
            throw CoreDataError.make(
                NSManagedObjectValidationError,
                "batch insert of \(request.entityName): the request has no objects and no handler")
        }
    }

    /// The next row, or nil when there are no more.
    ///
    /// - Throws: as ``BatchInsertRowBuilder``: 1550 for an unknown key, a relationship or a
    ///   value of the wrong type; 1570 for a missing required attribute.
    func next() throws -> BatchInsertRow? {
        var row = BatchInsertRow(values: [], givenSlots: [])
        return try produce(&builder, &row) ? row : nil
    }

    /// Makes `row` the next row, reusing its storage when it holds the previous call's row
    /// (a store writing each row before it asks for the next allocates nothing per row);
    /// false when there are no more.
    ///
    /// - Throws: as ``next()``.
    func next(into row: inout BatchInsertRow) throws -> Bool {
        try produce(&builder, &row)
    }
}

/// Turns one object's values into a row of one entity.
///
/// Everything a row needs from the model is read once per request into plain arrays
/// (``SlotPlan``, the default row, the required slots): a row then costs a key match, a
/// type-identity check and a store value per given attribute, and one copy of the defaults.
struct BatchInsertRowBuilder {
    let entity: NSEntityDescription
    private let layout: EntityLayout
    /// Every slot's stored default: attribute defaults, nil to-ones, empty to-manys.
    private let template: [StoreValue]
    /// Non-optional stored attributes without a default (must be given), ascending.
    private let requiredSlots: [Int]
    /// For each slot: how a given value becomes its stored form.
    private let plans: [SlotPlan]
    /// The given slots of the previous row, shared with the next row that gives the same
    /// ones (most do), so a row costs no new list.
    private var previousGiven: [Int] = []
    private var scratch: [Int] = []
    /// The position of the row being built among the request's objects, for messages.
    private var position = -1
    /// Keys met so far with their slots, in an open-addressed table placed by the key's
    /// length and first bytes: every row names the same few keys, so a key costs a string
    /// comparison or two instead of a hashed lookup.
    private var recentKeys: [(key: String, slot: Int?)?]
    /// A handler's dictionary read out, reused for every row.
    private var handlerKeys: [Any] = []
    private var handlerValues: [Any] = []

    /// What the builder knows of one slot, read from the model once per request.
    private struct SlotPlan {
        /// The identity of the attribute's canonical Swift type (values of exactly that
        /// type need no conversion); nil when it has none or the slot is no attribute.
        let canonical: ObjectIdentifier?
        /// The attribute's type (meaningful only with `canonical`).
        let attributeType: NSAttributeType
        /// Whether nil is a fine value (optional or transient).
        let mayBeNil: Bool
    }

    init(entity: NSEntityDescription) throws {
        self.entity = entity
        let layout = entity.layout
        self.layout = layout
        var template: [StoreValue] = []
        var required: [Int] = []
        var plans: [SlotPlan] = []
        for (slot, property) in layout.properties.enumerated() {
            let attributeType = layout.attributeTypeBySlot[slot]
            plans.append(
                SlotPlan(
                    canonical: layout.canonicalTypeBySlot[slot],
                    attributeType: attributeType ?? .undefinedAttributeType,
                    mayBeNil: layout.mayBeNilBySlot[slot]))
            if let attribute = layout.attributeBySlot[slot] {
                guard !attribute.isTransient, let value = unwrapOptional(attribute.defaultValue) else {
                    template.append(.null)
                    if !attribute.isTransient && !attribute.isOptional { required.append(slot) }
                    continue
                }
                template.append(try Self.stored(value, attribute: attribute))
            } else if let relationship = property as? NSRelationshipDescription, relationship.isToMany {
                template.append(.objectIDs([]))
            } else {
                template.append(.null)
            }
        }
        self.template = template
        self.requiredSlots = required
        self.plans = plans
        var tableSize = 64
        while tableSize < 4 * layout.properties.count { tableSize *= 2 }
        recentKeys = Array(repeating: nil, count: tableSize)
        scratch.reserveCapacity(layout.attributeSlots.count)
    }

    /// Makes `row` the row of a dictionary keyed by attribute name.
    mutating func fill(_ row: inout BatchInsertRow, from dictionary: [String: Any]) throws {
        startRow(&row)
        for (key, value) in dictionary {
            try place(value, forKey: key, in: &row.values)
        }
        try finish(&row)
    }

    /// Makes `row` the row of an `NSDictionary` a handler filled in.
    mutating func fill(_ row: inout BatchInsertRow, from dictionary: NSDictionary) throws {
        startRow(&row)
        #if canImport(Darwin)
            for (rawKey, value) in dictionary { try place(value, forRawKey: rawKey, in: &row.values) }
        #else
            // swift-corelibs-foundation's iterator looks every key up again (hashing it);
            // this reads the keys and values in one pass over the dictionary's storage.
            handlerKeys.removeAll(keepingCapacity: true)
            handlerValues.removeAll(keepingCapacity: true)
            dictionary.getObjects(&handlerValues, andKeys: &handlerKeys, count: dictionary.count)
            for index in handlerKeys.indices where index < handlerValues.count {
                try place(handlerValues[index], forRawKey: handlerKeys[index], in: &row.values)
            }
        #endif
        try finish(&row)
    }

    /// As ``place(_:forKey:in:)`` for a key of a handler's `NSDictionary`.
    private mutating func place(_ value: Any, forRawKey rawKey: Any, in values: inout [StoreValue]) throws {
        // corelibs' getObjects gives keys already bridged to String: taken as they are.
        let opened = canonicalStoreValueAndType(rawKey).stored
        if case .string(let key)? = opened {
            try place(value, forKey: key, in: &values)
            return
        }
        guard let key = (rawKey as? NSString).map({ $0 as String }) ?? (rawKey as? String) else {
            throw CoreDataError.make(
                NSManagedObjectValidationError,
                "\(subject): a key of type \(type(of: rawKey)) is not an attribute name")
        }
        try place(value, forKey: key, in: &values)
    }

    /// Sets `row`'s values to the template of defaults before any is given: a row this
    /// builder filled before has only the slots it was given set back, in place.
    private mutating func startRow(_ row: inout BatchInsertRow) {
        position += 1
        scratch.removeAll(keepingCapacity: true)
        if row.values.count == template.count {
            for slot in row.givenSlots where slot < template.count { row.values[slot] = template[slot] }
        } else {
            row.values = template
        }
        row.givenSlots = []
    }

    /// Stores `value` in the slot of the attribute named `key` (a transient attribute's
    /// value is dropped) and notes the slot as given.
    @inline(__always)
    private mutating func place(_ value: Any, forKey key: String, in values: inout [StoreValue]) throws {
        guard let slot = try cachedSlot(forKey: key) else { return }
        values[slot] = try storedValue(value, slot: slot, key: key)
        scratch.append(slot)
    }

    /// Makes `row` the row of a managed object (in no context) a handler filled in: the
    /// attributes it set.
    mutating func fill(_ row: inout BatchInsertRow, from object: NSManagedObject) throws {
        object.fireFaultIfNeeded()
        startRow(&row)
        for slot in object.dirtySlots.indices where object.dirtySlots[slot] {
            let name = layout.properties[slot].name
            guard try self.slot(forKey: name) != nil else { continue }
            do {
                row.values[slot] = try object.storeValue(slot: slot, mapping: [:])
            } catch {
                throw mismatch(name, underlying: error)
            }
            if case .null = row.values[slot], !layout.mayBeNilBySlot[slot] { throw missing(name, given: true) }
            scratch.append(slot)
        }
        try finish(&row)
    }

    /// The slot of `key`, through ``recentKeys``.
    private mutating func cachedSlot(forKey key: String) throws -> Int? {
        var bytes = key.utf8.makeIterator()
        let first = Int(bytes.next() ?? 0)
        let second = Int(bytes.next() ?? 0)
        let mask = recentKeys.count - 1
        var position = (key.utf8.count &* 31 &+ first &* 7 &+ second) & mask
        while let known = recentKeys[position] {
            if known.key == key { return known.slot }
            position = (position + 1) & mask
        }
        let slot = try slot(forKey: key)
        // Keys an entity has, and only those (others throw above): the table never fills.
        recentKeys[position] = (key, slot)
        return slot
    }

    /// The slot of the stored attribute `key`; nil for a transient attribute (nothing to store).
    ///
    /// - Throws: 1550 naming `key` when it is not an attribute of the entity.
    private func slot(forKey key: String) throws -> Int? {
        guard let slot = layout.slotsByName[key] else {
            throw CoreDataError.make(
                NSManagedObjectValidationError,
                "\(subject): '\(key)' is not a property of the entity",
                userInfo: [NSValidationKeyErrorKey: key])
        }
        guard let attribute = layout.attributeBySlot[slot] else {
            throw CoreDataError.make(
                NSManagedObjectValidationError,
                "\(subject): '\(key)' is a relationship; batch inserts set attributes only",
                userInfo: [NSValidationKeyErrorKey: key])
        }
        return attribute.isTransient ? nil : slot
    }

    /// The stored form of `value` for the attribute in `slot`.
    ///
    /// - Throws: 1550 when it does not fit the attribute's type; 1570 when it is nil and the
    ///   attribute is not optional.
    private func storedValue(_ value: Any, slot: Int, key: String) throws -> StoreValue {
        // Most values are of their attribute's own Swift type: no cast, no conversion.
        let plan = plans[slot]
        let opened = canonicalStoreValueAndType(value)
        if let expected = plan.canonical, opened.type == expected, let stored = opened.stored { return stored }
        // A number (a handler's NSNumber) is neither optional nor NSNull: no protocol
        // conformance lookups to find that out. Only NSNumber itself: a Swift number
        // would bridge to one and be converted as a number rather than as itself.
        if opened.type == ObjectIdentifier(NSNumber.self), let number = value as? NSNumber,
            let attribute = layout.attributeBySlot[slot]
        {
            do {
                return try Self.stored(number, attribute: attribute)
            } catch {
                throw mismatch(key, underlying: error)
            }
        }
        guard let value = unwrapOptional(value), !(value is NSNull) else {
            if !plan.mayBeNil { throw missing(key, given: true) }
            return .null
        }
        guard let attribute = layout.attributeBySlot[slot] else { return .null }
        do {
            return try Self.stored(value, attribute: attribute)
        } catch {
            throw mismatch(key, underlying: error)
        }
    }

    /// The stored form of a non-nil `value` of `attribute`.
    static func stored(_ value: Any, attribute: NSAttributeDescription) throws -> StoreValue {
        if let expected = attribute.attributeType.canonicalType,
            ObjectIdentifier(type(of: value)) == ObjectIdentifier(expected),
            let stored = StoreValue(canonical: value, of: attribute.attributeType)
        {
            return stored
        }
        return try attribute.storeValue(value)
    }

    /// Checks the required attributes and notes the given slots.
    private mutating func finish(_ row: inout BatchInsertRow) throws {
        for slot in requiredSlots {
            if case .null = row.values[slot] { throw missing(layout.properties[slot].name, given: false) }
        }
        scratch.sort()
        if scratch != previousGiven { previousGiven = scratch }
        row.givenSlots = previousGiven
    }

    /// "batch insert of Item, object 3" (counting from 0).
    private var subject: String { "batch insert of \(entity.name ?? "?"), object \(position)" }

    private func missing(_ key: String, given: Bool) -> NSError {
        CoreDataError.make(
            NSValidationMissingMandatoryPropertyError,
            "\(subject): '\(key)' is not optional"
                + (given ? " and cannot be nil" : ", has no default value and was not given"),
            userInfo: [NSValidationKeyErrorKey: key])
    }

    private func mismatch(_ key: String, underlying: Error) -> NSError {
        CoreDataError.make(
            NSManagedObjectValidationError, "\(subject): \((underlying as NSError).localizedDescription)",
            userInfo: [NSValidationKeyErrorKey: key, NSUnderlyingErrorKey: underlying])
    }
}
