// A file system in memory for crash and fault testing. Each file has a durable image
// (what survives power loss) and a volatile one (what reads see); writes go to the
// volatile image and a list of pending writes that only a sync moves to the durable
// image. Directory entries likewise have a durable and a volatile table. The simulation
// counts operations, can "crash" after the k-th (every later call throws
// `SimulatedFileSystem.Crash`), build the post-crash file system under a crash model,
// and inject faults (fail the k-th operation once or from k on).

#if canImport(Glibc)
    import Glibc
#endif

/// An in-memory file system with crash simulation and fault injection.
///
/// ```swift
/// let files = SimulatedFileSystem()
/// files.crashAfter(operations: 40)
/// // ... run a workload until it throws SimulatedFileSystem.Crash ...
/// var random = SeededRandom(seed: 1)
/// let afterCrash = files.afterCrash(model: .keepRandomSubset, random: &random)
/// let database = try Database.open(at: "db", options: .init(fileSystem: afterCrash))
/// ```
public final class SimulatedFileSystem: StorageFileSystem, @unchecked Sendable {
    /// The kinds of counted operation.
    public enum Operation: String, Sendable, CaseIterable {
        case read, write, sync, truncate, rename, remove, directorySync
    }

    /// What a failing operation does.
    public enum Fault: String, Sendable, CaseIterable {
        /// Fails with an I/O error (EIO).
        case ioError
        /// Fails with "no space left on device" (writes only; other operations fail with EIO).
        case noSpace
        /// A write stores only its first half, then fails (other operations fail with EIO).
        case shortWrite
    }

    /// Which unsynced writes survive a crash.
    public enum CrashModel: String, Sendable, CaseIterable {
        /// Every write since the last sync is lost.
        case dropUnsynced
        /// Each unsynced write independently survives or not.
        case keepRandomSubset
        /// All unsynced writes survive except the last, which survives only in part.
        case tearLastWrite
        /// Unsynced writes are lost, and the region by which unsynced writes extended a
        /// file reads back as garbage.
        case garbageInExtension
    }

    /// Thrown by every operation once the simulated crash point has passed.
    public struct Crash: Error, CustomStringConvertible {
        /// A description for test logs.
        public var description: String { "simulated crash" }
    }

    final class Inode {
        var durable: [UInt8] = []
        var current: [UInt8] = []
        var pending: [PendingWrite] = []
    }

    enum PendingWrite {
        case write(offset: Int, bytes: [UInt8])
        case truncate(size: Int)
    }

    struct FaultPlan {
        var operation: Operation?
        var index: Int
        var persistent: Bool
        var fault: Fault
    }

    struct State {
        var directory: [String: Inode] = [:]
        var durableDirectory: [String: Inode] = [:]
        var operationCount = 0
        var countsByKind: [Operation: Int] = [:]
        var syncLatency: UInt32 = 0
        var crashPoint: Int?
        var crashed = false
        var faultPlan: FaultPlan?
        var matchingCount = 0
        var locks: [String: [UInt64: (exclusive: Bool, holders: Set<ObjectIdentifier>)]] = [:]
        var isReadOnly = false
    }

    let lock = Lock()
    private var storage = State()

