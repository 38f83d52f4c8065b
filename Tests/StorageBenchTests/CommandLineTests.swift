// storage-bench as a user meets it: help, errors and exit statuses, the check and space
// tools, the results table, progress only on a terminal.
import Foundation
import Testing

@Suite struct CommandLineTests {
    @Test(arguments: [["--help"], ["-h"], ["help"]])
    func helpListsEveryCommandAndExitsZero(_ arguments: [String]) throws {
        let run = try StorageBenchProcess.run(arguments)
        #expect(run.status == 0)
        #expect(run.stdout.contains("USAGE"))
        for command in [
            "run", "list", "check PATH", "space PATH", "dry-run PATH MODEL", "soak", "probe NAME", "help [COMMAND]",
        ] {
            #expect(run.stdout.contains("\n  \(command)"), "help lists \(command)")
        }
        #expect(run.stdout.contains("--json") && run.stdout.contains("--compare FILE"))
        #expect(!run.stdout.contains("store-kill-child") && !run.stdout.contains("soak-child"))
        #expect(run.stderr.isEmpty)
    }

    @Test(arguments: ["check", "space", "dry-run", "soak", "probe", "run", "list", "help"])
    func everyCommandHasItsHelp(_ command: String) throws {
        let viaHelp = try StorageBenchProcess.run(["help", command])
        let viaOption = try StorageBenchProcess.run([command, "--help"])
        #expect(viaHelp.status == 0 && viaOption.status == 0)
        #expect(viaHelp.stdout.hasPrefix("storage-bench \(command)"))
        #expect(viaHelp.stdout == viaOption.stdout)
        #expect(viaHelp.stdout.contains("Exit status") || command == "list" || command == "help")
    }

    @Test func helpForAnUnknownCommandIsAUsageError() throws {
        let run = try StorageBenchProcess.run(["help", "frobnicate"])
        #expect(run.status == 2)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.contains("no command named 'frobnicate'"))
    }

    @Test func anUnknownCommandIsAUsageErrorOnStderr() throws {
        let run = try StorageBenchProcess.run(["frobnicate"])
        #expect(run.status == 2)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.contains("no command or workload named 'frobnicate'"))
        #expect(run.stderr.contains("storage-bench --help"))
    }

    @Test(arguments: [
        ["--bogus"], ["--scale"], ["--scale", "-1"], ["--scale", "abc"], ["--compare"], ["probe"],
        ["probe", "no-such-probe"], ["check", "a", "b"], ["list", "extra"],
    ])
    func badOptionsAndArgumentCountsAreUsageErrors(_ arguments: [String]) throws {
        let run = try StorageBenchProcess.run(arguments)
        #expect(run.status == 2)
        #expect(run.stdout.isEmpty)
        #expect(!run.stderr.isEmpty)
    }

    @Test func checkWithoutAPathIsAUsageError() throws {
        let run = try StorageBenchProcess.run(["check"])
        #expect(run.status == 2)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.contains("check: missing PATH"))
        #expect(run.stderr.contains("storage-bench help check"))
    }

