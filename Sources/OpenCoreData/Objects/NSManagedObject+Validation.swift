// Validation: the model's rules (mandatory values, types, relationship counts,
// validation predicates, deny delete rules), run for every changed object at save.
import Foundation

extension NSManagedObject {
    /// Checks one value for `key` against the model's rules for it.
    ///
    /// Core Data passes an autoreleasing pointer; here the value is `inout` and may be
    /// replaced by a coerced one (an `Int` 30 becomes `Int16` 30 for an Integer 16 attribute).
    ///
    /// - Throws: `KeyValueCodingError.unknownKey` for an unknown key; a validation error otherwise.
    public func validateValue(_ value: inout Any?, forKey key: String) throws {
        guard let slot = layout.slotsByName[key] else {
            throw KeyValueCodingError.unknownKey(key, in: entity.name ?? "entity")
        }
        if let attribute = layout.attributeBySlot[slot],
            case .value(let coerced) = attribute.attributeType.coerce(value)
        {
            value = coerced
        }
        if let error = CoreDataError.combining(validationErrors(slot: slot, value: value)) { throw error }
    }

    /// The destinations of a relationship slot.
    func destinations(_ slot: Int) -> [NSManagedObject] {
        guard let relationship = layout.relationshipBySlot[slot] else { return [] }
        if relationship.isToMany { return toManyObjects(slot) }
        return toOneObject(slot).map { [$0] } ?? []
    }

    /// The identity of the dynamic type of `value`, nil for nil.
    @inline(__always)
    static func dynamicType(of value: Any?) -> ObjectIdentifier? {
        guard let value else { return nil }
        return ObjectIdentifier(type(of: value))
    }

    func propertyValidationErrors() -> [Error] {
        fireFaultIfNeeded()
        var errors: [Error] = []
        let layout = self.layout
        for slot in layout.properties.indices {
            if layout.plainAttributeBySlot[slot] {
                // The common case, checked without building anything: a value of the
                // attribute's own type (read from its case, no `Any` made), or nil where
                // nil is allowed.
                switch values.storage[slot] {
                case .null:
                    if layout.mayBeNilBySlot[slot] { continue }
                case .other(let box):
                    if let expected = layout.canonicalTypeBySlot[slot],
                        ObjectIdentifier(type(of: box.value)) == expected
                    {
                        continue
                    }
                case let typed:
                    if let expected = layout.canonicalTypeBySlot[slot], typed.typedCaseType == expected { continue }
                }
            }
            if let relationship = layout.relationshipBySlot[slot] {
                // Any number of destinations is valid: counting them would copy a loaded
                // list, and loading an unloaded one would register every one as a fault.
                // Read from the layout: the description's properties are dynamically dispatched.
                if layout.countUncheckedBySlot[slot] { continue }
                // A to-one naming an object or its destination's ID is set, which is all its
                // rule asks (resolving it would register the destination per source); nil is
                // valid where the relationship is optional.
                if !layout.toManyBySlot[slot] {
                    switch values.storage[slot] {
                    case .object: continue
                    case .null where relationship.isOptional: continue
                    case .unresolved(let unresolved) where unresolved.objectIDs?.isEmpty == false: continue
                    default: break
                    }
                }
            }
            let value: Any? = layout.relationshipBySlot[slot] != nil ? slotValue(slot) : values[slot]
            errors.append(contentsOf: validationErrors(slot: slot, value: value))
        }
        return errors
    }

    private func validationErrors(slot: Int, value: Any?) -> [Error] {
        let property = layout.properties[slot]
        let name = entity.name ?? "entity"
        if let attribute = layout.attributeBySlot[slot] {
            guard let value else {
                if attribute.isOptional || attribute.isTransient { return [] }
                return [
                    CoreDataError.validation(
                        NSValidationMissingMandatoryPropertyError,
                        "\(name).\(attribute.name) is a required value", object: self, key: attribute.name,
                        value: nil)
                ]
            }
            if case .mismatch = attribute.attributeType.coerce(value) {
                return [
                    CoreDataError.validation(
                        NSManagedObjectValidationError,
                        "\(name).\(attribute.name) holds a \(type(of: value)); its type is "
                            + attribute.attributeType.swiftTypeName,
                        object: self, key: attribute.name, value: value)
                ]
            }
            var errors: [Error] = []
            for (index, predicate) in attribute.validationPredicates.enumerated() {
                let passes = (try? predicate.evaluateThrowing(with: value)) ?? false
                if !passes {
                    let warning =
                        attribute.validationWarnings.indices.contains(index)
                        ? "\(attribute.validationWarnings[index])" : "a validation predicate failed"
                    let code =
                        attribute.validationErrorCodes.indices.contains(index)
                        ? attribute.validationErrorCodes[index] : NSManagedObjectValidationError
                    errors.append(
                        CoreDataError.validation(
                            code, "\(name).\(attribute.name): \(warning)", object: self,
                            key: attribute.name, value: value, predicate: predicate))
                }
            }
            return errors
        }
        guard let relationship = property as? NSRelationshipDescription else { return [] }
        if relationship.isToMany {
            let count = NSManagedObject.objects(in: value)?.count ?? 0
            if count == 0 && !relationship.isOptional {
                return [
                    CoreDataError.validation(
                        NSValidationMissingMandatoryPropertyError,
                        "\(name).\(relationship.name) is a required relationship and is empty", object: self,
                        key: relationship.name, value: value)
                ]
            }
            if count > 0 && count < relationship.minCount {
                return [
                    CoreDataError.validation(
                        NSValidationRelationshipLacksMinimumCountError,
                        "\(name).\(relationship.name) has \(count) object(s), fewer than its minimum "
                            + "\(relationship.minCount)", object: self, key: relationship.name, value: value)
                ]
            }
            if relationship.maxCount > 0 && count > relationship.maxCount {
                return [
                    CoreDataError.validation(
                        NSValidationRelationshipExceedsMaximumCountError,
                        "\(name).\(relationship.name) has \(count) object(s), more than its maximum "
                            + "\(relationship.maxCount)", object: self, key: relationship.name, value: value)
                ]
            }
            return []
        }
        if value == nil && !relationship.isOptional {
            return [
                CoreDataError.validation(
                    NSValidationMissingMandatoryPropertyError,
                    "\(name).\(relationship.name) is a required relationship",
                    object: self, key: relationship.name, value: nil)
            ]
        }
        return []
    }
}
