// `storage-bench dry-run PATH MODEL`: what opening the store at PATH with the model file
// MODEL and automatic migration would do, found without changing the store (the
// coordinator's dryRunMigration, SPEC.md §3.3): the changes and the object counts, or the
// error opening would throw.
import Foundation
import OpenCoreData

enum MigrationDryRunCommand {
    /// `dry-run PATH MODEL`: 0 when the store is compatible or would migrate, 1 when it
    /// could not or cannot be read.
    static func run(_ arguments: [String]) throws(CommandLineError) -> Int32 {
        try StorageBenchCommand.expectArguments(
            arguments, count: 2, command: "dry-run", what: "PATH (a store file) and MODEL (a .xcdatamodel(d))")
        let store = try StoreFileCommands.existingStore([arguments[0]], command: "dry-run")
        let modelURL = URL(fileURLWithPath: arguments[1])
        let model: NSManagedObjectModel
        do {
            model = try NSManagedObjectModel(validatingContentsOf: modelURL)
        } catch {
            throw CommandLineError.failure("dry-run: \(modelURL.path): \(error)")
        }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let report: MigrationReport
        do {
            report = try dryRun(store, coordinator: coordinator)
        } catch {
            throw CommandLineError.failure("dry-run: \(store.path): \((error as NSError).localizedDescription)")
        }
        if report.isCompatible {
            print("dry-run: \(store.path) holds data of this model: nothing to migrate")
            return ExitStatus.success
        }
        for change in report.changes {
            let property = change.property.map { ".\($0)" } ?? ""
            print("change: \(change.kind.rawValue) \(change.entity)\(property): \(change.description)")
        }
        for (entity, count) in report.objectCounts.sorted(by: { $0.key < $1.key }) {
            print("objects: \(entity) \(grouped(count))")
        }
        if let error = report.error {
            printError(
                "storage-bench dry-run: \(store.path) cannot be migrated (error \(error.code)): "
                    + error.localizedDescription)
            return ExitStatus.failure
        }
        print("dry-run: \(store.path) would migrate; it is unchanged")
        return ExitStatus.success
    }

    /// The report for the default store at `url`, or for a binary store when the file is
    /// not a default store.
    private static func dryRun(_ url: URL, coordinator: NSPersistentStoreCoordinator) throws -> MigrationReport {
        do {
            return try coordinator.dryRunMigration(ofStoreAt: url, type: NSSQLiteStoreType)
        } catch let error as NSError {
            guard
                (try? NSPersistentStoreCoordinator.metadataForPersistentStore(
                    ofType: NSBinaryStoreType, at: url, options: nil)) != nil
            else { throw error }
            return try coordinator.dryRunMigration(ofStoreAt: url, type: NSBinaryStoreType)
        }
    }
}
