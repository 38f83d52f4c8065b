// --json output read back, --compare against a saved run, and the number formats and
// verdicts behind them.
import Foundation
import Testing

@testable import storage_bench

@Suite struct ResultFormatTests {
    static func decode(_ text: String) throws -> RunReport {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return try decoder.decode(RunReport.self, from: Data(text.utf8))
    }

    @Test func jsonIsTheWholeOfStdoutAndCarriesEveryMeasurement() throws {
        let run = try StorageBenchProcess.run(["sanity/clock", "engine/file-size", "--smoke", "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        let report = try Self.decode(run.stdout)
        #expect(report.tool == "storage-bench" && report.formatVersion == 1)
        #expect(report.scale == 0.01)
        #expect(report.failures.isEmpty)
        #expect(report.banner.cores > 0 && report.banner.memoryBytes > 0 && !report.banner.cpu.isEmpty)
        #expect(report.banner.arguments == ["sanity/clock", "engine/file-size", "--smoke", "--json"])
        #expect(ISO8601DateFormatter().date(from: report.banner.date) != nil)
        #expect(report.banner.build == (Banner.isDebugBuild ? "debug" : "release"))
        let clock = try #require(report.measurements.first { $0.workload == "sanity/clock" })
        #expect(clock.label == "clock reads" && clock.unit == "reads/s" && clock.better == .higher && clock.value > 0)
        let sizes = report.measurements.filter { $0.workload == "engine/file-size" }
        #expect(sizes.map(\.label) == ["file / payload", "file / payload after vacuum", "bytes per row"])
        #expect(sizes.allSatisfy { $0.better == .lower })
        #expect(report.comparison == nil)
    }

    /// A saved run: the clock far slower than now, reopen far faster, and a measurement gone since.
    static func savedRun(at url: URL) throws {
        var report = RunReport(scale: 0.01, banner: Banner.current(arguments: ["saved"]))
        report.measurements = [
            RunReport.Entry(workload: "sanity/clock", label: "clock reads", value: 1, unit: "reads/s", better: .higher),
            RunReport.Entry(workload: "engine/reopen", label: "open", value: 1e-9, unit: "ms", better: .lower),
            RunReport.Entry(workload: "engine/reopen", label: "open twice", value: 5, unit: "ms", better: .lower),
            RunReport.Entry(
                workload: "engine/bulk-insert", label: "not run now", value: 5, unit: "rows/s", better: .higher),
        ]
        try RunReport.encoder().encode(report).write(to: url)
    }

    @Test func compareShowsEachMeasurementAgainstTheSavedRun() throws {
        let directory = try StorageBenchProcess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let saved = directory.appendingPathComponent("before.json")
        try Self.savedRun(at: saved)
        let run = try StorageBenchProcess.run([
            "sanity/clock", "engine/reopen", "predicate/sort-two-keys", "--smoke", "--compare", saved.path,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        let header = try #require(lines.first { $0.hasPrefix("workload") })
        #expect(header.contains("before") && header.contains("change") && header.contains("verdict"))
        let clock = try #require(lines.first { $0.hasPrefix("sanity/clock") })
        #expect(clock.hasSuffix("better") && clock.contains("  1  "), "\(clock)")
        let open = try #require(lines.first { $0.hasPrefix("engine/reopen") })
        #expect(open.hasSuffix("worse"), "\(open)")
        #expect(lines.contains { $0.contains("compiled sort") && $0.hasSuffix("new") })
        #expect(run.stdout.contains("compared with \(saved.path)"))
        #expect(run.stdout.contains("1 better, 1 worse, 0 within ±5%, 0 not judged, 3 not in the earlier run"))
        #expect(run.stdout.contains("1 earlier measurements of these workloads are gone:"))
        #expect(run.stdout.contains("engine/reopen: open twice"))
        #expect(!run.stdout.contains("not run now"), "workloads that did not run are not missing")
    }

    @Test func compareWithJSONStoresTheComparison() throws {
        let directory = try StorageBenchProcess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let saved = directory.appendingPathComponent("before.json")
        try Self.savedRun(at: saved)
        let run = try StorageBenchProcess.run(["sanity/clock", "--smoke", "--json", "--compare", saved.path])
        #expect(run.status == 0, "\(run.stderr)")
        let comparison = try #require(try Self.decode(run.stdout).comparison)
        #expect(comparison.file == saved.path && comparison.earlierScale == 0.01)
        let clock = try #require(comparison.entries.first)
        #expect(clock.label == "clock reads" && clock.before == 1 && clock.verdict == .better)
        #expect((clock.change ?? 0) > 1_000)
    }

    @Test func compareWithAMissingOrForeignFileIsAUsageError() throws {
        let directory = try StorageBenchProcess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let missing = try StorageBenchProcess.run(["sanity/clock", "--compare", directory.path + "/none.json"])
        #expect(missing.status == 2 && missing.stdout.isEmpty)
        #expect(missing.stderr.contains("none.json: no such file"))
        let foreign = directory.appendingPathComponent("foreign.json")
        try Data(#"{"hello": "world"}"#.utf8).write(to: foreign)
        let wrong = try StorageBenchProcess.run(["sanity/clock", "--compare", foreign.path])
        #expect(wrong.status == 2 && wrong.stdout.isEmpty)
        #expect(wrong.stderr.contains("is not storage-bench --json output"))
    }

    @Test func verdictsFollowTheDirection() {
        #expect(Baseline.verdict(change: 1.5, better: .higher) == .better)
        #expect(Baseline.verdict(change: 1.5, better: .lower) == .worse)
        #expect(Baseline.verdict(change: 0.5, better: .higher) == .worse)
        #expect(Baseline.verdict(change: 0.5, better: .lower) == .better)
        #expect(Baseline.verdict(change: 1.04, better: .higher) == .same)
        #expect(Baseline.verdict(change: 0.96, better: .lower) == .same)
        #expect(Baseline.verdict(change: 2, better: .neither) == .notJudged)
        #expect(Baseline.verdict(change: .infinity, better: .higher) == .notJudged)
    }

    @Test func directionsFollowUnits() {
        #expect(Measurement(label: "x", value: 1, unit: "objects/s").better == .higher)
        #expect(Measurement(label: "x", value: 1, unit: "ms").better == .lower)
        #expect(Measurement(label: "x", value: 1, unit: "MiB").better == .lower)
        #expect(Measurement(label: "x", value: 1, unit: "rows").better == .neither)
        #expect(Measurement(label: "x", value: 1, unit: "x", better: .higher).better == .higher)
        for workload in Workload.all {
            #expect(!workload.summary.isEmpty && !workload.name.contains(" "))
        }
    }

    @Test func numbersReadEasily() {
        #expect(grouped(0) == "0")
        #expect(grouped(999) == "999")
        #expect(grouped(1_000) == "1,000")
        #expect(grouped(35_608_484) == "35,608,484")
        #expect(grouped(-1_234_567) == "-1,234,567")
        #expect(formatted(35_608_484.4) == "35,608,484")
        #expect(formatted(166_012.7) == "166,013")
        #expect(formatted(100) == "100")
        #expect(formatted(12.345) == "12.3")
        #expect(formatted(4.921) == "4.92")
        #expect(formatted(0.541) == "0.541")
        #expect(formatted(0) == "0")
        #expect(formatted(5) == "5")
        #expect(formatted(2e20) == "2e+20")
        #expect(formatted(.nan) == "n/a")
    }

    @Test func tablesAlignTheirColumns() {
        let table = TextTable(columns: [
            TextTable.Column("name", width: 6), TextTable.Column("value", width: 8, .right),
        ])
        #expect(table.header == "name       value\n------  --------")
        #expect(table.row(["a", "1,234"]) == "a          1,234")
        #expect(table.row(["longer name", "1"]) == "longer name         1")
    }
}
