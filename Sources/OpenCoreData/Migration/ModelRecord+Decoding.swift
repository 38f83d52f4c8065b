// Building a model back from a store's model record (SPEC.md §3.11). The record is read
// from a file: every value is checked for its type, every name it refers to must exist,
// and anything else is a damaged-file error naming the problem, never a trap.
import Foundation

extension ModelRecord {
    /// The model `record` describes, its version hashes equal to those of the model the
    /// record was made from. Entities use `NSManagedObject` unless `withClasses`.
    ///
    /// - Throws: `NSFileReadCorruptFileError` (259) naming what is wrong with the record.
    static func model(from record: Data, withClasses: Bool = false) throws -> NSManagedObjectModel {
        let dictionary = try record.withUnsafeBytes { raw -> [String: Any] in
            var reader = StoreByteReader(raw, what: "the model record", errorCode: NSFileReadCorruptFileError)
            let dictionary = try StoreMetadataCoding.decode(from: &reader)
            guard reader.isAtEnd else { throw reader.damaged("\(reader.remaining) bytes follow the record") }
            return dictionary
        }
        var decoder = Decoder(withClasses: withClasses)
        return try decoder.model(dictionary)
    }

    /// The model recorded in `metadata`, or nil when the store predates model records.
    ///
    /// - Throws: `NSFileReadCorruptFileError` (259) for a damaged record.
    static func model(in metadata: [String: Any]) throws -> NSManagedObjectModel? {
        guard let value = metadata[metadataKey] else { return nil }
        guard let data = value as? Data else { throw damaged("it is not data") }
        return try model(from: data)
    }

    static func damaged(_ problem: String) -> NSError {
        CoreDataError.make(NSFileReadCorruptFileError, "the store's model record is damaged: \(problem)")
    }

    /// Reads the dictionaries of a record into descriptions, then links relationships,
    /// inverses, superentities, indexes and constraints by name.
    private struct Decoder {
        let withClasses: Bool
        var entitiesByName: [String: NSEntityDescription] = [:]
        /// Relationships and the names they refer to, linked once every entity exists.
        var pendingRelationships: [(NSRelationshipDescription, owner: String, destination: String, inverse: String?)] =
            []

        init(withClasses: Bool) {
            self.withClasses = withClasses
        }

        mutating func model(_ dictionary: [String: Any]) throws -> NSManagedObjectModel {
            let format = try integer(dictionary, "format", in: "the record")
            guard format == ModelRecord.format else {
                throw ModelRecord.damaged("its format is \(format); this version reads format \(ModelRecord.format)")
            }
            let model = NSManagedObjectModel()
            model.versionIdentifiers = Set(try strings(dictionary, "versionIdentifiers", in: "the record"))
            let entityDictionaries = try dictionaries(dictionary, "entities", in: "the record")
            var entities: [NSEntityDescription] = []
            for entityDictionary in entityDictionaries {
                let entity = try self.entity(entityDictionary)
                guard let name = entity.name, entitiesByName[name] == nil else {
                    throw ModelRecord.damaged("entity '\(entity.name ?? "")' is recorded twice")
                }
                entitiesByName[name] = entity
                entities.append(entity)
            }
            for (entity, entityDictionary) in zip(entities, entityDictionaries) {
                guard let parent = try optionalString(entityDictionary, "superentity", in: entity.name ?? "") else {
                    continue
                }
                guard let superentity = entitiesByName[parent], superentity !== entity else {
                    throw ModelRecord.damaged("entity '\(entity.name ?? "")' names a missing superentity '\(parent)'")
                }
                superentity.subentities.append(entity)
            }
            try checkHierarchy(entities)
            try linkRelationships()
            for (entity, entityDictionary) in zip(entities, entityDictionaries) {
                try linkIndexesAndConstraints(entity, entityDictionary)
            }
            model.entities = entities
            return model
        }

        private func checkHierarchy(_ entities: [NSEntityDescription]) throws {
            for entity in entities {
                var seen: Set<ObjectIdentifier> = []
                var current: NSEntityDescription? = entity
                while let candidate = current {
                    guard seen.insert(ObjectIdentifier(candidate)).inserted else {
                        throw ModelRecord.damaged("entity '\(entity.name ?? "")' is its own superentity")
                    }
                    current = candidate.superentity
                }
            }
        }