    @Test(arguments: ["check", "space"])
    func aMissingStoreFailsAndLeavesNoFileBehind(_ command: String) throws {
        let directory = try StorageBenchProcess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("Missing.store").path
        let run = try StorageBenchProcess.run([command, path])
        #expect(run.status == 1)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.contains("\(path): no such file"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    @Test func checkAndSpaceReadASoundStore() throws {
        let directory = try StorageBenchProcess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("Shared.store").path
        #expect(try StorageBenchProcess.run(["store-share-child", path, "3"]).status == 0)
        let check = try StorageBenchProcess.run(["check", path])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout.contains("store: 3 rows"))
        #expect(check.stdout.contains("is sound"))
        let space = try StorageBenchProcess.run(["space", path])
        #expect(space.status == 0, "\(space.stderr)")
        #expect(!space.stdout.isEmpty)
    }

    @Test func checkOfAFileThatIsNoStoreFails() throws {
        let directory = try StorageBenchProcess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("Garbage.store").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data(repeating: 0x5A, count: 10_000)))
        let run = try StorageBenchProcess.run(["check", path])
        #expect(run.status == 1)
        #expect(run.stderr.contains("check: \(path)"))
    }

    @Test func listNamesEveryWorkload() throws {
        let run = try StorageBenchProcess.run(["list"])
        #expect(run.status == 0)
        for name in [
            "sanity/clock", "store/default", "store/in-memory", "engine/bulk-insert", "predicate/sort-two-keys",
        ] {
            #expect(run.stdout.contains(name))
        }
        #expect(try StorageBenchProcess.run(["--list"]).stdout == run.stdout)
    }

    @Test func resultsAreATableWithABannerAndNoProgressOffATerminal() throws {
        let run = try StorageBenchProcess.run(["sanity/clock", "engine/reopen", "--smoke"])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("storage-bench  ") == true)
        #expect(run.stdout.contains("machine  ") && run.stdout.contains(" cores, "))
        #expect(run.stdout.contains("system   ") && run.stdout.contains("load average"))
        #expect(run.stdout.contains("↑ higher is better, ↓ lower is better"))
        let header = try #require(lines.firstIndex { $0.hasPrefix("workload") })
        #expect(
            lines[header].contains("measurement") && lines[header].contains("value") && lines[header].contains("unit"))
        #expect(lines[header + 1].allSatisfy { $0 == "-" || $0 == " " })
        let clock = try #require(lines.first { $0.hasPrefix("sanity/clock") })
        // Reads per second are in the millions even in a debug build: thousands separators.
        #expect(clock.contains(try Regex(#" \d{1,3}(,\d{3})+  reads/s ↑"#)), "\(clock)")
        #expect(lines.contains { $0.hasPrefix("engine/reopen") && $0.hasSuffix("ms ↓") })
        #expect(lines.last?.hasPrefix("2 of 2 workloads ran in") == true)
        // Columns line up: every value ends where the header's "value" does.
        let valueEnd = try #require(lines[header].range(of: "value")).upperBound
        let column = lines[header].distance(from: lines[header].startIndex, to: valueEnd)
        #expect(clock.count > column && clock[clock.index(clock.startIndex, offsetBy: column - 1)].isNumber)
        #expect(!run.stderr.contains("\r") && !run.stderr.contains("\u{1B}"), "progress is for terminals only")
        #expect(!run.stdout.contains("\r") && !run.stdout.contains("\u{1B}"))
    }

    @Test func debugBuildsSayLoudlyThatTheirNumbersMeanNothing() throws {
        let run = try StorageBenchProcess.run(["sanity/clock", "--smoke"])
        #if DEBUG
            #expect(run.stdout.contains("debug build"))
            #expect(run.stdout.contains("WARNING: this is a DEBUG build"))
            #expect(run.stderr.contains("WARNING: this is a DEBUG build"))
        #else
            #expect(run.stdout.contains("release build"))
            #expect(!run.stdout.contains("DEBUG") && !run.stderr.contains("DEBUG"))
        #endif
    }

    @Test func storesAreNamedForWhatTheyAreWithTheirDurability() throws {
        let run = try StorageBenchProcess.run(["store/default", "store/in-memory", "--scale", "0.001"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(!run.stdout.contains("SQLite") && !run.stderr.contains("SQLite"))
        #expect(run.stdout.contains("single-object saves (full durability)"))
        #expect(run.stdout.contains("single-object saves (not durable)"))
        #expect(!run.stdout.contains("(durable)"))
        #expect(run.stdout.contains("insert 100 in one save"))
    }

    @Test func aRunThatCannotStartFailsWithStatusOne() throws {
        // The scratch directory cannot be made under a file posing as the temporary directory.
        let directory = try StorageBenchProcess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let blocker = directory.appendingPathComponent("not-a-directory")
        #expect(FileManager.default.createFile(atPath: blocker.path, contents: Data("x".utf8)))
        let run = try StorageBenchProcess.run(["sanity/clock", "--smoke"], environment: ["TMPDIR": blocker.path])
        #expect(run.status == 1)
        #expect(StorageBenchProcess.stderrWithoutDebugWarning(run).contains("cannot create"))
    }
}
