// Real processes killed between two steps of the multi-process protocol (SPEC.md §2.4,
// §2.5, §2.8, L4): a child runs KillPointScenario and ends itself (`_exit`) just before
// one chosen file-changing call; handles this process opened before it (one that read
// each step the child acknowledged, one that read nothing since it opened) and a handle
// opened after it must then agree on what was committed, keep it when they write, and
// leave a file that reopens with it and verifies.
import Foundation
import StorageEngine
import TestSupport
import Testing

@Suite(.serialized) struct KillPointTests {
    static var executable: URL { ProcessKillTests.childExecutable }

    static func key(_ value: Int) -> [UInt8] { withUnsafeBytes(of: UInt64(value).bigEndian) { Array($0) } }

    /// What the handles saw after one kill.
    struct Outcome {
        var run = KillPointRun()
        /// Commits seen by the handle that read every acknowledged step, right after the kill.
        var olderSaw = 0
        /// Commits seen by the first handle opened after the kill (read-only in
        /// `.olderWritesFirst`): what every handle must see from then on.
        var firstSaw = 0
        /// Commits the older handle sees after it wrote.
        var olderSawAfterWriting = 0
        /// Commits a handle opened after everything closed sees.
        var reopenedSaw = 0
        var problems: [String] = []
    }

    /// What happens first after the kill.
    enum Order {
        /// A read-only handle (which announces nothing, L5) reads, then the older handle
        /// writes: it must not append over what the read-only handle read.
        case olderWritesFirst
        /// A multi-process handle opens and reads, then the handles opened before the kill
        /// read: they must see what it saw.
        case freshOpensFirst
    }

    static func temporaryDirectory(_ name: String) throws -> URL {
        try TestScratch.directory(name)
    }

    /// The child's run without a kill: the events it makes, each with its step.
    static func dryRun() throws -> KillPointRun {
        let directory = try temporaryDirectory("kill-point-dry")
        defer { try? FileManager.default.removeItem(at: directory) }
        // The parent holds a handle as in the real runs, so the child's I/O is the same.
        let path = directory.appendingPathComponent("scenario.db").path
        let older = try Database.open(at: path, options: KillPointScenario.options())
        let run = try KillPointRun.run(executable: executable, path: path, killBefore: nil) { _ in
            _ = try KillPointScenario.observe(older)
        }
        try older.close()
        return run
    }

