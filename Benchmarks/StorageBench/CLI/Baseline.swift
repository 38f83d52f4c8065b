// `storage-bench --compare FILE`: this run against an earlier `--json` run. Measurements
// match by workload and label; each gets change = now ÷ before and a verdict read in the
// measurement's direction (a rate that rose is better, a time that rose is worse). Within
// ±5% is "same": on a shared machine, run-to-run noise is about that large.
import Foundation

/// How a measurement moved against the earlier run.
enum Verdict: String, Codable, Sendable {
    case better
    case worse
    /// Within the tolerance.
    case same
    /// The measurement has no better direction (a count), so it is not judged.
    case notJudged = "not judged"
    /// The earlier run did not have it.
    case new
}

/// One measurement beside its earlier value.
struct ComparedEntry: Codable, Sendable {
    let workload: String
    let label: String
    let value: Double
    let before: Double?
    /// now ÷ before.
    let change: Double?
    let verdict: Verdict
}

/// The comparison as `--json` stores it: the earlier run, the counts and every entry.
struct ComparisonSummary: Codable, Sendable {
    var file: String
    var earlierDate: String
    var earlierBuild: String
    var earlierScale: Double
    var entries: [ComparedEntry] = []
    /// Earlier measurements of workloads that ran now but did not report them.
    var missing: [String] = []

    func count(_ verdict: Verdict) -> Int { entries.count(where: { $0.verdict == verdict }) }
}

/// The earlier run, indexed for matching.
struct Baseline: Sendable {
    /// Within this fraction either way a change is "same".
    static let tolerance = 0.05

    let path: String
    let report: RunReport
    private let entries: [String: RunReport.Entry]

    init(path: String) throws(CommandLineError) {
        self.path = path
        report = try RunReport.load(path: path)
        var entries: [String: RunReport.Entry] = [:]
        for entry in report.measurements { entries[Self.key(entry.workload, entry.label)] = entry }
        self.entries = entries
    }

    private static func key(_ workload: String, _ label: String) -> String { workload + "\u{0}" + label }

    /// `measurement` of `workload` compared with its earlier value.
    func compare(_ measurement: Measurement, workload: String) -> ComparedEntry {
        guard let earlier = entries[Self.key(workload, measurement.label)] else {
            return ComparedEntry(
                workload: workload, label: measurement.label, value: measurement.value, before: nil, change: nil,
                verdict: .new)
        }
        let change = measurement.value / earlier.value
        return ComparedEntry(
            workload: workload, label: measurement.label, value: measurement.value, before: earlier.value,
            change: change, verdict: Self.verdict(change: change, better: measurement.better))
    }

    /// Which way `change` (now ÷ before) goes for a measurement better in `better`'s direction.
    static func verdict(change: Double, better: Better) -> Verdict {
        guard better != .neither else { return .notJudged }
        guard change.isFinite, change > 0 else { return change == 1 ? .same : .notJudged }
        if abs(change - 1) <= tolerance || abs(1 / change - 1) <= tolerance { return .same }
        return (change > 1) == (better == .higher) ? .better : .worse
    }

    /// The earlier labels of `workloads` that this run did not report.
    func missing(from reported: [RunReport.Entry], workloads: Set<String>) -> [String] {
        let seen = Set(reported.map { Self.key($0.workload, $0.label) })
        return report.measurements.filter {
            workloads.contains($0.workload) && !seen.contains(Self.key($0.workload, $0.label))
        }
        .map { "\($0.workload): \($0.label)" }
    }

    /// Lines warning that the runs differ in ways that make ratios mean less.
    func caveats(scale: Double, banner: Banner) -> [String] {
        var lines: [String] = []
        if report.scale != scale {
            lines.append(
                "note: the earlier run was at scale \(formatted(report.scale)), this one at \(formatted(scale)): "
                    + "labels naming counts do not match and rates differ with size")
        }
        if report.banner.build != banner.build {
            lines.append("note: the earlier run was a \(report.banner.build) build, this one a \(banner.build) build")
        }
        if report.banner.cpu != banner.cpu || report.banner.cores != banner.cores {
            lines.append(
                "note: the earlier run was on another machine (\(report.banner.cpu), \(report.banner.cores) cores)")
        }
        return lines
    }

    /// The summary: what was compared, the counts, and what did not match.
    static func summaryLines(_ summary: ComparisonSummary) -> [String] {
        let percent = Int(tolerance * 100)
        var lines = [
            "compared with \(summary.file) (\(summary.earlierDate), \(summary.earlierBuild) build, "
                + "scale \(formatted(summary.earlierScale))): change = now ÷ before",
            "  \(summary.count(.better)) better, \(summary.count(.worse)) worse, "
                + "\(summary.count(.same)) within ±\(percent)%, \(summary.count(.notJudged)) not judged, "
                + "\(summary.count(.new)) not in the earlier run",
        ]
        if !summary.missing.isEmpty {
            lines.append("  \(summary.missing.count) earlier measurements of these workloads are gone:")
            lines += summary.missing.map { "    \($0)" }
        }
        return lines
    }
}
