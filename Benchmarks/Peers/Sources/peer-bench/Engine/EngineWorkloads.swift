// The engine-level workloads (issue 4's "Performance" rows). Each is written once,
// generically over `KeyValueEngine`, so every side runs the identical sequence of
// keys, values and transactions; only the adapter underneath differs. Rows: 8-byte
// integer keys, 100-byte values, 1,000,000 rows at scale 1.
import Foundation

/// One engine-level workload, run once per side.
protocol EngineWorkload {
    /// "engine/..." — what `--only` matches and the table prints.
    var name: String { get }
    func run<Engine: KeyValueEngine>(_ engine: Engine.Type, in context: BenchContext) throws -> [Measurement]
}

enum EngineWorkloads {
    /// In the order they run; later ones reuse the store `BulkInsert` loads.
    static var all: [any EngineWorkload] {
        [
            BulkInsert(), FileSize(), Reopen(), PointLookup(), PointLookupInOneRead(), FullScan(),
            CommitLatency(durability: .full), CommitLatency(durability: .normal), GroupCommit(),
            Recovery(),
        ]
    }

    /// Rows in the loaded store at `context`'s scale.
    static func rowCount(_ context: BenchContext) -> Int { context.scaled(1_000_000, minimum: 1_000) }

    /// The loaded store of `Engine`'s side, closed: built here when `BulkInsert` did not
    /// run (it was filtered out by `--only`).
    static func loadedStore<Engine: KeyValueEngine>(_ engine: Engine.Type, _ context: BenchContext) throws -> String {
        try context.fixture("engine-loaded-\(Engine.sideName)") { path in
            let store = try Engine(path: path, options: EngineOptions())
            try load(store, rows: rowCount(context))
            try store.close()
        }
    }

    /// Puts keys 0..<rows, in ascending order, in one durable transaction.
    static func load<Engine: KeyValueEngine>(_ store: Engine, rows: Int) throws {
        var value = ValueBytes()
        try store.write { writer in
            for key in 0..<Int64(rows) {
                try value.withValue(for: key) { try writer.put(key, $0) }
            }
        }
    }

    /// Throws when a workload reads something other than what was written, so a broken
    /// adapter cannot report a fast wrong answer.
    static func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        if !condition { throw BenchError(message: message()) }
    }
}

struct BenchError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// Bulk insert: 1,000,000 rows in key order in one transaction, committed durably.
/// Measures the write path without per-commit cost: B-tree appends, page writes and one
/// sync. Comparable because both sides insert the same rows into an empty store and
/// the clock stops only when the commit has returned.
struct BulkInsert: EngineWorkload {
    let name = "engine/bulk-insert"

    func run<Engine: KeyValueEngine>(_ engine: Engine.Type, in context: BenchContext) throws -> [Measurement] {
        let rows = EngineWorkloads.rowCount(context)
        let path = try context.freshPath("\(name)-\(Engine.sideName)")
        let store = try Engine(path: path, options: EngineOptions())
        let seconds = try measureSeconds { try EngineWorkloads.load(store, rows: rows) }
        try store.close()
        context.registerFixture("engine-loaded-\(Engine.sideName)", path: path)
        return [.rate("\(rows) rows, one transaction", count: rows, seconds: seconds, noun: "rows")]
    }
}

/// File size of the loaded store once closed, and again after vacuum: every file that
/// makes it up (what the disk holds), and the data file alone (what the format costs;
/// the two differ when a side leaves its log file behind after a clean close).
/// Comparable because both hold the same rows.
struct FileSize: EngineWorkload {
    let name = "engine/file-size"

    func run<Engine: KeyValueEngine>(_ engine: Engine.Type, in context: BenchContext) throws -> [Measurement] {
        let loaded = try EngineWorkloads.loadedStore(Engine.self, context)
        let copy = try context.copyOfFixture(loaded, files: Engine.files(at:), name: "\(name)-\(Engine.sideName)")
        let store = try Engine(path: copy, options: EngineOptions())
        try store.vacuum()
        try store.close()
        return [
            .bytes("after load, all files", totalFileSize(Engine.files(at: loaded))),
            .bytes("after load, data file", totalFileSize(Array(Engine.files(at: loaded).prefix(1)))),
            .bytes("after vacuum, all files", totalFileSize(Engine.files(at: copy))),
            .bytes("after vacuum, data file", totalFileSize(Array(Engine.files(at: copy).prefix(1)))),
        ]
    }
}

/// Reopen: open the closed loaded store and read one row — what an application pays
/// at launch before it can show data. Median of 21 opens, the file in the page cache.
struct Reopen: EngineWorkload {
    let name = "engine/reopen"

