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
            let oldCatalog = try transaction.tree(named: PageFileStore.metaTreeName)?.value(
                forKey: PageFileStore.catalogKey
            ).flatMap { String(validating: $0, as: UTF8.self) }
            for name in try transaction.treeNames()
            where name.hasPrefix("index.") || name.hasPrefix("unique.") || name.hasPrefix("rel.") {
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
            try migrateJoins(oldCatalog: oldCatalog ?? "", in: transaction, codec: codec)
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
        let external = Set(infoByEntityIfAny(entity)?.externalSlots ?? [])
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
                if external.contains(slot) {
                    // Kept in a join tree or derived from the inverse (migrateJoins).
                    values.append(.unresolved)
                } else if let old = oldSlotByName[property.name], old < decoded.values.count,
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
                (
                    Array(key),
                    PageFileRowCodec.encode(
                        values: values, version: decoded.version, layout: layout, externalToMany: true)
                ))
            return true
        }
        for (key, bytes) in rewritten { try tree.setValue(bytes, forKey: key) }
    }

    /// Whether a stored value can stay in `property` of the new model (same kind of value).
    private func fits(_ value: StoreValue, _ property: NSPropertyDescription) -> Bool {
        if let relationship = property as? NSRelationshipDescription {
            switch value {
            case .objectID: return !relationship.isToMany
            case .objectIDs, .unresolved: return relationship.isToMany
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

extension PageFileStore {
    /// Brings the join trees to the new model (SPEC.md §3.3 M2): a join tree whose
    /// relationship kept its name and kind stays as it is (keys do not change); one whose
    /// relationship became ordered or unordered is rewritten in the new key form; a new
    /// join tree of a relationship with a to-one inverse is built from the inverse's
    /// references in the rows; join trees of removed relationships are deleted.
    func migrateJoins(oldCatalog: String, in transaction: WriteTransaction, codec: PageFileRowCodec) throws {
        var oldOrdered: [String: Bool] = [:]
        for line in oldCatalog.split(separator: "\n") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count == 3, fields[1] == "join" || fields[1] == "join-ordered" else { continue }
            oldOrdered[String(fields[0])] = fields[1] == "join-ordered"
        }
        var wanted: Set<String> = []
        for entity in persistentStoreCoordinator?.managedObjectModel.entities ?? [] {
            for relationship in entity.relationshipsByName.values where relationship.entity === entity {
                guard case .join(let treeName, let ordered) = PageFileToMany.storage(of: relationship) else { continue }
                wanted.insert(treeName)
                if let wasOrdered = oldOrdered[treeName], try transaction.tree(named: treeName) != nil {
                    if wasOrdered != ordered {
                        try rewriteJoin(treeName, from: wasOrdered, to: ordered, in: transaction)
                    }
                    continue
                }
                guard let inverse = relationship.inverseRelationship, !inverse.isToMany,
                    let destination = relationship.destinationEntity
                else { continue }
                // Formerly derived from the inverse: rebuild it from the references.
                var bySource: [Int64: [NSManagedObjectID]] = [:]
                for candidate in destination.hierarchy(includingSubentities: true) {
                    guard let info = infoByEntityIfAny(candidate),
                        let rows = try transaction.tree(named: info.treeName),
                        let slot = candidate.layout.slotsByName[inverse.name]
                    else { continue }
                    try rows.scan { key, value in
                        guard let primary = PageFileKey.rowKey(key) else { return true }
                        let values = try codec.decode(value, entity: candidate).values
                        if slot < values.count, case .objectID(let source) = values[slot] {
                            bySource[source.key, default: []].append(newObjectID(for: candidate, key: primary))
                        }
                        return true
                    }
                }
                for (source, destinations) in bySource.sorted(by: { $0.key < $1.key }) {
                    try writeJoin(
                        relationship, source: source, destinations: destinations.sorted { $0.key < $1.key },
                        isNew: true, in: transaction)
                }
            }
        }
        for name in oldOrdered.keys where !wanted.contains(name) { _ = try transaction.deleteTree(named: name) }
    }

    /// Rewrites join tree `treeName` between the ordered and unordered key forms, keeping the
    /// destinations' order.
    private func rewriteJoin(
        _ treeName: String, from wasOrdered: Bool, to ordered: Bool, in transaction: WriteTransaction
    )
        throws
    {
        guard let tree = try transaction.tree(named: treeName) else { return }
        var entries: [(source: Int64, destination: Int64, value: [UInt8])] = []
        try tree.scan { key, value in
            guard let parts = PageFileToMany.parseJoinKey(key, ordered: wasOrdered) else {
                throw CoreDataError.make(NSFileReadCorruptFileError, "an entry of \(treeName) is damaged")
            }
            entries.append((parts.source, parts.destination, Array(value)))
            return true
        }
        _ = try transaction.deleteTree(named: treeName)
        let rewritten = try transaction.openTree(named: treeName)
        var position: (source: Int64, index: UInt64)?
        for entry in entries {
            let index = position?.source == entry.source ? (position?.index ?? 0) + 1 : 1
            position = (entry.source, index)
            let order = ordered ? index * PageFileToMany.orderGap : nil
            try rewritten.setValue(
                entry.value,
                forKey: PageFileToMany.joinKey(source: entry.source, order: order, destination: entry.destination))
        }
    }
}
