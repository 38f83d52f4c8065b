// peer-bench: the storage engine's and the object store's workloads on our engine, on
// SQLite's C API and on GRDB, in one process run, one table per group with ratios.
//
//   peer-bench [--scale X] [--objects N] [--durability normal|full] [--clock wall|cpu] [--only PREFIX]...
//              [--repeat N] [--sqlite-cache-mib N] [--keep] [--list]
//
// --scale 1.0 (the default) is the documented size: 1,000,000 rows at engine level,
// 100,000 objects at object level; --scale 0.01 is the smoke run. --only runs the
// workloads whose name starts with PREFIX ("engine/", "object/fetch"); workloads it
// leaves out still build the stores the chosen ones need, unmeasured. --sqlite-cache-mib
// sets every SQLite connection's page cache (default 256, our engine's default cache;
// 0 keeps SQLite's own default of 2 MB). --keep leaves the stores in the scratch
// directory for inspection. --repeat N runs every workload N times per side, the sides
// interleaved, and reports each number's median over the rounds (for shared machines).
// The app group ("app/", issue 11) models what an app does: Person objects linked to 100
// Companies; --objects N sets its number of people (1000000 for the million-object run)
// and --durability its commits (default normal; app/save-durable always full).
// --clock cpu measures the process's CPU time instead of elapsed time: on a machine
// loaded by other work, elapsed time mostly measures waiting for a CPU, and longer
// operations wait more (they span more preemptions), which skews every ratio.
import Foundation

var scale = 1.0
var prefixes: [String] = []
var listOnly = false
var keepScratch = false
var repeats = 1
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--scale":
        guard let text = arguments.popFirst(), let value = Double(text), value > 0 else {
            FileHandle.standardError.write(Data("peer-bench: --scale takes a positive number\n".utf8))
            exit(2)
        }
        scale = value
    case "--only":
        guard let prefix = arguments.popFirst() else {
            FileHandle.standardError.write(Data("peer-bench: --only takes a workload name prefix\n".utf8))
            exit(2)
        }
        prefixes.append(prefix)
    case "--sqlite-cache-mib":
        guard let text = arguments.popFirst(), let value = Int(text), value >= 0 else {
            FileHandle.standardError.write(
                Data("peer-bench: --sqlite-cache-mib takes a whole number (0: SQLite's default)\n".utf8))
            exit(2)
        }
        SQLiteSettings.cacheKibibytes = value * 1024
    case "--objects":
        guard let text = arguments.popFirst(), let value = Int(text), value >= 1_000 else {
            FileHandle.standardError.write(Data("peer-bench: --objects takes a whole number of at least 1000\n".utf8))
            exit(2)
        }
        AppWorkloads.objectCountOverride = value
    case "--durability":
        guard let text = arguments.popFirst(), let value = AppDurability(rawValue: text) else {
            FileHandle.standardError.write(Data("peer-bench: --durability takes normal or full\n".utf8))
            exit(2)
        }
        AppDurability.current = value
    case "--clock":
        guard let text = arguments.popFirst(), let value = BenchClock(rawValue: text) else {
            FileHandle.standardError.write(Data("peer-bench: --clock takes wall or cpu\n".utf8))
            exit(2)
        }
        BenchClock.current = value
    case "--list":
        listOnly = true
    case "--repeat":
        guard let text = arguments.popFirst(), let value = Int(text), value > 0 else {
            FileHandle.standardError.write(Data("peer-bench: --repeat takes a positive whole number\n".utf8))
            exit(2)
        }
        repeats = value
    case "--keep":
        keepScratch = true
    default:
        let usage =
            "peer-bench [--scale X] [--objects N] [--durability normal|full] [--clock wall|cpu] [--only PREFIX]... "
            + "[--repeat N] [--sqlite-cache-mib N] [--keep] [--list]"
        FileHandle.standardError.write(Data("peer-bench: unknown argument \(argument); usage: \(usage)\n".utf8))
        exit(2)
    }
}

@MainActor func isSelected(_ name: String) -> Bool { prefixes.isEmpty || prefixes.contains { name.hasPrefix($0) } }

let engineWorkloads = EngineWorkloads.all.filter { isSelected($0.name) }
let objectWorkloads = ObjectWorkloads.all.filter { isSelected($0.name) }
let appWorkloads = AppWorkloads.all.filter { isSelected($0.name) }
if listOnly {
    for workload in EngineWorkloads.all { print(workload.name) }
    for workload in ObjectWorkloads.all { print(workload.name) }
    for workload in AppWorkloads.all { print(workload.name) }
    exit(0)
}
guard !engineWorkloads.isEmpty || !objectWorkloads.isEmpty || !appWorkloads.isEmpty else {
    FileHandle.standardError.write(Data("peer-bench: no workload matches \(prefixes); --list shows them\n".utf8))
    exit(2)
}

let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("peer-bench-\(getpid())")
try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
let context = BenchContext(scale: scale, root: scratch)

