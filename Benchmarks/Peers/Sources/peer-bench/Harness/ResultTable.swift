// One table per group: a row per measurement, a column per side, then ratio columns.
// Every ratio reads the same way: above 1.00× the first-named side is better (faster,
// more per second, or smaller on disk); below 1.00× it is worse.
import Foundation

struct ResultTable {
    let title: String
    /// Column order of the sides, e.g. ["ours", "SQLite", "GRDB"].
    let sides: [String]
    /// Each (better-if-above-1, baseline) pair becomes a ratio column "A vs B".
    let comparisons: [(String, String)]

    private var rowKeys: [String] = []
    private var cells: [String: [String: Measurement]] = [:]

    init(title: String, sides: [String], comparisons: [(String, String)]) {
        self.title = title
        self.sides = sides
        self.comparisons = comparisons
    }

    /// Records what `side` measured for `workload`.
    mutating func record(_ measurements: [Measurement], workload: String, side: String) {
        for measurement in measurements {
            let key = "\(workload)  \(measurement.label)"
            if cells[key] == nil {
                rowKeys.append(key)
                cells[key] = [:]
            }
            cells[key]?[side] = measurement
        }
    }

    var isEmpty: Bool { rowKeys.isEmpty }

    /// The table as aligned text, with a legend for the ratio direction.
    func render() -> String {
        let header = ["workload"] + sides + comparisons.map { "\($0.0) vs \($0.1)" }
        var rows: [[String]] = [header]
        for key in rowKeys {
            let byside = cells[key] ?? [:]
            var row = [key]
            for side in sides { row.append(byside[side]?.formatted ?? "—") }
            for (better, baseline) in comparisons {
                if let left = byside[better], let right = byside[baseline] {
                    let ratio = left.advantage(over: right)
                    row.append(ratio.isNaN ? "—" : String(format: "%.2f×", ratio))
                } else {
                    row.append("—")
                }
            }
            rows.append(row)
        }
        let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        var lines = ["## \(title)", ""]
        for (number, row) in rows.enumerated() {
            let padded = row.enumerated().map { column, text in
                let padding = String(repeating: " ", count: widths[column] - text.count)
                return column == 0 ? text + padding : padding + text
            }
            lines.append("| " + padded.joined(separator: " | ") + " |")
            if number == 0 {
                lines.append(
                    "|"
                        + widths.enumerated().map { column, width in
                            column == 0
                                ? String(repeating: "-", count: width + 2)
                                : String(repeating: "-", count: width + 1) + ":"
                        }.joined(separator: "|") + "|")
            }
        }
        lines.append("")
        lines.append("Ratios: \"A vs B\" above 1.00× means A is better (faster, higher throughput, or smaller).")
        return lines.joined(separator: "\n")
    }
}
