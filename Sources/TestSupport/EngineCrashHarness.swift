// Crash-point enumeration: a scripted workload runs on a SimulatedFileSystem that
// "loses power" after its k-th I/O operation, for every k; each crash image is recovered
// under every crash model and must hold exactly the state of the last acknowledged commit
// or of the one in flight, and pass verify().
import Foundation
import StorageEngine

/// The scripted workloads crash points are enumerated over.
public enum CrashWorkload: String, CaseIterable, Sendable {
    /// One large transaction of increasing keys, then a few more.
    case bulkLoad
    /// Many one-row commits with updates and removes.
    case smallCommits
    /// A transaction with random keys, splits, merges and overflow values.
    case bigTransaction
    /// Commits with checkpoints after most of them.
    case checkpoint
    /// Commits, removes, a vacuum, more commits.
    case vacuum
    /// A log reused across checkpoints (SPEC.md W3): commits of varying sizes, so each
    /// generation ends at another offset with the previous one's frames (old salt) beyond
    /// it; a transaction spanning several preallocation steps; and a log that outgrew its
    /// retained size while checkpoints were off, shrunk at the next reset.
    case logReuse
    /// Rows with inline and overflow values, most of them removed in one transaction: the
    /// file shrinks (SPEC.md §2.13: the pages at its end move down, two meta flips, the
    /// file is cut), then more commits.
    case shrink
    /// Rows appended in key order (full leaves), a fifth of them removed at random in one
    /// transaction: the shrink packs the sparse tree into full leaves before it moves the
    /// file's end down (SPEC.md §2.13 step 2), then more commits.
    case packingShrink
    /// Rows loaded, then rewritten whole twice in transactions that commit directly: the
    /// writes leave the pages they free in the free list (SPEC.md §2.13: a write shrinks
    /// only a file more than half free), the second rewrite reuses them, and the
    /// checkpoint at close moves the file's end down, packs and cuts it.
    case deferredShrink
    /// Transactions larger than the writer's memory (SPEC.md §2.4 step 7a, a 16-page spill
    /// limit): one spills several times, overwrites and removes keys on pages it spilled
    /// (read back and changed again), and commits; one spills and is rolled back; then
    /// smaller commits reuse the space and a spilling transaction removes most rows.
    case spill
    /// Write cursors (TreeEditor) walking a loaded tree in transactions larger than the
    /// writer's memory (a 16-page spill limit): values replaced by same-size, shorter,
    /// longer and overflowing ones, runs of entries removed (leaves emptied and merged),
    /// with puts and removals beside the walk; one walk rolled back.
    case editWalk
}

/// Records the oracle after every acknowledged commit.
public final class CommitLog {
    /// `states[i]`: the contents after `i` acknowledged commits (states[0] is empty).
    public private(set) var states: [EngineOracle] = [[:]]
    /// The state the commit in flight would produce, if one is.
    public var inFlight: EngineOracle?
    /// The oracle being built by the workload.
    public var current: EngineOracle = [:]
    /// The durability the workload runs with. Under `.normal` a power loss may lose any
    /// suffix of commits, so recovery may yield any committed state (never a mixture).
    public let durability: Database.Durability

    /// A log for a workload run with `durability`.
    public init(durability: Database.Durability = .full) {
        self.durability = durability
    }

    /// Marks the commit in flight as acknowledged.
    public func acknowledge() {
        states.append(current)
        inFlight = nil
    }
}

extension EngineHarness {
    /// Options used by crash tests: tiny pages, full durability, frequent checkpoints.
    public static func crashOptions(
        _ fileSystem: SimulatedFileSystem, pageSize: Int = 512, durability: Database.Durability = .full
    ) -> Database.Options {
        var options = Database.Options(pageSize: pageSize, durability: durability, fileSystem: fileSystem)
        options.checkpointThreshold = 24 * (pageSize + 64)
        return options
    }

