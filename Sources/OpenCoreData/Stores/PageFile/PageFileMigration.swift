// Lightweight migration of a default store (SPEC.md §3.3 M2, M3): the rows of the old
// file, read through one snapshot with the model its record describes, are transformed
// row by row (MigrationRowTransform) and written into a new store file beside it in
// transactions of a bounded number of rows, so memory stays bounded whatever the store's
// size; indexes, unique keys, join trees and blobs are written by the store's writer as
// the rows arrive. The history journal, the key counter and the metadata follow. Only a
// complete new file replaces the old one (PageFileStoreFiles.replace): a failure or a
// crash at any point before leaves the old store as it was, after it the new store is
// complete.
import Foundation
import StorageEngine

/// One lightweight migration of a closed default-store file.
struct PageFileMigration {
    /// Rows written per transaction of the new file: bounds the memory of dirty pages and
    /// pending index entries.
    static let defaultRowsPerTransaction = 4_096

    let path: String
    let fileSystem: any StorageFileSystem
    let plan: LightweightMigrationPlan
    /// The metadata of the migrated store (hashes, record and schema of the destination).
    let metadata: [String: Any]
    /// The trees of the destination model.
    let catalog: PageFileCatalog
    /// The destination's row codec; its object IDs name the store that opens the result.
    let codec: PageFileRowCodec
    /// Object IDs of both models' entities (keys do not change in a migration).
    let store: NSPersistentStore
    /// Rows per write transaction of the new file.
    var rowsPerTransaction = PageFileMigration.defaultRowsPerTransaction

    init(
        path: String, fileSystem: any StorageFileSystem, plan: LightweightMigrationPlan, metadata: [String: Any],
        store: NSPersistentStore
    ) {
        self.path = path
        self.fileSystem = fileSystem
        self.plan = plan
        self.metadata = metadata
        self.store = store
        plan.destination.freeze()
        catalog = PageFileCatalog(model: plan.destination, path: path)
        let entities = plan.destination.entitiesByName
        codec = PageFileRowCodec(entityNamed: { entities[$0] }, makeObjectID: { store.newObjectID(for: $0, key: $1) })
    }

    /// What a migration read and wrote.
    struct Outcome {
        var rows = 0
        var rowsByEntity: [String: Int] = [:]
    }

    /// Builds the migrated store beside the old one and replaces the old store with it.
    ///
    /// - Throws: the transform's errors (134110 naming entity and property), 134111 for
    ///   rows breaking a new uniqueness constraint, 134120 when `progress` is cancelled,
    ///   134090 when another handle has the store open, engine errors. The old store is
    ///   unchanged after any of them.
    func run(progress: Progress? = nil) throws -> Outcome {
        let target = PageFileStoreFiles.migrationPath(of: path)
        var sourceOptions = Database.Options()
        sourceOptions.createIfMissing = false
        sourceOptions.fileSystem = fileSystem
        sourceOptions.cacheSize = 8 << 20
        sourceOptions.busyTimeout = 0
        let source: Database
        do {
            source = try PageFileStore.openEngine(
                at: URL(fileURLWithPath: path), options: sourceOptions, timeout: PageFileStoreFiles.exclusiveWait)
        } catch let error as StorageError where error.code == .busy {
            throw CoreDataError.make(
                NSPersistentStoreTimeoutError,
                "cannot migrate the store at \(path): another process has it open (the store is unchanged)")
        }
        let outcome: Outcome
        do {
            outcome = try build(target, from: source, progress: progress)
            try source.close()
        } catch {
            try? source.close()
            throw error
        }
        try PageFileStoreFiles.replace(path, with: target, fileSystem: fileSystem)
        return outcome
    }

    /// Runs the migration from `source` (a handle on the store, possibly shared) into a
    /// scratch file that is removed again: what the migration would do, or its error.
    func dryRun(from source: Database) throws -> Outcome {
        let target = path + "-dryrun-\(UUID().uuidString)"
        defer { for file in PageFileStoreFiles.files(of: target) { try? fileSystem.removeFile(atPath: file) } }
        return try build(target, from: source, progress: nil)
    }

    /// Writes the migrated store into a new store at `target`, closed cleanly (its page
    /// file alone holds it, synced); on error removes it.
    private func build(_ target: String, from source: Database, progress: Progress?) throws -> Outcome {
        for file in PageFileStoreFiles.files(of: target) { try fileSystem.removeFile(atPath: file) }
        do {
            var targetOptions = Database.Options(pageSize: source.pageSize, durability: .normal, fileSystem: fileSystem)
            targetOptions.cacheSize = 8 << 20
            let destination = try Database.open(at: target, options: targetOptions)
            do {
                let outcome = try copy(from: source, to: destination, progress: progress)
                // A clean close checkpoints and syncs: the new page file alone is the store.
                try destination.close()
                return outcome
            } catch {
                try? destination.close()
                throw error
            }
        } catch {
            for file in PageFileStoreFiles.files(of: target) { try? fileSystem.removeFile(atPath: file) }
            throw error
        }
    }

    // MARK: Copying

