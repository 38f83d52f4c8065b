import Foundation
import TestSupport
import Testing

/// Tests' scratch directories (TestScratch.swift) do not outlive their processes.
@Suite struct TestScratchTests {
    static func exists(_ url: URL) -> Bool { FileManager.default.fileExists(atPath: url.path) }

    @Test func directoriesLieUnderThisProcesssRootAndAreNew() throws {
        let first = try TestScratch.directory("scratch")
        let second = try TestScratch.directory("scratch")
        #expect(first != second)
        #expect(first.deletingLastPathComponent().standardizedFileURL == TestScratch.root.standardizedFileURL)
        #expect(TestScratch.root.lastPathComponent == String(getpid()))
        #expect(try FileManager.default.contentsOfDirectory(atPath: first.path).isEmpty)
    }

    @Test func rootsOfDeadProcessesAreRemovedAndLiveOnesKept() throws {
        _ = TestScratch.root
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "exit 0"]
        try process.run()
        process.waitUntilExit()
        #expect(!TestScratch.isAlive(process.processIdentifier))
        let dead = TestScratch.parent.appendingPathComponent(String(process.processIdentifier))
        try FileManager.default.createDirectory(
            at: dead.appendingPathComponent("store"), withIntermediateDirectories: true)
        // A live process's root (the parent's; made here only if it has none) stays.
        let live = TestScratch.parent.appendingPathComponent(String(getppid()))
        let madeLive = !Self.exists(live)
        if madeLive { try FileManager.default.createDirectory(at: live, withIntermediateDirectories: true) }
        defer { if madeLive { try? FileManager.default.removeItem(at: live) } }
        // Not a pid: never touched.
        let other = TestScratch.parent.appendingPathComponent("notes")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: other) }

        TestScratch.removeRootsOfDeadProcesses()
        #expect(!Self.exists(dead))
        #expect(Self.exists(live))
        #expect(Self.exists(other))
        #expect(Self.exists(TestScratch.root))
    }
}