    /// One write transaction applying `changes` to the log's oracle; acknowledged on return.
    static func commit(
        _ database: Database, _ log: CommitLog, _ changes: [(tree: String, key: [UInt8], value: [UInt8]?)]
    ) throws {
        var next = log.current
        for change in changes { next[change.tree, default: [:]][change.key] = change.value }
        log.inFlight = next
        try database.write { transaction in
            for change in changes {
                let tree = try transaction.openTree(named: change.tree)
                if let value = change.value {
                    try tree.setValue(value, forKey: change.key)
                } else {
                    try tree.removeValue(forKey: change.key)
                }
            }
        }
        log.current = next
        log.acknowledge()
    }

    static func bigEndianKey(_ value: Int) -> [UInt8] { withUnsafeBytes(of: UInt64(value).bigEndian) { Array($0) } }

    /// Runs `workload` on `fileSystem`, recording acknowledged commits in `log`. Throws
    /// whatever the simulated crash makes the engine throw.
    public static func run(_ workload: CrashWorkload, on fileSystem: SimulatedFileSystem, log: CommitLog, seed: UInt64)
        throws
    {
        var random = SeededRandom(seed: seed)
        let database = try Database.open(at: "crash.db", options: crashOptions(fileSystem, durability: log.durability))
        switch workload {
        case .bulkLoad:
            try commit(database, log, (0..<300).map { ("rows", bigEndianKey($0), randomValue(&random, pageSize: 512)) })
            for round in 0..<3 {
                try commit(
                    database, log, (0..<20).map { ("rows", bigEndianKey(300 + round * 20 + $0), [UInt8(round)]) })
            }
        case .smallCommits:
            for index in 0..<40 {
                let key = bigEndianKey(random.int(in: 0...25))
                try commit(
                    database, log, [("rows", key, index % 5 == 4 ? nil : Array(repeating: UInt8(index), count: 30))])
            }
        case .bigTransaction:
            var changes: [(tree: String, key: [UInt8], value: [UInt8]?)] = []
            for _ in 0..<250 {
                changes.append((random.pick(["a", "b"]), randomKey(&random), randomValue(&random, pageSize: 512)))
            }
            try commit(database, log, changes)
            var removals: [(tree: String, key: [UInt8], value: [UInt8]?)] = []
            for change in changes.prefix(150) { removals.append((change.tree, change.key, nil)) }
            try commit(database, log, removals)
        case .checkpoint:
            for index in 0..<12 {
                try commit(
                    database, log, (0..<8).map { ("rows", bigEndianKey(index * 3 + $0), [UInt8(index), 1, 2, 3]) })
                if index % 3 == 1 { try database.checkpoint() }
            }
        case .vacuum:
            try commit(database, log, (0..<120).map { ("rows", bigEndianKey($0), Array(repeating: 7, count: 20)) })
            try commit(database, log, (0..<100).map { ("rows", bigEndianKey($0), nil) })
            try database.vacuum()
            try commit(database, log, [("rows", bigEndianKey(500), [1])])
        case .shrink:
            try commit(database, log, (0..<160).map { ("rows", bigEndianKey($0), randomValue(&random, pageSize: 512)) })
            try commit(
                database, log, (0..<12).map { ("blobs", bigEndianKey($0), Array(repeating: UInt8($0), count: 1_400)) })
            let removals = (0..<160).filter { $0 % 6 != 0 }.map { ("rows", bigEndianKey($0), nil as [UInt8]?) }
            try commit(
                database, log, removals + (0..<12).filter { $0 % 3 != 0 }.map { ("blobs", bigEndianKey($0), nil) })
            try database.checkpoint()
            try commit(database, log, (0..<6).map { ("rows", bigEndianKey(1_000 + $0), [UInt8($0)]) })
        case .packingShrink:
            try commit(
                database, log,
                (0..<1_000).map { ("rows", bigEndianKey($0), Array(repeating: UInt8($0 % 251), count: 24)) })
            try database.checkpoint()
            var removed = Set<Int>()
            while removed.count < 200 { removed.insert(random.int(in: 0...999)) }
            try commit(database, log, removed.sorted().map { ("rows", bigEndianKey($0), nil as [UInt8]?) })
            try database.checkpoint()
            try commit(database, log, (0..<6).map { ("rows", bigEndianKey(2_000 + $0), [UInt8($0)]) })
        case .deferredShrink:
            try commit(
                database, log,
                (0..<1_000).map { ("rows", bigEndianKey($0), Array(repeating: UInt8($0 % 251), count: 24)) })
            try database.checkpoint()
            for round in 1...2 {
                try commit(
                    database, log,
                    (0..<1_000).map {
                        ("rows", bigEndianKey($0), Array(repeating: UInt8(($0 + round) % 251), count: 24))
                    }
                )
            }
        case .logReuse:
            try database.close()
            try runLogReuse(on: fileSystem, log: log, random: &random)
            return
        case .spill:
            try database.close()
            try runSpill(on: fileSystem, log: log, random: &random)
            return
        case .editWalk:
            try database.close()
            try runEditWalk(on: fileSystem, log: log, random: &random)
            return
        }
        try database.close()
    }

