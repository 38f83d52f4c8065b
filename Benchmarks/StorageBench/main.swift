// storage-bench: the project's main job. Runs named workloads at engine and object
// level and prints one table; with no arguments it runs every workload at the
// documented scale.
//
//   storage-bench [WORKLOAD-PREFIX...] [--scale X] [--smoke] [--list]
//   storage-bench check PATH        verify a store file and report
//   storage-bench space PATH        bytes per tree and page fill of a default store file
//   storage-bench probe NAME        one instruction-count probe (Benchmarks/callgrind-probes.sh)
//
// --smoke runs everything at 1% scale (CI). Numbers print as "workload  label  value unit".
import Foundation
import OpenCoreData

if CommandLine.arguments.count == 3, CommandLine.arguments[1] == "check" {
    exit(runStoreCheck(path: CommandLine.arguments[2]))
}
if CommandLine.arguments.count == 3, CommandLine.arguments[1] == "space" {
    do {
        print(try PageFileStore.spaceReport(at: URL(fileURLWithPath: CommandLine.arguments[2])))
        exit(0)
    } catch {
        print("storage-bench space: \((error as NSError).localizedDescription)")
        exit(1)
    }
}
if CommandLine.arguments.count >= 2, CommandLine.arguments[1] == "probe" {
    exit(runProbe(arguments: Array(CommandLine.arguments.dropFirst(2))))
}
if CommandLine.arguments.count == 3, CommandLine.arguments[1] == "store-kill-child" {
    exit(runStoreKillChild(path: CommandLine.arguments[2]))
}
if CommandLine.arguments.count == 4, CommandLine.arguments[1] == "store-share-child",
    let count = Int(CommandLine.arguments[3])
{
    exit(runStoreShareChild(path: CommandLine.arguments[2], count: count))
}

var scale = 1.0
var prefixes: [String] = []
var arguments = Array(CommandLine.arguments.dropFirst())
var index = 0
while index < arguments.count {
    let argument = arguments[index]
    index += 1
    switch argument {
    case "--scale":
        guard index < arguments.count, let value = Double(arguments[index]), value > 0 else {
            print("storage-bench: --scale takes a positive number")
            exit(2)
        }
        scale = value
        index += 1
    case "--smoke":
        scale = 0.01
    case "--list":
        for workload in Workload.all { print("\(workload.name)\t\(workload.summary)") }
        exit(0)
    default:
        prefixes.append(argument)
    }
}

let selected = Workload.all.filter { workload in
    prefixes.isEmpty || prefixes.contains { workload.name.hasPrefix($0) }
}
guard !selected.isEmpty else {
    print("storage-bench: no workload matches \(prefixes); --list shows them")
    exit(2)
}
let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("storage-bench-\(getpid())")
try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: scratch) }

print("storage-bench: \(selected.count) workloads, scale \(scale)")
var failed = 0
for workload in selected {
    let directory = scratch.appendingPathComponent(workload.name.replacingOccurrences(of: "/", with: "-"))
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    do {
        let results = try workload.run(BenchContext(scale: scale, directory: directory))
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
        for result in results {
            let value = String(format: result.value >= 100 ? "%.0f" : "%.3g", result.value)
            print(
                "\(workload.name.padding(toLength: 34, withPad: " ", startingAt: 0))"
                    + "\(result.label.padding(toLength: 36, withPad: " ", startingAt: 0)) \(value) \(result.unit)")
        }
    } catch {
        failed += 1
        print("\(workload.name): FAILED: \(error)")
    }
    try? FileManager.default.removeItem(at: directory)
}
exit(failed == 0 ? 0 : 1)
