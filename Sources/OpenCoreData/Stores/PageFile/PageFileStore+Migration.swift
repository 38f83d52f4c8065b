// Lightweight migration of the default store (SPEC.md §3.3 M2): when the model's version
// hashes differ and the store was added with automatic, inferred migration, rows are
// rewritten by property name in one write transaction — kept properties keep their
// values, new attributes take their defaults, removed ones are dropped — and every index
// is rebuilt. Any failure leaves the file unchanged.
import Foundation
import StorageEngine

extension PageFileStore {
    /// Metadata key: each entity's property names in slot order, for migration by name.
    static let schemaKey = "OpenCoreDataSchema"

    static func schema(of model: NSManagedObjectModel) -> [String: [String]] {
        var result: [String: [String]] = [:]
        for entity in model.entities {
            if let name = entity.name { result[name] = entity.layout.properties.map(\.name) }
        }
        return result
    }

    var migratesAutomatically: Bool {
        func flag(_ key: String) -> Bool {
            guard let value = options?[key] else { return false }
            return (value as? NSNumber)?.boolValue ?? (value as? Bool) ?? false
        }
        return flag(NSMigratePersistentStoresAutomaticallyOption) && flag(NSInferMappingModelAutomaticallyOption)
    }

    /// Rewrites the store for `model`; returns the new metadata.
    ///
    /// - Throws: `NSMigrationError` (134110) when the store has no schema record, a new
    ///   mandatory attribute has no default, a reference names a removed entity, or a
    ///   rebuilt unique index finds duplicates.
    func migrate(_ database: Database, from metadata: [String: Any], to model: NSManagedObjectModel, nextKey: Int64)
        throws -> [String: Any]
    {
        let path = url?.path ?? "?"
        guard let schema = metadata[PageFileStore.schemaKey] as? [String: [String]] else {
            throw CoreDataError.make(
                NSMigrationError, "cannot migrate \(path): the store has no schema record to map properties by name")
        }
        var migrated = metadata
        migrated[NSStoreModelVersionHashesKey] = model.entityVersionHashesByName
        migrated[PageFileStore.schemaKey] = PageFileStore.schema(of: model)
        let codec = self.codec
        try database.write { transaction in
            for name in try transaction.treeNames()
            where name.hasPrefix("index.") || name.hasPrefix("unique.") {
                _ = try transaction.deleteTree(named: name)
            }
            for (entityName, oldNames) in schema.sorted(by: { $0.key < $1.key }) {
                let treeName = "rows.\(entityName)"
                guard let entity = model.entitiesByName[entityName] else {
                    _ = try transaction.deleteTree(named: treeName)
                    continue
                }
                guard let tree = try transaction.tree(named: treeName) else { continue }
                try migrateRows(of: entity, in: tree, oldNames: oldNames, codec: codec, path: path)
            }
            setStoredMetadata(migrated)
            self.nextKey = nextKey
            try writeMetadata(in: transaction)
            try writeCatalog(in: transaction)
            try migrateBlobs(in: transaction, codec: codec)
            try rebuildIndexes(in: transaction, codec: codec, path: path)
        }
        return migrated
    }

