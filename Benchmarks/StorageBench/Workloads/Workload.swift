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

    static let all: [Workload] =
        [
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
            .storeBatch, .storeBatchMemory,
            .migrationLightweight,
        ] + Workload.engine
}

/// What a workload gets: its scale, a scratch directory, and a progress line.
struct BenchContext: Sendable {
    /// 1.0 is the documented size (e.g. 1,000,000 rows); the smoke run uses less.
    let scale: Double
    let directory: URL
    /// Where progress goes (nowhere unless stderr is a terminal).
    var reporter: ProgressReporter = .silent

    /// `count` scaled, at least 1.
    func scaled(_ count: Int) -> Int { max(1, Int(Double(count) * scale)) }

    /// A fresh file path in the scratch directory.
    func path(_ name: String) -> URL { directory.appendingPathComponent(name) }

    /// Shows what the workload is doing now, so long runs show life.
    func progress(_ text: String) { reporter.show(text) }
}

/// Which way a measurement improves.
enum Better: String, Codable, Sendable {
    case higher
    case lower
    /// A count or a setting, reported for context: neither way is better.
    case neither

    /// The arrow the tables print after the unit.
    var arrow: String {
        switch self {
        case .higher: "↑"
        case .lower: "↓"
        case .neither: " "
        }
    }

    /// The usual direction for `unit`: rates are better higher, times and sizes lower.
    static func inferred(from unit: String) -> Better {
        if unit.hasSuffix("/s") { return .higher }
        if ["ns", "us", "ms", "s", "B", "bytes", "KiB", "MiB", "GiB"].contains(unit) { return .lower }
        return .neither
    }
}

/// One number a workload reports.
struct Measurement: Sendable {
    let label: String
    let value: Double
    let unit: String
    let better: Better

    /// A measurement whose direction follows from its unit unless `better` says otherwise
    /// (ratios such as "x" name it).
    init(label: String, value: Double, unit: String, better: Better? = nil) {
        self.label = label
        self.value = value
        self.unit = unit
        self.better = better ?? Better.inferred(from: unit)
    }
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
        return [Measurement(label: "clock reads", value: Double(count) / seconds, unit: "reads/s")]
    }
}
