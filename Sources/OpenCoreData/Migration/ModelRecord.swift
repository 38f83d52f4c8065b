// The model a store was written with, recorded in the store's metadata (SPEC.md §3.11),
// so a later version of the app can compare its model with the store's and migrate from
// it without the old model file: "unknown model version" cannot happen.
//
// The record is a dictionary in the store metadata encoding (StoreMetadataCoding, SPEC.md
// §4: keys sorted, so one model gives one byte string), kept under the metadata key
// `OpenCoreDataModel` as data:
//
//   KEY                   VALUE
//   format                integer 1
//   versionIdentifiers    array of strings, sorted
//   entities              array, model order, of entity dictionaries:
//     name, class         strings (class: managedObjectClassName)
//     abstract            Boolean
//     superentity         string (absent for a root entity)
//     renamingIdentifier, versionHashModifier   strings (absent when nil)
//     properties          array, declaration order, of property dictionaries (below)
//     uniquenessConstraints   array of arrays of property names
//     indexes             array of {name, elements: [{property, ascending, collation}], predicate?}
//   property: kind ("attribute", "derived", "composite", "relationship", "fetched"),
//     name, optional, transient, indexed, renamingIdentifier?, versionHashModifier?;
//     attributes: type (NSAttributeType raw value), default? (data: one tagged value of
//     SPEC.md §3.7's value encoding), transformer?, valueClass?, external,
//     preservesOnDeletion; derived: derivation (the expression's text); composite:
//     elements (attribute dictionaries); relationships: destination, inverse?, minCount,
//     maxCount, deleteRule, ordered; fetched: fetchEntity?, fetchPredicate?
import Foundation

/// Encodes a model as the record stores keep in their metadata, and builds the model back.
enum ModelRecord {
    /// The metadata key of the record.
    static let metadataKey = "OpenCoreDataModel"
    /// The record's format.
    static let format = 1

    /// The record of `model`.
    ///
    /// - Throws: `NSPersistentStoreSaveError` when a value cannot be encoded (it cannot
    ///   happen for models whose defaults have their attribute's type).
    static func encode(_ model: NSManagedObjectModel) throws -> Data {
        var writer = StoreByteWriter()
        try StoreMetadataCoding.encode(dictionary(of: model), into: &writer)
        return Data(writer.bytes)
    }

    /// The dictionary of `model`, before it is encoded.
    static func dictionary(of model: NSManagedObjectModel) -> [String: Any] {
        [
            "format": format,
            "versionIdentifiers": versionIdentifiers(of: model),
            "entities": model.entities.map(entityDictionary),
        ]
    }

    /// The model's version identifiers as text, sorted: what stores record under
    /// `NSStoreModelVersionIdentifiersKey`.
    static func versionIdentifiers(of model: NSManagedObjectModel) -> [String] {
        model.versionIdentifiers.map { ($0.base as? String) ?? "\($0.base)" }.sorted()
    }

    private static func entityDictionary(_ entity: NSEntityDescription) -> [String: Any] {
        var result: [String: Any] = [
            "name": entity.name ?? "",
            "class": entity.managedObjectClassName ?? "NSManagedObject",
            "abstract": entity.isAbstract,
            "properties": entity.properties.map(propertyDictionary),
            "uniquenessConstraints": entity.uniquenessConstraints.map { group in
                group.map { ($0 as? String) ?? ($0 as? NSPropertyDescription)?.name ?? "\($0)" }
            },
            "indexes": entity.indexes.map { indexDictionary($0, of: entity) },
        ]
        result["superentity"] = entity.superentity?.name
        result["renamingIdentifier"] = entity.renamingIdentifier
        result["versionHashModifier"] = entity.versionHashModifier
        return result
    }

    private static func indexDictionary(_ index: NSFetchIndexDescription, of entity: NSEntityDescription)
        -> [String: Any]
    {
        var result: [String: Any] = [
            "name": index.name,
            "elements": index.elements.map { element -> [String: Any] in
                [
                    // A composite element is recorded by its key path (`location.latitude`).
                    "property": element.property.map(entity.keyPath(ofIndexed:)) ?? "",
                    "ascending": element.isAscending,
                    "collation": Int(element.collationType.rawValue),
                ]
            },
        ]
        result["predicate"] = index.partialIndexPredicate?.predicateFormat
        return result
    }

