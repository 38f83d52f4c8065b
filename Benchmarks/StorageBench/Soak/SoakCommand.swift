// `storage-bench soak`: writers in this process and in child processes save to one
// default store for a time, a view context merges their saves, one child is killed and
// restarted again and again; then the ledger of acknowledged saves is checked against the
// store (SoakCheck.swift) and a report printed (SoakReport.swift). Exit status 1 on any
// violation.
//
// In this process: `--contexts` background contexts on one coordinator, their merge
// policies cycling error, store trump, object trump, overwrite, rollback (every other one
// a counting subclass, so conflicts show; the others the built-in singletons), every
// other one merging automatically, the last a parent/child chain; and a main-queue view
// context merging automatically, read on the main thread between run-loop turns.
import Foundation
import OpenCoreData
import Synchronization
import TestSupport

struct SoakOptions {
    var seconds = 30.0
    var contexts = 8
    var processes = 2
    var seed: UInt64 = SeededRandom.environmentSeed ?? UInt64(Date().timeIntervalSince1970 * 1000) % 1_000_000_000
    var directory: String?
    var keep = false
    var reportEvery = 10.0
    var durability = "full"
    /// The merge policies the contexts and processes take in turn.
    var policies = SoakPolicy.allCases

    init(_ arguments: [String]) throws(CommandLineError) {
        var index = 0
        func value(_ option: String) throws(CommandLineError) -> String {
            guard index < arguments.count else { throw CommandLineError.usage("soak: \(option) needs a value") }
            index += 1
            return arguments[index - 1]
        }
        func number(_ option: String, in range: ClosedRange<Double>) throws(CommandLineError) -> Double {
            let text = try value(option)
            guard let number = Double(text), range.contains(number) else {
                throw CommandLineError.usage(
                    "soak: \(option) takes a number from \(formatted(range.lowerBound)) to "
                        + "\(formatted(range.upperBound)), not '\(text)'")
            }
            return number
        }
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            switch argument {
            case "--seconds": seconds = try number(argument, in: 1...1_000_000)
            case "--contexts": contexts = Int(try number(argument, in: 1...64))
            case "--processes": processes = Int(try number(argument, in: 0...16))
            case "--report-every": reportEvery = try number(argument, in: 1...100_000)
            case "--seed":
                let text = try value(argument)
                guard let seed = UInt64(text) else { throw CommandLineError.usage("soak: --seed takes a whole number") }
                self.seed = seed
            case "--policies":
                let text = try value(argument)
                let names = text.split(separator: ",").map(String.init)
                policies = names.compactMap(SoakPolicy.init(rawValue:))
                guard !names.isEmpty, policies.count == names.count else {
                    throw CommandLineError.usage(
                        "soak: --policies takes a list of "
                            + SoakPolicy.allCases.map(\.rawValue).joined(separator: ",") + ", not '\(text)'")
                }
            case "--directory": directory = try value(argument)
            case "--keep": keep = true
            case "--durability":
                durability = try value(argument)
                guard ["full", "normal", "off"].contains(durability) else {
                    throw CommandLineError.usage("soak: --durability is full, normal or off")
                }
            default:
                throw CommandLineError.usage(
                    argument.hasPrefix("-") ? "soak: unknown option '\(argument)'" : "soak: unexpected '\(argument)'")
            }
        }
    }

    /// The command line that replays this run's choices.
    var replay: String {
        "storage-bench soak --seconds \(formatted(seconds)) --contexts \(contexts) --processes \(processes) "
            + "--seed \(seed)" + (durability == "full" ? "" : " --durability \(durability)")
            + (policies == SoakPolicy.allCases ? "" : " --policies " + policies.map(\.rawValue).joined(separator: ","))
    }
}

/// A thread-safe flag the writer threads poll.
final class StopFlag: Sendable {
    private let flag = Atomic(false)
    func stop() { flag.store(true, ordering: .relaxed) }
    var isStopped: Bool { flag.load(ordering: .relaxed) }
}

/// One memory sample.
struct SoakSample {
    let seconds: Double
    let resident: UInt64
    let registered: Int
    let childResident: UInt64
    let childRegistered: Int
    /// The store file and its log.
    let fileBytes: UInt64
}

