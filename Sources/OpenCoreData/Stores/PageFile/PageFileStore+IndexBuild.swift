// The index trees a file keeps, reconciled with the model on open. Indexes and uniqueness
// constraints are not part of the entity version hashes (as in Core Data), so a model may
// add, drop or change one on a store that opens without migration. A writer maintains only
// its model's indexes: an index left behind by a model that dropped it goes stale as soon
// as another model saves, and trusting it again later would answer fetches from stale
// entries. So the catalog record's index lines say which trees the file maintains (SPEC.md
// §3.1 T3), and a writable open, before any save: frees every index tree its model does
// not have, rebuilds from the rows every index of its model the record does not vouch for
// (the old tree cleared first), and rewrites the record. A read-only open plans on no
// index the record does not vouch for.
import Foundation
import StorageEngine

extension PageFileStore {
    /// The index trees to free and the indexes to rebuild so that `database` maintains
    /// exactly the indexes of `catalog`, or nil when its record already says so.
    private static func indexChanges(in database: Database, catalog: PageFileCatalog) throws
        -> (freed: [String], rebuilt: [(PageFileCatalog.EntityInfo, PageFileIndex)])?
    {
        let record = catalog.record
        return try database.read { transaction in
            let stored = try transaction.tree(named: metaTreeName)?.value(forKey: catalogKey) ?? []
            if stored == record { return nil }
            let maintained = PageFileCatalog.maintainedIndexLines(inRecord: String(decoding: stored, as: UTF8.self))
            var kept: Set<String> = []
            var rebuilt: [(PageFileCatalog.EntityInfo, PageFileIndex)] = []
            for entity in catalog.entities {
                guard let info = catalog.infoIfAny(entity) else { continue }
                // Reference indexes follow relationships, which the version hashes cover.
                for index in info.indexes where !index.isReference {
                    kept.insert(index.treeName)
                    if maintained?.contains(index.recordLine) != true { rebuilt.append((info, index)) }
                }
            }
            let freed = try transaction.treeNames().filter {
                ($0.hasPrefix("index.") || $0.hasPrefix("unique.")) && !kept.contains($0)
            }
            return (freed, rebuilt)
        }
    }

    /// Settles which indexes the store uses: a writable store reconciles the file with the
    /// model (``reconcileIndexes(in:openElsewhere:)``); a read-only one leaves out every
    /// index the stored record does not vouch for (fetches scan).
    func settleIndexes(in database: Database, model: NSManagedObjectModel, openElsewhere: Bool) throws {
        guard isReadOnly else { return try reconcileIndexes(in: database, openElsewhere: openElsewhere) }
        guard let changes = try Self.indexChanges(in: database, catalog: catalog) else { return }
        let untrusted = Set(changes.rebuilt.map(\.1.recordLine))
        if !untrusted.isEmpty { catalog = PageFileCatalog(model: model, path: catalog.path, untrusted: untrusted) }
    }

    /// Makes `database` maintain exactly the catalog's indexes, in one write transaction:
    /// frees the trees of indexes the model does not have, rebuilds (from a cleared tree)
    /// every index the stored record does not vouch for, and rewrites the record.
    ///
    /// - Throws: 134080 when the record differs and the file is open in another
    ///   coordinator of the process (its model's indexes would go stale); 134111 when
    ///   rows break a uniqueness constraint being built; the engine's errors;
    ///   `NSFileReadCorruptFileError` for a row that does not decode.
    func reconcileIndexes(in database: Database, openElsewhere: Bool) throws {
        let (catalog, codec) = (self.catalog, self.codec)
        guard let changes = try Self.indexChanges(in: database, catalog: catalog) else { return }
        guard !openElsewhere else {
            throw CoreDataError.make(
                NSPersistentStoreOpenError,
                "the store at \(catalog.path) is open in another coordinator whose model has other indexes or "
                    + "uniqueness constraints: remove it there first")
        }
        try database.write { transaction in
            for name in changes.freed { _ = try transaction.deleteTree(named: name) }
            var writer = PageFileWriter(transaction: transaction, catalog: catalog, codec: codec)
            for (info, index) in changes.rebuilt { try inlineBlobs(readBy: index, of: info, writer: &writer) }
            for (info, index) in changes.rebuilt {
                _ = try transaction.deleteTree(named: index.treeName)
                try Self.build(index, of: info, in: transaction, codec: codec)
            }
            try PageFileWriter(transaction: transaction, catalog: catalog, codec: codec).writeCatalog()
        }
    }

