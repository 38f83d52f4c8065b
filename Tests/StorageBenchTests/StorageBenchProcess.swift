// Runs the built storage-bench (beside the test bundle, as `swift build` leaves it) with
// stdout and stderr in files: neither is a terminal, as in CI or a redirect.
import Foundation
import TestSupport
import Testing

/// What one run of storage-bench did.
struct BenchRun {
    let status: Int32
    let stdout: String
    let stderr: String
}

enum StorageBenchProcess {
    static var executable: URL { tool("storage-bench") }

    /// A command-line tool of the package, built beside the test bundle.
    static func tool(_ name: String) -> URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name)
    }

    /// A fresh empty directory, removed by the caller.
    static func temporaryDirectory() throws -> URL {
        let directory = try TestScratch.directory("storage-bench-tests")
        return directory
    }

    /// Runs storage-bench with `arguments` (and `environment` added to this process's) to the end.
    static func run(_ arguments: [String], environment: [String: String] = [:], tool name: String = "storage-bench")
        throws -> BenchRun
    {
        let executable = tool(name)
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            Issue.record("\(executable.path) is missing: run `swift build` before `swift test`")
            return BenchRun(status: -1, stdout: "", stderr: "")
        }
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let outURL = directory.appendingPathComponent("stdout")
        let errURL = directory.appendingPathComponent("stderr")
        #expect(FileManager.default.createFile(atPath: outURL.path, contents: nil))
        #expect(FileManager.default.createFile(atPath: errURL.path, contents: nil))
        let out = try FileHandle(forWritingTo: outURL)
        let err = try FileHandle(forWritingTo: errURL)
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        process.standardOutput = out
        process.standardError = err
        try process.run()
        process.waitUntilExit()
        try out.close()
        try err.close()
        return BenchRun(
            status: process.terminationStatus,
            stdout: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
            stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
    }

    /// stderr without the warning every debug build prints, so tests of what else a
    /// command writes there hold in both configurations.
    static func stderrWithoutDebugWarning(_ run: BenchRun) -> String {
        run.stderr.split(separator: "\n", omittingEmptySubsequences: true)
            .filter { !$0.hasPrefix("WARNING: this is a DEBUG build") }.joined(separator: "\n")
    }
}