enum SoakCommand {
    static func run(_ arguments: [String]) throws(CommandLineError) -> Int32 {
        let options = try SoakOptions(arguments)
        let banner = Banner.current(arguments: ["soak"] + arguments)
        banner.print(
            run: "soak for \(formatted(options.seconds)) s, \(options.contexts) contexts, "
                + "\(options.processes) processes, seed \(options.seed)", toStandardOutput: true)
        let directory = URL(
            fileURLWithPath: options.directory ?? NSTemporaryDirectory() + "storage-soak-\(getpid())")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw CommandLineError.failure("soak: cannot create \(directory.path): \(error.localizedDescription)")
        }
        let url = directory.appendingPathComponent("Soak.store")
        if FileManager.default.fileExists(atPath: url.path) {
            throw CommandLineError.failure("soak: \(url.path) exists; give an empty --directory")
        }
        let soak: Soak
        do {
            soak = try Soak(options: options, url: url)
        } catch {
            throw CommandLineError.failure("soak: cannot start: \(error)")
        }
        let report = soak.run()
        report.print()
        let keep = options.keep || !report.violations.isEmpty
        if keep {
            print("store kept: \(url.path)")
            if !report.violations.isEmpty {
                let list = directory.appendingPathComponent("violations.txt")
                let text = report.violations.map { "\($0.kind.rawValue): \($0.message)\n" }.joined()
                if (try? Data(text.utf8).write(to: list)) != nil { print("every violation: \(list.path)") }
            }
        } else {
            try? FileManager.default.removeItem(at: directory)
        }
        return report.violations.isEmpty ? ExitStatus.success : ExitStatus.failure
    }
}

/// One soak run: its writers, children, view context and samples. Its mutable state is
/// the main thread's; the threads it starts read only what is fixed before they start.
final class Soak: @unchecked Sendable {
    let options: SoakOptions
    let url: URL
    let ledger = SoakLedger()
    let coordinator: NSPersistentStoreCoordinator
    let view: NSManagedObjectContext
    private(set) var writers: [SoakWriter] = []
    private(set) var children: [SoakChildProcess] = []
    /// How long each part of the run took, in order.
    private(set) var phases: [(name: String, seconds: Double)] = []
    /// Guards what the monitor thread and the main thread share: the samples and the
    /// view context's statistics.
    private let shared = NSLock()
    private var sampleList: [SoakSample] = []
    private var viewState = (statistics: WriterStatistics(), errors: [String: Int]())

    var samples: [SoakSample] { shared.withLock { sampleList } }
    var viewStatistics: WriterStatistics { shared.withLock { viewState.statistics } }
    var viewErrors: [String: Int] { shared.withLock { viewState.errors } }
    /// Change notifications the view context posted: its automatic merges.
    let viewMerges = LockedCounter()
    let names: [Int64: String]
    private var random: SeededRandom
    private let stop = StopFlag()
    private var start: UInt64 = 0

    init(options: SoakOptions, url: URL) throws {
        self.options = options
        self.url = url
        random = SeededRandom(seed: options.seed ^ 0x0050_4B41)
        coordinator = try SoakModel.coordinator(url: url, durability: options.durability)
        var names: [Int64: String] = [:]
        let numbers = Array(0..<Int64(options.contexts)) + Array(100..<Int64(100 + options.processes))
        for number in numbers { names[number] = number < 100 ? "c\(number)" : "p\(number - 100)" }
        self.names = names
        for index in 0..<options.contexts {
            let chain = options.contexts >= 2 && index == options.contexts - 1
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            var parent: NSManagedObjectContext?
            if chain {
                let root = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
                root.persistentStoreCoordinator = coordinator
                root.automaticallyMergesChangesFromParent = true
                context.parent = root
                parent = root
            } else {
                context.persistentStoreCoordinator = coordinator
            }
            context.automaticallyMergesChangesFromParent = chain || index % 2 == 1
            let name = names[Int64(index)] ?? "?"
            context.name = name
            let writer = try SoakWriter(
                name: name, number: Int64(index), policy: options.policies[index % options.policies.count],
                context: context, parent: parent, writerNumbers: numbers, countsConflicts: index % 2 == 1,
                seed: options.seed &+ UInt64(index) &* 0x9E37_79B9_7F4A_7C15)
            writer.didSave = { [ledger] effects in ledger.acknowledge(name, effects) }
            writers.append(writer)
        }
        for index in 0..<options.processes {
            let number = Int64(100 + index)
            children.append(
                SoakChildProcess(
                    name: names[number] ?? "?", number: number,
                    policy: options.policies[(index + 2) % options.policies.count], killable: index == 0,
                    ledger: ledger))
        }
        view = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        view.persistentStoreCoordinator = coordinator
        view.automaticallyMergesChangesFromParent = true
        view.name = "view"
        _ = NotificationCenter.default.addObserver(
            forName: .NSManagedObjectContextObjectsDidChange, object: view, queue: nil
        ) { [viewMerges] _ in viewMerges.add() }
    }

