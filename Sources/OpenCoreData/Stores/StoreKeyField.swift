// What a uniqueness constraint or a fetch index keys: an attribute, or an element of a
// composite attribute named by its key path (`location.latitude`, `spot.geo.lat`). The
// stores read an element's value out of the composite's stored bytes (SPEC.md §3.2 R1b)
// by name, without the model, so `verify()` and migrations key rows exactly as saves do.
import Foundation

/// One keyed value of a row: the attribute in `slot`, or the element `elementPath` of the
/// composite attribute in that slot.
struct StoreKeyField: Hashable, Sendable {
    let slot: Int
    /// Element names from the composite attribute down; empty for the whole attribute.
    let elementPath: [String]

    init(slot: Int, elementPath: [String] = []) {
        self.slot = slot
        self.elementPath = elementPath
    }

    /// The field's value in a row's `values`: nil when the slot is missing, the composite
    /// is nil or lacks the element, or its bytes cannot be read (damage `verify()` reports
    /// through the row itself).
    func value(in values: [StoreValue]) -> StoreValue {
        let whole = slot < values.count ? values[slot] : .null
        return elementPath.isEmpty ? whole : Self.element(elementPath[...], of: whole)
    }

    private static func element(_ path: ArraySlice<String>, of value: StoreValue) -> StoreValue {
        guard let name = path.first, case .binary(let data) = value else { return .null }
        let found: StoreValue? = data.withUnsafeBytes { raw in
            var reader = StoreByteReader(raw, what: "a composite value", errorCode: NSFileReadCorruptFileError)
            guard let count = try? reader.count(atMost: reader.remaining / 2) else { return nil }
            for _ in 0..<count {
                guard let elementName = try? reader.string(),
                    let stored = try? reader.value(objectID: { _, _ in throw CocoaError(.fileReadCorruptFile) })
                else { return nil }
                if elementName == name { return stored }
            }
            return nil
        }
        guard let found else { return .null }
        return path.count == 1 ? found : element(path.dropFirst(), of: found)
    }

    /// The field as the catalog record lists it: the slot, then `.element` per path step.
    var recordText: String { ([String(slot)] + elementPath).joined(separator: ".") }

    /// The field a catalog record lists, or nil for damaged text.
    init?(recordText text: Substring) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard let first = parts.first, let slot = Int(first), slot >= 0, !parts.dropFirst().contains(where: \.isEmpty)
        else { return nil }
        self.init(slot: slot, elementPath: parts.dropFirst().map(String.init))
    }
}

extension EntityLayout {
    /// The fields and types of `names`, each an attribute or a composite element's key
    /// path; nil when there are none or one names nothing of the kind.
    func keyFields(named names: [String]) -> (fields: [StoreKeyField], attributeTypes: [NSAttributeType])? {
        var fields: [StoreKeyField] = []
        var types: [NSAttributeType] = []
        for name in names {
            guard let (field, attribute) = keyField(named: name) else { return nil }
            fields.append(field)
            types.append(attribute.attributeType)
        }
        return fields.isEmpty ? nil : (fields, types)
    }

    /// The field `keyPath` names and its attribute (the element's for a composite element).
    func keyField(named keyPath: String) -> (StoreKeyField, NSAttributeDescription)? {
        // An attribute's own name, what nearly every predicate and sort names, is one
        // lookup: no split into steps.
        if !keyPath.utf8.contains(UInt8(ascii: ".")) {
            guard let slot = slotsByName[keyPath], let attribute = attributeBySlot[slot] else { return nil }
            return (StoreKeyField(slot: slot, elementPath: []), attribute)
        }
        let steps = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard let head = steps.first, let slot = slotsByName[head], var attribute = attributeBySlot[slot] else {
            return nil
        }
        for step in steps.dropFirst() {
            guard let composite = attribute as? NSCompositeAttributeDescription,
                let element = composite.elements.first(where: { $0.name == step })
            else { return nil }
            attribute = element
        }
        return (StoreKeyField(slot: slot, elementPath: Array(steps.dropFirst())), attribute)
    }

    /// The key path of `field` (`spot.geo.lat`).
    func keyPath(of field: StoreKeyField) -> String {
        ([properties[field.slot].name] + field.elementPath).joined(separator: ".")
    }
}

extension NSEntityDescription {
    /// The key path an index element names: its property's name, or `composite.element`
    /// when the property is an element of one of this entity's composite attributes
    /// (nested ones included).
    func keyPath(ofIndexed property: NSPropertyDescription) -> String {
        func search(_ composite: NSCompositeAttributeDescription, _ prefix: String) -> String? {
            for element in composite.elements {
                let path = prefix + "." + element.name
                if element === property { return path }
                if let nested = element as? NSCompositeAttributeDescription, let found = search(nested, path) {
                    return found
                }
            }
            return nil
        }
        if layout.properties.contains(where: { $0 === property }) { return property.name }
        for case let composite as NSCompositeAttributeDescription in layout.properties {
            if let found = search(composite, composite.name) { return found }
        }
        return property.name
    }

    /// The property `keyPath` names among `properties` (by name): one of them, or an
    /// element of a composite one (nested ones included); nil when it names nothing.
    static func property(atKeyPath keyPath: String, in properties: [String: NSPropertyDescription])
        -> NSPropertyDescription?
    {
        let steps = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard let head = steps.first, var property = properties[head] else { return nil }
        for step in steps.dropFirst() {
            guard let composite = property as? NSCompositeAttributeDescription,
                let element = composite.elements.first(where: { $0.name == step })
            else { return nil }
            property = element
        }
        return property
    }

    /// The attribute (or composite element) at `keyPath`, inherited properties included.
    func attribute(atKeyPath keyPath: String) -> NSAttributeDescription? {
        layout.keyField(named: keyPath)?.1
    }
}
