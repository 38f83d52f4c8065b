// What the report says about the machine it ran on, so numbers are read with their
// context: architecture, cores, CPU, memory, SQLite's version and settings, the build,
// and what one fdatasync costs here right now (durable commits cannot beat it, and on
// a shared machine it moves with the neighbours' I/O).
import Foundation

/// The machine line every report starts with, so numbers are read with their context.
enum Machine {
    static func describe() -> String {
        var names = utsname()
        uname(&names)
        let machine = withUnsafeBytes(of: &names.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let release = withUnsafeBytes(of: &names.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let cpu =
            (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?
            .split(separator: "\n").first { $0.hasPrefix("model name") }?
            .split(separator: ":", maxSplits: 1).last?.trimmingCharacters(in: .whitespaces) ?? "unknown CPU"
        let cache =
            SQLiteSettings.cacheKibibytes > 0
            ? "\(SQLiteSettings.cacheKibibytes / 1024) MiB per connection" : "SQLite's default (2 MB) per connection"
        #if DEBUG
            let build = "debug build — numbers are not representative; use -c release"
        #else
            let build = "release build"
        #endif
        return """
            Machine: \(machine), \(ProcessInfo.processInfo.activeProcessorCount) cores (\(cpu)), \
            \(ProcessInfo.processInfo.physicalMemory >> 30) GiB, Linux \(release)
            SQLite: \(SQLiteConnection.libraryVersion) (system libsqlite3, also under GRDB), page cache \(cache); \(build)
            """
    }
}

extension Machine {
    /// The median time of `count` appends of one 4 KiB page to a file in `directory`,
    /// each followed by fdatasync: the floor under every full-durability commit.
    static func fdatasyncLatency(in directory: URL, count: Int) throws -> Double {
        let path = directory.appendingPathComponent("fdatasync-probe").path
        let descriptor = open(path, O_CREAT | O_WRONLY | O_APPEND, 0o644)
        guard descriptor >= 0 else { throw BenchError(message: "fdatasync probe: cannot open \(path)") }
        defer {
            close(descriptor)
            unlink(path)
        }
        let page = [UInt8](repeating: 0xA5, count: 4_096)
        return try medianLatency(count: count) { _ in
            let written = page.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            guard written == page.count, fdatasync(descriptor) == 0 else {
                throw BenchError(message: "fdatasync probe: write or sync failed (errno \(errno))")
            }
        }
    }
}
