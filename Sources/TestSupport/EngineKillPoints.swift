// Kill points: a child process ends itself (`_exit`) just before a chosen write,
// truncation, sync, rename or removal, so a test stops a real process between any two
// steps of the multi-process protocol (SPEC.md §2.4, §2.5, §2.8) and checks what the
// handles other processes kept open see afterwards. The engine has no hook for it: every
// system call goes through `Options.fileSystem`, and the child's file system counts them.
// The child is `opencoredata-fuzz engine-kill-point-child` (Fuzz/); it prints each event
// before it happens and `ack N` once step N returned, unbuffered, so what the parent reads
// is what the child did.
import Foundation
import StorageEngine
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One system call that changes a file, as the kill-point child reports it.
public struct FileEvent: Sendable, Equatable, CustomStringConvertible {
    /// What the call does.
    public enum Kind: String, Sendable {
        case write, truncate, sync, rename, remove
    }

    /// The event's number in the child's run, from 1.
    public let number: Int
    /// What the call does.
    public let kind: Kind
    /// The file, named by what follows the database's path: `db` (the page file), `wal`,
    /// `lock`, or another suffix without its dash (`new`, `vacuum-wal`, ...).
    public let file: String
    /// The offset written at, or the size truncated to (0 otherwise).
    public let offset: UInt64
    /// The bytes written (0 otherwise).
    public let count: Int

    /// The event's line in the child's output.
    public var description: String { "event \(number) \(kind.rawValue) \(file) \(offset) \(count)" }

    /// Parses a line of the child's output; nil for other lines.
    public init?(line: Substring) {
        let fields = line.split(separator: " ")
        guard fields.count == 6, fields[0] == "event", let number = Int(fields[1]),
            let kind = Kind(rawValue: String(fields[2])), let offset = UInt64(fields[4]), let count = Int(fields[5])
        else { return nil }
        self.init(number: number, kind: kind, file: String(fields[3]), offset: offset, count: count)
    }

    init(number: Int, kind: Kind, file: String, offset: UInt64, count: Int) {
        self.number = number
        self.kind = kind
        self.file = file
        self.offset = offset
        self.count = count
    }

    /// Whether this is the change counter's write (SPEC.md §2.8: bytes 0..<8 of `-lock`,
    /// with the announced transaction in 8..<16).
    public var isAnnouncement: Bool { kind == .write && file == "lock" && offset == 0 && count >= 8 }
}

/// The real file system, counting the calls that change files: it reports each one and
/// ends the process just before call number `killBefore`.
public final class KillPointFileSystem: StorageFileSystem {
    /// The exit status of a child that reached its kill point.
    public static let killedStatus: Int32 = 86

    private let base = POSIXFileSystem()
    private let databasePath: String
    private let killBefore: Int?
    private let events = Mutex(0)

    /// A file system for the database at `databasePath` that exits before event
    /// `killBefore` (never when nil).
    public init(databasePath: String, killBefore: Int?) {
        self.databasePath = databasePath
        self.killBefore = killBefore
    }

    /// Reports an event and, at the kill point, ends the process before it happens.
    func event(_ kind: FileEvent.Kind, path: String, offset: UInt64 = 0, count: Int = 0) {
        let number = events.withLock { count -> Int in
            count += 1
            return count
        }
        let suffix = path.hasPrefix(databasePath) ? path.dropFirst(databasePath.count) : Substring(path)
        let file = suffix.isEmpty ? "db" : String(suffix.drop { $0 == "-" })
        let line = FileEvent(number: number, kind: kind, file: file, offset: offset, count: count).description
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
        if number == killBefore { _exit(Self.killedStatus) }
    }

    /// Opens the file at `path`; its changing calls are events.
    public func openFile(atPath path: String, create: Bool) throws -> any StorageFile {
        KillPointFile(base: try base.openFile(atPath: path, create: create), path: path, fileSystem: self)
    }

    /// Opens the file at `path` for reading (no events: it cannot change).
    public func openFileReadOnly(atPath path: String) throws -> any StorageFile {
        try base.openFileReadOnly(atPath: path)
    }

    /// Whether a file exists at `path`.
    public func fileExists(atPath path: String) -> Bool { base.fileExists(atPath: path) }

    /// Whether a directory exists at `path`.
    public func directoryExists(atPath path: String) -> Bool { base.directoryExists(atPath: path) }

    /// Removes the file at `path`: an event.
    public func removeFile(atPath path: String) throws {
        event(.remove, path: path)
        try base.removeFile(atPath: path)
    }