    private func copy(from source: Database, to destination: Database, progress: Progress?) throws -> Outcome {
        let snapshot = try source.snapshot()
        defer { snapshot.close() }
        let sourceCatalog = PageFileCatalog(model: plan.source, path: path)
        let sourceEntities = plan.source.entitiesByName
        let store = self.store
        let sourceCodec = PageFileRowCodec(
            entityNamed: { sourceEntities[$0] }, makeObjectID: { store.newObjectID(for: $0, key: $1) })
        let reader = PageFileRowReader(transaction: snapshot, catalog: sourceCatalog, codec: sourceCodec)
        let transform = MigrationRowTransform(plan: plan) { store.newObjectID(for: $0, key: $1) }
        let entities = plan.source.entities.filter { !$0.isAbstract }
        var total = 0
        for entity in entities {
            total += try snapshot.tree(named: try sourceCatalog.info(for: entity).treeName)?.count ?? 0
        }
        progress?.totalUnitCount = Int64(total)
        try noteReversedRelationships(transform, reader: reader, catalog: sourceCatalog)

        var outcome = Outcome()
        var batch: [StoreRow] = []
        batch.reserveCapacity(rowsPerTransaction)
        for entity in entities {
            let info = try sourceCatalog.info(for: entity)
            guard let rows = try snapshot.tree(named: info.treeName) else { continue }
            try rows.scan { key, value in
                if progress?.isCancelled == true {
                    throw CoreDataError.make(NSMigrationCancelledError, "the migration of \(path) was cancelled")
                }
                guard let primary = PageFileKey.rowKey(key) else {
                    throw CoreDataError.make(NSFileReadCorruptFileError, "a row key of \(info.treeName) is damaged")
                }
                let decoded = try sourceCodec.decode(value, entity: entity)
                var row = StoreRow(
                    objectID: store.newObjectID(for: entity, key: primary), version: decoded.version,
                    values: decoded.values)
                if !info.blobSlots.isEmpty { try reader.resolveBlobs(&row, info: info) }
                if let migrated = try transform.destinationRow(
                    of: row, toMany: { try reader.destinationIDs(of: $0, for: $1) })
                {
                    batch.append(migrated)
                    outcome.rowsByEntity[migrated.objectID.entity.name ?? "", default: 0] += 1
                }
                outcome.rows += 1
                if batch.count >= rowsPerTransaction {
                    try write(batch, to: destination)
                    progress?.completedUnitCount = Int64(outcome.rows)
                    batch.removeAll(keepingCapacity: true)
                }
                return true
            }
        }
        try write(batch, to: destination)
        try finish(destination, snapshot: snapshot)
        progress?.completedUnitCount = Int64(total)
        return outcome
    }

    /// Reads every source object's destinations in the source relationships new
    /// relationships are filled from (the only pass that holds more than a batch).
    private func noteReversedRelationships(
        _ transform: MigrationRowTransform, reader: PageFileRowReader, catalog: PageFileCatalog
    ) throws {
        for relationship in transform.reversedRelationships {
            guard let owner = relationship.entity else { continue }
            for entity in owner.hierarchy(includingSubentities: true) where !entity.isAbstract {
                let info = try catalog.info(for: entity)
                guard let rows = try reader.transaction.tree(named: info.treeName) else { continue }
                try rows.scan { key, _ in
                    guard let primary = PageFileKey.rowKey(key) else { return true }
                    let id = store.newObjectID(for: entity, key: primary)
                    transform.noteReversed(
                        relationship, owner: id, destinations: try reader.destinationIDs(of: relationship, for: id))
                    return true
                }
            }
        }
    }

    /// Writes `rows` in one transaction of the new file, with their index entries, unique
    /// keys, blobs and join entries.
    private func write(_ rows: [StoreRow], to destination: Database) throws {
        guard !rows.isEmpty else { return }
        let (catalog, codec, path) = (self.catalog, self.codec, self.path)
        try destination.write { transaction in
            var writer = PageFileWriter(transaction: transaction, catalog: catalog, codec: codec)
            for row in rows {
                if let clash = try writer.insert(row) {
                    throw MigrationError.constraintViolation(
                        row.objectID.entity.name ?? "", constraint: clash.index.name, path: path)
                }
            }
            try writer.finish()
        }
    }

    /// The rest of the store: the history journal (in the new names) and its purge bound,
    /// the key counter, the metadata and the index catalog, and an empty tree for every
    /// index no row uses.
    private func finish(_ destination: Database, snapshot: ReadTransaction) throws {
        let (catalog, codec, metadata) = (self.catalog, self.codec, self.metadata)
        let oldMeta = try snapshot.tree(named: PageFileStore.metaTreeName)
        let history = MigrationHistoryRewrite(plan)
        if let records = try snapshot.tree(named: PageFileStore.historyTreeName) {
            var entries: [([UInt8], [UInt8])] = []
            func flush() throws {
                guard !entries.isEmpty else { return }
                try destination.write { transaction in
                    let tree = try transaction.openTree(named: PageFileStore.historyTreeName)
                    for (key, value) in entries { try tree.setValue(value, forKey: key) }
                }
                entries.removeAll(keepingCapacity: true)
            }
            try records.scan { key, value in
                entries.append((Array(key), try history.rewritten(Array(value), what: "a history record of \(path)")))
                if entries.count >= rowsPerTransaction { try flush() }
                return true
            }
            try flush()
        }
        try destination.write { transaction in
            let meta = try transaction.openTree(named: PageFileStore.metaTreeName)
            for key in [PageFileStore.nextKeyKey, PageFileStore.purgedKey] {
                if let value = try oldMeta?.value(forKey: key) { try meta.setValue(value, forKey: key) }
            }
            try meta.setValue(try PageFileStore.metadataRecord(metadata), forKey: PageFileStore.metadataKey)
            let writer = PageFileWriter(transaction: transaction, catalog: catalog, codec: codec)
            try writer.writeCatalog()
            for entity in catalog.entities {
                guard let info = catalog.infoIfAny(entity) else { continue }
                for index in info.indexes { _ = try transaction.openTree(named: index.treeName) }
            }
        }
    }
}
