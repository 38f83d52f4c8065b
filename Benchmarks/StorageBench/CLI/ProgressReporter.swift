// The progress line: "[3/19 1:42] store/default: inserting 100,000 objects", rewritten
// in place on stderr. Only when stderr is a terminal: redirected to a file or a pipe,
// carriage returns and escape codes would be litter (and could split a result line).
import Foundation

/// Writes the progress line of one workload (or of the soak), or nothing.
struct ProgressReporter: Sendable {
    /// Whether stderr is a terminal, so a line can be rewritten in place.
    static let terminal = isatty(STDERR_FILENO) != 0

    /// Reports nothing.
    static let silent = ProgressReporter(prefix: "", start: 0, enabled: false)

    /// What leads every line, e.g. "[3/19] store/default".
    let prefix: String
    /// When the whole run started (`DispatchTime` nanoseconds), for the elapsed time.
    let start: UInt64
    let enabled: Bool

    /// The reporter of item `index` (from 1) of `count`, named `name`, in a run that
    /// started at `start`; silent unless stderr is a terminal.
    static func item(_ index: Int, of count: Int, name: String, start: UInt64) -> ProgressReporter {
        ProgressReporter(prefix: "\(index)/\(count) \(name)", start: start, enabled: terminal)
    }

    /// Replaces the line with `text`, after the item and the elapsed time.
    func show(_ text: String) {
        guard enabled else { return }
        let seconds = Int((DispatchTime.now().uptimeNanoseconds - start) / 1_000_000_000)
        let elapsed = String(format: "%d:%02d", seconds / 60, seconds % 60)
        FileHandle.standardError.write(Data("\r\u{1B}[K[\(elapsed)] \(prefix): \(text)".utf8))
    }

    /// Erases the line, so what is printed next starts clean.
    static func clear() {
        guard terminal else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }
}