    func run<Engine: KeyValueEngine>(_ engine: Engine.Type, in context: BenchContext) throws -> [Measurement] {
        let path = try EngineWorkloads.loadedStore(Engine.self, context)
        let rows = EngineWorkloads.rowCount(context)
        var random = SplitMix64(seed: 4)
        var samples: [Double] = []
        for attempt in 0..<24 {
            let key = Int64.random(in: 0..<Int64(rows), using: &random)
            let start = nowNanoseconds()
            let store = try Engine(path: path, options: EngineOptions())
            let found = try store.get(key)
            let elapsed = Double(nowNanoseconds() - start) / 1e9
            try store.close()
            try EngineWorkloads.expect(found != nil, "reopen: key \(key) missing")
            if attempt >= 3 { samples.append(elapsed) }  // the first opens warm the cache
        }
        return [.seconds("open + first read, median", median(samples))]
    }
}

/// Point lookup: random keys of the loaded store, each in a read transaction of its
/// own, as a caller fetching one row does. Median over batches of 1,000 lookups, after
/// a warm-up that brings the store into memory on both sides.
struct PointLookup: EngineWorkload {
    let name = "engine/point-lookup"

    func run<Engine: KeyValueEngine>(_ engine: Engine.Type, in context: BenchContext) throws -> [Measurement] {
        let path = try EngineWorkloads.loadedStore(Engine.self, context)
        let rows = EngineWorkloads.rowCount(context)
        let store = try Engine(path: path, options: EngineOptions())
        defer { try? store.close() }
        let lookups = context.scaled(1_000_000, minimum: 10_000)
        var random = SplitMix64(seed: 5)
        let keys = (0..<lookups).map { _ in Int64.random(in: 0..<Int64(rows), using: &random) }
        for key in keys.prefix(lookups / 5) { _ = try store.get(key) }
        let perLookup = try medianPerOperation(count: lookups, batch: 1_000) { index in
            guard try store.get(keys[index]) != nil else { throw BenchError(message: "lookup: key missing") }
        }
        return [.seconds("median per lookup (own read transaction)", perLookup)]
    }
}

/// The same lookups inside one long read transaction: the engine's search path alone,
/// without the cost of starting a snapshot per lookup.
struct PointLookupInOneRead: EngineWorkload {
    let name = "engine/point-lookup-in-one-read"

    func run<Engine: KeyValueEngine>(_ engine: Engine.Type, in context: BenchContext) throws -> [Measurement] {
        let path = try EngineWorkloads.loadedStore(Engine.self, context)
        let rows = EngineWorkloads.rowCount(context)
        let store = try Engine(path: path, options: EngineOptions())
        defer { try? store.close() }
        let lookups = context.scaled(1_000_000, minimum: 10_000)
        var random = SplitMix64(seed: 6)
        let keys = (0..<lookups).map { _ in Int64.random(in: 0..<Int64(rows), using: &random) }
        let perLookup = try store.read { reader in
            for key in keys.prefix(lookups / 5) { _ = try reader.get(key) }
            return try medianPerOperation(count: lookups, batch: 1_000) { index in
                guard try reader.get(keys[index]) != nil else { throw BenchError(message: "lookup: key missing") }
            }
        }
        return [.seconds("median per lookup (one read transaction)", perLookup)]
    }
}

/// Full scan: every row in key order, each value's bytes touched. One warm-up scan, then
/// one measured scan. Comparable: same rows, same order, same per-row work.
struct FullScan: EngineWorkload {
    let name = "engine/full-scan"

    func run<Engine: KeyValueEngine>(_ engine: Engine.Type, in context: BenchContext) throws -> [Measurement] {
        let path = try EngineWorkloads.loadedStore(Engine.self, context)
        let rows = EngineWorkloads.rowCount(context)
        let store = try Engine(path: path, options: EngineOptions())
        defer { try? store.close() }
        let warm = try store.read { try $0.scan() }
        var measured = (rows: 0, checksum: 0)
        let seconds = try measureSeconds { measured = try store.read { try $0.scan() } }
        try EngineWorkloads.expect(
            measured.rows == rows && measured == warm, "scan: \(measured.rows) rows of \(rows)")
        return [.rate("rows in key order", count: rows, seconds: seconds, noun: "rows")]
    }
}

/// Single-row commits: one put per write transaction into a fresh store, at full
/// durability (survives power loss: one fdatasync per commit on both sides) or normal
/// (survives a process crash). Median latency per commit after 20 warm-up commits, and
/// the sustained rate over all of them, which the median hides: it includes the
/// occasional checkpoint each side runs as its log grows.
struct CommitLatency: EngineWorkload {
    let durability: Durability
    var name: String { durability == .full ? "engine/commit-full" : "engine/commit-normal" }

    func run<Engine: KeyValueEngine>(_ engine: Engine.Type, in context: BenchContext) throws -> [Measurement] {
        let path = try context.freshPath("\(name)-\(Engine.sideName)")
        let store = try Engine(path: path, options: EngineOptions(durability: durability))
        defer { try? store.close() }
        let commits =
            durability == .full ? context.scaled(2_000, minimum: 50) : context.scaled(20_000, minimum: 200)
        var random = SplitMix64(seed: 7)
        var value = ValueBytes()
        func commitOne() throws {
            let key = Int64(bitPattern: random.next() >> 1)
            try store.write { writer in try value.withValue(for: key) { try writer.put(key, $0) } }
        }
        for _ in 0..<20 { try commitOne() }
        var perCommit = 0.0
        let seconds = try measureSeconds { perCommit = try medianLatency(count: commits) { _ in try commitOne() } }
        return [
            .seconds("median per single-row commit", perCommit),
            .rate("sustained, checkpoints included", count: commits, seconds: seconds, noun: "commits"),
        ]
    }
}

