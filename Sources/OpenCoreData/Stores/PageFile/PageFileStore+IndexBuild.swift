// Ordinary indexes the model has and the file lacks: indexes are not part of the entity
// version hashes (as in Core Data), so a model may add an NSFetchIndexDescription, or an
// index of a composite element a build before SPEC.md §3.1 T3's element fields skipped,
// to a store that opens without migration. Such an index is built from the rows when the
// store opens, before any save adds entries, so an index tree always holds every row
// (T3) and the planner never narrows a fetch to a partial one.
import Foundation
import StorageEngine

extension PageFileStore {
    /// Builds every ordinary index tree of the catalog missing from `database` whose
    /// entity has rows, and rewrites the catalog record, in one write transaction.
    ///
    /// - Throws: the engine's errors; `NSFileReadCorruptFileError` for a row that does not decode.
    func buildMissingIndexes(in database: Database) throws {
        let (catalog, codec) = (self.catalog, self.codec)
        let missing = try database.read { transaction in
            var missing: [(PageFileCatalog.EntityInfo, PageFileIndex)] = []
            for entity in catalog.entities {
                guard let info = catalog.infoIfAny(entity), try transaction.tree(named: info.treeName) != nil else {
                    continue
                }
                for index in info.indexes where !index.isUnique && !index.isReference {
                    if try transaction.tree(named: index.treeName) == nil { missing.append((info, index)) }
                }
            }
            return missing
        }
        guard !missing.isEmpty else { return }
        try database.write { transaction in
            for (info, index) in missing {
                guard let rows = try transaction.tree(named: info.treeName) else { continue }
                var keys: [[UInt8]] = []
                try rows.scan { key, value in
                    guard let primary = PageFileKey.rowKey(key) else {
                        throw CoreDataError.make(NSFileReadCorruptFileError, "a row key of \(info.treeName) is damaged")
                    }
                    let decoded = try codec.decode(value, entity: info.entity)
                    if let entry = index.key(for: decoded.values, primaryKey: primary) { keys.append(entry) }
                    return true
                }
                let tree = try transaction.openTree(named: index.treeName)
                for key in keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) { try tree.setValue([], forKey: key) }
            }
            try PageFileWriter(transaction: transaction, catalog: catalog, codec: codec).writeCatalog()
        }
    }
}
