// Debug logging, the counterpart of Core Data's `-com.apple.CoreData.SQLDebug N`: what
// each fetch, count, save and merge did and how long it took, on standard error.
//
// The level is read once, at first use: `OPENCOREDATA_DEBUG=N` in the environment, or the
// launch arguments `-com.apple.CoreData.SQLDebug N` (Core Data's, honoured so an app's
// scheme carries over) or `-OpenCoreDataDebug N`. Off (0) by default; then every call site
// costs one load and compare, and the messages are never built.
//
//   1  each fetch and count (entity, predicate, rows returned, time), each save (rows
//      inserted, updated, deleted, time), each merge into a context, each migration
//   2  and the store's plan for each fetch and count (the index and its key ranges, or a
//      scan, and the rows it examines) and each save's commit time in the store
//   3  and the object IDs each fetch returns and each save writes
import Foundation
import Synchronization

/// Where debug log lines go and at what level (see the file comment).
public enum OpenCoreDataDebugLog {
    /// The level the process started with: from the environment or launch arguments.
    public static let launchLevel: Int = level(
        environment: ProcessInfo.processInfo.environment, arguments: CommandLine.arguments)

    private static let state = Mutex<(level: Int, sink: (@Sendable (String) -> Void)?)>((launchLevel, nil))
    /// A copy of the level for the hot-path check (a plain atomic load).
    private static let currentLevel = Atomic<Int>(launchLevel)

    /// The current level; 0 is off. Setting it (tests, a debugging session) takes effect at once.
    public static var level: Int {
        get { currentLevel.load(ordering: .relaxed) }
        set {
            state.withLock { $0.level = newValue }
            currentLevel.store(newValue, ordering: .relaxed)
        }
    }

    /// Sends log lines to `sink` instead of standard error (nil: standard error again).
    public static func redirect(to sink: (@Sendable (String) -> Void)?) {
        state.withLock { $0.sink = sink }
    }

    /// The level `environment` and `arguments` ask for: `OPENCOREDATA_DEBUG`, then
    /// `-com.apple.CoreData.SQLDebug N` or `-OpenCoreDataDebug N` (the last one given wins).
    static func level(environment: [String: String], arguments: [String]) -> Int {
        var level = environment["OPENCOREDATA_DEBUG"].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } ?? 0
        for (index, argument) in arguments.enumerated().dropLast()
        where argument == "-com.apple.CoreData.SQLDebug" || argument == "-OpenCoreDataDebug" {
            if let value = Int(arguments[index + 1]) { level = value }
        }
        return max(0, min(level, 3))
    }

    /// Whether lines of `level` are written; inline so a disabled check costs a load.
    @inline(__always) static func isOn(_ level: Int) -> Bool {
        currentLevel.load(ordering: .relaxed) >= level
    }

    /// Writes `message` when lines of `level` are on; the message is built only then.
    @inline(__always) static func log(_ level: Int, _ message: @autoclosure () -> String) {
        guard isOn(level) else { return }
        emit(message())
    }

    private static func emit(_ message: String) {
        let line = "OpenCoreData: \(message)"
        if let sink = state.withLock({ $0.sink }) {
            sink(line)
        } else {
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
    }

    /// Nanoseconds since an arbitrary point, read only when logging is on.
    @inline(__always) static func start() -> UInt64 {
        isOn(1) ? DispatchTime.now().uptimeNanoseconds : 0
    }

    /// Milliseconds since `start`, formatted `1.234 ms`.
    static func elapsed(since start: UInt64) -> String {
        let nanoseconds = DispatchTime.now().uptimeNanoseconds &- start
        return String(format: "%.3f ms", Double(nanoseconds) / 1_000_000)
    }

    /// How a request reads in a log line: `Person WHERE age > 30 ORDER BY name LIMIT 10`.
    static func describe(_ request: NSFetchRequest<NSFetchRequestResult>) -> String {
        var text = request.entityName ?? "?"
        if let predicate = request.predicate { text += " WHERE \(predicate.predicateFormat)" }
        if let sorts = request.sortDescriptors, !sorts.isEmpty {
            text +=
                " ORDER BY " + sorts.map { "\($0.key ?? "?")\($0.ascending ? "" : " DESC")" }.joined(separator: ", ")
        }
        if request.fetchLimit > 0 { text += " LIMIT \(request.fetchLimit)" }
        if request.fetchOffset > 0 { text += " OFFSET \(request.fetchOffset)" }
        return text
    }
}
