// The soak's child processes, seen from the soak: each runs `storage-bench soak-child`
// (SoakChild.swift) and its stdout lines feed the ledger. One of them is killed with
// SIGKILL at random moments and started again; its save in flight then is settled by
// the counter its next instance finds in the store.
import Foundation
import Synchronization

final class SoakChildProcess: @unchecked Sendable {
    let name: String
    let number: Int64
    let policy: SoakPolicy
    /// Whether the soak kills this one at random moments.
    let killable: Bool
    private let ledger: SoakLedger
    private let lock = NSLock()
    private var process: Process?
    private var readerDone: DispatchSemaphore?
    private var killedByUs = false
    /// Statistics of finished instances, summed.
    private var finished = WriterStatistics()
    /// The running instance's latest statistics.
    private var current = WriterStatistics()
    private var memory: (resident: UInt64, registered: Int) = (0, 0)
    private var killCount = 0
    private var startCount = 0

    init(name: String, number: Int64, policy: SoakPolicy, killable: Bool, ledger: SoakLedger) {
        self.name = name
        self.number = number
        self.policy = policy
        self.killable = killable
        self.ledger = ledger
    }

    /// Starts an instance with `arguments` (the soak-child command line).
    func start(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        let done = DispatchSemaphore(value: 0)
        try process.run()
        lock.withLock {
            self.process = process
            readerDone = done
            killedByUs = false
            startCount += 1
        }
        let handle = output.fileHandleForReading
        Thread {
            var buffer = Data()
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                buffer.append(data)
                while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    self.handle(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
                    buffer.removeSubrange(buffer.startIndex...newline)
                }
            }
            done.signal()
        }.start()
    }

    private func handle(_ line: String) {
        let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { return }
        switch parts[0] {
        case "resume":
            if let counter = Int64(parts[1]) { ledger.resume(name, storeCounter: counter) }
        case "intent":
            if let effects = try? JSONDecoder().decode(SoakEffects.self, from: Data(parts[1].utf8)) {
                ledger.begin(name, effects)
            }
        case "ack":
            if let effects = try? JSONDecoder().decode(SoakEffects.self, from: Data(parts[1].utf8)) {
                ledger.acknowledgePending(name, effects)
            }
        case "memory":
            let numbers = parts[1].split(separator: " ").compactMap { UInt64($0) }
            if numbers.count == 2 { lock.withLock { memory = (numbers[0], Int(numbers[1])) } }
        case "statistics":
            if let statistics = try? JSONDecoder().decode(WriterStatistics.self, from: Data(parts[1].utf8)) {
                lock.withLock { current = statistics }
            }
        default:
            ledger.record(SoakViolation(kind: .process, message: "\(name) printed an unknown line: \(line)"))
        }
    }

    /// Kills the running instance with SIGKILL and waits until its output is read.
    func kill() {
        guard let (process, done) = lock.withLock({ self.process.map { ($0, readerDone) } }), process.isRunning else {
            return
        }
        lock.withLock { killedByUs = true }
        Foundation.kill(process.processIdentifier, SIGKILL)
        finish(process, done)
        lock.withLock { killCount += 1 }
    }

    /// Waits for the running instance to end (killing it after `timeout` seconds) and
    /// records an exit it was not asked for.
    func wait(timeout: Double) {
        guard let (process, done) = lock.withLock({ self.process.map { ($0, readerDone) } }) else { return }
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { usleep(50_000) }
        if process.isRunning {
            ledger.record(
                SoakViolation(kind: .process, message: "\(name) did not finish \(Int(timeout)) s after its time"))
            Foundation.kill(process.processIdentifier, SIGKILL)
        }
        finish(process, done)
    }

    private func finish(_ process: Process, _ done: DispatchSemaphore?) {
        process.waitUntilExit()
        done?.wait()
        lock.withLock {
            let killed =
                killedByUs && process.terminationReason == .uncaughtSignal
                && process.terminationStatus == SIGKILL
            if !killed && process.terminationStatus != 0 {
                ledger.record(
                    SoakViolation(
                        kind: .process,
                        message: "\(name) exited with status \(process.terminationStatus) (its stderr says why)"))
            }
            finished = finished + current
            current = WriterStatistics()
            self.process = nil
        }
    }

    /// Statistics of every instance so far.
    var statistics: WriterStatistics { lock.withLock { finished + current } }
    var residentBytes: UInt64 { lock.withLock { process == nil ? 0 : memory.resident } }
    var registeredObjects: Int { lock.withLock { process == nil ? 0 : memory.registered } }
    var isRunning: Bool { lock.withLock { process?.isRunning ?? false } }
    /// How many times the soak killed it.
    var kills: Int { lock.withLock { killCount } }
    /// How many instances were started.
    var starts: Int { lock.withLock { startCount } }
}

extension WriterStatistics {
    static func + (left: WriterStatistics, right: WriterStatistics) -> WriterStatistics {
        var sum = left
        sum.saves += right.saves
        sum.failures.merge(right.failures, uniquingKeysWith: +)
        sum.operations += right.operations
        sum.resetProbes += right.resetProbes
        sum.aliveAfterReset += right.aliveAfterReset
        sum.resets += right.resets
        sum.optimisticConflicts += right.optimisticConflicts
        sum.constraintConflicts += right.constraintConflicts
        sum.registered += right.registered
        return sum
    }
}

/// This process's resident memory, from /proc/self/statm (0 where there is none).
func residentMemoryBytes() -> UInt64 {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = UInt64(fields[1]) else { return 0 }
    return pages * UInt64(sysconf(Int32(_SC_PAGESIZE)))
}