    var elapsed: Double { Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 }

    private func childArguments(_ child: SoakChildProcess, instance: Int) -> [String] {
        var arguments = SoakChild.Arguments()
        arguments.store = url.path
        arguments.writer = child.name
        arguments.number = child.number
        arguments.policy = child.policy
        arguments.seconds = max(0.5, options.seconds - elapsed)
        arguments.seed = options.seed &+ UInt64(child.number) &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(instance)
        arguments.durability = options.durability
        arguments.writers = names.keys.sorted()
        return arguments.commandLine
    }

    /// Runs the soak for its time, stops everything, checks the store; returns the report.
    func run() -> SoakReport {
        start = DispatchTime.now().uptimeNanoseconds
        var threadsDone: [DispatchSemaphore] = []
        for child in children {
            do {
                try child.start(childArguments(child, instance: 0))
            } catch {
                ledger.record(SoakViolation(kind: .process, message: "\(child.name) did not start: \(error)"))
            }
        }
        for writer in writers {
            let done = DispatchSemaphore(value: 0)
            threadsDone.append(done)
            let stop = stop
            let seed = UInt64(writer.number) &+ options.seed
            Thread {
                var random = SeededRandom(seed: seed)
                let probeChance = 0.01
                while !stop.isStopped {
                    writer.step()
                    if random.chance(probeChance) { writer.resetAndProbe() }
                }
                done.signal()
            }.start()
        }
        if let child = children.first, child.killable { threadsDone.append(startKilling(child)) }
        let monitor = startMonitoring()
        loop()
        let seconds = elapsed
        var mark = 0.0
        func phase(_ name: String) {
            phases.append((name, elapsed - mark))
            mark = elapsed
        }
        phase("running")
        stop.stop()
        monitor.wait()
        sample()
        for done in threadsDone { done.wait() }
        phase("stopping threads")
        for child in children { child.wait(timeout: 60) }
        phase("stopping processes")
        ProgressReporter.clear()
        // Merges still queued for the view context, then a last reset of everyone.
        RunLoop.main.run(until: Date().addingTimeInterval(0.5))
        probeView()
        for writer in writers { writer.resetAndProbe() }
        for store in coordinator.persistentStores { try? coordinator.remove(store) }
        phase("closing")
        var census = SoakCensus()
        do {
            census = try SoakCheck.run(url: url, durability: options.durability, ledger: ledger, names: names)
        } catch {
            ledger.record(SoakViolation(kind: .verify, message: "the final check could not read the store: \(error)"))
        }
        phase("final check")
        for (name, statistics) in allStatistics() where statistics.aliveAfterReset > 0 {
            ledger.record(
                SoakViolation(
                    kind: .leak,
                    message: "\(name): \(grouped(statistics.aliveAfterReset)) of \(grouped(statistics.resetProbes)) "
                        + "objects probed were still alive after reset() (\(statistics.resets) resets)"))
        }
        return SoakReport(soak: self, seconds: seconds, census: census)
    }

    /// Every writer's statistics by name, the view's last.
    func allStatistics() -> [(String, WriterStatistics)] {
        writers.map { ($0.name, $0.snapshot) } + children.map { ($0.name, $0.statistics) } + [("view", viewStatistics)]
    }

    /// Kills `child` with SIGKILL every 0.5 to 4 seconds and starts it again, until 3
    /// seconds before the end; returns what is signalled when it stops.
    private func startKilling(_ child: SoakChildProcess) -> DispatchSemaphore {
        let done = DispatchSemaphore(value: 0)
        let stop = stop
        let seed = options.seed ^ 0x004B_494C_4C
        Thread { [self] in
            var random = SeededRandom(seed: seed)
            while !stop.isStopped {
                let pause = Double(random.int(in: 500...4_000)) / 1000
                let wake = elapsed + pause
                while !stop.isStopped, elapsed < wake { usleep(20_000) }
                guard !stop.isStopped, elapsed < options.seconds - 3 else { break }
                child.kill()
                do {
                    try child.start(childArguments(child, instance: child.starts))
                } catch {
                    ledger.record(SoakViolation(kind: .process, message: "\(child.name) did not restart: \(error)"))
                    break
                }
            }
            done.signal()
        }.start()
        return done
    }

