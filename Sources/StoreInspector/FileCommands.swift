// check, space, vacuum, migrate --dry-run: commands on a default store's file.
import Foundation
import OpenCoreData
import StorageEngine

enum FileCommands {
    /// The file to read for a check or report: the store itself, or a snapshot copy when
    /// another process owns it (see StoreOpening). The second value is the copy's directory.
    private static func readableFile(_ path: String) throws(InspectorError) -> (URL, URL?) {
        let url = try StoreOpening.existingFile(path)
        do {
            _ = try StoreOpening.typeAndMetadata(of: url)
            return (url, nil)
        } catch let error as NSError where error.code == NSPersistentStoreTimeoutError {
            let (copy, directory) = try StoreOpening.snapshot(of: url)
            return (copy, directory)
        } catch {
            throw .failure("\(path): \(StoreOpening.describe(error))")
        }
    }

    static func check(_ arguments: inout InspectorArguments) throws(InspectorError) -> Int32 {
        let path = try arguments.positional(minimum: 1, maximum: 1, what: "PATH (a store file)")[0]
        let (file, snapshot) = try readableFile(path)
        defer { if let snapshot { try? FileManager.default.removeItem(at: snapshot) } }
        let report: PageFileVerificationReport
        do {
            report = try PageFileStore.verify(at: file)
        } catch {
            throw .failure("\(path): \(StoreOpening.describe(error))")
        }
        if snapshot != nil { print("(read from a snapshot: another process has the store open)") }
        if let engine = report.engine {
            print(
                "engine: transaction \(engine.transaction), \(engine.pageCount) pages, \(engine.treeCount) trees, "
                    + "\(engine.entryCount) entries, \(engine.freePageCount) free pages, depth \(engine.maximumDepth)")
        }
        print("store: \(report.rowCount) rows, \(report.indexEntryCount) index entries")
        for problem in report.problems { print("problem: \(problem)") }
        guard report.isClean else {
            printError("opencoredata-store check: \(path) has \(report.problems.count) problem(s)")
            return 1
        }
        print("check: \(path) is sound")
        return 0
    }

    static func space(_ arguments: inout InspectorArguments) throws(InspectorError) -> Int32 {
        let path = try arguments.positional(minimum: 1, maximum: 1, what: "PATH (a store file)")[0]
        let (file, snapshot) = try readableFile(path)
        defer { if let snapshot { try? FileManager.default.removeItem(at: snapshot) } }
        do {
            print(try PageFileStore.spaceReport(at: file))
            return 0
        } catch {
            throw .failure("\(path): \(StoreOpening.describe(error))")
        }
    }

    static func vacuum(_ arguments: inout InspectorArguments) throws(InspectorError) -> Int32 {
        let path = try arguments.positional(minimum: 1, maximum: 1, what: "PATH (a store file)")[0]
        let url = try StoreOpening.existingFile(path)
        // Refuse what is not a default store before the engine opens it for writing.
        do {
            let (type, _) = try StoreOpening.typeAndMetadata(of: url)
            guard type == NSSQLiteStoreType else {
                throw InspectorError.failure("\(path) is a \(type) store: only default stores vacuum")
            }
        } catch let error as InspectorError {
            throw error
        } catch let error as NSError where error.code == NSPersistentStoreTimeoutError {
            throw .failure("\(path) is in use by another process: close the app, then vacuum")
        } catch {
            throw .failure("\(path): \(StoreOpening.describe(error))")
        }
        let before = fileSize(path)
        do {
            var options = Database.Options()
            options.busyTimeout = 1
            let database = try Database.open(at: path, options: options)
            try database.vacuum()
            try database.close()
        } catch let error as StorageError where error.code == .busy {
            throw .failure("\(path) is in use by another process: close the app, then vacuum (\(error.message))")
        } catch {
            throw .failure("\(path): \(error)")
        }
        print("vacuum: \(path): \(before) bytes -> \(fileSize(path)) bytes")
        return 0
    }

    private static func fileSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }

    static func migrate(_ arguments: inout InspectorArguments) throws(InspectorError) -> Int32 {
        let dryRun = arguments.flag("--dry-run")
        let modelPath = try arguments.value("--model")
        let path = try arguments.positional(minimum: 1, maximum: 1, what: "PATH (a store file)")[0]
        guard dryRun else {
            throw .usage(
                "only --dry-run: a store migrates when the app adds it with the new model "
                    + "(NSMigratePersistentStoresAutomaticallyOption)")
        }
        guard let modelPath else { throw .usage("--model MODEL (a .xcdatamodel or .xcdatamodeld) is required") }
        let (file, snapshot) = try readableFile(path)
        defer { if let snapshot { try? FileManager.default.removeItem(at: snapshot) } }
        let model: NSManagedObjectModel
        do {
            model = try NSManagedObjectModel(validatingContentsOf: URL(fileURLWithPath: modelPath))
        } catch {
            throw .failure("\(modelPath): \(StoreOpening.describe(error))")
        }
        let report: MigrationReport
        do {
            let (type, _) = try StoreOpening.typeAndMetadata(of: file)
            report = try NSPersistentStoreCoordinator(managedObjectModel: model).dryRunMigration(
                ofStoreAt: file, type: type)
        } catch {
            throw .failure("\(path): \(StoreOpening.describe(error))")
        }
        if report.isCompatible {
            print("migrate: \(path) holds data of this model: nothing to migrate")
            return 0
        }
        for change in report.changes {
            print(
                "change: \(change.kind.rawValue) \(change.entity)\(change.property.map { ".\($0)" } ?? ""): \(change.description)"
            )
        }
        for (entity, count) in report.objectCounts.sorted(by: { $0.key < $1.key }) {
            print("objects: \(entity) \(count)")
        }
        if let error = report.error {
            printError(
                "opencoredata-store migrate: \(path) cannot be migrated (error \(error.code)): \(error.localizedDescription)"
            )
            return 1
        }
        print("migrate: \(path) would migrate; it is unchanged")
        return 0
    }
}
