// The engine's differential workload: random operations on a Database and on an
// in-memory oracle (a dictionary per tree), compared after every step. Shared by the
// tests (StorageEngineTests) and the fuzzer (Fuzz/EngineFuzzTargets.swift).
import Foundation
import StorageEngine

/// A property the engine harness checks did not hold.
public struct HarnessFailure: Error, CustomStringConvertible {
    /// What went wrong, with the step it happened at.
    public let description: String

    /// A failure with a message.
    public init(_ description: String) { self.description = description }
}

/// The expected contents of a database: tree name -> key -> value.
public typealias EngineOracle = [String: [[UInt8]: [UInt8]]]

/// Helpers shared by the engine tests, fuzz targets and benchmarks.
public enum EngineHarness {
    /// Everything in `database`, read in one snapshot, in key order.
    public static func contents(of database: Database) throws -> EngineOracle {
        try database.read { try contents(of: $0) }
    }

    /// Everything visible in `transaction`.
    public static func contents(of transaction: ReadTransaction) throws -> EngineOracle {
        var result: EngineOracle = [:]
        for name in try transaction.treeNames() {
            guard let tree = try transaction.tree(named: name) else {
                throw HarnessFailure("tree \(name) listed but absent")
            }
            var entries: [[UInt8]: [UInt8]] = [:]
            var previous: [UInt8]?
            try tree.scan { key, value in
                let key = Array(key)
                if let previous, !previous.lexicographicallyPrecedes(key) {
                    throw HarnessFailure("tree \(name): keys out of order in a scan")
                }
                previous = key
                entries[key] = Array(value)
                return true
            }
            guard try tree.count == entries.count else {
                throw HarnessFailure("tree \(name): count \(try tree.count) but \(entries.count) entries scanned")
            }
            result[name] = entries
        }
        return result
    }

    /// Describes the first difference between two oracles, or nil when equal.
    public static func difference(_ actual: EngineOracle, _ expected: EngineOracle) -> String? {
        let actualTrees = actual.filter { !$0.value.isEmpty || expected[$0.key] != nil }
        let expectedTrees = expected.filter { !$0.value.isEmpty || actual[$0.key] != nil }
        if Set(actualTrees.keys) != Set(expectedTrees.keys) {
            return "trees \(actualTrees.keys.sorted()) but expected \(expectedTrees.keys.sorted())"
        }
        for (name, entries) in expectedTrees {
            let got = actualTrees[name] ?? [:]
            if got.count != entries.count { return "tree \(name): \(got.count) entries, expected \(entries.count)" }
            for (key, value) in entries where got[key] != value {
                return
                    "tree \(name) key \(key): \(got[key].map { "\($0.count) bytes" } ?? "missing"), expected \(value.count) bytes"
            }
        }
        return nil
    }

    /// A key drawn from a small alphabet so that prefixes and collisions are common.
    public static func randomKey(_ random: inout SeededRandom, maximumLength: Int = 12) -> [UInt8] {
        let length = random.int(in: 1...maximumLength)
        return (0..<length).map { _ in UInt8(random.int(in: 0...5) * 40) }
    }

    /// A value, now and then large enough for overflow pages at `pageSize`.
    public static func randomValue(_ random: inout SeededRandom, pageSize: Int) -> [UInt8] {
        let length = random.chance(0.08) ? random.int(in: pageSize / 4...(pageSize * 3)) : random.int(in: 0...40)
        let stamp = random.next()
        var value = [UInt8](repeating: UInt8(truncatingIfNeeded: stamp), count: length)
        for index in 0..<min(8, length) { value[index] = UInt8(truncatingIfNeeded: stamp >> (8 * UInt64(index))) }
        if length > 8 { value[length - 1] = UInt8(truncatingIfNeeded: length) }
        return value
    }