        private mutating func entity(_ dictionary: [String: Any]) throws -> NSEntityDescription {
            let entity = NSEntityDescription()
            let name = try string(dictionary, "name", in: "an entity")
            guard !name.isEmpty else { throw ModelRecord.damaged("an entity has no name") }
            entity.name = name
            if withClasses { entity.managedObjectClassName = try string(dictionary, "class", in: name) }
            entity.isAbstract = try flag(dictionary, "abstract", in: name)
            entity.renamingIdentifier = try optionalString(dictionary, "renamingIdentifier", in: name)
            entity.versionHashModifier = try optionalString(dictionary, "versionHashModifier", in: name)
            var properties: [NSPropertyDescription] = []
            var names: Set<String> = []
            for propertyDictionary in try dictionaries(dictionary, "properties", in: name) {
                let property = try self.property(propertyDictionary, owner: name)
                guard names.insert(property.name).inserted else {
                    throw ModelRecord.damaged("\(name).\(property.name) is recorded twice")
                }
                properties.append(property)
            }
            entity.properties = properties
            return entity
        }

        private mutating func property(_ dictionary: [String: Any], owner: String) throws -> NSPropertyDescription {
            let kind = try string(dictionary, "kind", in: "a property of \(owner)")
            let name = try string(dictionary, "name", in: "a property of \(owner)")
            let place = "\(owner).\(name)"
            guard !name.isEmpty else { throw ModelRecord.damaged("a property of \(owner) has no name") }
            let property: NSPropertyDescription
            switch kind {
            case "attribute", "derived", "composite":
                property = try attribute(dictionary, kind: kind, place: place)
            case "relationship":
                let relationship = NSRelationshipDescription()
                relationship.minCount = try integer(dictionary, "minCount", in: place)
                relationship.maxCount = try integer(dictionary, "maxCount", in: place)
                let rule = try integer(dictionary, "deleteRule", in: place)
                guard let deleteRule = UInt(exactly: rule).flatMap(NSDeleteRule.init(rawValue:)) else {
                    throw ModelRecord.damaged("\(place) has an unknown delete rule \(rule)")
                }
                relationship.deleteRule = deleteRule
                relationship.isOrdered = try flag(dictionary, "ordered", in: place)
                pendingRelationships.append(
                    (
                        relationship, owner, try string(dictionary, "destination", in: place),
                        try optionalString(dictionary, "inverse", in: place)
                    ))
                property = relationship
            case "fetched":
                let fetched = NSFetchedPropertyDescription()
                if let entityName = try optionalString(dictionary, "fetchEntity", in: place) {
                    let request = NSFetchRequest<NSFetchRequestResult>(entityName: entityName)
                    if let text = try optionalString(dictionary, "fetchPredicate", in: place) {
                        request.predicate = try? NSPredicate(validatingFormat: text, argumentArray: nil)
                    }
                    fetched.fetchRequest = request
                }
                property = fetched
            case "property":
                property = NSPropertyDescription()
            default:
                throw ModelRecord.damaged("\(place) is of unknown kind '\(kind)'")
            }
            property.name = name
            try read(ModelRecord.propertyFields, into: property, from: dictionary, in: place)
            return property
        }

        private mutating func attribute(_ dictionary: [String: Any], kind: String, place: String) throws
            -> NSAttributeDescription
        {
            let attribute: NSAttributeDescription
            switch kind {
            case "derived":
                let text = try string(dictionary, "derivation", in: place)
                let derived = RecordedDerivedAttributeDescription(recordedDerivation: text)
                derived.derivationExpression = NSExpression(format: text, argumentArray: [])
                attribute = derived
            case "composite":
                let composite = NSCompositeAttributeDescription()
                composite.elements = try dictionaries(dictionary, "elements", in: place).map { element in
                    guard let attribute = try self.property(element, owner: place) as? NSAttributeDescription else {
                        throw ModelRecord.damaged("an element of \(place) is not an attribute")
                    }
                    return attribute
                }
                attribute = composite
            default:
                attribute = NSAttributeDescription()
            }
            let raw = try integer(dictionary, "type", in: place)
            guard let type = UInt(exactly: raw).flatMap(NSAttributeType.init(rawValue:)) else {
                throw ModelRecord.damaged("\(place) has an unknown attribute type \(raw)")
            }
            attribute.attributeType = type
            try read(ModelRecord.attributeFields, into: attribute, from: dictionary, in: place)
            if let value = dictionary["default"] {
                guard let data = value as? Data else {
                    throw ModelRecord.damaged("the default of \(place) is not data")
                }
                let stored = try data.withUnsafeBytes { raw -> StoreValue in
                    var reader = StoreByteReader(
                        raw, what: "the default of \(place)", errorCode: NSFileReadCorruptFileError)
                    let value = try reader.value { _, _ in
                        throw ModelRecord.damaged("the default of \(place) is an object ID")
                    }
                    guard reader.isAtEnd else { throw reader.damaged("bytes follow the value") }
                    return value
                }
                attribute.defaultValue = attribute.attributeValue(stored)
            }
            return attribute
        }

