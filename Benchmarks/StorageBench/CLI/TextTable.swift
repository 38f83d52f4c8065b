// Aligned text tables, printed a row at a time (a full run takes many minutes, so each
// workload's rows appear when it finishes), and the number formats every table uses:
// thousands separators, three significant digits below 100.
import Foundation

/// Columns of fixed widths; a cell longer than its column pushes the rest of its row.
struct TextTable {
    enum Alignment {
        case left
        case right
    }

    struct Column {
        let title: String
        let width: Int
        let alignment: Alignment

        init(_ title: String, width: Int, _ alignment: Alignment = .left) {
            self.title = title
            self.width = max(width, title.count)
            self.alignment = alignment
        }
    }

    let columns: [Column]

    /// The titles and a rule under them.
    var header: String {
        row(columns.map(\.title)) + "\n"
            + columns.map { String(repeating: "-", count: $0.width) }.joined(separator: "  ")
    }

    /// One row: cell `i` in column `i`, trailing blanks trimmed.
    func row(_ cells: [String]) -> String {
        var line = ""
        for (index, column) in columns.enumerated() {
            let text = index < cells.count ? cells[index] : ""
            let padding = String(repeating: " ", count: max(0, column.width - text.count))
            if index > 0 { line += "  " }
            line += column.alignment == .left ? text + padding : padding + text
        }
        while line.last == " " { line.removeLast() }
        return line
    }
}

/// `1234567` as "1,234,567".
func grouped(_ number: Int) -> String {
    let digits = String(number.magnitude)
    var result = ""
    for (offset, digit) in digits.enumerated() {
        if offset > 0, (digits.count - offset) % 3 == 0 { result.append(",") }
        result.append(digit)
    }
    return number < 0 ? "-" + result : result
}

/// A measured value for a table: whole numbers (and everything from 100 up) with
/// thousands separators, three significant digits below ("12.3", "0.541").
func formatted(_ value: Double) -> String {
    guard value.isFinite else { return value.isNaN ? "n/a" : (value > 0 ? "∞" : "-∞") }
    let magnitude = abs(value)
    if magnitude >= 1e15 { return String(format: "%.3g", value) }
    if magnitude >= 100 || value == value.rounded() { return grouped(Int(value.rounded())) }
    if magnitude >= 10 { return String(format: "%.1f", value) }
    if magnitude >= 1 { return String(format: "%.2f", value) }
    if magnitude >= 0.001 { return String(format: "%.3g", value) }
    return String(format: "%.2e", value)
}