    /// ``CrashWorkload/logReuse``: first a log grown well past its retained size with
    /// checkpoints off (closed without one), then commits under the crash options, whose
    /// automatic checkpoints reset (and shrink) that log and then wrap it several times.
    static func runLogReuse(on fileSystem: SimulatedFileSystem, log: CommitLog, random: inout SeededRandom) throws {
        var growing = crashOptions(fileSystem, durability: log.durability)
        growing.checkpointThreshold = Int.max
        growing.checkpointOnClose = false
        let first = try Database.open(at: "crash.db", options: growing)
        for round in 0..<14 {
            try commit(
                first, log,
                (0..<6).map { ("rows", bigEndianKey(round * 6 + $0), randomValue(&random, pageSize: 512)) })
        }
        try first.close()
        // A threshold of 48 frames allows growth steps of up to 6 frames, so the log also
        // doubles (4, then 6 frames) rather than only growing by the 4-frame minimum.
        var reusing = crashOptions(fileSystem, durability: log.durability)
        reusing.checkpointThreshold = 48 * (512 + 64)
        let database = try Database.open(at: "crash.db", options: reusing)
        for index in 0..<30 {
            let rows = index % 7 == 3 ? 40 : 1 + random.int(in: 0...4)
            try commit(
                database, log,
                (0..<rows).map { _ in
                    ("rows", bigEndianKey(random.int(in: 0...120)), index % 5 == 4 ? nil : [UInt8(index), 9])
                })
        }
        try database.close()
    }

    /// ``CrashWorkload/spill``.
    static func runSpill(on fileSystem: SimulatedFileSystem, log: CommitLog, random: inout SeededRandom) throws {
        var options = crashOptions(fileSystem, durability: log.durability)
        options.spillThreshold = 16 * 512
        let database = try Database.open(at: "crash.db", options: options)
        try commit(database, log, (0..<20).map { ("rows", bigEndianKey($0), [UInt8($0), 1]) })
        var changes: [(tree: String, key: [UInt8], value: [UInt8]?)] = []
        for _ in 0..<160 {
            changes.append((random.pick(["rows", "more"]), randomKey(&random), randomValue(&random, pageSize: 512)))
        }
        let written = changes
        for (index, change) in written.prefix(60).enumerated() {
            changes.append((change.tree, change.key, index % 3 == 0 ? nil : [UInt8(index), 2]))
        }
        try commit(database, log, changes)
        struct RolledBack: Error {}
        do {
            try database.write { transaction in
                let rows = try transaction.openTree(named: "rows")
                for _ in 0..<120 { try rows.setValue(randomValue(&random, pageSize: 512), forKey: randomKey(&random)) }
                for index in 0..<20 { try rows.removeValue(forKey: bigEndianKey(index)) }
                throw RolledBack()
            }
        } catch is RolledBack {}
        try commit(database, log, (20..<30).map { ("rows", bigEndianKey($0), [UInt8($0), 3]) })
        try commit(database, log, written.prefix(120).map { ($0.tree, $0.key, nil) })
        try database.close()
    }

