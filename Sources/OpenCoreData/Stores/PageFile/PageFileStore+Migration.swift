// Lightweight migration of the default store (SPEC.md §3.3 M1-M3): when the model's
// version hashes differ from the store's and the store is added with automatic, inferred
// migration, the plan is inferred from the model the store recorded (§3.11) and the new
// model before anything changes; then PageFileMigration writes the migrated store beside
// the old one and replaces it atomically. Stores without a record migrate by name
// (PageFileStore+LegacyMigration.swift).
import Foundation
import StorageEngine

/// Option (internal, for tests): rows per write transaction of a migration's new file, so
/// crash tests cover migrations of several transactions with few rows.
let migrationBatchRowsOption = "OpenCoreDataMigrationBatchRows"

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

    /// Records `model` in the metadata of a store written before stores recorded their
    /// model (its version hashes equal the model's): the next version migrates from it.
    func recordModel(_ model: NSManagedObjectModel, in database: Database) throws {
        var upgraded = metadata ?? [:]
        // The recorded hashes stay (SPEC.md §3.10 V5): they may be of the first form.
        upgraded[ModelRecord.metadataKey] = try ModelRecord.encode(model)
        upgraded[NSStoreModelVersionIdentifiersKey] = ModelRecord.versionIdentifiers(of: model)
        try database.write { transaction in
            setStoredMetadata(upgraded)
            try writeMetadata(in: transaction)
        }
    }

    /// The metadata of the store after migrating to `model`: the old metadata (UUID, user
    /// keys) with the model's identity and schema.
    static func migratedMetadata(_ stored: [String: Any], to model: NSManagedObjectModel) throws -> [String: Any] {
        var migrated = stored
        migrated.merge(try model.storeIdentityMetadata()) { _, identity in identity }
        migrated[schemaKey] = schema(of: model)
        return migrated
    }

    /// Migrates the closed store file at `path` by `plan` (its destination is this store's
    /// model), reporting progress to the current `Progress`, if any.
    ///
    /// - Throws: the migration's error; the file is then as it was.
    func migrateFile(
        at path: String, plan: LightweightMigrationPlan, storedMetadata: [String: Any],
        fileSystem: any StorageFileSystem
    ) throws {
        let progress = Progress(totalUnitCount: 0)
        var migration = PageFileMigration(
            path: path, fileSystem: fileSystem, plan: plan,
            metadata: try PageFileStore.migratedMetadata(storedMetadata, to: plan.destination), store: self)
        if let rows = (options?[migrationBatchRowsOption] as? NSNumber)?.intValue, rows > 0 {
            migration.rowsPerTransaction = rows
        }
        let started = OpenCoreDataDebugLog.start()
        _ = try migration.run(progress: progress)
        OpenCoreDataDebugLog.log(
            1,
            "migrate the store at \(path) (lightweight, \(plan.changes.count) changes: "
                + plan.changes.map(\.description).joined(separator: "; ") + ") in "
                + OpenCoreDataDebugLog.elapsed(since: started))
    }
}