    /// The main thread's part: it serves the main queue (the view context's merges),
    /// reads in the view context and resets it every 5 seconds.
    private func loop() {
        var nextViewReset = 5.0
        while elapsed < options.seconds {
            RunLoop.main.run(until: Date().addingTimeInterval(0.2))
            readInView()
            if elapsed >= nextViewReset {
                probeView()
                nextViewReset += 5
            }
        }
    }

    /// Samples memory every 2 seconds and prints a status line every `--report-every`
    /// seconds on a thread of its own (the main thread may be busy merging for seconds).
    private func startMonitoring() -> DispatchSemaphore {
        let done = DispatchSemaphore(value: 0)
        let stop = stop
        Thread { [self] in
            var nextSample = 0.0
            var nextReport = options.reportEvery
            let progress = ProgressReporter.item(1, of: 1, name: "soak", start: start)
            while !stop.isStopped {
                let now = elapsed
                if now >= nextSample {
                    sample()
                    nextSample += 2
                }
                if now >= nextReport {
                    ProgressReporter.clear()
                    print(statusLine())
                    nextReport += options.reportEvery
                }
                progress.show("\(Int(now)) of \(formatted(options.seconds)) s, " + statusLine(short: true))
                usleep(250_000)
            }
            done.signal()
        }.start()
        return done
    }

    /// The view context reads recent owners and their relationships, as a screen would.
    private func readInView() {
        let request = NSFetchRequest<SoakOwner>(entityName: "Owner")
        request.fetchLimit = 30
        request.fetchOffset = random.int(in: 0...60)
        do {
            for owner in try view.fetch(request) {
                _ = owner.items?.count
                _ = owner.tags.map(\.name)
                _ = owner.favorite?.name
            }
        } catch {
            shared.withLock { viewState.errors[SoakWriter.describe(error), default: 0] += 1 }
        }
        let registered = view.registeredObjects.count
        shared.withLock { viewState.statistics.registered = registered }
    }

    private func probeView() {
        let probes = view.registeredObjects.prefix(400).map { WeakObject(object: $0) }
        view.reset()
        let alive = probes.count(where: { $0.object != nil })
        shared.withLock {
            viewState.statistics.resets += 1
            viewState.statistics.resetProbes += probes.count
            viewState.statistics.aliveAfterReset += alive
            viewState.statistics.registered = 0
        }
    }

    private func sample() {
        let sample = SoakSample(
            seconds: elapsed, resident: residentMemoryBytes(),
            registered: writers.reduce(viewStatistics.registered) { $0 + $1.snapshot.registered },
            childResident: children.reduce(0) { $0 + $1.residentBytes },
            childRegistered: children.reduce(0) { $0 + $1.registeredObjects },
            fileBytes: ["", "-wal"].reduce(0) { total, suffix in
                let attributes = try? FileManager.default.attributesOfItem(atPath: url.path + suffix)
                return total + ((attributes?[.size] as? NSNumber)?.uint64Value ?? 0)
            })
        shared.withLock { sampleList.append(sample) }
    }

    func statusLine(short: Bool = false) -> String {
        let statistics = allStatistics().map(\.1).reduce(WriterStatistics(), +)
        let seconds = max(elapsed, 0.001)
        let kills = children.reduce(0) { $0 + $1.kills }
        let last = samples.last
        let memory = String(format: "%.1f MiB", Double(last?.resident ?? 0) / 1_048_576)
        if short { return "\(grouped(statistics.saves)) saves, \(statistics.failed) failed, \(kills) kills" }
        let minutes = Int(seconds) / 60
        return String(format: "%3d:%02d", minutes, Int(seconds) % 60)
            + "  saves \(grouped(statistics.saves)) (\(formatted(Double(statistics.saves) / seconds))/s)"
            + "  failed \(grouped(statistics.failed))  RSS \(memory)"
            + "  registered \(grouped(last?.registered ?? 0))  kills \(kills)"
            + String(format: "  store %.1f MiB", Double(last?.fileBytes ?? 0) / 1_048_576)
    }
}
