import Foundation
import StorageEngine
import TestSupport
import Testing

/// Several handles (the same locks as several processes) on one database.
@Suite struct MultiProcessTests {
    static func options(timeout: Double = 5) -> Database.Options {
        var options = Database.Options()
        options.durability = .normal
        options.multiProcess = true
        options.busyTimeout = timeout
        options.checkpointThreshold = 32 << 10
        return options
    }

    static func key(_ value: Int) -> [UInt8] { withUnsafeBytes(of: UInt64(value).bigEndian) { Array($0) } }

    /// What a remote-change watcher polls: other handles' commits count, a handle's own do not.
    @Test func changesAnnouncedByOtherHandlesCountOnlyTheirs() throws {
        let path = DatabaseBasicsTests.temporaryPath("announced")
        let first = try Database.open(at: path, options: Self.options())
        let second = try Database.open(at: path, options: Self.options())
        let firstStart = try #require(try first.changesAnnouncedByOtherHandles())
        let secondStart = try #require(try second.changesAnnouncedByOtherHandles())
        for round in 0..<3 {
            try first.write { try $0.openTree(named: "rows").setValue([1], forKey: Self.key(round)) }
        }
        #expect(try first.changesAnnouncedByOtherHandles() == firstStart)
        #expect(try second.changesAnnouncedByOtherHandles() == secondStart + 3)
        try second.write { try $0.openTree(named: "rows").setValue([2], forKey: Self.key(9)) }
        // The other handle's commit counts for the first (with the two announcements of a
        // checkpoint, when its commit ran one).
        let afterSecond = try #require(try first.changesAnnouncedByOtherHandles())
        #expect(afterSecond > firstStart)
        try first.write { try $0.openTree(named: "rows").setValue([3], forKey: Self.key(10)) }
        #expect(try first.changesAnnouncedByOtherHandles() == afterSecond)
        #expect(try second.changesAnnouncedByOtherHandles() ?? 0 > secondStart + 3)
        try first.close()
        try second.close()
        var single = Self.options()
        single.multiProcess = false
        let alone = try Database.open(at: DatabaseBasicsTests.temporaryPath("alone"), options: single)
        #expect(try alone.changesAnnouncedByOtherHandles() == nil)
    }

    @Test func readersSeeOtherHandlesCommitsAndKeepTheirSnapshots() throws {
        let path = DatabaseBasicsTests.temporaryPath("multi")
        let writer = try Database.open(at: path, options: Self.options())
        let reader = try Database.open(at: path, options: Self.options())
        let held = try reader.snapshot()
        for round in 0..<60 {
            try writer.write { transaction in
                let tree = try transaction.openTree(named: "rows")
                for offset in 0..<20 {
                    try tree.setValue(Array(repeating: UInt8(round), count: 90), forKey: Self.key(round * 20 + offset))
                }
            }
            let count = try reader.read { try $0.tree(named: "rows")?.count ?? 0 }
            #expect(count == (round + 1) * 20)
        }
        // The held snapshot predates every commit, and blocked checkpoints meanwhile.
        #expect(try held.tree(named: "rows") == nil)
        let blocked = #expect(throws: StorageError.self) { try writer.checkpoint() }
        #expect(blocked?.code == .busy)
        held.close()
        try writer.checkpoint()
        #expect(
            try reader.read { try $0.tree(named: "rows")?.value(forKey: Self.key(1_199)) }
                == Array(repeating: 59, count: 90))
        _ = try reader.verify()
        let exclusive = #expect(throws: StorageError.self) { _ = try Database.open(at: path) }
        #expect(exclusive?.code == .busy)
        try reader.close()
        try writer.close()
    }

    @Test func aSecondWriterWaitsOrGetsBusy() throws {
        let path = DatabaseBasicsTests.temporaryPath("writers")
        let first = try Database.open(at: path, options: Self.options())
        let impatient = try Database.open(at: path, options: Self.options(timeout: 0.05))
        let patient = try Database.open(at: path, options: Self.options(timeout: 10))
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        // Own threads, not Dispatch's pool: with the test suites running in parallel, a
        // pool full of blocked work could delay the release past the patient timeout.
        Thread {
            try? first.write { transaction in
                try transaction.openTree(named: "t").setValue([1], forKey: [1])
                entered.signal()
                release.wait()
            }
            done.signal()
        }.start()
        entered.wait()
        let busy = #expect(throws: StorageError.self) {
            try impatient.write { try $0.openTree(named: "t").setValue([2], forKey: [2]) }
        }
        #expect(busy?.code == .busy)
        Thread {
            usleep(50_000)
            release.signal()
        }.start()
        try patient.write { try $0.openTree(named: "t").setValue([3], forKey: [3]) }
        done.wait()
        let values = try impatient.read { transaction in
            try [1, 2, 3].map { try transaction.tree(named: "t")?.value(forKey: [UInt8($0)]) }
        }
        #expect(values == [[1], nil, [3]])
        for database in [first, impatient, patient] { try database.close() }
    }

    @Test func anotherProcessWritesWhileThisOneReadsSnapshots() throws {
        guard FileManager.default.isExecutableFile(atPath: ProcessKillTests.childExecutable.path) else {
            Issue.record("\(ProcessKillTests.childExecutable.path) is missing: run `swift build` before `swift test`")
            return
        }
        let path = DatabaseBasicsTests.temporaryPath("two-processes")
        var options = Self.options(timeout: 1)
        options.durability = .full
        let database = try Database.open(at: path, options: options)
        let process = Process()
        process.executableURL = ProcessKillTests.childExecutable
        process.arguments = ["engine-kill-child", "--iterations", "1", "--seed", "3"]
        var environment = ProcessInfo.processInfo.environment
        environment["OPENCOREDATA_ENGINE_CHILD"] = path
        environment["OPENCOREDATA_ENGINE_CHILD_SHARED"] = "1"
        process.environment = environment
        process.standardOutput = Pipe()
        try process.run()
        defer {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        var previous = 0
        var busyWrites = 0
        var successfulWrites = 0
        let deadline = Date(timeIntervalSinceNow: 1.5)
        while Date() < deadline {
            try database.read { transaction in
                guard let tree = try transaction.tree(named: "acks") else { return }
                let count = try tree.count
                #expect(count >= previous, "snapshots went backwards")
                var scanned = 0
                try tree.scan { key, value in
                    let index = Int(UInt64(bigEndian: key.loadUnaligned(as: UInt64.self)))
                    #expect(index == scanned && Array(value) == EngineHarness.killTestValue(index))
                    scanned += 1
                    return true
                }
                #expect(scanned == count, "a snapshot held a partial transaction")
                previous = count
            }
            do {
                try database.write { try $0.openTree(named: "parent").setValue([1], forKey: [1]) }
                successfulWrites += 1
            } catch let error as StorageError where error.code == .busy {
                busyWrites += 1
            }
            usleep(2_000)
        }
        #expect(previous > 0, "the child never committed")
        #expect(successfulWrites + busyWrites > 0)
        try database.close()
    }
}
