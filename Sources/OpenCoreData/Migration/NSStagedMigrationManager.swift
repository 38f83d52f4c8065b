// Staged migration (SPEC.md §3.12): the stages, in the order given, carry a store from the
// version it was written with to the coordinator's model. The store's version is the
// checksum of the model it recorded; the stages' checksums, in order, must name each
// version once. A lightweight stage holding the store's version migrates it straight to
// the version the next stage starts from (the coordinator's model after the last stage); a
// custom stage starting at the store's version opens the store at that version for its
// will-handler, migrates it to the next version, and opens it there for its did-handler.
// Each migration is a lightweight one, with everything that guarantees: a failure leaves
// the store at the last version it reached, complete.
import Foundation

/// Store option: the ``NSStagedMigrationManager`` whose stages migrate the store when it is
/// added (with the automatic migration options).
public let NSPersistentStoreStagedMigrationManagerOptionKey = "NSPersistentStoreStagedMigrationManagerOptionKey"

/// Runs migration stages on a store as it is added, in the order given.
///
/// ```swift
/// let manager = NSStagedMigrationManager([NSLightweightMigrationStage([v1.versionChecksum]), splitNames])
/// description.setOption(manager, forKey: NSPersistentStoreStagedMigrationManagerOptionKey)
/// ```
open class NSStagedMigrationManager: NSObject, @unchecked Sendable {
    /// The stages, in the order they run.
    public let stages: [NSMigrationStage]
    /// The container with the migrating store open, while a custom stage's handler runs.
    open private(set) var container: NSPersistentContainer?

    /// A manager running `stages` in order.
    public init(_ stages: [NSMigrationStage]) {
        self.stages = stages
        super.init()
    }

    /// Every version the stages name, in order (a stage beginning at the version the stage
    /// before it ends at names that version once: `[v1, v2]` then `v2 -> v3`).
    ///
    /// - Throws: `NSMigrationError` (134110) "Duplicate version checksums across stages
    ///   detected" when a version appears twice otherwise.
    func versionSequence() throws -> [String] {
        var sequence: [String] = []
        for stage in stages {
            var checksums = stage.checksums
            if let first = checksums.first, first == sequence.last { checksums.removeFirst() }
            sequence += checksums
        }
        var seen: Set<String> = []
        for checksum in sequence where !seen.insert(checksum).inserted {
            throw CoreDataError.make(
                NSMigrationError,
                "Duplicate version checksums across stages detected: \(checksum) appears in more than one stage",
                userInfo: [MigrationError.reasonKey: "duplicate version checksum \(checksum)"])
        }
        return sequence
    }

    /// The version checksum of the store whose metadata is `metadata`: its model record's
    /// model's, or its recorded hashes'.
    static func checksum(ofStoreMetadata metadata: [String: Any]) throws -> String? {
        if let model = try ModelRecord.model(in: metadata) { return model.versionChecksum }
        guard let hashes = metadata[NSStoreModelVersionHashesKey] as? [String: Data] else { return nil }
        return VersionHash.checksum(of: hashes)
    }

    /// Runs the stages that apply to the store of `type` at `url`, so it ends at the
    /// version the stages lead to before `model` (the caller's own lightweight migration
    /// takes it the rest of the way).
    ///
    /// - Throws: 134110 for duplicate checksums; `NSStagedMigrationBackwardMigrationError`
    ///   (134506) when the store is at a version the stages place after `model`;
    ///   `NSManagedObjectModelReferenceNotFoundError` (134504) for a model reference that
    ///   does not resolve; a stage's migration or handler error.
    func migrate(storeAt url: URL, type: String, options: [AnyHashable: Any], to model: NSManagedObjectModel) throws {
        let sequence = try versionSequence()
        let metadata: [String: Any]
        do {
            metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: type, at: url, options: nil)
        } catch {
            return  // No store yet (or not one this type reads): nothing to migrate; the add reports it.
        }
        guard !model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata),
            var current = try NSStagedMigrationManager.checksum(ofStoreMetadata: metadata),
            let position = sequence.firstIndex(of: current)
        else { return }
        if let target = sequence.firstIndex(of: model.versionChecksum), target < position {
            throw CoreDataError.make(
                NSStagedMigrationBackwardMigrationError,
                "A store file cannot be migrated backwards with staged migration: the store at \(url.path) is at a "
                    + "version the stages place after the model's")
        }
        var stageOptions = options
        stageOptions[NSPersistentStoreStagedMigrationManagerOptionKey] = nil
        for (index, stage) in stages.enumerated() {
            if let custom = stage as? NSCustomMigrationStage {
                guard current == custom.currentModel.versionChecksum else { continue }
                let from = try custom.currentModel.resolve()
                let to = try custom.nextModel.resolve()
                try custom.willMigrateHandler.map { handler in
                    try withContainer(from, url: url, type: type, options: stageOptions) { try handler(self, custom) }
                }
                try migrateLightweight(url, type: type, options: stageOptions, to: to)
                current = custom.nextModel.versionChecksum
                try custom.didMigrateHandler.map { handler in
                    try withContainer(to, url: url, type: type, options: stageOptions) { try handler(self, custom) }
                }
            } else if let lightweight = stage as? NSLightweightMigrationStage,
                lightweight.versionChecksums.contains(current)
            {
                let next = stages[(index + 1)...].lazy.compactMap { $0 as? NSCustomMigrationStage }.first
                let target = try next?.currentModel.resolve() ?? model
                guard target.versionChecksum != current else { continue }
                try migrateLightweight(url, type: type, options: stageOptions, to: target)
                current = target.versionChecksum
            }
        }
    }

    /// Migrates the store to `model` with lightweight migration (opening it, then closing it).
    private func migrateLightweight(
        _ url: URL, type: String, options: [AnyHashable: Any], to model: NSManagedObjectModel
    )
        throws
    {
        var migrating = options
        migrating[NSMigratePersistentStoresAutomaticallyOption] = true
        migrating[NSInferMappingModelAutomaticallyOption] = true
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(
            ofType: type, configurationName: nil, at: url, options: migrating)
        try coordinator.remove(store)
    }

    /// Runs `body` with ``container`` holding the store opened at `model` (not migrating).
    private func withContainer(
        _ model: NSManagedObjectModel, url: URL, type: String, options: [AnyHashable: Any], _ body: () throws -> Void
    ) throws {
        let container = NSPersistentContainer(name: "StagedMigration", managedObjectModel: model)
        let description = NSPersistentStoreDescription(url: url)
        description.type = type
        description.shouldMigrateStoreAutomatically = false
        description.shouldInferMappingModelAutomatically = false
        for (key, value) in options {
            guard let key = key as? String, let value = value as? NSObject,
                key != NSMigratePersistentStoresAutomaticallyOption, key != NSInferMappingModelAutomaticallyOption
            else { continue }
            description.setOption(value, forKey: key)
        }
        container.persistentStoreDescriptions = [description]
        var failure: Error?
        container.loadPersistentStores { _, error in failure = error }
        if let failure { throw failure }
        self.container = container
        defer {
            self.container = nil
            for store in container.persistentStoreCoordinator.persistentStores {
                try? container.persistentStoreCoordinator.remove(store)
            }
        }
        try body()
    }
}