/// Group commit: 8 writer threads, each with its own handle (SQLite: its own
/// connection with a busy timeout), each committing single rows at full durability.
/// Measures commits per second across all writers — what an engine gains by sharing
/// one sync among waiting commits — and the median commit latency a writer sees.
struct GroupCommit: EngineWorkload {
    let name = "engine/group-commit-8"
    let writers = 8

    func run<Engine: KeyValueEngine>(_ engine: Engine.Type, in context: BenchContext) throws -> [Measurement] {
        let path = try context.freshPath("\(name)-\(Engine.sideName)")
        let store = try Engine(path: path, options: EngineOptions())
        defer { try? store.close() }
        let commitsPerWriter = context.scaled(250, minimum: 10)
        let handles = try (0..<writers).map { _ in HandOff(try store.openWriterForAnotherThread()) }
        let latencies = (0..<writers).map { _ in HandOff([Double]()) }
        let failures = (0..<writers).map { _ in HandOff<(any Error)?>(nil) }
        let ready = DispatchGroup()
        let done = DispatchGroup()
        let gate = DispatchSemaphore(value: 0)
        for writer in 0..<writers {
            let handle = handles[writer]
            let latency = latencies[writer]
            let failure = failures[writer]
            ready.enter()
            done.enter()
            let thread = Thread {
                defer { done.leave() }
                var value = ValueBytes()
                var isReady = false
                do {
                    let base = Int64(writer) << 32
                    // One unmeasured commit reads the schema before the start gate.
                    try handle.value.write { batch in
                        try value.withValue(for: base) { try batch.put(base, $0) }
                    }
                    ready.leave()
                    isReady = true
                    gate.wait()
                    for index in 1...commitsPerWriter {
                        let key = base + Int64(index)
                        let start = nowNanoseconds()
                        try handle.value.write { batch in
                            try value.withValue(for: key) { try batch.put(key, $0) }
                        }
                        latency.value.append(Double(nowNanoseconds() - start) / 1e9)
                    }
                } catch {
                    failure.value = error
                    if !isReady { ready.leave() }
                }
            }
            thread.start()
        }
        ready.wait()
        let start = nowNanoseconds()
        for _ in 0..<writers { gate.signal() }
        done.wait()
        let seconds = Double(nowNanoseconds() - start) / 1e9
        for handle in handles { try handle.value.close() }
        if let error = failures.lazy.compactMap(\.value).first { throw error }
        let total = writers * commitsPerWriter
        return [
            .rate("\(writers) writers, full durability", count: total, seconds: seconds, noun: "commits"),
            .seconds("\(writers) writers, median commit latency", median(latencies.flatMap(\.value))),
        ]
    }
}

/// Recovery: a store whose log holds ~4 MB of committed, never-checkpointed
/// transactions is copied (data file + log, no shared-memory index) as a crash would
/// leave it; opening the copy and reading one row must replay or index the whole log.
/// Median of 7 copies. Comparable: the same committed rows, the same log size target.
struct Recovery: EngineWorkload {
    let name = "engine/recovery-4mb"

    func run<Engine: KeyValueEngine>(_ engine: Engine.Type, in context: BenchContext) throws -> [Measurement] {
        let path = try context.freshPath("\(name)-\(Engine.sideName)")
        let store = try Engine(path: path, options: EngineOptions(durability: .normal, checkpointsAutomatically: false))
        let targetLogBytes = max(512 * 1024, Int(4 * 1024 * 1024 * min(context.scale, 1)))
        var value = ValueBytes()
        var nextKey: Int64 = 0
        while try store.committedLogBytes() < targetLogBytes {
            try store.write { writer in
                for _ in 0..<100 {
                    try value.withValue(for: nextKey) { try writer.put(nextKey, $0) }
                    nextKey += 1
                }
            }
        }
        let copies = try (0..<7).map { number in
            let destination = try context.freshPath("\(name)-\(Engine.sideName)-copy\(number)")
            for (from, to) in zip(Engine.files(at: path), Engine.files(at: destination))
            where FileManager.default.fileExists(atPath: from) {
                try FileManager.default.copyItem(atPath: from, toPath: to)
            }
            return destination
        }
        try store.close()
        let lastKey = nextKey - 1
        var samples: [Double] = []
        for copy in copies {
            let start = nowNanoseconds()
            let recovered = try Engine(path: copy, options: EngineOptions())
            let found = try recovered.get(lastKey)
            samples.append(Double(nowNanoseconds() - start) / 1e9)
            try recovered.close()
            try EngineWorkloads.expect(found != nil, "recovery: last committed key \(lastKey) missing")
        }
        let logMegabytes = String(format: "%.1f", Double(targetLogBytes) / 1_048_576)
        return [.seconds("open + first read, ≥\(logMegabytes) MiB log (median)", median(samples))]
    }
}