print(
    "# peer-bench, scale \(scale)" + (repeats > 1 ? ", median of \(repeats) rounds" : "")
        + (BenchClock.current == .cpu ? ", process CPU time (--clock cpu), not elapsed time" : ""))
print("")
print(Machine.describe())
/// Prints the fdatasync floor; measured before and after the workloads, so a report
/// shows whether the disk's speed drifted during the run.
@MainActor func printSyncLatency(_ when: String) {
    let count = context.scaled(200, minimum: 20)
    if let seconds = try? Machine.fdatasyncLatency(in: scratch, count: count) {
        let formatted = Measurement.seconds("", seconds).formatted
        print("fdatasync of a 4 KiB append, median of \(count) (\(when)): \(formatted)")
    }
}
printSyncLatency("before the workloads")
print("")

var failures = 0

/// Runs `run` for each side in turn, `repeats` rounds with the sides interleaved (so a
/// neighbour's build slows every side alike), and records the median of each number
/// over the rounds. A failing side is reported, counted and dropped from later rounds.
@MainActor func runSides(
    _ workload: String, sides: [String], into table: inout ResultTable,
    _ run: (Int) throws -> [Measurement]
) {
    var rounds = [[[Measurement]]](repeating: [], count: sides.count)
    var failed = Set<Int>()
    for round in 1...repeats {
        for (index, side) in sides.enumerated() where !failed.contains(index) {
            let roundText = repeats > 1 ? " (round \(round) of \(repeats))" : ""
            context.progress("\(workload) — \(side)\(roundText)")
            do {
                let started = nowNanoseconds()
                rounds[index].append(try run(index))
                let seconds = Double(nowNanoseconds() - started) / 1e9
                context.progress("")
                FileHandle.standardError.write(
                    Data(String(format: "  %@ — %@%@: %.1f s\n", workload, side, roundText, seconds).utf8))
            } catch {
                context.progress("")
                FileHandle.standardError.write(Data("peer-bench: \(workload) on \(side) failed: \(error)\n".utf8))
                failures += 1
                failed.insert(index)
            }
        }
    }
    for (index, side) in sides.enumerated() where !failed.contains(index) {
        table.record(medianOverRounds(rounds[index]), workload: workload, side: side)
    }
}

/// Each measurement's median over the rounds, matched by label.
func medianOverRounds(_ rounds: [[Measurement]]) -> [Measurement] {
    guard let first = rounds.first else { return [] }
    return first.map { measurement in
        let values = rounds.compactMap { round in round.first { $0.label == measurement.label }?.value }
        return Measurement(label: measurement.label, value: median(values), kind: measurement.kind)
    }
}

if !engineWorkloads.isEmpty {
    let sides = EngineSides.all
    var table = ResultTable(
        title: "Engine level (\(EngineWorkloads.rowCount(context)) rows, 8-byte keys, 100-byte values)",
        sides: ["ours", "SQLite"], comparisons: [("ours", "SQLite")])
    for workload in engineWorkloads {
        runSides(workload.name, sides: sides.map(\.name), into: &table) { index in
            try sides[index].run(workload, context)
        }
    }
    print(table.render())
    for note in EngineSides.notes { print("Note: \(note)") }
    print("")
}

if !objectWorkloads.isEmpty {
    let sides = ObjectSides.all
    var table = ResultTable(
        title: "Object level (\(ObjectWorkloads.objectCount(context)) Person objects, index on age)",
        sides: ["ours", "SQLite", "GRDB"],
        comparisons: [("ours", "SQLite"), ("ours", "GRDB"), ("GRDB", "SQLite")])
    for workload in objectWorkloads {
        runSides(workload.name, sides: sides.map(\.name), into: &table) { index in
            try sides[index].run(workload, context)
        }
    }
    print(table.render())
    for note in ObjectSides.notes { print("Note: \(note)") }
    print("")
}

if !appWorkloads.isEmpty {
    let sides = AppSides.all
    var table = ResultTable(
        title:
            "App level (\(AppWorkloads.personCount(context)) Person objects, 100 Companies, "
            + "durability \(AppDurability.current.rawValue))",
        sides: ["ours", "SQLite", "GRDB"],
        comparisons: [("ours", "SQLite"), ("ours", "GRDB"), ("GRDB", "SQLite")])
    for workload in appWorkloads {
        runSides(workload.name, sides: sides.map(\.name), into: &table) { index in
            try sides[index].run(workload, context)
        }
    }
    print(table.render())
    for note in AppSides.notes { print("Note: \(note)") }
    print("")
}

printSyncLatency("after the workloads")
// Not a top-level defer: exit() below would skip it.
if keepScratch {
    print("Stores kept in \(scratch.path)")
} else {
    try? FileManager.default.removeItem(at: scratch)
}
if failures > 0 {
    print("peer-bench: \(failures) workload run(s) failed (see stderr)")
    exit(1)
}
