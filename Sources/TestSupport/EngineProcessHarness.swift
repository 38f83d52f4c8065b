// Real processes: a child commits in full durability and reports each acknowledged
// commit on stdout; the parent kills it with SIGKILL and checks nothing acknowledged is
// missing. The child is `opencoredata-fuzz engine-kill-child` (see Fuzz/).
import Foundation
import StorageEngine

extension EngineHarness {
    /// The value the kill test stores under commit `index`.
    public static func killTestValue(_ index: Int) -> [UInt8] {
        Array("commit \(index) ".utf8) + Array(repeating: UInt8(truncatingIfNeeded: index), count: 80)
    }

    /// The child's loop: continues after the highest committed index, forever.
    public static func runKillChild(path: String, random: inout SeededRandom) throws {
        var options = Database.Options()
        options.durability = .full
        options.checkpointThreshold = 64 << 10
        options.multiProcess = ProcessInfo.processInfo.environment["OPENCOREDATA_ENGINE_CHILD_SHARED"] != nil
        let database = try Database.open(at: path, options: options)
        var next = try database.read { transaction in
            try transaction.tree(named: "acks")?.count ?? 0
        }
        while true {
            let batch = random.int(in: 1...4)
            try database.write { transaction in
                let tree = try transaction.openTree(named: "acks")
                for offset in 0..<batch {
                    try tree.setValue(killTestValue(next + offset), forKey: bigEndianKey(next + offset))
                }
            }
            next += batch
            FileHandle.standardOutput.write(Data("ack \(next)\n".utf8))
        }
    }
}

/// Runs a body on several threads at once (tests and benchmarks of concurrent writers).
public enum DispatchQueueRunner {
    /// Calls `body(i)` for `i` in `0..<count`, each on its own thread (not a pool sized to
    /// the cores, which would run only two at once here), and returns when all finished.
    public static func concurrently(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let group = DispatchGroup()
        for index in 0..<count {
            group.enter()
            let thread = Thread {
                body(index)
                group.leave()
            }
            thread.start()
        }
        group.wait()
    }
}
