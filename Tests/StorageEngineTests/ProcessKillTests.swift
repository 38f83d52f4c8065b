import Foundation
import StorageEngine
import TestSupport
import Testing

/// A child process commits in full durability and reports each acknowledged commit; it
/// is killed with SIGKILL at random moments and nothing acknowledged may be missing.
@Suite struct ProcessKillTests {
    static var childExecutable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
            "opencoredata-fuzz")
    }

    @Test func sigkillNeverLosesAcknowledgedCommits() throws {
        guard FileManager.default.isExecutableFile(atPath: Self.childExecutable.path) else {
            Issue.record("\(Self.childExecutable.path) is missing: run `swift build` before `swift test`")
            return
        }
        let directory = try TestScratch.directory("engine-kill")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("kill.db").path
        var random = SeededRandom(environmentOr: 5)
        var acknowledged = 0
        for kill in 0..<100 {
            let process = Process()
            process.executableURL = Self.childExecutable
            process.arguments = ["engine-kill-child", "--iterations", "1", "--seed", "\(random.next() % 1_000_000)"]
            var environment = ProcessInfo.processInfo.environment
            environment["OPENCOREDATA_ENGINE_CHILD"] = path
            process.environment = environment
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            var received = Data()
            if !random.chance(0.1) {
                // Usually wait for the first acknowledgement, so most kills land mid-commit.
                received.append(output.fileHandleForReading.availableData)
                usleep(UInt32(random.int(in: 0...15_000)))
            } else {
                usleep(UInt32(random.int(in: 0...30_000)))
            }
            Foundation.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            received.append(output.fileHandleForReading.readDataToEndOfFile())
            for line in String(decoding: received, as: UTF8.self).split(separator: "\n") {
                if line.hasPrefix("ack "), let value = Int(line.dropFirst(4)) {
                    acknowledged = max(acknowledged, value)
                }
            }
            let database = try Database.open(at: path)
            let (count, last) = try database.read { transaction -> (Int, [UInt8]?) in
                let tree = try transaction.tree(named: "acks")
                let count = try tree?.count ?? 0
                return (count, acknowledged > 0 ? try tree?.value(forKey: Self.key(acknowledged - 1)) : nil)
            }
            #expect(
                count >= acknowledged,
                "kill \(kill): \(count) commits survived but \(acknowledged) were acknowledged — \(random.replayHint)")
            if acknowledged > 0 {
                #expect(
                    last == EngineHarness.killTestValue(acknowledged - 1), "kill \(kill): last acknowledged value wrong"
                )
            }
            if kill % 10 == 9 { _ = try database.verify() }
            acknowledged = count
            try database.close()
        }
        #expect(acknowledged > 100)
    }

    static func key(_ value: Int) -> [UInt8] { withUnsafeBytes(of: UInt64(value).bigEndian) { Array($0) } }

    @Test func killedSharedWriterNeverCostsAnotherHandleItsCommits() throws {
        guard FileManager.default.isExecutableFile(atPath: Self.childExecutable.path) else {
            Issue.record("\(Self.childExecutable.path) is missing: run `swift build` before `swift test`")
            return
        }
        let directory = try TestScratch.directory("engine-shared-kill")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("shared.db").path
        var options = Database.Options()
        options.multiProcess = true
        options.busyTimeout = 30  // generous: a loaded CI machine, not the lock, should never decide this test
        let parent = try Database.open(at: path, options: options)
        var random = SeededRandom(environmentOr: 8)
        var acknowledged = 0
        var parentCommits = 0
        for kill in 0..<30 {
            let process = Process()
            process.executableURL = Self.childExecutable
            process.arguments = ["engine-kill-child", "--iterations", "1", "--seed", "\(random.next() % 1_000_000)"]
            var environment = ProcessInfo.processInfo.environment
            environment["OPENCOREDATA_ENGINE_CHILD"] = path
            environment["OPENCOREDATA_ENGINE_CHILD_SHARED"] = "1"
            process.environment = environment
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            var received = output.fileHandleForReading.availableData
            usleep(UInt32(random.int(in: 0...20_000)))
            Foundation.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            received.append(output.fileHandleForReading.readDataToEndOfFile())
            for line in String(decoding: received, as: UTF8.self).split(separator: "\n") {
                if line.hasPrefix("ack "), let value = Int(line.dropFirst(4)) {
                    acknowledged = max(acknowledged, value)
                }
            }
            // The parent's handle stayed open across the kill: it must see every
            // acknowledged commit, and its own commits must survive the dead writer.
            let count = try parent.read { try $0.tree(named: "acks")?.count ?? 0 }
            #expect(count >= acknowledged, "kill \(kill): \(count) visible, \(acknowledged) acknowledged")
            acknowledged = count
            try parent.write { try $0.openTree(named: "parent").setValue([1], forKey: Self.key(parentCommits)) }
            parentCommits += 1
            let mine = try parent.read { try $0.tree(named: "parent")?.count ?? 0 }
            #expect(mine == parentCommits, "kill \(kill): the parent's commits were lost")
        }
        _ = try parent.verify()
        try parent.close()
        let reopened = try Database.open(at: path)
        #expect(try reopened.read { try $0.tree(named: "parent")?.count ?? 0 } == parentCommits)
        #expect(try reopened.read { try $0.tree(named: "acks")?.count ?? 0 } >= acknowledged)
        _ = try reopened.verify()
        try reopened.close()
    }
}