    /// Brings back into their rows the values of binary attributes `index` reads that the
    /// file keeps in the blob tree: an indexed attribute is never a blob slot (its index
    /// key is computed from the row), so a value stored outside the row while the
    /// attribute was not indexed would otherwise read as nil (SPEC.md §3.8).
    private func inlineBlobs(
        readBy index: PageFileIndex, of info: PageFileCatalog.EntityInfo, writer: inout PageFileWriter
    ) throws {
        let layout = info.entity.layout
        let names = Dictionary(
            index.slots.compactMap { slot -> (Int, String)? in
                guard let attribute = layout.attributeBySlot[slot],
                    attribute.attributeType == .binaryDataAttributeType
                        || attribute.attributeType == .transformableAttributeType
                else { return nil }
                return (slot, attribute.name)
            }, uniquingKeysWith: { first, _ in first })
        guard !names.isEmpty, let rows = try writer.transaction.tree(named: info.treeName) else { return }
        var external: [StoreRow] = []
        try rows.scan { key, value in
            guard let primary = PageFileKey.rowKey(key) else {
                throw CoreDataError.make(NSFileReadCorruptFileError, "a row key of \(info.treeName) is damaged")
            }
            let decoded = try codec.decode(value, entity: info.entity)
            if names.keys.contains(where: { $0 < decoded.values.count && decoded.values[$0] == .unresolved }) {
                external.append(
                    StoreRow(
                        objectID: newObjectID(for: info.entity, key: primary), version: decoded.version,
                        values: decoded.values))
            }
            return true
        }
        for var row in external {
            for (slot, name) in names where row.values[slot] == .unresolved {
                row.values[slot] = .binary(try writer.reader.blob(primaryKey: row.objectID.key, name: name))
                try writer.removeBlob(primaryKey: row.objectID.key, name: name)
            }
            try writer.storeRow(row, info: info, externalizingBlobs: false)
        }
    }

    /// Writes every entry of `index` for the rows of `info`'s entity into a new tree.
    private static func build(
        _ index: PageFileIndex, of info: PageFileCatalog.EntityInfo, in transaction: WriteTransaction,
        codec: PageFileRowCodec
    ) throws {
        guard let rows = try transaction.tree(named: info.treeName) else { return }
        var entries: [(key: [UInt8], owner: Int64)] = []
        try rows.scan { key, value in
            guard let primary = PageFileKey.rowKey(key) else {
                throw CoreDataError.make(NSFileReadCorruptFileError, "a row key of \(info.treeName) is damaged")
            }
            let decoded = try codec.decode(value, entity: info.entity)
            if let entry = index.key(for: decoded.values, primaryKey: primary) { entries.append((entry, primary)) }
            return true
        }
        entries.sort { $0.key.lexicographicallyPrecedes($1.key) }
        let tree = try transaction.openTree(named: index.treeName)
        var previous: [UInt8]?
        for entry in entries {
            if index.isUnique {
                guard entry.key != previous else {
                    throw CoreDataError.make(
                        NSMigrationConstraintViolationError,
                        "rows of \(info.entity.name ?? "?") break the uniqueness constraint \(index.name) of the "
                            + "model: open the store with a model without it and remove the duplicates first",
                        userInfo: ["entity": info.entity.name ?? "?", "constraint": index.name])
                }
                previous = entry.key
                try tree.setValue(PageFileKey.primary(entry.owner), forKey: entry.key)
            } else {
                try tree.setValue([], forKey: entry.key)
            }
        }
    }
}