    /// Runs `body` with the state locked.
    func withState<R>(_ body: (inout State) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&storage)
    }

    /// An empty file system.
    public init() {}

    /// How many counted operations have run.
    public var operationCount: Int { withState { $0.operationCount } }

    /// Microseconds every sync takes (slept before it applies, while other threads may
    /// write), to model a disk's sync latency.
    public var syncLatency: UInt32 {
        get { withState { $0.syncLatency } }
        set { withState { $0.syncLatency = newValue } }
    }

    /// How many operations of `kind` have run.
    public func count(of kind: Operation) -> Int { withState { $0.countsByKind[kind] ?? 0 } }

    /// Whether the crash point has been reached.
    public var hasCrashed: Bool { withState { $0.crashed } }

    /// Whether the medium is read-only (a read-only mount): opening a file for writing,
    /// creating, writing, truncating, renaming and removing then fail with a `readOnly`
    /// ``StorageError``, as `EROFS` does; reads, syncs and locks still work.
    public var isReadOnly: Bool {
        get { withState { $0.isReadOnly } }
        set { withState { $0.isReadOnly = newValue } }
    }

    static func readOnlyMediumError(_ what: String) -> StorageError {
        StorageError(.readOnly, "\(what): simulated read-only file system (EROFS)")
    }

    /// After `operations` more counted operations succeed, every operation throws ``Crash``.
    public func crashAfter(operations: Int) {
        withState { $0.crashPoint = $0.operationCount + operations }
    }

    /// Makes the `index`-th (0-based, from now) operation of kind `operation` (any kind
    /// when nil) fail with `fault` — only that one when `persistent` is false, or it and
    /// every later matching one when true.
    public func injectFault(_ fault: Fault, at index: Int, of operation: Operation? = nil, persistent: Bool) {
        withState {
            $0.faultPlan = FaultPlan(operation: operation, index: index, persistent: persistent, fault: fault)
            $0.matchingCount = 0
        }
    }

    /// Removes any injected fault.
    public func clearFaults() {
        withState { $0.faultPlan = nil }
    }

    /// A new file system holding what would be on disk after a power loss now, under
    /// `model`. This one is unchanged.
    public func afterCrash(model: CrashModel, random: inout some RandomNumberGenerator) -> SimulatedFileSystem {
        withState { state in
            Self.copying(state.durableDirectory) { Self.crashImage(of: $0, model: model, random: &random) }
        }
    }

    /// A copy with every file's volatile image made durable (the state a clean process
    /// exit followed by an orderly shutdown leaves).
    public func snapshotOfCurrentState() -> SimulatedFileSystem {
        withState { state in Self.copying(state.directory) { $0.current } }
    }

    /// A new file system with the files of `directory` (names of one file stay one file),
    /// each holding `image` of the original, durably and currently.
    private static func copying(_ directory: [String: Inode], image: (Inode) -> [UInt8]) -> SimulatedFileSystem {
        var copies: [ObjectIdentifier: Inode] = [:]
        var newDirectory: [String: Inode] = [:]
        for (name, inode) in directory {
            if let existing = copies[ObjectIdentifier(inode)] {
                newDirectory[name] = existing
                continue
            }
            let copy = Inode()
            copy.durable = image(inode)
            copy.current = copy.durable
            copies[ObjectIdentifier(inode)] = copy
            newDirectory[name] = copy
        }
        let result = SimulatedFileSystem()
        result.withState {
            $0.directory = newDirectory
            $0.durableDirectory = newDirectory
        }
        return result
    }

    /// The durable bytes of the file at `path`, if it exists durably.
    public func durableContents(ofPath path: String) -> [UInt8]? {
        withState { $0.durableDirectory[path]?.durable }
    }

    /// Replaces the file at `path` (durably) with `bytes`: for hostile-file tests.
    public func setContents(_ bytes: [UInt8], ofPath path: String) {
        withState {
            let inode = $0.directory[path] ?? Inode()
            inode.durable = bytes
            inode.current = bytes
            inode.pending = []
            $0.directory[path] = inode
            $0.durableDirectory[path] = inode
        }
    }

    /// The current (volatile) bytes of the file at `path`.
    public func contents(ofPath path: String) -> [UInt8]? {
        withState { $0.directory[path]?.current }
    }

    private static func crashImage(
        of inode: Inode, model: CrashModel, random: inout some RandomNumberGenerator
    ) -> [UInt8] {
        var image = inode.durable
        switch model {
        case .dropUnsynced:
            break
        case .keepRandomSubset:
            for write in inode.pending where Bool.random(using: &random) { apply(write, to: &image) }
        case .tearLastWrite:
            for (position, write) in inode.pending.enumerated() {
                if position == inode.pending.count - 1, case .write(let offset, let bytes) = write, !bytes.isEmpty {
                    let kept = Int.random(in: 0..<bytes.count, using: &random)
                    apply(.write(offset: offset, bytes: Array(bytes[0..<kept])), to: &image)
                } else {
                    apply(write, to: &image)
                }
            }
        case .garbageInExtension:
            if inode.current.count > image.count {
                for _ in image.count..<inode.current.count { image.append(UInt8.random(in: 0...255, using: &random)) }
            }
        }
        return image
    }

    static func apply(_ write: PendingWrite, to image: inout [UInt8]) {
        switch write {
        case .write(let offset, let bytes):
            if image.count < offset + bytes.count {
                image.reserveCapacity(max(offset + bytes.count, image.count * 2))
                image += [UInt8](repeating: 0, count: offset + bytes.count - image.count)
            }
            image.withUnsafeMutableBytes { destination in
                bytes.withUnsafeBytes { source in
                    guard let base = source.baseAddress, let target = destination.baseAddress else { return }
                    (target + offset).copyMemory(from: base, byteCount: source.count)
                }
            }
        case .truncate(let size):
            if size < image.count {
                image.removeSubrange(size...)
            } else {
                image += [UInt8](repeating: 0, count: size - image.count)
            }
        }
    }

    /// Counts an operation; throws the crash or an injected fault. Returns the fault for
    /// writes, which handle `shortWrite` themselves.
    func begin(_ operation: Operation, in state: inout State) throws -> Fault? {
        if state.crashed { throw Crash() }
        if let point = state.crashPoint, state.operationCount >= point {
            state.crashed = true
            throw Crash()
        }
        state.operationCount += 1
        state.countsByKind[operation, default: 0] += 1
        guard var plan = state.faultPlan, plan.operation == nil || plan.operation == operation else { return nil }
        let index = state.matchingCount
        state.matchingCount += 1
        guard index == plan.index || (plan.persistent && index > plan.index) else { return nil }
        if !plan.persistent { plan.index = -1 }
        state.faultPlan = plan
        return plan.fault
    }

    static func error(for fault: Fault, _ operation: Operation) -> StorageError {
        if fault == .noSpace && operation == .write {
            return StorageError(.noSpace, "simulated \(operation): no space")
        }
        return StorageError(.io, "simulated \(operation) failure (EIO)")
    }

    /// Opens (or creates) the file at `path`.
    /// - Throws: ``StorageError`` `io` (or `noSpace`) when the file cannot be opened; a
    ///   crashed file system throws until it is replaced.
    public func openFile(atPath path: String, create: Bool) throws -> any StorageFile {
        try withState { state in
            if state.crashed { throw Crash() }
            if state.isReadOnly { throw Self.readOnlyMediumError("open \(path) for writing") }
            if let inode = state.directory[path] { return SimulatedFile(system: self, inode: inode, path: path) }
            guard create else { throw StorageError(.io, "open \(path): no such file") }
            let inode = Inode()
            state.directory[path] = inode
            return SimulatedFile(system: self, inode: inode, path: path)
        }
    }

    /// Opens the existing file at `path` for reading only.
    /// - Throws: ``StorageError`` `io` when there is no such file; a crashed file system
    ///   throws until it is replaced.
    public func openFileReadOnly(atPath path: String) throws -> any StorageFile {
        try withState { state in
            if state.crashed { throw Crash() }
            guard let inode = state.directory[path] else { throw StorageError(.io, "open \(path): no such file") }
            return SimulatedFile(system: self, inode: inode, path: path, isWritable: false)
        }
    }

    /// Whether a file exists at `path`.
    public func fileExists(atPath path: String) -> Bool {
        withState { $0.directory[path] != nil }
    }

    /// Whether no file is at `path`: the simulation's namespace is flat, so every path
    /// that names no file is taken for an existing directory.
    public func directoryExists(atPath path: String) -> Bool {
        withState { $0.directory[path] == nil }
    }

    /// Removes the file at `path`, if any.
    /// - Throws: ``StorageError`` `io` when the file exists and cannot be removed, or an injected fault.
    public func removeFile(atPath path: String) throws {
        try withState { state in
            if let fault = try begin(.remove, in: &state) { throw Self.error(for: fault, .remove) }
            if state.isReadOnly { throw Self.readOnlyMediumError("unlink \(path)") }
            state.directory[path] = nil
        }
    }

    /// Renames `source` over `destination`.
    /// - Throws: ``StorageError`` `io` when the rename fails, or an injected fault.
    public func renameFile(atPath source: String, toPath destination: String) throws {
        try withState { state in
            if let fault = try begin(.rename, in: &state) { throw Self.error(for: fault, .rename) }
            if state.isReadOnly { throw Self.readOnlyMediumError("rename \(source)") }
            guard let inode = state.directory[source] else { throw StorageError(.io, "rename \(source): no such file") }
            state.directory[destination] = inode
            state.directory[source] = nil
        }
    }

    /// Makes the directory entries durable.
    /// - Throws: ``StorageError`` `io` when the directory cannot be opened or synced, or an injected fault.
    public func synchronizeDirectory(atPath path: String) throws {
        try withState { state in
            if let fault = try begin(.directorySync, in: &state) { throw Self.error(for: fault, .directorySync) }
            state.durableDirectory = state.directory
        }
    }
}