    /// Runs the child killed before event `killBefore` and checks every handle.
    static func outcome(killBefore: Int, order: Order) throws -> Outcome {
        let directory = try temporaryDirectory("kill-point-\(killBefore)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("scenario.db").path
        let options = KillPointScenario.options()
        var outcome = Outcome()
        func check(_ seen: (commits: Int, problem: String?), _ who: String) -> Int {
            if let problem = seen.problem { outcome.problems.append("\(who): \(problem)") }
            return seen.commits
        }
        func expect(_ handle: Database, sees commits: Int, _ who: String) throws {
            let seen = check(try KillPointScenario.observe(handle), who)
            if seen != commits { outcome.problems.append("\(who) reads \(seen) commits, not \(commits)") }
        }
        let older = try Database.open(at: path, options: options)
        let stale = try Database.open(at: path, options: options)
        _ = check(try KillPointScenario.observe(stale), "stale handle before the child")
        outcome.run = try KillPointRun.run(executable: executable, path: path, killBefore: killBefore) { step in
            try expect(older, sees: KillPointScenario.commits(inFirst: step), "the older handle after step \(step)")
        }
        if outcome.run.status != KillPointFileSystem.killedStatus {
            outcome.problems.append("the child exited with \(outcome.run.status): \(outcome.run.otherOutput)")
        }
        let acknowledged = KillPointScenario.commits(inFirst: outcome.run.acknowledged)
        outcome.olderSaw = check(try KillPointScenario.observe(older), "older handle after the kill")
        var fresh: Database?
        switch order {
        case .olderWritesFirst:
            var readOnly = options
            readOnly.readOnly = true
            let witness = try Database.open(at: path, options: readOnly)
            outcome.firstSaw = check(try KillPointScenario.observe(witness), "read-only handle")
            try witness.close()
            try older.write { try $0.openTree(named: "parent").setValue([1], forKey: key(1)) }
            outcome.olderSawAfterWriting = check(try KillPointScenario.observe(older), "older handle after writing")
            fresh = try Database.open(at: path, options: options)
            try expect(fresh!, sees: outcome.firstSaw, "a handle opened after the older one wrote")
            try expect(stale, sees: outcome.firstSaw, "the stale handle")
        case .freshOpensFirst:
            fresh = try Database.open(at: path, options: options)
            outcome.firstSaw = check(try KillPointScenario.observe(fresh!), "fresh handle")
            // Once a handle read a commit, a handle opened before it reads it too (L4).
            try expect(older, sees: outcome.firstSaw, "the older handle after a fresh one read")
            try expect(stale, sees: outcome.firstSaw, "the stale handle after a fresh one read")
            try older.write { try $0.openTree(named: "parent").setValue([1], forKey: key(1)) }
            outcome.olderSawAfterWriting = check(try KillPointScenario.observe(older), "older handle after writing")
        }
        guard let fresh else { return outcome }
        if outcome.firstSaw < acknowledged {
            outcome.problems.append(
                "the first handle opened reads \(outcome.firstSaw) commits of \(acknowledged) acknowledged")
        }
        if outcome.olderSaw > outcome.firstSaw {
            outcome.problems.append("the older handle read \(outcome.olderSaw) commits, more than the files hold")
        }
        if outcome.olderSawAfterWriting != outcome.firstSaw {
            outcome.problems.append(
                "the older handle wrote over a commit: \(outcome.olderSawAfterWriting) where \(outcome.firstSaw) were read"
            )
        }
        try stale.write { try $0.openTree(named: "parent").setValue([2], forKey: key(2)) }
        for (handle, who) in [(older, "older"), (fresh, "fresh"), (stale, "stale")] {
            try expect(handle, sees: outcome.firstSaw, "the \(who) handle at the end")
            let parents = try handle.read { try $0.tree(named: "parent")?.count ?? 0 }
            if parents != 2 { outcome.problems.append("the \(who) handle reads \(parents) of the parent's 2 commits") }
        }
        _ = try older.verify()
        try stale.close()
        try fresh.close()
        try older.close()
        let reopened = try Database.open(at: path, options: options)
        outcome.reopenedSaw = check(try KillPointScenario.observe(reopened), "reopened")
        let parents = try reopened.read { try $0.tree(named: "parent")?.count ?? 0 }
        if outcome.reopenedSaw != outcome.firstSaw || parents != 2 {
            outcome.problems.append(
                "reopened: \(outcome.reopenedSaw) commits (\(outcome.firstSaw) read before), \(parents) of 2 parent commits"
            )
        }
        _ = try reopened.verify()
        try reopened.close()
        return outcome
    }

    static func childIsBuilt() -> Bool {
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            Issue.record("\(executable.path) is missing: run `swift build` before `swift test`")
            return false
        }
        return true
    }

