// The command line: `opencoredata-store COMMAND PATH [ARGUMENTS] [OPTIONS]`. Results go to
// stdout, errors to stderr. Exit status: 0 success, 1 failure (an unreadable store, a
// check that found problems, a bad predicate), 2 usage.
import Foundation
import OpenCoreData

/// What ends a command early, and with which exit status.
enum InspectorError: Error {
    /// The command line is wrong: exit status 2.
    case usage(String)
    /// The command ran and failed: exit status 1.
    case failure(String)
}

/// One command: its synopsis, help and body.
struct InspectorSubcommand: Sendable {
    let name: String
    let synopsis: String
    let summary: String
    let help: String
    let run: @Sendable (inout InspectorArguments) throws(InspectorError) -> Int32
}

enum InspectorCommand {
    static let subcommands: [InspectorSubcommand] = [
        InspectorSubcommand(
            name: "schema", synopsis: "schema PATH [--json]",
            summary: "entities, attributes, relationships, indexes, constraints and model version",
            help: InspectorHelp.schema, run: ReadCommands.schema),
        InspectorSubcommand(
            name: "query", synopsis: "query PATH ENTITY [PREDICATE] [--sort KEY[:desc]]... [--limit N] [--json]",
            summary: "the objects of ENTITY matching PREDICATE, as a table or JSON", help: InspectorHelp.query,
            run: ReadCommands.query),
        InspectorSubcommand(
            name: "count", synopsis: "count PATH ENTITY [PREDICATE]",
            summary: "how many objects of ENTITY match PREDICATE", help: InspectorHelp.count,
            run: ReadCommands.count),
        InspectorSubcommand(
            name: "history", synopsis: "history PATH [--after NUMBER] [--json]",
            summary: "the persistent history's transactions and their changes", help: InspectorHelp.history,
            run: ReadCommands.history),
        InspectorSubcommand(
            name: "check", synopsis: "check PATH",
            summary: "verify a default store (engine, rows, indexes, relationships)",
            help: InspectorHelp.check, run: FileCommands.check),
        InspectorSubcommand(
            name: "space", synopsis: "space PATH", summary: "bytes per tree and page fill of a default store",
            help: InspectorHelp.space, run: FileCommands.space),
        InspectorSubcommand(
            name: "vacuum", synopsis: "vacuum PATH",
            summary: "rewrite a default store compactly (no one may have it open)",
            help: InspectorHelp.vacuum, run: FileCommands.vacuum),
        InspectorSubcommand(
            name: "migrate", synopsis: "migrate PATH --dry-run --model MODEL",
            summary: "what migrating the store to a model file would do (the store unchanged)",
            help: InspectorHelp.migrate, run: FileCommands.migrate),
    ]

    static func main(_ arguments: [String]) -> Int32 {
        guard let first = arguments.first else {
            printError(InspectorHelp.overview(subcommands))
            return 2
        }
        if ["help", "--help", "-h"].contains(first) {
            guard arguments.count > 1 else {
                print(InspectorHelp.overview(subcommands))
                return 0
            }
            guard let subcommand = subcommands.first(where: { $0.name == arguments[1] }) else {
                printError("opencoredata-store: no command '\(arguments[1])'; `opencoredata-store help` lists them")
                return 2
            }
            print(subcommand.help)
            return 0
        }
        guard let subcommand = subcommands.first(where: { $0.name == first }) else {
            printError("opencoredata-store: no command '\(first)'; `opencoredata-store help` lists them")
            return 2
        }
        if arguments.dropFirst().contains(where: { $0 == "--help" || $0 == "-h" }) {
            print(subcommand.help)
            return 0
        }
        var parsed = InspectorArguments(Array(arguments.dropFirst()))
        do {
            return try subcommand.run(&parsed)
        } catch {
            switch error {
            case .usage(let message):
                printError(
                    "opencoredata-store \(subcommand.name): \(message)\nusage: opencoredata-store \(subcommand.synopsis)"
                )
                return 2
            case .failure(let message):
                printError("opencoredata-store \(subcommand.name): \(message)")
                return 1
            }
        }
    }
}

/// A command's arguments: positional ones in order, options taken by name.
struct InspectorArguments {
    private var remaining: [String]

    init(_ arguments: [String]) { remaining = arguments }

    /// Removes `--name` and reports whether it was there.
    mutating func flag(_ name: String) -> Bool {
        guard let index = remaining.firstIndex(of: name) else { return false }
        remaining.remove(at: index)
        return true
    }

    /// Removes every `--name VALUE` and returns the values in order.
    mutating func values(_ name: String) throws(InspectorError) -> [String] {
        var found: [String] = []
        while let index = remaining.firstIndex(of: name) {
            guard index + 1 < remaining.count else { throw .usage("\(name) needs a value") }
            found.append(remaining[index + 1])
            remaining.removeSubrange(index...(index + 1))
        }
        return found
    }

    /// Removes `--name VALUE` (given at most once) and returns its value.
    mutating func value(_ name: String) throws(InspectorError) -> String? {
        let found = try values(name)
        guard found.count <= 1 else { throw .usage("\(name) is given more than once") }
        return found.first
    }

    /// The positional arguments, checked to be between `minimum` and `maximum` in number
    /// and to hold no unknown option.
    func positional(minimum: Int, maximum: Int, what: String) throws(InspectorError) -> [String] {
        if let option = remaining.first(where: { $0.hasPrefix("--") }) { throw .usage("unknown option \(option)") }
        guard remaining.count >= minimum else { throw .usage("missing \(what)") }
        guard remaining.count <= maximum else {
            throw .usage("unexpected argument '\(remaining[maximum])' (quote a predicate with spaces)")
        }
        return remaining
    }
}

func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}
