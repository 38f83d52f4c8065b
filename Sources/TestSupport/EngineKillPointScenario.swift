// The kill-point child's scripts (EngineKillPoints.swift): a multi-process handle on tiny
// pages whose steps pass through every writing part of the protocol — the first commit
// (which writes the log's header), log commits with their announcements, an explicit and
// automatic checkpoints, a spilling transaction committed directly, a shrink (relocation
// and cut, SPEC.md §2.13), a vacuum and the checkpoint at close. After each step it
// prints `ack N` and, when the parent asks for it, waits for a line on stdin, so the
// parent's handles can read the state each step left (and learn its counter) before the
// next one starts.
import Foundation
import StorageEngine

/// The kill-point child's script and what each prefix of it leaves in the database.
public enum KillPointScenario {
    /// One step: a commit, an explicit checkpoint, or the close.
    public enum Step: Sendable {
        /// Puts rows `keys` with values of about `size` bytes.
        case insert(Range<Int>, size: Int)
        /// Removes rows `keys`.
        case remove(Range<Int>)
        /// `Database.checkpoint()`.
        case checkpoint
        /// `Database.vacuum()` (it needs the database alone).
        case vacuum
        /// `Database.close()` (its checkpoint).
        case close
    }

    /// A script.
    public enum Script: String, Sendable {
        /// Beside other processes' handles: everything but a vacuum. Tiny pages and a 4 KiB
        /// checkpoint threshold make the small commits checkpoint every few steps; the large
        /// insert spills (a 16 KiB spill threshold, §2.4 step 7a) and commits directly (step
        /// 7); the removal commits directly too and leaves most of the file free, so the
        /// write shrinks it (§2.13: relocation, cut).
        case shared
        /// Alone (the first step creates the file): commits, a removal, a vacuum, a commit.
        case vacuum

        /// The script's steps.
        public var steps: [Step] {
            switch self {
            case .shared:
                return [
                    .insert(0..<4, size: 20), .insert(4..<8, size: 20), .checkpoint, .insert(8..<12, size: 20),
                    .insert(12..<16, size: 20), .insert(100..<700, size: 60), .remove(100..<690),
                    .insert(16..<20, size: 20), .insert(20..<24, size: 20), .close,
                ]
            case .vacuum:
                return [
                    .insert(0..<4, size: 20), .insert(100..<400, size: 60), .remove(100..<390),
                    .insert(4..<8, size: 20), .vacuum, .insert(8..<12, size: 20), .close,
                ]
            }
        }
    }

    /// The options of every handle on the scenario's database (the child's with its
    /// kill-point file system).
    public static func options(fileSystem: (any StorageFileSystem)? = nil) -> Database.Options {
        var options = Database.Options()
        options.pageSize = 512
        options.durability = .normal
        options.multiProcess = true
        options.busyTimeout = 30
        options.checkpointThreshold = 4 << 10
        options.spillThreshold = 16 << 10
        if let fileSystem { options.fileSystem = fileSystem }
        return options
    }

    /// How many of the script's first `count` steps commit (change the rows).
    public static func commits(inFirst count: Int, of script: Script = .shared) -> Int {
        script.steps.prefix(count).reduce(0) {
            switch $1 {
            case .insert, .remove: return $0 + 1
            case .checkpoint, .vacuum, .close: return $0
            }
        }
    }

    /// The value row `key` holds when written with `size`.
    static func value(_ key: Int, size: Int) -> [UInt8] {
        Array("row \(key) ".utf8) + Array(repeating: UInt8(truncatingIfNeeded: key &* 7), count: size)
    }

    /// The rows after the script's first `commits` commits.
    public static func rows(afterCommits commits: Int, of script: Script) -> [[UInt8]: [UInt8]] {
        var rows: [[UInt8]: [UInt8]] = [:]
        var done = 0
        for step in script.steps where done < commits {
            switch step {
            case .insert(let keys, let size):
                for key in keys { rows[EngineHarness.bigEndianKey(key)] = value(key, size: size) }
            case .remove(let keys):
                for key in keys { rows[EngineHarness.bigEndianKey(key)] = nil }
            case .checkpoint, .vacuum, .close: continue
            }
            done += 1
        }
        return rows
    }

    /// The number of the child's commits `database` sees, after checking that its rows
    /// are exactly those that many commits leave; nil and a reason when they are not.
    public static func observe(_ database: Database, script: Script = .shared) throws -> (
        commits: Int, problem: String?
    ) {
        try database.read { transaction in
            let commits = try transaction.tree(named: "step")?.value(forKey: [0]).map { bytes in
                bytes.reduce(0) { $0 << 8 | Int($1) }
            }
            var found: [[UInt8]: [UInt8]] = [:]
            try transaction.tree(named: "rows")?.scan { key, value in
                found[Array(key)] = Array(value)
                return true
            }
            let expected = rows(afterCommits: commits ?? 0, of: script)
            guard found == expected else {
                return (
                    commits ?? 0,
                    "\(found.count) rows, not the \(expected.count) that \(commits ?? 0) commits leave"
                )
            }
            return (commits ?? 0, nil)
        }
    }

    /// The child: runs `script` on the database at `path`, printing `ack N` after step N;
    /// with `waits`, reads a line from stdin after each ack before going on.
    public static func runChild(path: String, script: Script, killBefore: Int?, waits: Bool) throws {
        let fileSystem = KillPointFileSystem(databasePath: path, killBefore: killBefore)
        let database = try Database.open(at: path, options: options(fileSystem: fileSystem))
        var commits = 0
        for (index, step) in script.steps.enumerated() {
            switch step {
            case .insert, .remove:
                commits += 1
                let number = commits
                try database.write { transaction in
                    let tree = try transaction.openTree(named: "rows")
                    if case .insert(let keys, let size) = step {
                        for key in keys {
                            try tree.setValue(value(key, size: size), forKey: EngineHarness.bigEndianKey(key))
                        }
                    } else if case .remove(let keys) = step {
                        for key in keys { try tree.removeValue(forKey: EngineHarness.bigEndianKey(key)) }
                    }
                    try transaction.openTree(named: "step").setValue([UInt8(number)], forKey: [0])
                }
            case .checkpoint:
                try database.checkpoint()
            case .vacuum:
                try database.vacuum()
            case .close:
                try database.close()
            }
            FileHandle.standardOutput.write(Data("ack \(index + 1)\n".utf8))
            if waits { _ = readLine() }
        }
    }
}