    /// ``CrashWorkload/editWalk``.
    static func runEditWalk(on fileSystem: SimulatedFileSystem, log: CommitLog, random: inout SeededRandom) throws {
        var options = crashOptions(fileSystem, durability: log.durability)
        options.spillThreshold = 16 * 512
        let database = try Database.open(at: "crash.db", options: options)
        try commit(database, log, (0..<200).map { ("rows", bigEndianKey($0), randomValue(&random, pageSize: 512)) })
        struct RolledBack: Error {}
        for round in 0..<6 {
            var next = log.current
            var entries = next["rows", default: [:]]
            var besideEntries = next["more", default: [:]]
            do {
                try database.write { transaction in
                    try randomEditWalk(
                        try transaction.openTree(named: "rows"), entries: &entries,
                        beside: try transaction.openTree(named: "more"), besideEntries: &besideEntries,
                        random: &random, pageSize: 512)
                    if round == 3 { throw RolledBack() }
                    next["rows"] = entries
                    next["more"] = besideEntries
                    log.inFlight = next
                }
                log.current = next
                log.acknowledge()
            } catch is RolledBack {}
        }
        try database.close()
    }

    /// Opens the crash image, verifies it and checks its contents against the commit log.
    public static func checkRecovery(of fileSystem: SimulatedFileSystem, log: CommitLog, context: String) throws {
        let database: Database
        do {
            database = try Database.open(at: "crash.db", options: crashOptions(fileSystem, durability: log.durability))
        } catch {
            throw HarnessFailure("\(context): open failed: \(error)")
        }
        do {
            _ = try database.verify()
        } catch {
            throw HarnessFailure("\(context): verify failed: \(error)")
        }
        let contents = try EngineHarness.contents(of: database)
        let acknowledged = log.states[log.states.count - 1]
        if log.durability != .full {
            let candidates = log.states + (log.inFlight.map { [$0] } ?? [])
            guard candidates.contains(where: { difference(contents, $0) == nil }) else {
                throw HarnessFailure("\(context): recovered state was never committed")
            }
        } else if difference(contents, acknowledged) != nil {
            if let inFlight = log.inFlight, difference(contents, inFlight) == nil {
                // The commit in flight survived: allowed.
            } else {
                throw HarnessFailure(
                    "\(context): recovered state is neither the last acknowledged commit (\(log.states.count - 1)) nor the one in flight: \(difference(contents, acknowledged) ?? "")"
                )
            }
        }
        try database.close()
    }

    /// Enumerates every crash point of `workload` (every `stride`-th), recovering each
    /// image under every crash model. Returns the number of recoveries checked.
    public static func enumerateCrashPoints(
        _ workload: CrashWorkload, seed: UInt64, stride: Int = 1, durability: Database.Durability = .full
    ) throws -> Int {
        let probe = SimulatedFileSystem()
        try run(workload, on: probe, log: CommitLog(durability: durability), seed: seed)
        let total = probe.operationCount
        var recoveries = 0
        var random = SeededRandom(seed: seed)
        for point in Swift.stride(from: 0, through: total, by: stride) {
            let fileSystem = SimulatedFileSystem()
            fileSystem.crashAfter(operations: point)
            let log = CommitLog(durability: durability)
            do {
                try run(workload, on: fileSystem, log: log, seed: seed)
            } catch {
                guard fileSystem.hasCrashed else {
                    throw HarnessFailure("\(workload) crash point \(point): failed without crashing: \(error)")
                }
            }
            for model in SimulatedFileSystem.CrashModel.allCases {
                let image = fileSystem.afterCrash(model: model, random: &random)
                try checkRecovery(
                    of: image, log: log, context: "\(workload) crash after op \(point)/\(total) model \(model)")
                recoveries += 1
            }
        }
        return recoveries
    }

