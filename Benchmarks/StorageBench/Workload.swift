// The workloads' registry and the measuring helpers. A workload lives in its own
// file (EngineWorkloads.swift, ObjectWorkloads.swift, ...) and is listed once in
// `Workload.all`. Speed goals are read off these numbers, never asserted in tests.
import Foundation

/// One named benchmark: it runs at a scale and reports its measurements.
struct Workload: Sendable {
    /// Group and name, e.g. "engine/point-lookup".
    let name: String
    let summary: String
    let run: @Sendable (BenchContext) throws -> [Measurement]

    static let all: [Workload] = store + Workload.engine

    /// The workloads above the engine's, in the order they run (a list of its own: as one
    /// literal added to `engine`, it is more than the type checker solves in time).
    private static let store: [Workload] = [
        .clockSanity,
        .predicateEvaluate,
        .predicateSort,
        .predicateStore,
        .objectInMemory,
        .storeDefault,
        .storeMultiProcess,
        .storeInMemory,
        .storeBinary,
        .storeWrites,
        .storeBatch,
        .storeBatchMemory,
    ]
}

/// What a workload gets: its scale, a scratch directory, and a progress line.
struct BenchContext: Sendable {
    /// 1.0 is the documented size (e.g. 1,000,000 rows); the smoke run uses less.
    let scale: Double
    let directory: URL

    /// `count` scaled, at least 1.
    func scaled(_ count: Int) -> Int { max(1, Int(Double(count) * scale)) }

    /// A fresh file path in the scratch directory.
    func path(_ name: String) -> URL { directory.appendingPathComponent(name) }

    /// Overwrites the terminal's progress line (stderr), so long runs show life.
    func progress(_ text: String) {
        FileHandle.standardError.write(Data("\r\u{1B}[K\(text)".utf8))
    }
}

/// One number a workload reports.
struct Measurement: Sendable {
    let label: String
    let value: Double
    let unit: String
}

/// Runs `body` and returns the seconds it took.
func measureSeconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

extension Workload {
    /// Measures the clock itself so a report shows the timer's resolution.
    static let clockSanity = Workload(name: "sanity/clock", summary: "timer overhead") { context in
        let count = context.scaled(1_000_000)
        var sink: UInt64 = 0
        let seconds = measureSeconds {
            for _ in 0..<count { sink &+= DispatchTime.now().uptimeNanoseconds & 1 }
        }
        precondition(sink <= UInt64(count))
        return [Measurement(label: "clock reads", value: Double(count) / seconds, unit: "/s")]
    }
}
