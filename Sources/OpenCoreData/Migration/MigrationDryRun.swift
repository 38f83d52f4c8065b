// A dry run of lightweight migration, beyond Core Data: what migrating a store to a model
// would change, or exactly why it cannot, found without changing the store. The plan is
// inferred as for a real migration, then every row is transformed and written into a
// scratch store (default store) or an image in memory (binary store) from a snapshot, so
// the failures that depend on the data (a nil in a now mandatory attribute, duplicates
// under a new uniqueness constraint) are found too; the scratch store is removed. The
// store may be open meanwhile: the default store is read through a snapshot.
import Foundation
import StorageEngine

/// What migrating a store to a model would do.
public struct MigrationReport {
    /// The store's location.
    public let storeURL: URL
    /// Whether the store holds data of the model already (nothing to migrate).
    public let isCompatible: Bool
    /// What the migration changes, in order (empty when compatible or not inferable).
    public let changes: [MigrationChange]
    /// The objects of each entity after the migration, by entity name (empty unless the
    /// migration can run).
    public let objectCounts: [String: Int]
    /// Why the migration cannot run — the error opening the store with automatic
    /// migration would throw (134140 naming entity and property, 134110, 134111, 134130) —
    /// or nil.
    public let error: NSError?

    /// Whether opening the store with automatic migration would succeed.
    public var canMigrate: Bool { error == nil }
}

extension NSPersistentStoreCoordinator {
    /// Runs the lightweight migration of the store of `storeType` at `url` to this
    /// coordinator's model against a snapshot and reports what it would change, or why it
    /// cannot; the store is not changed.
    ///
    /// ```swift
    /// let report = try coordinator.dryRunMigration(ofStoreAt: url, type: NSSQLiteStoreType)
    /// if let error = report.error { print("cannot migrate:", error.localizedDescription) }
    /// for change in report.changes { print(change) }
    /// ```
    ///
    /// - Throws: the errors of reading the store (no store, a damaged file, a type that has
    ///   nothing to migrate); what the migration itself would throw is in the report.
    /// - Complexity: O(objects): every row is read and transformed.
    public func dryRunMigration(ofStoreAt url: URL, type storeType: String = NSSQLiteStoreType) throws
        -> MigrationReport
    {
        let model = managedObjectModel
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: storeType, at: url, options: nil)
        func report(_ changes: [MigrationChange], _ counts: [String: Int], _ error: Error?) -> MigrationReport {
            MigrationReport(
                storeURL: url, isCompatible: false, changes: changes, objectCounts: counts,
                error: error.map { $0 as NSError })
        }
        if model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) {
            return MigrationReport(storeURL: url, isCompatible: true, changes: [], objectCounts: [:], error: nil)
        }
        guard let source = try ModelRecord.model(in: metadata) else {
            return report(
                [], [:],
                CoreDataError.make(
                    NSMigrationMissingSourceModelError,
                    "the store at \(url.path) predates model records: it migrates by property name when opened "
                        + "with automatic migration, which a dry run cannot check"))
        }
        let plan: LightweightMigrationPlan
        do {
            plan = try LightweightMigrationPlan(inferringFrom: source, to: model)
        } catch {
            return report([], [:], error)
        }
        source.freeze()
        model.freeze()
        let ids = NSPersistentStore(persistentStoreCoordinator: nil, configurationName: nil, at: url, options: nil)
        do {
            switch storeType {
            case NSSQLiteStoreType:
                let migration = PageFileMigration(
                    path: url.path, fileSystem: POSIXFileSystem(), plan: plan,
                    metadata: try PageFileStore.migratedMetadata(metadata, to: model), store: ids)
                let outcome = try PageFileStore.withExistingDatabase(at: url) { try migration.dryRun(from: $0) }
                return report(plan.changes, outcome.rowsByEntity, nil)
            case NSBinaryStoreType:
                guard let bytes = try BinaryStoreFile.read(path: url.path, fileSystem: POSIXFileSystem()) else {
                    throw CoreDataError.make(NSFileReadNoSuchFileError, "there is no binary store at \(url.path)")
                }
                let store = NSBinaryStore(
                    persistentStoreCoordinator: nil, configurationName: nil, at: url, options: nil)
                let image = try store.migrateImage(bytes, metadata: metadata, to: model, path: url.path) { _ in }
                var counts: [String: Int] = [:]
                for row in image.rows { counts[row.objectID.entity.name ?? "", default: 0] += 1 }
                return report(plan.changes, counts, nil)
            default:
                throw CoreDataError.make(
                    NSPersistentStoreInvalidTypeError, "stores of type '\(storeType)' have nothing to migrate")
            }
        } catch let error as NSError where error.domain == NSCocoaErrorDomain && (134110...134190).contains(error.code)
        {
            return report(plan.changes, [:], error)
        }
    }
}