        private func linkRelationships() throws {
            for (relationship, owner, destinationName, inverseName) in pendingRelationships {
                let place = "\(owner).\(relationship.name)"
                guard let destination = entitiesByName[destinationName] else {
                    throw ModelRecord.damaged("\(place) names a missing destination entity '\(destinationName)'")
                }
                relationship.destinationEntity = destination
                guard let inverseName else { continue }
                guard let inverse = destination.relationshipsByName[inverseName] else {
                    throw ModelRecord.damaged("\(place) names a missing inverse '\(destinationName).\(inverseName)'")
                }
                relationship.inverseRelationship = inverse
            }
        }

        private func linkIndexesAndConstraints(_ entity: NSEntityDescription, _ dictionary: [String: Any]) throws {
            let name = entity.name ?? ""
            let properties = entity.propertiesByName
            guard let constraints = dictionary["uniquenessConstraints"] as? [Any] else {
                throw ModelRecord.damaged("\(name) has no uniqueness constraint list")
            }
            entity.uniquenessConstraints = try constraints.map { group in
                guard let names = group as? [Any], names.allSatisfy({ $0 is String }) else {
                    throw ModelRecord.damaged("a uniqueness constraint of \(name) is not a list of names")
                }
                return names
            }
            entity.indexes = try dictionaries(dictionary, "indexes", in: name).map { index in
                let indexName = try string(index, "name", in: "an index of \(name)")
                let place = "index \(name).\(indexName)"
                let elements = try dictionaries(index, "elements", in: place).map { element in
                    let propertyName = try string(element, "property", in: place)
                    guard let property = NSEntityDescription.property(atKeyPath: propertyName, in: properties) else {
                        throw ModelRecord.damaged("\(place) names a missing property '\(propertyName)'")
                    }
                    let collation = try integer(element, "collation", in: place)
                    guard let type = UInt(exactly: collation).flatMap(NSFetchIndexElementType.init(rawValue:)) else {
                        throw ModelRecord.damaged("\(place) has an unknown collation \(collation)")
                    }
                    let description = NSFetchIndexElementDescription(property: property, collationType: type)
                    description.isAscending = try flag(element, "ascending", in: place)
                    return description
                }
                let description = NSFetchIndexDescription(name: indexName, elements: elements)
                if let text = try optionalString(index, "predicate", in: place) {
                    description.partialIndexPredicate = try? NSPredicate(validatingFormat: text, argumentArray: nil)
                }
                return description
            }
        }

        // MARK: Typed values

        private func value<T>(_ dictionary: [String: Any], _ key: String, in place: String, as type: T.Type) throws -> T
        {
            guard let value = dictionary[key] else { throw ModelRecord.damaged("\(place) has no '\(key)'") }
            guard let typed = value as? T else { throw ModelRecord.damaged("'\(key)' of \(place) is not a \(T.self)") }
            return typed
        }

        private func string(_ dictionary: [String: Any], _ key: String, in place: String) throws -> String {
            try value(dictionary, key, in: place, as: String.self)
        }

        private func optionalString(_ dictionary: [String: Any], _ key: String, in place: String) throws -> String? {
            guard dictionary[key] != nil else { return nil }
            return try string(dictionary, key, in: place)
        }

        private func integer(_ dictionary: [String: Any], _ key: String, in place: String) throws -> Int {
            try value(dictionary, key, in: place, as: Int.self)
        }

        /// Sets `description`'s plain `fields` from its record `dictionary`.
        private func read<Description>(
            _ fields: [(key: String, field: ModelRecord.Field<Description>)], into description: Description,
            from dictionary: [String: Any], in place: String
        ) throws {
            for (key, field) in fields {
                switch field {
                case .flag(let path): description[keyPath: path] = try flag(dictionary, key, in: place)
                case .text(let path): description[keyPath: path] = try optionalString(dictionary, key, in: place)
                }
            }
        }

        private func flag(_ dictionary: [String: Any], _ key: String, in place: String) throws -> Bool {
            try value(dictionary, key, in: place, as: Bool.self)
        }

        private func strings(_ dictionary: [String: Any], _ key: String, in place: String) throws -> [String] {
            let list = try value(dictionary, key, in: place, as: [Any].self)
            return try list.map { item in
                guard let text = item as? String else {
                    throw ModelRecord.damaged("'\(key)' of \(place) holds a non-string")
                }
                return text
            }
        }

        private func dictionaries(_ dictionary: [String: Any], _ key: String, in place: String) throws
            -> [[String: Any]]
        {
            let list = try value(dictionary, key, in: place, as: [Any].self)
            return try list.map { item in
                guard let entry = item as? [String: Any] else {
                    throw ModelRecord.damaged("'\(key)' of \(place) holds a non-dictionary")
                }
                return entry
            }
        }
    }
}
