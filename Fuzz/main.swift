// opencoredata-fuzz: runs the seeded fuzz targets.
//
//   opencoredata-fuzz [TARGET...] [--iterations N] [--seed S | --seeds S1,S2,...] [--seconds T] [--list] [--help]
//
// With no target, runs them all. Each iteration i of a run with seed S uses seed
// S &+ i, so a finding prints one seed that replays it alone: `--seed X --iterations 1`.
// `--seconds T` keeps each target going past N iterations until T seconds have passed
// (a long campaign from one random seed).
import Foundation
import TestSupport

let usage = """
    usage: opencoredata-fuzz [TARGET...] [--iterations N] [--seed S | --seeds S1,S2,...] [--seconds T] [--list]

      TARGET          a target name (--list shows them); all targets when none is given
      --iterations N  iterations per target and seed (default 1000); iteration i uses seed S+i
      --seed S        the first seed (default: $OPENCOREDATA_SEED, else the current time)
      --seeds LIST    several first seeds, comma-separated; each runs N iterations
      --seconds T     with one seed, keep iterating each target until T seconds have passed
      --list          the targets and what each checks
    A failure prints the seed that replays it: --seed X --iterations 1.
    """

var iterations = 1_000
var seeds = [SeededRandom.environmentSeed ?? UInt64(Date().timeIntervalSince1970)]
var seconds: Double?
var names: [String] = []
var arguments = CommandLine.arguments.dropFirst()

func fail(_ message: String) -> Never {
    print("opencoredata-fuzz: \(message)")
    exit(2)
}

while let argument = arguments.popFirst() {
    switch argument {
    case "--iterations":
        guard let value = arguments.popFirst().flatMap({ Int($0) }), value > 0 else {
            fail("--iterations takes a positive number")
        }
        iterations = value
    case "--seed":
        guard let value = arguments.popFirst().flatMap({ UInt64($0) }) else { fail("--seed takes an unsigned number") }
        seeds = [value]
    case "--seeds":
        let values = (arguments.popFirst() ?? "").split(separator: ",").map { UInt64($0) }
        guard !values.isEmpty, values.allSatisfy({ $0 != nil }) else {
            fail("--seeds takes unsigned numbers separated by commas")
        }
        seeds = values.compactMap { $0 }
    case "--seconds":
        guard let value = arguments.popFirst().flatMap({ Double($0) }), value > 0 else {
            fail("--seconds takes a positive number")
        }
        seconds = value
    case "--list":
        for target in FuzzTarget.all { print("\(target.name)\t\(target.summary)") }
        exit(0)
    case "--help", "-h":
        print(usage)
        exit(0)
    default:
        if argument.hasPrefix("-") { fail("unknown option \(argument)\n\(usage)") }
        names.append(argument)
    }
}

let targets = names.isEmpty ? FuzzTarget.all : FuzzTarget.all.filter { names.contains($0.name) }
if targets.count != max(names.count, names.isEmpty ? targets.count : 0) {
    fail("unknown target in \(names); --list shows them")
}
if seconds != nil && seeds.count > 1 { fail("--seconds takes one seed") }
var failures = 0
var passed = 0
for target in targets {
    for seed in seeds {
        let start = Date()
        var iteration = 0
        while iteration < iterations || (seconds.map { Date().timeIntervalSince(start) < $0 } ?? false) {
            var random = SeededRandom(seed: seed &+ UInt64(iteration))
            do {
                try target.iteration(&random)
                passed += 1
            } catch {
                failures += 1
                print("FAIL \(target.name) seed \(seed &+ UInt64(iteration)): \(error)")
            }
            iteration += 1
        }
        let elapsed = String(format: "%.2f", Date().timeIntervalSince(start))
        print("\(target.name): \(iteration) iterations from seed \(seed) in \(elapsed) s")
    }
}
print("fuzz: \(passed) passed, \(failures) failed")
exit(failures == 0 ? 0 : 1)