    /// Renames `source` over `destination`: an event (of `source`).
    public func renameFile(atPath source: String, toPath destination: String) throws {
        event(.rename, path: source)
        try base.renameFile(atPath: source, toPath: destination)
    }

    /// Syncs the directory (no event: it changes no file a process kill could lose).
    public func synchronizeDirectory(atPath path: String) throws {
        try base.synchronizeDirectory(atPath: path)
    }
}

/// A file whose changing calls pass through ``KillPointFileSystem/event(_:path:offset:count:)``.
final class KillPointFile: StorageFile {
    private let base: any StorageFile
    private let path: String
    private let fileSystem: KillPointFileSystem

    init(base: any StorageFile, path: String, fileSystem: KillPointFileSystem) {
        self.base = base
        self.path = path
        self.fileSystem = fileSystem
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
        try base.read(into: buffer, at: offset)
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
        fileSystem.event(.write, path: path, offset: offset, count: bytes.count)
        try base.write(bytes, at: offset)
    }

    func write(gathering pieces: UnsafeBufferPointer<UnsafeRawBufferPointer>, at offset: UInt64) throws {
        fileSystem.event(.write, path: path, offset: offset, count: pieces.reduce(0) { $0 + $1.count })
        try base.write(gathering: pieces, at: offset)
    }

    func size() throws -> UInt64 { try base.size() }

    func truncate(to size: UInt64) throws {
        fileSystem.event(.truncate, path: path, offset: size)
        try base.truncate(to: size)
    }

    func synchronize(_ kind: SyncKind) throws {
        fileSystem.event(.sync, path: path)
        try base.synchronize(kind)
    }

    func tryLock(byte: UInt64, exclusive: Bool) throws -> Bool { try base.tryLock(byte: byte, exclusive: exclusive) }

    func unlock(byte: UInt64) { base.unlock(byte: byte) }

    func close() { base.close() }
}

/// What a kill-point child did: the events it reported, the steps it acknowledged, how it
/// ended.
public struct KillPointRun: Sendable {
    /// Every file-changing call it reported, the last one not made when it was killed.
    public var events: [FileEvent] = []
    /// For each event, the steps acknowledged before it.
    public var stepOfEvent: [Int] = []
    /// The steps it acknowledged.
    public var acknowledged = 0
    /// Its exit status: ``KillPointFileSystem/killedStatus`` when it reached its kill point.
    public var status: Int32 = 0
    /// Its output besides events and acks (a failure's message).
    public var otherOutput = ""

    /// A run that reported nothing yet.
    public init() {}

    /// Runs `executable engine-kill-point-child` with `script` on the database at `path`,
    /// killed before event `killBefore` (never when nil). `afterStep(n)` runs after each
    /// ack, the child waiting meanwhile (without it the child does not wait).
    public static func run(
        executable: URL, path: String, script: KillPointScenario.Script = .shared, killBefore: Int?,
        afterStep: ((Int) throws -> Void)? = nil
    ) throws -> KillPointRun {
        // A child that died early closes its stdin: writing "go" must fail, not end the parent.
        signal(SIGPIPE, SIG_IGN)
        let process = Process()
        process.executableURL = executable
        process.arguments = ["engine-kill-point-child", "--iterations", "1", "--seed", "1"]
        var environment = ProcessInfo.processInfo.environment
        environment["OPENCOREDATA_KILL_POINT_DATABASE"] = path
        environment["OPENCOREDATA_KILL_POINT_SCRIPT"] = script.rawValue
        if let killBefore { environment["OPENCOREDATA_KILL_BEFORE"] = "\(killBefore)" }
        if afterStep != nil { environment["OPENCOREDATA_KILL_POINT_WAITS"] = "1" }
        process.environment = environment
        let output = Pipe()
        let input = Pipe()
        process.standardOutput = output
        process.standardInput = input
        try process.run()
        var run = KillPointRun()
        var pending = Data()
        var failure: Error?
        while true {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { break }
            pending.append(data)
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                pending.removeSubrange(pending.startIndex...newline)
                if let event = FileEvent(line: Substring(line)) {
                    run.events.append(event)
                    run.stepOfEvent.append(run.acknowledged)
                } else if line.hasPrefix("ack "), let step = Int(line.dropFirst(4)) {
                    run.acknowledged = step
                    if let afterStep, failure == nil {
                        do { try afterStep(step) } catch { failure = error }
                    }
                    if afterStep != nil { try? input.fileHandleForWriting.write(contentsOf: Data("go\n".utf8)) }
                } else {
                    run.otherOutput += line + "\n"
                }
            }
        }
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
        run.status = process.terminationStatus
        if let failure { throw failure }
        return run
    }
}
