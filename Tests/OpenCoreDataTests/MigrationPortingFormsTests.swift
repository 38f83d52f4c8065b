// The migration code of the guides in ../shared/reference (core-data-guide.txt §10 and
// the staged-migration section of core-data-skill.md), compiled as written, and run
// where it can run here: on the Company versions of StagedMigrationTests instead of the
// guides' "MyApp" models, whose files no test has. Where a form cannot compile as
// written, the comment says what changed.
import Foundation
import OpenCoreData
import Testing

// core-data-guide.txt, "Manual Migration", verbatim.

class PersonToEmployeeMigrationPolicy: NSEntityMigrationPolicy {
    override func createDestinationInstances(
        forSource sInstance: NSManagedObject,
        in mapping: NSEntityMapping,
        manager: NSMigrationManager
    ) throws {
        try super.createDestinationInstances(
            forSource: sInstance,
            in: mapping,
            manager: manager
        )
        guard
            let destObject = manager.destinationInstances(
                forEntityMappingName: mapping.name,
                sourceInstances: [sInstance]
            ).first
        else {
            return
        }
        // Custom migration logic
        if let fullName = sInstance.value(forKey: "fullName") as? String {
            let components = fullName.components(separatedBy: " ")
            destObject.setValue(components.first, forKey: "firstName")
            destObject.setValue(components.last, forKey: "lastName")
        }
    }
}

// The guide's migrateStore(at:), verbatim but for its name (a method here) and the bundle
// lookups it cannot make in a test: compiled, not run (NSMappingModel(from:...) finds no
// compiled mapping model here and returns nil, so the guide's `!` would stop the test).
enum GuideMigration {
    static func migrateStore(at storeURL: URL) {
        let sourceModel = NSManagedObjectModel(
            contentsOf: Bundle.main.url(
                forResource: "MyApp",
                withExtension: "momd/MyApp.mom"
            )!
        )!
        let destinationModel = NSManagedObjectModel(
            contentsOf: Bundle.main.url(
                forResource: "MyApp",
                withExtension: "momd/MyApp 2.mom"
            )!
        )!
        let mappingModel = NSMappingModel(
            from: [Bundle.main],
            forSourceModel: sourceModel,
            destinationModel: destinationModel
        )!
        let manager = NSMigrationManager(
            sourceModel: sourceModel,
            destinationModel: destinationModel
        )
        let destURL = storeURL.deletingLastPathComponent()
            .appendingPathComponent("MyApp_new.sqlite")
        try? manager.migrateStore(
            from: storeURL,
            sourceType: NSSQLiteStoreType,
            options: nil,
            with: mappingModel,
            toDestinationURL: destURL,
            destinationType: NSSQLiteStoreType,
            destinationOptions: nil
        )
        // Replace old store with new one
        try? FileManager.default.removeItem(at: storeURL)
        try? FileManager.default.moveItem(at: destURL, to: storeURL)
    }

    /// The guide's progressive migration, verbatim; the guide leaves
    /// `migrateStore(from:to:targetVersion:)` to the reader: here it is the migration manager
    /// with the inferred mapping model between consecutive versions.
    static func progressiveMigration(
        from sourceURL: URL, to destinationURL: URL, versions modelVersions: [String: NSManagedObjectModel],
        order: [String]
    ) throws {
        let sourceMetadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: NSSQLiteStoreType,
            at: sourceURL,
            options: nil
        )
        var currentURL = sourceURL
        var currentModel: NSManagedObjectModel?
        for (index, version) in order.enumerated() {
            guard let model = modelVersions[version] else {
                continue
            }
            if model.isConfiguration(withName: nil, compatibleWithStoreMetadata: sourceMetadata) {
                // This is our source model
                currentModel = model
                continue
            }
            guard let previous = currentModel else { continue }
            // Migrate to this version
            let nextURL = destinationURL.deletingLastPathComponent()
                .appendingPathComponent("temp_\(index).sqlite")
            try NSMigrationManager(sourceModel: previous, destinationModel: model).migrateStore(
                from: currentURL, sourceType: NSSQLiteStoreType, options: nil,
                with: try NSMappingModel.inferredMappingModel(forSourceModel: previous, destinationModel: model),
                toDestinationURL: nextURL, destinationType: NSSQLiteStoreType, destinationOptions: nil)
            currentURL = nextURL
            currentModel = model
        }
        // Final move
        try FileManager.default.moveItem(at: currentURL, to: destinationURL)
    }
}

