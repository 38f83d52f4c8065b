import Foundation
import OpenCoreData
import Testing

/// A default store shared between processes, and `storage-bench store-share-child`
/// writing to it from another process (RemoteChangeNotificationTests, QueryGenerationTests).
enum SharedStoreChild {
    /// The child's executable; nil, with an issue recorded, when it has not been built.
    static func executable() -> URL? {
        let executable = PageFileStoreCrashTests.childExecutable
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            Issue.record("\(executable.path) is missing: run `swift build` before `swift test`")
            return nil
        }
        return executable
    }

    /// A coordinator on the default store at `url`, added with the multi-process option
    /// and history tracking (as the child adds it), plus `extra` options.
    static func coordinator(_ url: URL, options extra: [AnyHashable: Any] = [:]) throws -> NSPersistentStoreCoordinator
    {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: PageFileStoreCrashTests.model)
        var options: [AnyHashable: Any] = [
            PageFileStoreMultiProcessOption: true as NSNumber, NSPersistentHistoryTrackingKey: true as NSNumber,
            PageFileStoreDurabilityOption: "normal", NSPersistentStoreTimeoutOption: 30 as NSNumber,
        ]
        options.merge(extra) { _, new in new }
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: options)
        return coordinator
    }

    /// Inserts a record of the child's model named `name` into `context`.
    static func insertRecord(_ name: String, into context: NSManagedObjectContext) {
        let record = NSEntityDescription.insertNewObject(forEntityName: "StoreRecord", into: context)
        record.setValue(name, forKey: "name")
        record.setValue(Int64(1), forKey: "score")
        record.setValue(Int16(1), forKey: "age")
        record.setValue(0.5, forKey: "weight")
        record.setValue(true, forKey: "active")
    }

    /// Starts the child with `executable`, saving `count` records to the store at `url`
    /// one save each.
    /// - Returns: The running process and the pipe of its standard output.
    static func start(_ executable: URL, at url: URL, count: Int) throws -> (process: Process, output: Pipe) {
        let process = Process()
        process.executableURL = executable
        process.arguments = ["store-share-child", url.path, "\(count)"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        return (process, output)
    }

    /// Runs the child (see ``start(_:at:count:)``) and waits for it to exit.
    /// - Returns: Its exit status and standard output.
    static func run(_ executable: URL, at url: URL, count: Int) throws -> (status: Int32, output: String) {
        let child = try start(executable, at: url, count: count)
        child.process.waitUntilExit()
        let text = String(decoding: child.output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (child.process.terminationStatus, text)
    }
}
