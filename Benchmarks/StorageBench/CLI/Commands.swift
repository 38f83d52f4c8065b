// The command line: `storage-bench [WORKLOAD...] [OPTIONS]` runs benchmarks, a first
// argument naming a command runs that command. Results go to stdout, errors and progress
// to stderr. Exit status: 0 success, 1 failure (a workload, a check, a soak violation),
// 2 usage (an unknown command, option or workload, a missing argument).
import Foundation

/// What ends a command early, and with which exit status.
enum CommandLineError: Error {
    /// The command line is wrong: exit status 2, with a pointer to the help.
    case usage(String)
    /// The command ran and failed: exit status 1.
    case failure(String)
}

/// Exit statuses.
enum ExitStatus {
    static let success: Int32 = 0
    static let failure: Int32 = 1
    static let usage: Int32 = 2
}

/// One visible command: its name, one-line summary, help text and body.
struct Command: Sendable {
    let name: String
    /// The command with its arguments, e.g. "check PATH".
    let synopsis: String
    let summary: String
    let help: String
    let run: @Sendable ([String]) throws(CommandLineError) -> Int32
}

enum StorageBenchCommand {
    /// Every command `help` lists, in its order.
    static let commands: [Command] = [
        Command(
            name: "run", synopsis: "run [WORKLOAD...] [OPTIONS]",
            summary: "run benchmark workloads (the default command)", help: HelpText.run,
            run: BenchmarkCommand.run),
        Command(
            name: "list", synopsis: "list", summary: "list the workloads", help: HelpText.list,
            run: { arguments throws(CommandLineError) in
                try expectArguments(arguments, count: 0, command: "list")
                return BenchmarkCommand.list()
            }),
        Command(
            name: "check", synopsis: "check PATH", summary: "verify a default-store file (engine, rows, indexes)",
            help: HelpText.check, run: StoreFileCommands.check),
        Command(
            name: "space", synopsis: "space PATH", summary: "bytes per tree and page fill of a default-store file",
            help: HelpText.space, run: StoreFileCommands.space),
        Command(
            name: "dry-run", synopsis: "dry-run PATH MODEL",
            summary: "what migrating a store to a model file would do (store unchanged)", help: HelpText.dryRun,
            run: MigrationDryRunCommand.run),
        Command(
            name: "soak", synopsis: "soak [OPTIONS]",
            summary: "contexts and processes hammer one store, then a ledger check", help: HelpText.soak,
            run: SoakCommand.run),
        Command(
            name: "probe", synopsis: "probe NAME", summary: "one instruction-count probe (callgrind-probes.sh)",
            help: HelpText.probe,
            run: { arguments throws(CommandLineError) in
                try expectArguments(arguments, count: 1, command: "probe", what: "NAME")
                return try runProbe(name: arguments[0])
            }),
        Command(
            name: "help", synopsis: "help [COMMAND]", summary: "this text, or a command's", help: HelpText.help,
            run: { arguments throws(CommandLineError) in
                guard let name = arguments.first else {
                    print(HelpText.main)
                    return ExitStatus.success
                }
                try expectArguments(arguments, count: 1, command: "help", what: "COMMAND")
                guard let command = commands.first(where: { $0.name == name }) else {
                    throw CommandLineError.usage("help: no command named '\(name)'")
                }
                print(command.help)
                return ExitStatus.success
            }),
    ]

    /// Child processes the tests and the soak start; not listed, arguments fixed.
    static func hiddenCommand(_ arguments: [String]) -> Int32? {
        switch (arguments.first, arguments.count) {
        case ("store-kill-child", 2): return runStoreKillChild(path: arguments[1])
        case ("store-share-child", 3):
            guard let count = Int(arguments[2]) else { return nil }
            return runStoreShareChild(path: arguments[1], count: count)
        case ("soak-child", _): return SoakChild.run(Array(arguments.dropFirst()))
        case ("soak-inspect", _): return SoakInspect.run(Array(arguments.dropFirst()))
        default: return nil
        }
    }

    /// Runs the command line (without the executable's name); returns the exit status.
    static func main(_ arguments: [String]) -> Int32 {
        if let status = hiddenCommand(arguments) { return status }
        var commandName: String?
        do throws(CommandLineError) {
            guard let first = arguments.first else { return try BenchmarkCommand.run([]) }
            if first == "-h" || first == "--help" {
                print(HelpText.main)
                return ExitStatus.success
            }
            guard let command = commands.first(where: { $0.name == first }) else {
                return try BenchmarkCommand.run(arguments)
            }
            commandName = command.name
            let rest = Array(arguments.dropFirst())
            if rest.contains("-h") || rest.contains("--help") {
                print(command.help)
                return ExitStatus.success
            }
            return try command.run(rest)
        } catch {
            ProgressReporter.clear()
            switch error {
            case .usage(let message):
                let help = commandName.map { "storage-bench help \($0)" } ?? "storage-bench --help"
                printError("storage-bench: \(message)\nRun `\(help)` for usage.")
                return ExitStatus.usage
            case .failure(let message):
                printError("storage-bench: \(message)")
                return ExitStatus.failure
            }
        }
    }

    /// Throws a usage error unless `arguments` holds exactly `count` operands (no options).
    static func expectArguments(_ arguments: [String], count: Int, command: String, what: String = "")
        throws(CommandLineError)
    {
        if let option = arguments.first(where: { $0.hasPrefix("-") && $0 != "-" }) {
            throw CommandLineError.usage("\(command): unknown option '\(option)'")
        }
        if arguments.count < count { throw CommandLineError.usage("\(command): missing \(what)") }
        if arguments.count > count {
            throw CommandLineError.usage(
                "\(command): unexpected argument '\(arguments[count])'")
        }
    }
}
