// The stages of a staged migration: a lightweight stage lists model versions (by version
// checksum) a store migrates from with lightweight migration; a custom stage migrates
// from one model version to the next with handlers before and after.
import Foundation

/// One stage of a staged migration (use a subclass).
open class NSMigrationStage: NSObject, @unchecked Sendable {
    /// What the stage is for, for logs.
    open var label: String?

    /// A stage without a label.
    public override init() {
        super.init()
    }

    /// The version checksums a store may be at when the stage begins.
    var sourceChecksums: [String] { [] }
    /// Every version checksum the stage names, in order.
    var checksums: [String] { sourceChecksums }
}

/// A stage of model versions lightweight migration can migrate between.
///
/// A store at one of the versions migrates straight to the version the next stage starts
/// from (the current model after the last stage), as Core Data's does.
///
/// ```swift
/// let stage = NSLightweightMigrationStage([v1.versionChecksum, v2.versionChecksum])
/// ```
open class NSLightweightMigrationStage: NSMigrationStage, @unchecked Sendable {
    /// The model versions of the stage, by version checksum.
    public let versionChecksums: [String]

    /// A stage of the model versions whose checksums are `checksums`.
    public init(_ checksums: [String]) {
        versionChecksums = checksums
        super.init()
    }

    override var sourceChecksums: [String] { versionChecksums }
}

/// A stage migrating from one model version to the next, with handlers that run with the
/// store open at the current version before the migration and at the next version after.
///
/// ```swift
/// let stage = NSCustomMigrationStage(migratingFrom: v2Reference, to: v3Reference)
/// stage.willMigrateHandler = { manager, stage in
///     let context = manager.container?.newBackgroundContext()
///     // read or fix data at version 2
/// }
/// ```
open class NSCustomMigrationStage: NSMigrationStage, @unchecked Sendable {
    /// The version the stage migrates from.
    public let currentModel: NSManagedObjectModelReference
    /// The version the stage migrates to.
    public let nextModel: NSManagedObjectModelReference
    /// Runs before the migration, with the store open at ``currentModel`` in
    /// `manager.container`; throwing stops the migration (the store stays at the current version).
    open var willMigrateHandler: ((NSStagedMigrationManager, NSCustomMigrationStage) throws -> Void)?
    /// Runs after the migration, with the store open at ``nextModel`` in `manager.container`.
    open var didMigrateHandler: ((NSStagedMigrationManager, NSCustomMigrationStage) throws -> Void)?

    /// A stage from `currentModel` to `nextModel`.
    public init(migratingFrom currentModel: NSManagedObjectModelReference, to nextModel: NSManagedObjectModelReference)
    {
        self.currentModel = currentModel
        self.nextModel = nextModel
        super.init()
    }

    override var sourceChecksums: [String] { [currentModel.versionChecksum] }
    override var checksums: [String] { [currentModel.versionChecksum, nextModel.versionChecksum] }
}
