// `storage-bench --json`: the run as one JSON document on stdout — the banner, every
// measurement (workload, label, value, unit, which way is better) and every failure —
// which `--compare FILE` reads back. Non-finite values are the strings "inf", "-inf",
// "nan" (JSON has no numbers for them).
//
//   {"tool": "storage-bench", "formatVersion": 1, "scale": 1, "banner": {...},
//    "measurements": [{"workload": "store/default", "label": "fetch by object ID",
//                      "value": 349000, "unit": "objects/s", "better": "higher"}, ...],
//    "failures": [{"workload": "...", "error": "..."}],
//    "comparison": {...}}        (only with --compare)
import Foundation

/// One run of workloads, as `--json` prints it.
struct RunReport: Codable, Sendable {
    struct Entry: Codable, Sendable {
        let workload: String
        let label: String
        let value: Double
        let unit: String
        let better: Better
    }

    struct Failure: Codable, Sendable {
        let workload: String
        let error: String
    }

    var tool = "storage-bench"
    var formatVersion = 1
    var scale: Double
    var banner: Banner
    var measurements: [Entry] = []
    var failures: [Failure] = []
    /// Ratios against an earlier run, when `--compare` named one.
    var comparison: ComparisonSummary?

    init(scale: Double, banner: Banner) {
        self.scale = scale
        self.banner = banner
    }

    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return encoder
    }

    /// The report written by an earlier `--json` run at `path`.
    static func load(path: String) throws(CommandLineError) -> RunReport {
        guard FileManager.default.fileExists(atPath: path) else {
            throw CommandLineError.usage("--compare: \(path): no such file")
        }
        do {
            let decoder = JSONDecoder()
            decoder.nonConformingFloatDecodingStrategy = .convertFromString(
                positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
            let report = try decoder.decode(RunReport.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
            guard report.tool == "storage-bench", report.formatVersion == 1 else {
                throw CommandLineError.usage("--compare: \(path) is not storage-bench --json output (format 1)")
            }
            return report
        } catch let error as CommandLineError {
            throw error
        } catch {
            throw CommandLineError.usage(
                "--compare: \(path) is not storage-bench --json output: \(error.localizedDescription)")
        }
    }
}