    /// The process dies after its commit's log append, before it raises the change counter
    /// (fe7bfaf; UnannouncedCommitTests restores the counter by hand instead). The older
    /// handle read the step before, so the counter tells it nothing: it must still not
    /// append over the commit a fresh handle read.
    @Test func aWriterKilledBeforeItsAnnouncementKeepsTheCommitAnOlderHandleWritesAfter() throws {
        guard Self.childIsBuilt() else { return }
        let dry = try Self.dryRun()
        // The second commit's announcement, right after its log append.
        let index = try #require(
            dry.events.indices.first { dry.stepOfEvent[$0] == 1 && dry.events[$0].isAnnouncement },
            "no announcement in the second commit: \(dry.events)")
        #expect(dry.events[index - 1].kind == .write && dry.events[index - 1].file == "wal")
        let outcome = try Self.outcome(killBefore: dry.events[index].number, order: .olderWritesFirst)
        #expect(outcome.run.acknowledged == 1)
        #expect(outcome.olderSaw == 1)
        #expect(outcome.firstSaw == 2, "a read-only handle opened since recovers the unannounced commit")
        #expect(outcome.olderSawAfterWriting == 2, "the older handle's write kept it")
        #expect(outcome.reopenedSaw == 2)
        #expect(outcome.problems.isEmpty, "\(outcome.problems)")
    }

    /// Every kill point of the scenario: before each of the child's file-changing calls
    /// (one after a sync is skipped: a killed process loses no written byte, so it leaves
    /// what a kill before that sync leaves).
    @Test func everyKillPointLeavesTheOtherHandlesAgreeing() throws {
        guard Self.childIsBuilt() else { return }
        let dry = try Self.dryRun()
        #expect(
            dry.status == 0 && dry.acknowledged == KillPointScenario.Script.shared.steps.count, "\(dry.otherOutput)")
        var points = 0
        for (index, event) in dry.events.enumerated() where index == 0 || dry.events[index - 1].kind != .sync {
            for order in [Order.olderWritesFirst, .freshOpensFirst] {
                let outcome = try Self.outcome(killBefore: event.number, order: order)
                #expect(
                    outcome.problems.isEmpty,
                    "killed before \(event) in step \(dry.stepOfEvent[index] + 1), \(order): \(outcome.problems)")
            }
            points += 1
        }
        #expect(points > 30)
    }

    /// The vacuum script, alone (a vacuum needs the database alone, so no handle of this
    /// process is open meanwhile): killed before each of its file-changing calls, from the
    /// file's creation to the close, the next handle opens the state of the last
    /// acknowledged commit or of the one in flight, writes, vacuums over what the killed
    /// vacuum left (its `-vacuum` files), and a second handle and a reopen agree.
    @Test func everyVacuumKillPointLeavesAFileTheNextHandleOpensWhole() throws {
        guard Self.childIsBuilt() else { return }
        let script = KillPointScenario.Script.vacuum
        let directory = try Self.temporaryDirectory("kill-point-vacuum")
        defer { try? FileManager.default.removeItem(at: directory) }
        let dry = try KillPointRun.run(
            executable: Self.executable, path: directory.appendingPathComponent("dry.db").path, script: script,
            killBefore: nil)
        #expect(dry.status == 0 && dry.acknowledged == script.steps.count, "\(dry.otherOutput)")
        #expect(dry.events.contains { $0.kind == .rename && $0.file == "vacuum" })
        let options = KillPointScenario.options()
        for (index, event) in dry.events.enumerated() where index == 0 || dry.events[index - 1].kind != .sync {
            let path = directory.appendingPathComponent("vacuum-\(event.number).db").path
            let run = try KillPointRun.run(
                executable: Self.executable, path: path, script: script, killBefore: event.number)
            let context = "killed before \(event) in step \(dry.stepOfEvent[index] + 1)"
            #expect(run.status == KillPointFileSystem.killedStatus, "\(context): \(run.otherOutput)")
            let acknowledged = KillPointScenario.commits(inFirst: run.acknowledged, of: script)
            let database = try Database.open(at: path, options: options)
            let (seen, problem) = try KillPointScenario.observe(database, script: script)
            #expect(problem == nil, "\(context): \(problem ?? "")")
            #expect(seen == acknowledged || seen == acknowledged + 1, "\(context): \(seen) of \(acknowledged) commits")
            try database.write { try $0.openTree(named: "parent").setValue([1], forKey: Self.key(1)) }
            try database.vacuum()
            let second = try Database.open(at: path, options: options)
            for handle in [database, second] {
                #expect(try KillPointScenario.observe(handle, script: script) == (seen, nil), "\(context)")
                #expect(try handle.read { try $0.tree(named: "parent")?.count ?? 0 } == 1, "\(context)")
            }
            _ = try second.verify()
            try second.close()
            try database.close()
            let reopened = try Database.open(at: path, options: options)
            #expect(try KillPointScenario.observe(reopened, script: script) == (seen, nil), "\(context)")
            _ = try reopened.verify()
            try reopened.close()
        }
    }
}
