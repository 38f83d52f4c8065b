// What a workload gets from the runner: its scale, fresh paths in a scratch
// directory, and stores that earlier workloads already built (so the 1,000,000-row
// store is loaded once per side, by the bulk-insert workload, and reused).
import Foundation

final class BenchContext {
    /// 1.0 is the documented size (1,000,000 rows, 100,000 objects); smoke runs use less.
    let scale: Double
    private let root: URL
    private var counter = 0
    /// Built stores by key ("engine/SQLite"), each the path of a closed store.
    private var fixtures: [String: String] = [:]

    init(scale: Double, root: URL) {
        self.scale = scale
        self.root = root
    }

    /// `count` scaled, at least `minimum`.
    func scaled(_ count: Int, minimum: Int = 1) -> Int {
        max(minimum, Int((Double(count) * scale).rounded()))
    }

    /// A path for a new store file in its own new directory (a store's side files,
    /// such as SQLite's -wal and -shm, land beside it).
    func freshPath(_ name: String) throws -> String {
        counter += 1
        let directory = root.appendingPathComponent("\(counter)-\(name.replacingOccurrences(of: "/", with: "-"))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent("store").path
    }

    /// The store built under `key`, building it with `build` (given a fresh path) the
    /// first time it is asked for.
    func fixture(_ key: String, build: (String) throws -> Void) throws -> String {
        if let path = fixtures[key] { return path }
        let path = try freshPath(key)
        try build(path)
        fixtures[key] = path
        return path
    }

    /// Records a store a measured workload built, so later workloads reuse it.
    func registerFixture(_ key: String, path: String) { fixtures[key] = path }

    /// Copies the files of a closed store to a fresh path and returns it, for
    /// workloads that change the store they start from.
    func copyOfFixture(_ source: String, files: (String) -> [String], name: String) throws -> String {
        let destination = try freshPath(name)
        for (from, to) in zip(files(source), files(destination))
        where FileManager.default.fileExists(atPath: from) {
            try FileManager.default.copyItem(atPath: from, toPath: to)
        }
        return destination
    }

    /// Overwrites the terminal's progress line, so long runs show life; nothing when
    /// stderr is not a terminal (CI logs, files).
    func progress(_ text: String) {
        guard isatty(STDERR_FILENO) != 0 else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K\(text)".utf8))
    }
}
