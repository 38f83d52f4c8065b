// Lightweight migration of a default store written before stores recorded their model
// (SPEC.md §3.3 M4): without the old model, rows are rewritten by property name (or the
// renaming identifier naming the old property) in one write transaction — kept
// properties keep their values, new attributes take their defaults, removed ones are
// dropped — through the store's writer, which rebuilds every index as it writes them. A
// kept property whose stored values do not fit its new type fails the migration
// (134140) instead of losing them; history records follow the new names. Any failure
// leaves the file unchanged.
import Foundation
import StorageEngine

extension PageFileStore {
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
        migrated.merge(try model.storeIdentityMetadata()) { _, identity in identity }
        migrated[PageFileStore.schemaKey] = PageFileStore.schema(of: model)
        let (catalog, codec) = (self.catalog, self.codec)
        try database.write { transaction in
            let oldCatalog = try transaction.tree(named: PageFileStore.metaTreeName)?.value(
                forKey: PageFileStore.catalogKey
            ).flatMap { String(validating: $0, as: UTF8.self) }
            for name in try transaction.treeNames()
            where name.hasPrefix("index.") || name.hasPrefix("unique.") || name.hasPrefix("rel.") {
                _ = try transaction.deleteTree(named: name)
            }
            var writer = PageFileWriter(transaction: transaction, catalog: catalog, codec: codec)
            // Blobs some migrated row still refers to, by prefix: the others are removed.
            var liveBlobs: Set<[UInt8]> = []
            for (entityName, oldNames) in schema.sorted(by: { $0.key < $1.key }) {
                let treeName = "rows.\(entityName)"
                guard let entity = model.entitiesByName[entityName] else {
                    _ = try transaction.deleteTree(named: treeName)
                    continue
                }
                guard let tree = try transaction.tree(named: treeName) else { continue }
                let rows = try migratedRows(
                    of: entity, in: tree, oldNames: oldNames, reader: writer.reader, liveBlobs: &liveBlobs, path: path)
                try write(rows, of: entity, to: &writer)
            }
            setStoredMetadata(migrated)
            self.nextKey = nextKey
            try writeMetadata(in: transaction)
            try writer.writeCatalog()
            try writer.removeBlobs(except: liveBlobs)
            try migrateJoins(oldCatalog: oldCatalog ?? "", with: &writer)
            try rewriteHistory(
                in: transaction, with: MigrationHistoryRewrite(schema: schema, model: model), path: path)
            try writer.finish()
        }
        return migrated
    }

    /// Rewrites the history records in the new model's names (SPEC.md §3.7 H6).
    private func rewriteHistory(in transaction: WriteTransaction, with rewrite: MigrationHistoryRewrite, path: String)
        throws
    {
        guard rewrite.changesNames, let tree = try transaction.tree(named: PageFileStore.historyTreeName) else {
            return
        }
        var changed: [([UInt8], [UInt8])] = []
        try tree.scan { key, value in
            let bytes = Array(value)
            let rewritten = try rewrite.rewritten(bytes, what: "a history record of \(path)")
            if rewritten != bytes { changed.append((Array(key), rewritten)) }
            return true
        }
        for (key, value) in changed { try tree.setValue(value, forKey: key) }
    }

    /// The rows of `tree`, stored under `oldNames`, as rows of `entity`: values mapped by
    /// property name, defaults for new attributes, to-manys kept outside the row, and the
    /// external values of slots that can no longer hold one read back inline.
    private func migratedRows(
        of entity: NSEntityDescription, in tree: Tree, oldNames: [String], reader: PageFileRowReader,
        liveBlobs: inout Set<[UInt8]>, path: String
    ) throws -> [StoreRow] {
        let layout = entity.layout
        let info = try reader.catalog.info(for: entity)
        let declared: [NSEntityDescription?] = oldNames.map {
            (layout.propertiesByName[$0] as? NSRelationshipDescription)?.destinationEntity
        }
        let oldSlotByName = Dictionary(oldNames.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        let external = Set(info.externalSlots)
        let blobSlots = Set(info.blobSlots.map(\.slot))
        let defaults = try migrationDefaults(of: entity)
        var rows: [StoreRow] = []
        try tree.scan { key, value in
            guard let primary = PageFileKey.rowKey(key) else {
                throw CoreDataError.make(NSFileReadCorruptFileError, "a row key of \(info.treeName) is damaged")
            }
            let decoded = try reader.codec.decode(value, entity: nil, declaredEntities: declared)
            var values: [StoreValue] = []
            for (slot, property) in layout.properties.enumerated() {
                if external.contains(slot) {
                    // Kept in a join tree or derived from the inverse (migrateJoins).
                    values.append(.unresolved)
                } else if let oldName = [property.renamingIdentifier, property.name].compactMap({ $0 }).first(
                    where: { oldSlotByName[$0] != nil }), let old = oldSlotByName[oldName], old < decoded.values.count
                {
                    // A value that does not fit the property's kind is a type change this
                    // path cannot see in a model: refused, never replaced by a default.
                    guard fits(decoded.values[old], property) else {
                        throw MigrationError.uninferable(
                            "the stored values of \(entity.name ?? "?").\(property.name) do not fit its type in the "
                                + "new model (\(path) predates model records: open it once with the model that wrote "
                                + "it, then migrate)", entity: entity.name, property: property.name)
                    }
                    var value = decoded.values[old]
                    if value == .null, !property.isOptional { value = defaults[slot] }
                    if value == .unresolved, oldName != property.name {
                        // A blob is keyed by its property's name: a renamed one is read back inline.
                        value = .binary(try reader.blob(primaryKey: primary, name: oldName))
                    }
                    values.append(value)
                    if values[slot] == .null, !property.isOptional, !property.isTransient,
                        property is NSAttributeDescription
                    {
                        throw MigrationError.invalidValue(
                            "Validation error missing attribute values on mandatory destination attribute",
                            entity: entity.name ?? "?", property: property.name, isRelationship: false)
                    }
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
            for (slot, value) in values.enumerated() {
                guard case .unresolved = value, let attribute = layout.attributeBySlot[slot] else { continue }
                if blobSlots.contains(slot) {
                    liveBlobs.insert(PageFileStore.blobPrefix(primary, attribute.name))
                } else {
                    values[slot] = .binary(try reader.blob(primaryKey: primary, name: attribute.name))
                }
            }
            rows.append(
                StoreRow(objectID: reader.codec.makeObjectID(entity, primary), version: decoded.version, values: values)
            )
            return true
        }
        return rows
    }

    /// Each slot's value for a row that had no fitting value: a new attribute's default,
    /// an empty to-many, nil.
    private func migrationDefaults(of entity: NSEntityDescription) throws -> [StoreValue] {
        let layout = entity.layout
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
        return defaults
    }

    /// Writes migrated rows back with their index entries (their values stay inline: a row
    /// keeps its blobs as they were).
    private func write(_ rows: [StoreRow], of entity: NSEntityDescription, to writer: inout PageFileWriter) throws {
        let path = url?.path ?? "?"
        let info = try writer.info(for: entity)
        for row in rows {
            if let clash = try writer.uniqueClash(of: row, info: info) {
                throw CoreDataError.make(
                    NSMigrationError,
                    "cannot migrate \(path): rows of \(entity.name ?? "?") violate the uniqueness constraint "
                        + "\(clash.index.name)")
            }
            try writer.storeRow(row, info: info, externalizingBlobs: false)
            try writer.addIndexEntries(of: row, info: info)
        }
        // Every index tree exists after a migration, empty or not.
        for index in info.indexes { _ = try writer.transaction.openTree(named: index.treeName) }
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
}

extension PageFileStore {
    /// Brings the join trees to the new model (SPEC.md §3.3 M2): a join tree whose
    /// relationship kept its name and kind stays as it is (keys do not change); one whose
    /// relationship became ordered or unordered is rewritten in the new key form; a new
    /// join tree of a relationship with a to-one inverse is built from the inverse's
    /// references in the rows; join trees of removed relationships are deleted.
    private func migrateJoins(oldCatalog: String, with writer: inout PageFileWriter) throws {
        let transaction = writer.transaction
        let oldOrdered = PageFileCatalog.joinTrees(inRecord: oldCatalog)
        var wanted: Set<String> = []
        for entity in writer.catalog.entities {
            for relationship in entity.relationshipsByName.values where relationship.entity === entity {
                guard case .join(let treeName, let ordered) = PageFileToMany.storage(of: relationship) else { continue }
                wanted.insert(treeName)
                if let wasOrdered = oldOrdered[treeName], try transaction.tree(named: treeName) != nil {
                    if wasOrdered != ordered {
                        try writer.rewriteJoinTree(treeName, from: wasOrdered, to: ordered)
                    }
                    continue
                }
                guard let inverse = relationship.inverseRelationship, !inverse.isToMany,
                    let destination = relationship.destinationEntity
                else { continue }
                // Formerly derived from the inverse: rebuild it from the references.
                var bySource: [Int64: [NSManagedObjectID]] = [:]
                for candidate in destination.hierarchy(includingSubentities: true) {
                    guard let info = writer.catalog.infoIfAny(candidate),
                        let rows = try transaction.tree(named: info.treeName),
                        let slot = candidate.layout.slotsByName[inverse.name]
                    else { continue }
                    try rows.scan { key, value in
                        guard let primary = PageFileKey.rowKey(key) else { return true }
                        let values = try writer.codec.decode(value, entity: candidate).values
                        if slot < values.count, case .objectID(let source) = values[slot] {
                            bySource[source.key, default: []].append(writer.codec.makeObjectID(candidate, primary))
                        }
                        return true
                    }
                }
                for (source, destinations) in bySource.sorted(by: { $0.key < $1.key }) {
                    try writer.setToMany(
                        relationship, of: source, to: destinations.sorted { $0.key < $1.key }, isNew: true)
                }
            }
        }
        for name in oldOrdered.keys where !wanted.contains(name) { _ = try transaction.deleteTree(named: name) }
    }
}
