// Storage-engine workloads: the rows of the engine's performance goals (8-byte keys,
// ~100-byte values, 1,000,000 rows at scale 1). Benchmarks/Peers runs the same on SQLite.
import Foundation
import StorageEngine
import TestSupport

extension Workload {
    /// Every engine workload, in the order they print.
    static let engine: [Workload] = [
        engineBulkInsert, enginePointLookup, engineFullScan, engineDurableCommit, engineNormalCommit,
        engineGroupCommit, engineReopen, engineRecovery, engineFileSize,
    ]

    static func engineKey(_ index: Int) -> [UInt8] { withUnsafeBytes(of: UInt64(index).bigEndian) { Array($0) } }

    static func engineValue(_ index: Int) -> [UInt8] {
        var value = [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: 100)
        withUnsafeBytes(of: UInt64(index).littleEndian) { for offset in 0..<8 { value[offset] = $0[offset] } }
        return value
    }

    /// A database at `path` holding `count` rows in tree "rows", loaded in one transaction.
    static func engineLoad(_ path: String, count: Int, durability: Database.Durability = .full) throws -> Database {
        var options = Database.Options()
        options.durability = durability
        let database = try Database.open(at: path, options: options)
        try database.write { transaction in
            let tree = try transaction.openTree(named: "rows")
            var value = engineValue(0)
            for index in 0..<count {
                value[0] = UInt8(truncatingIfNeeded: index)
                try tree.setValue(value, forKey: engineKey(index))
            }
        }
        return database
    }

    static let engineBulkInsert = Workload(
        name: "engine/bulk-insert", summary: "rows inserted in one durable transaction (8-byte keys, 100-byte values)"
    ) { context in
        let count = context.scaled(1_000_000)
        var database: Database?
        let seconds = try measureSeconds { database = try engineLoad(context.path("bulk.db").path, count: count) }
        try database?.close()
        return [Measurement(label: "\(grouped(count)) rows", value: Double(count) / seconds, unit: "rows/s")]
    }

    static let enginePointLookup = Workload(
        name: "engine/point-lookup", summary: "random point lookups of existing keys"
    ) { context in
        let count = context.scaled(1_000_000)
        let database = try engineLoad(context.path("lookup.db").path, count: count)
        try database.checkpoint()
        let lookups = max(1_000, count)
        var random = SystemRandomNumberGenerator()
        let keys = (0..<lookups).map { _ in engineKey(Int.random(in: 0..<count, using: &random)) }
        var found = 0
        let inTransaction = try measureSeconds {
            try database.read { transaction in
                guard let tree = try transaction.tree(named: "rows") else { return }
                for key in keys where try tree.value(forKey: key) != nil { found += 1 }
            }
        }
        let ownTransaction = try measureSeconds {
            for key in keys.prefix(lookups / 4) {
                try database.read { transaction in
                    if try transaction.tree(named: "rows")?.contains(key) == true { found += 1 }
                }
            }
        }
        precondition(found == lookups + lookups / 4, "lookups missed rows")
        try database.close()
        return [
            Measurement(
                label: "lookup in one read transaction", value: inTransaction / Double(lookups) * 1e6, unit: "us"),
            Measurement(
                label: "lookup, own read transaction", value: ownTransaction / Double(lookups / 4) * 1e6, unit: "us"),
        ]
    }

    static let engineFullScan = Workload(name: "engine/full-scan", summary: "scan every row in key order") { context in
        let count = context.scaled(1_000_000)
        let database = try engineLoad(context.path("scan.db").path, count: count)
        try database.checkpoint()
        var seen = 0
        var bytes = 0
        let seconds = try measureSeconds {
            try database.read { transaction in
                try transaction.tree(named: "rows")?.scan { _, value in
                    seen += 1
                    bytes &+= value.count
                    return true
                }
            }
        }
        precondition(seen == count && bytes == count * 100)
        try database.close()
        return [Measurement(label: "\(grouped(count)) rows", value: Double(count) / seconds, unit: "rows/s")]
    }

    static func singleRowCommits(_ context: BenchContext, _ name: String, durability: Database.Durability) throws
        -> Double
    {
        let commits = context.scaled(2_000)
        let database = try engineLoad(context.path(name).path, count: context.scaled(100_000), durability: durability)
        let seconds = try measureSeconds {
            for index in 0..<commits {
                try database.write { transaction in
                    try transaction.openTree(named: "rows").setValue(
                        engineValue(index), forKey: engineKey(10_000_000 + index))
                }
            }
        }
        try database.close()
        return seconds / Double(commits) * 1e6
    }