@Suite struct MigrationPortingFormsTests {
    typealias F = MigrationFixtures
    typealias C = CompanyVersions

    @Test func theGuidesLightweightSetUpMigratesOnLoad() throws {
        let url = try F.scratch("Guide")
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        try C.seedVersion1(url)
        // "Enable lightweight migration", with the container of the test's model.
        let container = NSPersistentContainer(name: "MyApp", managedObjectModel: C.model(2))
        let description = NSPersistentStoreDescription(url: url)
        description.shouldMigrateStoreAutomatically = true
        description.shouldInferMappingModelAutomatically = true
        container.persistentStoreDescriptions = [description]
        var loadError: Error?
        container.loadPersistentStores { description, error in
            if let error = error {
                loadError = error
            }
        }
        #expect(loadError == nil)
        #expect(try container.viewContext.count(for: NSFetchRequest<NSManagedObject>(entityName: "Branch")) == 1)
        for store in container.persistentStoreCoordinator.persistentStores {
            try container.persistentStoreCoordinator.remove(store)
        }
        // "Legacy approach"
        let options = [
            NSMigratePersistentStoresAutomaticallyOption: true,
            NSInferMappingModelAutomaticallyOption: true,
        ]
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: C.model(2))
        try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType,
            configurationName: nil,
            at: url,
            options: options
        )
        try PageFileFixtures.close(coordinator)
    }

    @Test func theGuidesProgressiveMigrationRuns() throws {
        let url = try F.scratch("Progressive")
        let directory = url.deletingLastPathComponent()
        defer { try? FileManager.default.removeItem(at: directory) }
        try C.seedVersion1(url)
        let destination = directory.appendingPathComponent("Final.sqlite")
        try GuideMigration.progressiveMigration(
            from: url, to: destination, versions: ["MyApp": C.model(1), "MyApp 2": C.model(2)],
            order: ["MyApp", "MyApp 2"])
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: NSSQLiteStoreType, at: destination, options: nil)
        #expect(C.model(2).isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        #expect(NSMappingModel(from: [Bundle.main], forSourceModel: C.model(1), destinationModel: C.model(2)) == nil)
    }

    @Test func theSkillsStagedMigrationRuns() throws {
        let url = try F.scratch("Staged")
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        try C.seedVersion1(url)
        let (v1, v2, v3) = (C.model(1), C.model(2), C.model(3))
        // core-data-skill.md, "Staged Migration": checksums from the models; references by
        // model instead of by name in Bundle.main (the test bundle has no model files).
        let checksumV1 = v1.versionChecksum
        let checksumV2 = v2.versionChecksum
        let checksumV3 = v3.versionChecksum
        let stage1to2 = NSLightweightMigrationStage([checksumV1, checksumV2])
        stage1to2.label = "Add isFavorite property"
        let modelV2 = NSManagedObjectModelReference(model: v2, versionChecksum: checksumV2)
        let modelV3 = NSManagedObjectModelReference(model: v3, versionChecksum: checksumV3)
        _ = NSManagedObjectModelReference(name: "ModelV2", in: Bundle.main, versionChecksum: checksumV2)
        let stage2to3 = NSCustomMigrationStage(
            migratingFrom: modelV2,
            to: modelV3
        )
        stage2to3.label = "Split name into firstName/lastName"
        stage2to3.willMigrateHandler = { migrationManager, currentStage in
            guard let container = migrationManager.container else { return }
            let context = container.newBackgroundContext()
            try context.performAndWait {
                // Transform data between schema versions: the skill writes firstName and
                // lastName here, at version 2, which has no such attributes; the test
                // checks that the store is readable at version 2 instead.
                let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
                let people = try context.fetch(request)
                #expect(people.count == 2)
            }
        }
        let manager = NSStagedMigrationManager([stage1to2, stage2to3])
        let container = NSPersistentContainer(name: "MyApp", managedObjectModel: v3)
        let description = NSPersistentStoreDescription(url: url)
        description.setOption(
            manager,
            forKey: NSPersistentStoreStagedMigrationManagerOptionKey)
        container.persistentStoreDescriptions = [description]
        var loadError: Error?
        container.loadPersistentStores { _, error in
            if let error { loadError = error }
        }
        #expect(loadError == nil)
        #expect(try container.viewContext.count(for: NSFetchRequest<NSManagedObject>(entityName: "Employee")) == 2)
        for store in container.persistentStoreCoordinator.persistentStores {
            try container.persistentStoreCoordinator.remove(store)
        }
    }
}