    /// Crashes during recovery itself: takes the image of a crash `fraction` of the way
    /// through `workload` (`smallCommits`: two thirds), then crashes while reopening it
    /// (open, verify, read, checkpoint on close) at every point, and recovers again.
    public static func enumerateCrashesDuringRecovery(
        seed: UInt64, workload: CrashWorkload = .smallCommits, fraction: Double = 2.0 / 3
    ) throws -> Int {
        let source = SimulatedFileSystem()
        let probe = SimulatedFileSystem()
        try run(workload, on: probe, log: CommitLog(), seed: seed)
        source.crashAfter(operations: Int(Double(probe.operationCount) * fraction))
        let log = CommitLog()
        do { try run(workload, on: source, log: log, seed: seed) } catch {}
        var random = SeededRandom(seed: seed)
        let image = source.afterCrash(model: .keepRandomSubset, random: &random)
        let expected = try database(contentsOf: image.snapshotOfCurrentState())
        let reopenProbe = image.snapshotOfCurrentState()
        let start = reopenProbe.operationCount
        try reopenAndClose(reopenProbe)
        let total = reopenProbe.operationCount - start
        var recoveries = 0
        for point in 0...total {
            let attempt = image.snapshotOfCurrentState()
            attempt.crashAfter(operations: point)
            do { try reopenAndClose(attempt) } catch {}
            for model in SimulatedFileSystem.CrashModel.allCases {
                let second = attempt.afterCrash(model: model, random: &random)
                let got = try database(contentsOf: second)
                if let difference = difference(got, expected) {
                    throw HarnessFailure("crash during recovery at op \(point) model \(model): \(difference)")
                }
                recoveries += 1
            }
        }
        return recoveries
    }

    private static func reopenAndClose(_ fileSystem: SimulatedFileSystem) throws {
        let database = try Database.open(at: "crash.db", options: crashOptions(fileSystem))
        _ = try database.verify()
        try database.close()
    }

    private static func database(contentsOf fileSystem: SimulatedFileSystem) throws -> EngineOracle {
        let database = try Database.open(at: "crash.db", options: crashOptions(fileSystem))
        _ = try database.verify()
        let contents = try EngineHarness.contents(of: database)
        try database.close()
        return contents
    }
}

extension EngineHarness {
    /// Fails the k-th I/O operation of `workload` (once, or from k on) for every k: the
    /// error must surface as a ``StorageError``, and reopening the files — as they are, and
    /// after a power loss — must give the last acknowledged commit or the one in flight.
    /// Returns the number of injections checked.
    public static func enumerateFaults(
        _ workload: CrashWorkload, fault: SimulatedFileSystem.Fault, persistent: Bool, seed: UInt64, stride: Int = 1
    ) throws -> Int {
        let probe = SimulatedFileSystem()
        try run(workload, on: probe, log: CommitLog(), seed: seed)
        let total = probe.operationCount
        var random = SeededRandom(seed: seed)
        var injections = 0
        for point in Swift.stride(from: 0, to: total, by: stride) {
            let fileSystem = SimulatedFileSystem()
            fileSystem.injectFault(fault, at: point, persistent: persistent)
            let log = CommitLog()
            let context = "\(workload) \(fault) \(persistent ? "from" : "at") op \(point)/\(total)"
            do {
                try run(workload, on: fileSystem, log: log, seed: seed)
                throw HarnessFailure("\(context): the injected fault did not surface")
            } catch let error as StorageError {
                _ = error
            }
            fileSystem.clearFaults()
            try checkRecovery(of: fileSystem, log: log, context: "\(context), reopened")
            let image = fileSystem.afterCrash(model: .dropUnsynced, random: &random)
            try checkRecovery(of: image, log: log, context: "\(context), after power loss")
            injections += 1
        }
        return injections
    }
}
