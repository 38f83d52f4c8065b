// `storage-bench [run] [WORKLOAD...] [--scale X | --smoke] [--json] [--compare FILE]`:
// runs the selected workloads (all with none named) one after another, each in its own
// scratch directory, and prints one table whose rows appear as workloads finish — or,
// with --json, one JSON document at the end. A failed workload is reported on stderr
// and the others still run; the exit status is then 1.
import Foundation

/// What the run options ask for.
struct BenchmarkOptions {
    var scale = 1.0
    var prefixes: [String] = []
    var json = false
    var comparePath: String?
    var list = false

    init(_ arguments: [String]) throws(CommandLineError) {
        var index = 0
        func value(of option: String) throws(CommandLineError) -> String {
            guard index < arguments.count, !arguments[index].hasPrefix("--") else {
                throw CommandLineError.usage("\(option) needs a value")
            }
            index += 1
            return arguments[index - 1]
        }
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            switch argument {
            case "--scale":
                let text = try value(of: argument)
                guard let scale = Double(text), scale > 0, scale.isFinite else {
                    throw CommandLineError.usage("--scale takes a positive number, not '\(text)'")
                }
                self.scale = scale
            case "--smoke": scale = 0.01
            case "--json": json = true
            case "--compare": comparePath = try value(of: argument)
            case "--list": list = true
            default:
                if argument.hasPrefix("-") { throw CommandLineError.usage("unknown option '\(argument)'") }
                prefixes.append(argument)
            }
        }
    }

    /// The workloads the prefixes name (all when none); each prefix must name one.
    func selectedWorkloads() throws(CommandLineError) -> [Workload] {
        for prefix in prefixes where !Workload.all.contains(where: { $0.name.hasPrefix(prefix) }) {
            throw CommandLineError.usage(
                "no command or workload named '\(prefix)' (`storage-bench list` shows the workloads)")
        }
        return Workload.all.filter { workload in prefixes.isEmpty || prefixes.contains { workload.name.hasPrefix($0) } }
    }
}

enum BenchmarkCommand {
    /// `storage-bench list`: every workload with what it measures.
    static func list() -> Int32 {
        let width = Workload.all.map(\.name.count).max() ?? 0
        for workload in Workload.all {
            print(workload.name.padding(toLength: width + 2, withPad: " ", startingAt: 0) + workload.summary)
        }
        return ExitStatus.success
    }

    static func run(_ arguments: [String]) throws(CommandLineError) -> Int32 {
        let options = try BenchmarkOptions(arguments)
        if options.list { return list() }
        let selected = try options.selectedWorkloads()
        let baseline = try options.comparePath.map { path throws(CommandLineError) in try Baseline(path: path) }
        let banner = Banner.current(arguments: arguments)
        let scaleText = options.scale == 1 ? "1 (the documented sizes)" : formatted(options.scale)
        let plural = selected.count == 1 ? "workload" : "workloads"
        banner.print(
            run: "\(selected.count) \(plural) at scale \(scaleText); ↑ higher is better, ↓ lower is better",
            toStandardOutput: !options.json)
        if let baseline, !options.json {
            for line in baseline.caveats(scale: options.scale, banner: banner) { print(line) }
        }

        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("storage-bench-\(getpid())")
        do {
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        } catch {
            throw CommandLineError.failure("cannot create \(scratch.path): \(error.localizedDescription)")
        }
        defer { try? FileManager.default.removeItem(at: scratch) }

        var report = RunReport(scale: options.scale, banner: banner)
        var compared: [ComparedEntry] = []
        let table = ResultPrinter(workloads: selected, comparing: baseline != nil)
        if !options.json { print(table.header) }
        let start = DispatchTime.now().uptimeNanoseconds
        for (index, workload) in selected.enumerated() {
            let directory = scratch.appendingPathComponent(workload.name.replacingOccurrences(of: "/", with: "-"))
            var context = BenchContext(scale: options.scale, directory: directory)
            context.reporter = .item(index + 1, of: selected.count, name: workload.name, start: start)
            context.progress("starting")
            let results: [Measurement]
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                results = try workload.run(context)
            } catch {
                ProgressReporter.clear()
                printError("storage-bench: \(workload.name) failed: \(error)")
                report.failures.append(RunReport.Failure(workload: workload.name, error: "\(error)"))
                try? FileManager.default.removeItem(at: directory)
                continue
            }
            try? FileManager.default.removeItem(at: directory)
            ProgressReporter.clear()
            for (row, measurement) in results.enumerated() {
                report.measurements.append(
                    RunReport.Entry(
                        workload: workload.name, label: measurement.label, value: measurement.value,
                        unit: measurement.unit, better: measurement.better))
                let entry = baseline?.compare(measurement, workload: workload.name)
                if let entry { compared.append(entry) }
                if !options.json {
                    print(table.row(measurement, workload: row == 0 ? workload.name : "", compared: entry))
                }
            }
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9

        if let baseline {
            var summary = ComparisonSummary(
                file: baseline.path, earlierDate: baseline.report.banner.date,
                earlierBuild: baseline.report.banner.build,
                earlierScale: baseline.report.scale)
            summary.entries = compared
            summary.missing = baseline.missing(from: report.measurements, workloads: Set(selected.map(\.name)))
            report.comparison = summary
        }
        if options.json {
            do {
                print(String(decoding: try RunReport.encoder().encode(report), as: UTF8.self))
            } catch {
                throw CommandLineError.failure("cannot encode the results as JSON: \(error)")
            }
        } else {
            print("")
            if let summary = report.comparison { print(Baseline.summaryLines(summary).joined(separator: "\n")) }
            let failures = report.failures.isEmpty ? "" : "; \(report.failures.count) failed (see stderr)"
            print(
                "\(selected.count - report.failures.count) of \(selected.count) \(plural) ran in \(formatted(seconds)) s\(failures)"
            )
        }
        return report.failures.isEmpty ? ExitStatus.success : ExitStatus.failure
    }
}

/// The results table: a row per measurement, the workload named on its first row.
struct ResultPrinter {
    let table: TextTable
    let comparing: Bool

    init(workloads: [Workload], comparing: Bool) {
        self.comparing = comparing
        var columns = [
            TextTable.Column("workload", width: workloads.map(\.name.count).max() ?? 0),
            TextTable.Column("measurement", width: 48),
            TextTable.Column("value", width: 13, .right),
            TextTable.Column("unit", width: 11),
        ]
        if comparing {
            columns += [
                TextTable.Column("before", width: 13, .right), TextTable.Column("change", width: 7, .right),
                TextTable.Column("verdict", width: 7),
            ]
        }
        table = TextTable(columns: columns)
    }

    var header: String { table.header }

    func row(_ measurement: Measurement, workload: String, compared: ComparedEntry?) -> String {
        var cells = [
            workload, measurement.label, formatted(measurement.value),
            measurement.unit + " " + measurement.better.arrow,
        ]
        if let compared {
            cells.append(compared.before.map(formatted) ?? "—")
            cells.append(compared.change.map { String(format: "%.2f×", $0) } ?? "—")
            cells.append(compared.verdict == .notJudged ? "—" : compared.verdict.rawValue)
        }
        return table.row(cells)
    }
}
