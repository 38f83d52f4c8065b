// What every report starts with, so its numbers are read in context: the date, the
// build configuration (a debug build's numbers mean nothing, and it says so loudly),
// the machine (CPU, cores, memory), the system and how busy it was (load average).
import Foundation

/// The run's context, printed above the tables and stored in `--json` output.
struct Banner: Codable, Sendable {
    /// ISO 8601, UTC.
    var date: String
    /// "release" or "debug".
    var build: String
    var cpu: String
    var architecture: String
    var cores: Int
    var memoryBytes: UInt64
    var operatingSystem: String
    var kernel: String
    /// The 1, 5 and 15 minute load averages when the run started.
    var loadAverage: [Double]
    /// The command line after the executable's name.
    var arguments: [String]

    static var isDebugBuild: Bool {
        #if DEBUG
            true
        #else
            false
        #endif
    }

    /// The loud line a debug build prints, on stdout with the banner and on stderr.
    static let debugWarning =
        "WARNING: this is a DEBUG build: its numbers are many times slower and mean nothing. "
        + "Run `swift run -c release storage-bench` (or .build/release/storage-bench)."

    /// This machine, now.
    static func current(arguments: [String]) -> Banner {
        var names = utsname()
        uname(&names)
        func field<T>(_ value: T) -> String {
            withUnsafeBytes(of: value) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        }
        var load = [0.0, 0.0, 0.0]
        let loaded = getloadavg(&load, 3)
        return Banner(
            date: ISO8601DateFormatter().string(from: Date()), build: isDebugBuild ? "debug" : "release",
            cpu: cpuModel(), architecture: field(names.machine), cores: ProcessInfo.processInfo.activeProcessorCount,
            memoryBytes: ProcessInfo.processInfo.physicalMemory, operatingSystem: operatingSystemName(),
            kernel: "\(field(names.sysname)) \(field(names.release))",
            loadAverage: loaded == 3 ? load.map { ($0 * 100).rounded() / 100 } : [], arguments: arguments)
    }

    private static func cpuModel() -> String {
        guard let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return "unknown CPU" }
        for key in ["model name", "Hardware", "Processor", "cpu model"] {
            if let line = info.split(separator: "\n").first(where: { $0.hasPrefix(key) }),
                let value = line.split(separator: ":", maxSplits: 1).last
            {
                return value.trimmingCharacters(in: .whitespaces)
            }
        }
        return "unknown CPU"
    }

    private static func operatingSystemName() -> String {
        guard let release = try? String(contentsOfFile: "/etc/os-release", encoding: .utf8),
            let line = release.split(separator: "\n").first(where: { $0.hasPrefix("PRETTY_NAME=") })
        else { return ProcessInfo.processInfo.operatingSystemVersionString }
        return line.dropFirst("PRETTY_NAME=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
    }

    /// The banner as text lines, `run` describing what follows.
    func lines(run: String) -> [String] {
        let gibibytes = String(format: "%.1f", Double(memoryBytes) / Double(1 << 30))
        let load =
            loadAverage.isEmpty ? "unknown" : loadAverage.map { String(format: "%.2f", $0) }.joined(separator: " ")
        var lines = [
            "storage-bench  \(date)  \(build) build",
            "machine  \(cpu) (\(architecture)), \(cores) cores, \(gibibytes) GiB memory",
            "system   \(operatingSystem), \(kernel), load average \(load)",
            "run      \(run)",
        ]
        if build == "debug" { lines.insert(Self.debugWarning, at: 1) }
        return lines
    }

    /// Prints the banner on stdout and, in a debug build, the warning on stderr as well
    /// (where it is seen even when stdout goes to a file).
    func print(run: String, toStandardOutput: Bool) {
        if toStandardOutput { Swift.print(lines(run: run).joined(separator: "\n") + "\n") }
        if Self.isDebugBuild { printError(Self.debugWarning) }
    }
}

/// Writes `message` and a newline on stderr.
func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}
