// What a workload reports, and how the numbers are taken. Every timing uses
// DispatchTime's monotonic clock. Latency workloads report medians; throughput
// workloads run their measured loop once, after a warm-up where one makes sense.
import Dispatch
import Foundation

/// What a number measures, which fixes how it prints and which direction is better.
enum MeasurementKind: Sendable {
    /// Seconds taken by one operation or one batch; lower is better.
    case seconds
    /// Items per second, named by `noun` ("rows", "objects", "commits"); higher is better.
    case rate(noun: String)
    /// Bytes on disk; lower is better.
    case bytes

    var higherIsBetter: Bool {
        if case .rate = self { return true }
        return false
    }
}

/// One number from one side for one row of a table.
struct Measurement: Sendable {
    /// The row's label within its workload, e.g. "median per commit".
    let label: String
    let value: Double
    let kind: MeasurementKind

    static func seconds(_ label: String, _ value: Double) -> Measurement {
        Measurement(label: label, value: value, kind: .seconds)
    }

    static func rate(_ label: String, count: Int, seconds: Double, noun: String) -> Measurement {
        Measurement(label: label, value: Double(count) / max(seconds, 1e-9), kind: .rate(noun: noun))
    }

    static func bytes(_ label: String, _ value: Int) -> Measurement {
        Measurement(label: label, value: Double(value), kind: .bytes)
    }

    /// How many times better `self` is than `other`: above 1 means `self` is faster,
    /// higher-throughput or smaller. This one direction holds for every ratio printed.
    func advantage(over other: Measurement) -> Double {
        guard value > 0, other.value > 0 else { return .nan }
        return kind.higherIsBetter ? value / other.value : other.value / value
    }

    /// The value with a unit scaled for reading: "1.42 µs", "983 k rows/s", "118.2 MB".
    var formatted: String {
        switch kind {
        case .seconds:
            if value < 1e-6 { return String(format: "%.0f ns", value * 1e9) }
            if value < 1e-3 { return String(format: "%.2f µs", value * 1e6) }
            if value < 1 { return String(format: "%.2f ms", value * 1e3) }
            return String(format: "%.2f s", value)
        case .rate(let noun):
            if value >= 1e6 { return String(format: "%.2f M %@/s", value / 1e6, noun) }
            if value >= 1e3 { return String(format: "%.1f k %@/s", value / 1e3, noun) }
            return String(format: "%.1f %@/s", value, noun)
        case .bytes:
            if value >= 1e6 { return String(format: "%.1f MB", value / 1e6) }
            if value >= 1e3 { return String(format: "%.1f kB", value / 1e3) }
            return String(format: "%.0f B", value)
        }
    }
}

/// What the workloads' clock measures (`--clock`).
enum BenchClock: String {
    /// Elapsed (monotonic) time: what a user waits, including time the process waits for a
    /// CPU on a busy machine and for the disk.
    case wall
    /// CPU time of the whole process (every thread, user and system): on a machine shared
    /// with other work, the cost of the work itself; time waiting for the disk (fsync) and
    /// for a CPU is not counted, so durable-commit rows then say little.
    case cpu

    nonisolated(unsafe) static var current = BenchClock.wall
}

/// Nanoseconds now on the run's clock (`BenchClock.current`).
@inline(__always)
func nowNanoseconds() -> UInt64 {
    guard BenchClock.current == .cpu else { return DispatchTime.now().uptimeNanoseconds }
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// Runs `body` once and returns the seconds it took.
@inline(__always)
func measureSeconds(_ body: () throws -> Void) rethrows -> Double {
    let start = nowNanoseconds()
    try body()
    return Double(nowNanoseconds() - start) / 1e9
}

/// The median of `samples` (the mean of the middle two for an even count).
func median(_ samples: [Double]) -> Double {
    guard !samples.isEmpty else { return .nan }
    let sorted = samples.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// Times `count` operations in batches of `batch` and returns the median of the batch
/// means: operations near a microsecond are too short to time one by one without the
/// clock's own cost showing, yet a median still drops the batches a neighbour's
/// build interrupted.
func medianPerOperation(count: Int, batch: Int, _ operation: (Int) throws -> Void) rethrows -> Double {
    var samples: [Double] = []
    samples.reserveCapacity(count / batch + 1)
    var index = 0
    while index < count {
        let end = min(count, index + batch)
        let start = nowNanoseconds()
        for position in index..<end { try operation(position) }
        samples.append(Double(nowNanoseconds() - start) / 1e9 / Double(end - index))
        index = end
    }
    return median(samples)
}

/// Times each of `count` runs of `operation` separately and returns the median, checking
/// each run's result with `check` outside the timed part: a check as costly as the work
/// (25,000 strings lowercased) would add the same time to every side and pull the ratios
/// towards 1.
func medianLatency<Result>(
    count: Int, _ operation: (Int) throws -> Result, checking check: (Result) throws -> Void
) throws -> Double {
    var samples: [Double] = []
    samples.reserveCapacity(count)
    for index in 0..<count {
        let start = nowNanoseconds()
        let result = try operation(index)
        samples.append(Double(nowNanoseconds() - start) / 1e9)
        try check(result)
    }
    return median(samples)
}

/// Times each of `count` runs of `operation` separately and returns the median, for
/// operations long enough (a commit, a query, an open) to time one at a time.
func medianLatency(count: Int, _ operation: (Int) throws -> Void) rethrows -> Double {
    var samples: [Double] = []
    samples.reserveCapacity(count)
    for index in 0..<count {
        let start = nowNanoseconds()
        try operation(index)
        samples.append(Double(nowNanoseconds() - start) / 1e9)
    }
    return median(samples)
}

/// A small, fast, seeded generator (SplitMix64) so every side gets the same keys,
/// rows and query arguments in the same order.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}

/// Sums the sizes of the files that exist among `paths`.
func totalFileSize(_ paths: [String]) -> Int {
    paths.reduce(0) { total, path in
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue
        return total + (size ?? 0)
    }
}

/// Lets a value that one thread hands to another (a connection opened for a writer
/// thread) cross the `@Sendable` boundary of `Thread`; each is used by one thread only.
final class HandOff<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
