// `storage-bench check PATH` and `storage-bench space PATH`: tools for a default-store
// file on disk. A missing PATH is refused before the store is opened: opening it would
// leave a `PATH-lock` file behind.
import Foundation
import OpenCoreData
import StorageEngine

enum StoreFileCommands {
    /// The store file named by the only argument, which must exist.
    static func existingStore(_ arguments: [String], command: String) throws(CommandLineError) -> URL {
        try StorageBenchCommand.expectArguments(arguments, count: 1, command: command, what: "PATH (a store file)")
        let path = arguments[0]
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw CommandLineError.failure("\(command): \(path): no such file")
        }
        guard !isDirectory.boolValue else { throw CommandLineError.failure("\(command): \(path) is a directory") }
        return URL(fileURLWithPath: path)
    }

    /// `check PATH`: verifies the store; 0 when sound, 1 when it has problems or cannot be read.
    static func check(_ arguments: [String]) throws(CommandLineError) -> Int32 {
        let url = try existingStore(arguments, command: "check")
        let report: PageFileVerificationReport
        do {
            report = try PageFileStore.verify(at: url)
        } catch {
            throw CommandLineError.failure("check: \(url.path): \((error as NSError).localizedDescription)")
        }
        if let engine = report.engine {
            print(
                "engine: transaction \(engine.transaction), \(grouped(engine.pageCount)) pages, "
                    + "\(engine.treeCount) trees, \(grouped(engine.entryCount)) entries, "
                    + "\(grouped(engine.freePageCount)) free pages, depth \(engine.maximumDepth)")
        }
        print("store: \(grouped(report.rowCount)) rows, \(grouped(report.indexEntryCount)) index entries")
        for problem in report.problems { print("problem: \(problem)") }
        if report.isClean {
            print("check: \(url.path) is sound")
            return ExitStatus.success
        }
        printError("storage-bench check: \(url.path) has \(report.problems.count) problem(s)")
        return ExitStatus.failure
    }

    /// `space PATH`: where the file's bytes go.
    static func space(_ arguments: [String]) throws(CommandLineError) -> Int32 {
        let url = try existingStore(arguments, command: "space")
        do {
            print(try PageFileStore.spaceReport(at: url))
            return ExitStatus.success
        } catch {
            throw CommandLineError.failure("space: \(url.path): \((error as NSError).localizedDescription)")
        }
    }
}
