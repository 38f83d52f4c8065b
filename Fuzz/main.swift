// opencoredata-fuzz: runs the seeded fuzz targets.
//
//   opencoredata-fuzz [TARGET...] [--iterations N] [--seed S] [--list]
//
// With no target, runs them all. Each iteration i of a run with seed S uses seed
// S &+ i, so a finding prints one seed that replays it alone: `--seed X --iterations 1`.
import Foundation
import TestSupport

var iterations = 1_000
var seed = SeededRandom.environmentSeed ?? UInt64(Date().timeIntervalSince1970)
var names: [String] = []
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--iterations":
        guard let value = arguments.popFirst().flatMap({ Int($0) }), value > 0 else {
            print("opencoredata-fuzz: --iterations takes a positive number")
            exit(2)
        }
        iterations = value
    case "--seed":
        guard let value = arguments.popFirst().flatMap({ UInt64($0) }) else {
            print("opencoredata-fuzz: --seed takes an unsigned number")
            exit(2)
        }
        seed = value
    case "--list":
        for target in FuzzTarget.all { print("\(target.name)\t\(target.summary)") }
        exit(0)
    default:
        names.append(argument)
    }
}

let targets = names.isEmpty ? FuzzTarget.all : FuzzTarget.all.filter { names.contains($0.name) }
if targets.count != max(names.count, names.isEmpty ? targets.count : 0) {
    print("opencoredata-fuzz: unknown target in \(names); --list shows them")
    exit(2)
}
var failures = 0
for target in targets {
    let start = Date()
    for i in 0..<iterations {
        var random = SeededRandom(seed: seed &+ UInt64(i))
        do {
            try target.iteration(&random)
        } catch {
            failures += 1
            print("FAIL \(target.name) seed \(seed &+ UInt64(i)): \(error)")
        }
    }
    let seconds = Date().timeIntervalSince(start)
    print("\(target.name): \(iterations) iterations from seed \(seed) in \(String(format: "%.2f", seconds)) s")
}
print("fuzz: \(targets.count * iterations - failures) passed, \(failures) failed")
exit(failures == 0 ? 0 : 1)
