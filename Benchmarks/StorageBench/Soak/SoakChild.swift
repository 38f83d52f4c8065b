// `storage-bench soak-child` (hidden): a soak writer in a process of its own, on the same
// store file with PageFileStoreMultiProcessOption. It talks to the soak on stdout, a line
// at a time (each under PIPE_BUF, so a line is written whole or, killed, not at all):
//
//   resume C            its counter as found in the store when it started
//   intent {JSON}       a save is about to reach the store (SoakEffects)
//   ack {JSON}          that save returned (SoakEffects, as read back under rollback)
//   memory R N          resident bytes and registered objects, every 2 seconds
//   statistics {JSON}   its WriterStatistics so far, every 2 seconds and at the end
//
//   soak-child --store PATH --writer NAME --number N --policy POLICY --seconds S
//              --seed X --durability D --writers N,N,...
import Foundation
import OpenCoreData
import TestSupport

enum SoakChild {
    struct Arguments {
        var store = ""
        var writer = ""
        var number: Int64 = 0
        var policy = SoakPolicy.objectTrump
        var seconds = 1.0
        var seed: UInt64 = 1
        var durability = "full"
        var writers: [Int64] = []

        init() {}

        init(_ arguments: [String]) throws(CommandLineError) {
            var values: [String: String] = [:]
            var index = 0
            while index + 1 < arguments.count {
                values[arguments[index]] = arguments[index + 1]
                index += 2
            }
            guard index == arguments.count, let store = values["--store"], let writer = values["--writer"],
                let number = values["--number"].flatMap({ Int64($0) }),
                let policy = values["--policy"].flatMap({ SoakPolicy(rawValue: $0) }),
                let seconds = values["--seconds"].flatMap({ Double($0) }),
                let seed = values["--seed"].flatMap({ UInt64($0) }), let durability = values["--durability"],
                let writers = values["--writers"]?.split(separator: ",").compactMap({ Int64($0) })
            else { throw CommandLineError.usage("soak-child: bad arguments \(arguments)") }
            (self.store, self.writer, self.number, self.policy) = (store, writer, number, policy)
            (self.seconds, self.seed, self.durability, self.writers) = (seconds, seed, durability, writers)
        }

        /// The command line that starts a child with these arguments.
        var commandLine: [String] {
            [
                "soak-child", "--store", store, "--writer", writer, "--number", "\(number)", "--policy",
                policy.rawValue, "--seconds", String(format: "%.3f", seconds), "--seed", "\(seed)", "--durability",
                durability, "--writers", writers.map(String.init).joined(separator: ","),
            ]
        }
    }

    static func emit(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static func json<Value: Encodable>(_ value: Value) -> String {
        (try? JSONEncoder().encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    static func run(_ arguments: [String]) -> Int32 {
        let options: Arguments
        do {
            options = try Arguments(arguments)
        } catch {
            if case .usage(let message) = error { printError(message) }
            return ExitStatus.usage
        }
        do {
            let coordinator = try SoakModel.coordinator(
                url: URL(fileURLWithPath: options.store), durability: options.durability)
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            context.name = options.writer
            let writer = try SoakWriter(
                name: options.writer, number: options.number, policy: options.policy, context: context,
                writerNumbers: options.writers, countsConflicts: true, seed: options.seed)
            emit("resume \(writer.counter)")
            writer.willSave = { emit("intent " + json($0)) }
            writer.didSave = { emit("ack " + json($0)) }
            var random = SeededRandom(seed: options.seed ^ 0x5A5A)
            let start = DispatchTime.now().uptimeNanoseconds
            var lastReport: UInt64 = 0
            func elapsed() -> UInt64 { DispatchTime.now().uptimeNanoseconds - start }
            while Double(elapsed()) / 1e9 < options.seconds {
                writer.step()
                if random.chance(0.01) { writer.resetAndProbe() }
                if elapsed() - lastReport > 2_000_000_000 {
                    lastReport = elapsed()
                    emit("memory \(residentMemoryBytes()) \(writer.snapshot.registered)")
                    emit("statistics " + json(writer.snapshot))
                }
            }
            emit("statistics " + json(writer.snapshot))
            context.performAndWait { context.reset() }
            for store in coordinator.persistentStores { try coordinator.remove(store) }
            return ExitStatus.success
        } catch {
            printError("soak-child \(options.writer): \(error)")
            return ExitStatus.failure
        }
    }
}