    /// Runs `steps` random operations on a fresh database in `fileSystem` against the oracle:
    /// puts, removes, point and range reads, aborted transactions, snapshots held across
    /// commits, checkpoints, reopen and vacuum; verifies the file at the end.
    public static func runDifferential(
        random: inout SeededRandom, steps: Int, pageSize: Int = 512,
        fileSystem: SimulatedFileSystem = SimulatedFileSystem()
    ) throws {
        var options = Database.Options(pageSize: pageSize, durability: .full, fileSystem: fileSystem)
        options.checkpointThreshold = random.chance(0.5) ? 1 << 20 : 8 * pageSize
        let path = "differential.db"
        var database = try Database.open(at: path, options: options)
        var oracle: EngineOracle = [:]
        var snapshots: [(ReadTransaction, EngineOracle)] = []
        let names = ["a", "b", "index.age"]
        for step in 0..<steps {
            let choice = random.int(in: 0...99)
            func fail(_ message: String) -> HarnessFailure { HarnessFailure("step \(step): \(message)") }
            switch choice {
            case 0..<55:
                let abort = random.chance(0.1)
                var pending = oracle
                let operations = random.chance(0.1) ? random.int(in: 50...300) : random.int(in: 1...12)
                do {
                    try database.write { transaction in
                        for _ in 0..<operations {
                            let name = random.pick(names)
                            let tree = try transaction.openTree(named: name)
                            if random.chance(0.04) {
                                // A write cursor's walk, with changes beside it (EngineEditWalk.swift).
                                let besideName = random.pick(names.filter { $0 != name })
                                var entries = pending[name] ?? [:]
                                var besideEntries = pending[besideName] ?? [:]
                                try randomEditWalk(
                                    tree, entries: &entries, beside: try transaction.openTree(named: besideName),
                                    besideEntries: &besideEntries, random: &random, pageSize: pageSize,
                                    finishes: random.chance(0.9))
                                pending[name] = entries
                                pending[besideName] = besideEntries
                                continue
                            }
                            // Now and then a key at or near the longest the page size allows.
                            let key =
                                random.chance(0.03)
                                ? randomKey(&random) + [UInt8](repeating: 7, count: tree.maximumKeyLength - 12)
                                : randomKey(&random)
                            if random.chance(0.7) {
                                let value = randomValue(&random, pageSize: pageSize)
                                try tree.setValue(value, forKey: key)
                                pending[name, default: [:]][key] = value
                            } else {
                                let existed = try tree.removeValue(forKey: key)
                                guard existed == (pending[name]?[key] != nil) else {
                                    throw fail("remove returned \(existed)")
                                }
                                pending[name]?[key] = nil
                            }
                            if random.chance(0.1) {
                                guard try tree.value(forKey: key) == pending[name]?[key] else {
                                    throw fail("read-your-writes differs for \(key)")
                                }
                            }
                        }
                        if random.chance(0.05), let name = pending.keys.sorted().first {
                            try transaction.deleteTree(named: name)
                            pending[name] = nil
                        }
                        if abort { throw HarnessFailure("intentional abort") }
                    }
                    oracle = pending
                } catch let failure as HarnessFailure where failure.description == "intentional abort" {
                    // Rolled back: the oracle keeps its state.
                }
            case 55..<70:
                try database.read { transaction in
                    let name = random.pick(names)
                    guard let tree = try transaction.tree(named: name) else {
                        guard (oracle[name] ?? [:]).isEmpty || oracle[name] == nil else {
                            throw fail("tree \(name) missing")
                        }
                        return
                    }
                    let expected = oracle[name] ?? [:]
                    let lower = random.chance(0.8) ? randomKey(&random) : nil
                    let upper = random.chance(0.8) ? randomKey(&random) : nil
                    let reverse = random.chance(0.5)
                    let limit = random.chance(0.3) ? random.int(in: 1...10) : Int.max
                    var keys = expected.keys.filter { key in
                        (lower.map { !key.lexicographicallyPrecedes($0) } ?? true)
                            && (upper.map { key.lexicographicallyPrecedes($0) } ?? true)
                    }.sorted { $0.lexicographicallyPrecedes($1) }
                    if reverse { keys.reverse() }
                    let got = try tree.entries(from: lower, to: upper, reverse: reverse, limit: limit)
                    let want = Array(keys.prefix(limit))
                    guard got.map(\.key) == want else {
                        throw fail(
                            "range [\(lower ?? []), \(upper ?? [])) reverse \(reverse): \(got.count) keys, expected \(want.count)"
                        )
                    }
                    for entry in got where entry.value != expected[entry.key] { throw fail("range value differs") }
                    if limit == .max && !reverse {
                        guard try tree.count(from: lower, to: upper) == want.count else {
                            throw fail("range count differs")
                        }
                    }
                    let probe = randomKey(&random)
                    guard try tree.value(forKey: probe) == expected[probe] else { throw fail("point read differs") }
                }
            case 70..<78:
                if snapshots.count < 3 {
                    snapshots.append((try database.snapshot(), oracle))
                } else {
                    let (snapshot, expected) = snapshots.removeFirst()
                    if let difference = difference(try contents(of: snapshot), expected) {
                        throw fail("snapshot \(snapshot.transactionID) changed: \(difference)")
                    }
                    snapshot.close()
                }
            case 78..<84:
                try database.checkpoint()
            case 84..<90:
                for (snapshot, _) in snapshots { snapshot.close() }
                snapshots = []
                try database.close()
                database = try Database.open(at: path, options: options)
            case 90..<93:
                // Snapshots survive a vacuum: they keep reading the replaced file.
                try database.vacuum()
            default:
                _ = try database.verify()
                if let difference = difference(try contents(of: database), oracle) { throw fail(difference) }
            }
        }
        for (snapshot, expected) in snapshots {
            if let difference = difference(try contents(of: snapshot), expected) {
                throw HarnessFailure("final snapshot changed: \(difference)")
            }
            snapshot.close()
        }
        _ = try database.verify()
        if let difference = difference(try contents(of: database), oracle) {
            throw HarnessFailure("final: \(difference)")
        }
        try database.close()
        let reopened = try Database.open(at: path, options: options)
        _ = try reopened.verify()
        if let difference = difference(try contents(of: reopened), oracle) {
            throw HarnessFailure("after reopen: \(difference)")
        }
        try reopened.close()
    }
}