/// An open simulated file.
final class SimulatedFile: StorageFile, @unchecked Sendable {
    let system: SimulatedFileSystem
    let inode: SimulatedFileSystem.Inode
    let path: String
    /// False for a file opened read-only: writes and truncations fail (EBADF).
    let isWritable: Bool

    init(system: SimulatedFileSystem, inode: SimulatedFileSystem.Inode, path: String, isWritable: Bool = true) {
        self.system = system
        self.inode = inode
        self.path = path
        self.isWritable = isWritable
    }

    /// Throws when this file or the medium refuses writes.
    private func checkWritable(_ state: SimulatedFileSystem.State) throws {
        guard isWritable else { throw StorageError(.io, "write \(path): opened read-only (EBADF)") }
        if state.isReadOnly { throw SimulatedFileSystem.readOnlyMediumError("write \(path)") }
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
        try system.withState { state in
            if let fault = try system.begin(.read, in: &state) { throw SimulatedFileSystem.error(for: fault, .read) }
            let start = Int(clamping: offset)
            guard start < inode.current.count else { return 0 }
            let count = min(buffer.count, inode.current.count - start)
            inode.current.withUnsafeBytes { source in
                guard let target = buffer.baseAddress, let base = source.baseAddress else { return }
                target.copyMemory(from: base + start, byteCount: count)
            }
            return count
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
        try system.withState { state in
            var data = [UInt8](unsafeUninitializedCapacity: bytes.count) { buffer, count in
                if let base = bytes.baseAddress, let target = buffer.baseAddress {
                    target.initialize(from: base.assumingMemoryBound(to: UInt8.self), count: bytes.count)
                }
                count = bytes.count
            }
            let fault = try system.begin(.write, in: &state)
            try checkWritable(state)
            if let fault {
                guard fault == .shortWrite else { throw SimulatedFileSystem.error(for: fault, .write) }
                data = Array(data.prefix(data.count / 2))
            }
            let write = SimulatedFileSystem.PendingWrite.write(offset: Int(offset), bytes: data)
            SimulatedFileSystem.apply(write, to: &inode.current)
            inode.pending.append(write)
            if fault != nil { throw StorageError(.io, "simulated short write then EIO") }
        }
    }

    func size() throws -> UInt64 {
        try system.withState { state in
            if state.crashed { throw SimulatedFileSystem.Crash() }
            return UInt64(inode.current.count)
        }
    }

    func truncate(to size: UInt64) throws {
        try system.withState { state in
            if let fault = try system.begin(.truncate, in: &state) {
                throw SimulatedFileSystem.error(for: fault, .truncate)
            }
            try checkWritable(state)
            let write = SimulatedFileSystem.PendingWrite.truncate(size: Int(size))
            SimulatedFileSystem.apply(write, to: &inode.current)
            inode.pending.append(write)
        }
    }

    func synchronize(_ kind: SyncKind) throws {
        let latency = system.withState { $0.syncLatency }
        if latency > 0 { usleep(latency) }
        try system.withState { state in
            if let fault = try system.begin(.sync, in: &state) {
                // A failed fsync may have written some pages and dropped the rest (A3):
                // the pending writes stay unsynced and are forgotten by the next crash.
                throw SimulatedFileSystem.error(for: fault, .sync)
            }
            inode.durable = inode.current
            inode.pending = []
        }
    }

    func tryLock(byte: UInt64, exclusive: Bool) throws -> Bool {
        try system.withState { state in
            if state.crashed { throw SimulatedFileSystem.Crash() }
            // As with fcntl: an exclusive (write) lock needs a file open for writing.
            if exclusive && !isWritable { throw StorageError(.io, "lock \(path): opened read-only (EBADF)") }
            let me = ObjectIdentifier(self)
            var table = state.locks[path] ?? [:]
            if var entry = table[byte] {
                let others = entry.holders.subtracting([me])
                if !others.isEmpty && (exclusive || entry.exclusive) { return false }
                entry.holders.insert(me)
                entry.exclusive = exclusive
                table[byte] = entry
            } else {
                table[byte] = (exclusive, [me])
            }
            state.locks[path] = table
            return true
        }
    }

    func unlock(byte: UInt64) {
        system.withState { state in
            let me = ObjectIdentifier(self)
            guard var entry = state.locks[path]?[byte] else { return }
            entry.holders.remove(me)
            state.locks[path]?[byte] = entry.holders.isEmpty ? nil : entry
        }
    }

    func close() {
        system.withState { state in
            let me = ObjectIdentifier(self)
            guard var table = state.locks[path] else { return }
            for (byte, var entry) in table {
                entry.holders.remove(me)
                table[byte] = entry.holders.isEmpty ? nil : entry
            }
            state.locks[path] = table
        }
    }
}