    /// A plain field of a description's record: a flag or an optional text.
    enum Field<Description: AnyObject> {
        case flag(ReferenceWritableKeyPath<Description, Bool>)
        case text(ReferenceWritableKeyPath<Description, String?>)

        /// The field's value in `description`, as the record holds it (nil: no entry).
        func value(of description: Description) -> Any? {
            switch self {
            case .flag(let path): return description[keyPath: path]
            case .text(let path): return description[keyPath: path]
            }
        }
    }

    /// The record keys of a property's plain fields with the description properties they
    /// hold: the one mapping `propertyDictionary` writes and the decoder reads back.
    static var propertyFields: [(key: String, field: Field<NSPropertyDescription>)] {
        [
            ("optional", .flag(\.isOptional)), ("transient", .flag(\.isTransient)), ("indexed", .flag(\.isIndexed)),
            ("renamingIdentifier", .text(\.renamingIdentifier)),
            ("versionHashModifier", .text(\.versionHashModifier)),
        ]
    }

    /// The plain fields an attribute's record adds to its property's.
    static var attributeFields: [(key: String, field: Field<NSAttributeDescription>)] {
        [
            ("transformer", .text(\.valueTransformerName)), ("valueClass", .text(\.attributeValueClassName)),
            ("external", .flag(\.allowsExternalBinaryDataStorage)),
            ("preservesOnDeletion", .flag(\.preservesValueInHistoryOnDeletion)),
        ]
    }

    static func propertyDictionary(_ property: NSPropertyDescription) -> [String: Any] {
        var result: [String: Any] = ["name": property.name]
        for (key, field) in propertyFields { result[key] = field.value(of: property) }
        switch property {
        case let attribute as NSAttributeDescription:
            result["kind"] = "attribute"
            result["type"] = Int(attribute.attributeType.rawValue)
            if let stored = try? attribute.storeValue(attribute.defaultValue), stored != .null {
                var writer = StoreByteWriter()
                writer.value(stored, entityNumber: { _ in 0 })
                result["default"] = Data(writer.bytes)
            }
            for (key, field) in attributeFields { result[key] = field.value(of: attribute) }
            if let derived = attribute as? NSDerivedAttributeDescription {
                result["kind"] = "derived"
                result["derivation"] = derived.derivationText
            } else if let composite = attribute as? NSCompositeAttributeDescription {
                result["kind"] = "composite"
                result["elements"] = composite.elements.map(propertyDictionary)
            }
        case let relationship as NSRelationshipDescription:
            result["kind"] = "relationship"
            result["destination"] = relationship.destinationEntity?.name ?? ""
            result["inverse"] = relationship.inverseRelationship?.name
            result["minCount"] = relationship.minCount
            result["maxCount"] = relationship.maxCount
            result["deleteRule"] = Int(relationship.deleteRule.rawValue)
            result["ordered"] = relationship.isOrdered
        case let fetched as NSFetchedPropertyDescription:
            result["kind"] = "fetched"
            result["fetchEntity"] = fetched.fetchRequest?.entityName
            result["fetchPredicate"] = fetched.fetchRequest?.predicate?.predicateFormat
        default:
            result["kind"] = "property"
        }
        return result
    }
}

extension NSDerivedAttributeDescription {
    /// The derivation as text: the version hash's component, and what the model record keeps.
    var derivationText: String {
        (self as? RecordedDerivedAttributeDescription)?.recordedDerivation ?? derivationExpression.map { "\($0)" } ?? ""
    }
}

/// A derived attribute built from a model record: its version hash takes the recorded
/// derivation text as it was, whether or not the text parses back into an expression.
final class RecordedDerivedAttributeDescription: NSDerivedAttributeDescription, @unchecked Sendable {
    let recordedDerivation: String

    init(recordedDerivation: String) {
        self.recordedDerivation = recordedDerivation
        super.init()
    }

    override var versionHashComponents: [String] {
        Array(super.versionHashComponents.dropLast()) + [recordedDerivation]
    }
}
