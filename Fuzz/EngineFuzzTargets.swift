// The storage engine's fuzz targets: damaged files (page and log decoding), random
// operation sequences against the oracle, and the child process of the kill test.
import Foundation
import StorageEngine
import TestSupport

extension FuzzTarget {
    /// Opens, reads and verifies randomly damaged database files.
    static let engineFile = FuzzTarget(
        name: "engine-file", summary: "damaged page files and logs open to valid data or throw StorageError"
    ) { random in
        do {
            try EngineHarness.runHostileMutation(random: &random)
        } catch {
            throw FuzzFailure(description: "\(error)")
        }
    }

    /// Random operations on tiny pages checked against an in-memory ordered map.
    static let engineDifferential = FuzzTarget(
        name: "engine-differential", summary: "random engine operations agree with an in-memory oracle"
    ) { random in
        do {
            try EngineHarness.runDifferential(random: &random, steps: 30, pageSize: 512)
        } catch {
            throw FuzzFailure(description: "\(error)")
        }
    }

    /// The child of the process-kill test (StorageEngineTests): when
    /// `OPENCOREDATA_ENGINE_CHILD` names a database path, commits forever in full
    /// durability and prints `ack N` after each commit returns. Otherwise does nothing.
    static let engineKillChild = FuzzTarget(
        name: "engine-kill-child", summary: "(helper for the kill test; idle unless OPENCOREDATA_ENGINE_CHILD is set)"
    ) { random in
        guard let path = ProcessInfo.processInfo.environment["OPENCOREDATA_ENGINE_CHILD"] else { return }
        do {
            try EngineHarness.runKillChild(path: path, random: &random)
        } catch {
            throw FuzzFailure(description: "\(error)")
        }
    }

    /// The child of the kill-point tests (StorageEngineTests): when
    /// `OPENCOREDATA_KILL_POINT_DATABASE` names a database path, runs
    /// the `KillPointScenario` script `OPENCOREDATA_KILL_POINT_SCRIPT` names (`shared` when
    /// unset) on it, reporting each file-changing call, and ends itself
    /// just before call number `OPENCOREDATA_KILL_BEFORE` (when set);
    /// `OPENCOREDATA_KILL_POINT_WAITS` makes it wait for a line on stdin after each step.
    static let engineKillPointChild = FuzzTarget(
        name: "engine-kill-point-child",
        summary: "(helper for the kill-point tests; idle unless OPENCOREDATA_KILL_POINT_DATABASE is set)"
    ) { _ in
        let environment = ProcessInfo.processInfo.environment
        guard let path = environment["OPENCOREDATA_KILL_POINT_DATABASE"] else { return }
        do {
            try KillPointScenario.runChild(
                path: path,
                script: environment["OPENCOREDATA_KILL_POINT_SCRIPT"].flatMap { KillPointScenario.Script(rawValue: $0) }
                    ?? .shared,
                killBefore: environment["OPENCOREDATA_KILL_BEFORE"].flatMap { Int($0) },
                waits: environment["OPENCOREDATA_KILL_POINT_WAITS"] != nil)
        } catch {
            throw FuzzFailure(description: "\(error)")
        }
    }
}