    static let engineDurableCommit = Workload(
        name: "engine/durable-commit", summary: "single-row commits, full durability (fdatasync each)"
    ) { context in
        [
            Measurement(
                label: "commit", value: try singleRowCommits(context, "durable.db", durability: .full), unit: "us")
        ]
    }

    static let engineNormalCommit = Workload(
        name: "engine/normal-commit", summary: "single-row commits, normal durability (no sync)"
    ) { context in
        [
            Measurement(
                label: "commit", value: try singleRowCommits(context, "normal.db", durability: .normal), unit: "us")
        ]
    }

    static let engineGroupCommit = Workload(
        name: "engine/group-commit", summary: "8 threads of single-row durable commits sharing syncs"
    ) { context in
        let perThread = context.scaled(1_000)
        let database = try engineLoad(context.path("group.db").path, count: context.scaled(100_000))
        let failures = LockedCounter()
        let seconds = measureSeconds {
            DispatchQueueRunner.concurrently(8) { thread in
                for index in 0..<perThread {
                    do {
                        try database.write { transaction in
                            let key = engineKey(20_000_000 + thread * 1_000_000 + index)
                            try transaction.openTree(named: "rows").setValue(engineValue(index), forKey: key)
                        }
                    } catch {
                        failures.add()
                    }
                }
            }
        }
        precondition(failures.value == 0, "group commit failed")
        try database.close()
        let commits = Double(8 * perThread)
        return [
            Measurement(label: "commits (8 writers)", value: commits / seconds, unit: "commits/s"),
            Measurement(label: "per commit", value: seconds / commits * 1e6, unit: "us"),
        ]
    }

    static let engineReopen = Workload(name: "engine/reopen", summary: "open a checkpointed database") { context in
        let path = context.path("reopen.db").path
        try engineLoad(path, count: context.scaled(1_000_000)).close()
        let rounds = 20
        var total = 0.0
        for _ in 0..<rounds {
            var database: Database?
            total += try measureSeconds { database = try Database.open(at: path) }
            try database?.close()
        }
        return [Measurement(label: "open", value: total / Double(rounds) * 1e3, unit: "ms")]
    }

    static let engineRecovery = Workload(
        name: "engine/recovery", summary: "open a database whose log holds 4 MB of commits"
    ) { context in
        let path = context.path("recovery.db").path
        var options = Database.Options()
        options.durability = .normal
        options.checkpointThreshold = Int.max
        options.checkpointOnClose = false
        let logBytes = max(64 << 10, Int(Double(4 << 20) * min(1, context.scale * 10)))
        // The log's committed bytes, not its file size: the file is preallocated (W3).
        var logSize = 0
        do {
            let database = try Database.open(at: path, options: options)
            var index = 0
            while logSize < logBytes {
                try database.write { transaction in
                    let tree = try transaction.openTree(named: "rows")
                    for offset in 0..<20 {
                        try tree.setValue(engineValue(index + offset), forKey: engineKey(index + offset))
                    }
                }
                index += 20
                logSize = Int(try database.committedLogBytes())
            }
            try database.close()
        }
        var database: Database?
        let seconds = try measureSeconds { database = try Database.open(at: path, options: options) }
        try database?.close()
        return [
            Measurement(label: "recover a \(grouped(logBytes >> 10)) KiB log", value: seconds * 1e3, unit: "ms")
        ]
    }

    static let engineFileSize = Workload(
        name: "engine/file-size", summary: "bytes on disk for the rows, before and after vacuum"
    ) { context in
        let count = context.scaled(1_000_000)
        let path = context.path("size.db").path
        let database = try engineLoad(path, count: count)
        try database.checkpoint()
        func size() throws -> Double {
            Double((try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0)
        }
        let before = try size()
        try database.vacuum()
        let after = try size()
        try database.close()
        let payload = Double(count * 108)
        return [
            Measurement(label: "file / payload", value: before / payload, unit: "x", better: .lower),
            Measurement(label: "file / payload after vacuum", value: after / payload, unit: "x", better: .lower),
            Measurement(label: "bytes per row", value: before / Double(count), unit: "B"),
        ]
    }
}

/// A thread-safe failure counter for the concurrent workloads.
final class LockedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
