// Scratch directories for tests. A full `swift test` makes thousands of stores; fixtures
// that hand a directory to a test without removing it left them all in the temporary
// directory (22,000 in a day of runs). Every scratch directory now lies under one root per
// test process, removed when the process exits; the roots of processes that died without
// exiting (a crash, a kill, a debugger stop) are removed by the next process that asks.
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Fresh directories for a test's files, removed with the test process.
public enum TestScratch {
    /// Where every process's root lies: `<temporary directory>/opencoredata-tests`.
    public static let parent = FileManager.default.temporaryDirectory.appendingPathComponent(
        "opencoredata-tests", isDirectory: true)

    /// This process's root, `parent/<pid>`: made, its dead siblings removed and its own
    /// removal at exit registered on first use.
    public static let root: URL = {
        let root = parent.appendingPathComponent(String(getpid()), isDirectory: true)
        removeRootsOfDeadProcesses()
        try? FileManager.default.removeItem(at: root)  // a dead process's, whose pid this one reuses
        try? FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: TestScratch.root) }
        return root
    }()

    /// A new empty directory `root/<prefix>-<UUID>`.
    public static func directory(_ prefix: String) throws -> URL {
        let directory = root.appendingPathComponent("\(prefix)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// Whether a process `pid` exists (signal 0 checks without sending anything; EPERM
    /// means it exists under another user).
    public static func isAlive(_ pid: pid_t) -> Bool { kill(pid, 0) == 0 || errno == EPERM }

    /// Removes every root under `parent` whose process no longer exists.
    public static func removeRootsOfDeadProcesses() {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: parent.path)) ?? []
        for name in names {
            guard let pid = pid_t(name), pid != getpid(), !isAlive(pid) else { continue }
            try? FileManager.default.removeItem(at: parent.appendingPathComponent(name))
        }
    }
}