    private func migrateRows(
        of entity: NSEntityDescription, in tree: Tree, oldNames: [String], codec: PageFileRowCodec, path: String
    ) throws {
        let layout = entity.layout
        let declared: [NSEntityDescription?] = oldNames.map {
            (layout.propertiesByName[$0] as? NSRelationshipDescription)?.destinationEntity
        }
        let oldSlotByName = Dictionary(oldNames.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        var defaults: [StoreValue] = []
        for (slot, property) in layout.properties.enumerated() {
            if let relationship = property as? NSRelationshipDescription {
                defaults.append(relationship.isToMany ? .objectIDs([]) : .null)
            } else if let attribute = property as? NSAttributeDescription, !attribute.isTransient {
                defaults.append(try attribute.storeValue(layout.defaultValues[slot]))
            } else {
                defaults.append(.null)
            }
        }
        var rewritten: [([UInt8], [UInt8])] = []
        try tree.scan { key, value in
            let decoded = try codec.decode(value, entity: nil, declaredEntities: declared)
            var values: [StoreValue] = []
            for (slot, property) in layout.properties.enumerated() {
                if let old = oldSlotByName[property.name], old < decoded.values.count,
                    fits(decoded.values[old], property)
                {
                    values.append(decoded.values[old])
                } else {
                    if !property.isOptional, !property.isTransient, defaults[slot] == .null,
                        property is NSAttributeDescription
                    {
                        throw CoreDataError.make(
                            NSMigrationError,
                            "cannot migrate \(path): \(entity.name ?? "?").\(property.name) is mandatory and has "
                                + "no default value")
                    }
                    values.append(defaults[slot])
                }
            }
            rewritten.append(
                (Array(key), PageFileRowCodec.encode(values: values, version: decoded.version, layout: layout)))
            return true
        }
        for (key, bytes) in rewritten { try tree.setValue(bytes, forKey: key) }
    }

    /// Whether a stored value can stay in `property` of the new model (same kind of value).
    private func fits(_ value: StoreValue, _ property: NSPropertyDescription) -> Bool {
        if let relationship = property as? NSRelationshipDescription {
            switch value {
            case .objectID: return !relationship.isToMany
            case .objectIDs: return relationship.isToMany
            case .null: return !relationship.isToMany
            default: return false
            }
        }
        guard let attribute = property as? NSAttributeDescription, !attribute.isTransient else { return false }
        switch (value, attribute.attributeType) {
        case (.null, _): return true
        case (.unresolved, .binaryDataAttributeType), (.unresolved, .transformableAttributeType):
            return true  // a value in the blob tree, keyed by the property's name (SPEC.md §3.8)
        case (.integer, .integer16AttributeType), (.integer, .integer32AttributeType),
            (.integer, .integer64AttributeType), (.double, .doubleAttributeType), (.float, .floatAttributeType),
            (.boolean, .booleanAttributeType), (.string, .stringAttributeType), (.decimal, .decimalAttributeType),
            (.date, .dateAttributeType), (.binary, .binaryDataAttributeType), (.binary, .transformableAttributeType),
            (.uuid, .UUIDAttributeType), (.uri, .URIAttributeType), (.objectID, .objectIDAttributeType):
            return true
        default:
            return false
        }
    }

    private func rebuildIndexes(in transaction: WriteTransaction, codec: PageFileRowCodec, path: String) throws {
        for entity in persistentStoreCoordinator?.managedObjectModel.entities ?? [] {
            guard let info = infoByEntityIfAny(entity), !info.indexes.isEmpty,
                let rows = try transaction.tree(named: info.treeName)
            else { continue }
            var entries: [String: [([UInt8], [UInt8])]] = [:]
            try rows.scan { key, value in
                guard let primary = PageFileKey.primaryKey(key) else { return true }
                let values = try codec.decode(value, entity: entity).values
                for index in info.indexes {
                    guard let entry = index.key(for: values, primaryKey: primary) else { continue }
                    entries[index.treeName, default: []].append(
                        (entry, index.isUnique ? PageFileKey.primary(primary) : []))
                }
                return true
            }
            for index in info.indexes {
                let tree = try transaction.openTree(named: index.treeName)
                let sorted = (entries[index.treeName] ?? []).sorted { $0.0.lexicographicallyPrecedes($1.0) }
                for (position, entry) in sorted.enumerated() {
                    if index.isUnique, position > 0, sorted[position - 1].0 == entry.0 {
                        throw CoreDataError.make(
                            NSMigrationError,
                            "cannot migrate \(path): rows of \(entity.name ?? "?") violate the uniqueness constraint "
                                + "\(index.name)")
                    }
                    try tree.setValue(entry.1, forKey: entry.0)
                }
            }
        }
    }
}
