import Foundation
import StorageEngine
import TestSupport
import Testing

/// Free pages are reused and the log is checkpointed while other handles (processes)
/// read all the time (SPEC.md §2.8 L6, L7).
@Suite struct MultiProcessSpaceTests {
    static func key(_ value: Int) -> [UInt8] { withUnsafeBytes(of: UInt64(value).bigEndian) { Array($0) } }

    /// Readers that keep a snapshot open nearly all the time, on their own handles.
    final class BusyReaders: @unchecked Sendable {
        private let lock = NSLock()
        private var stopped = false
        private var threads: [Thread] = []
        private(set) var reads = 0

        func start(_ handles: [Database]) {
            for handle in handles {
                for _ in 0..<2 {
                    let thread = Thread { [self] in
                        while !lock.withLock({ stopped }) {
                            _ = try? handle.read { transaction in
                                _ = try transaction.tree(named: "rows")?.value(forKey: MultiProcessSpaceTests.key(7))
                                usleep(300)
                            }
                            lock.withLock { reads += 1 }
                        }
                    }
                    threads.append(thread)
                    thread.start()
                }
            }
        }

        func stop() {
            lock.withLock { stopped = true }
            while threads.contains(where: { !$0.isFinished }) { usleep(1_000) }
        }
    }

    @Test func pagesAreReusedWhileOtherHandlesReadAllTheTime() throws {
        let path = DatabaseBasicsTests.temporaryPath("multi-space")
        let writer = try Database.open(at: path, options: MultiProcessTests.options())
        let handles = try (0..<2).map { _ in try Database.open(at: path, options: MultiProcessTests.options()) }
        try writer.write { transaction in
            let tree = try transaction.openTree(named: "rows")
            for index in 0..<2_000 { try tree.setValue(Array(repeating: 1, count: 80), forKey: Self.key(index)) }
        }
        try writer.checkpoint()
        let loaded = try writer.verify().pageCount
        let readers = BusyReaders()
        readers.start(handles)
        for round in 0..<1_500 {
            try writer.write { transaction in
                let tree = try transaction.openTree(named: "rows")
                try tree.setValue(
                    Array(repeating: UInt8(truncatingIfNeeded: round), count: 80), forKey: Self.key(round % 2_000))
            }
        }
        readers.stop()
        let report = try writer.verify()
        let logBytes = try writer.committedLogBytes()
        #expect(readers.reads > 100)
        // Each commit copies a leaf, its branch and the catalog page: 4,500 pages without reuse.
        #expect(report.pageCount < loaded * 2 + 100, "\(report.pageCount) pages after 1,500 commits, from \(loaded)")
        #expect(logBytes < 4 * (32 << 10) + 8 * 4_160, "the log was not checkpointed: \(logBytes) bytes")
        for handle in handles { try handle.close() }
        try writer.close()
    }

    @Test func aCheckpointByAHandleBehindTheOthersKeepsTheirCommits() throws {
        let path = DatabaseBasicsTests.temporaryPath("multi-stale-checkpoint")
        let first = try Database.open(at: path, options: MultiProcessTests.options())
        let second = try Database.open(at: path, options: MultiProcessTests.options())
        try second.write { try $0.openTree(named: "rows").setValue([0], forKey: Self.key(0)) }
        try first.write { try $0.openTree(named: "rows").setValue([1], forKey: Self.key(1)) }
        // `second` has not looked at the files since `first` committed.
        try second.checkpoint()
        try first.write { try $0.openTree(named: "rows").setValue([2], forKey: Self.key(2)) }
        try second.checkpoint()
        for handle in [first, second] {
            #expect(try handle.read { try $0.tree(named: "rows")?.count } == 3)
        }
        try first.close()
        try second.close()
        let reopened = try Database.open(at: path)
        #expect(try reopened.read { try $0.tree(named: "rows")?.count } == 3)
        _ = try reopened.verify()
        try reopened.close()
    }

    @Test func theFileShrinksUnderOtherHandlesAndTheyFollow() throws {
        let path = DatabaseBasicsTests.temporaryPath("multi-shrink")
        let writer = try Database.open(at: path, options: MultiProcessTests.options())
        let other = try Database.open(at: path, options: MultiProcessTests.options())
        try writer.write { transaction in
            let tree = try transaction.openTree(named: "rows")
            for index in 0..<4_000 { try tree.setValue(Array(repeating: 3, count: 90), forKey: Self.key(index)) }
        }
        try writer.checkpoint()
        let loaded = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        #expect(try other.read { try $0.tree(named: "rows")?.count } == 4_000)
        let held = try other.snapshot()
        try writer.write { transaction in
            let tree = try transaction.openTree(named: "rows")
            for index in 0..<4_000 where index % 4 != 0 { try tree.removeValue(forKey: Self.key(index)) }
        }
        // The other handle's snapshot blocks the checkpoint lock, so nothing moves yet.
        #expect(try held.tree(named: "rows")?.count == 4_000)
        #expect(try held.tree(named: "rows")?.value(forKey: Self.key(3_999)) == Array(repeating: 3, count: 90))
        held.close()
        try writer.checkpoint()
        let shrunk = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        // A quarter of the rows are left; the copies the delete made are gone again.
        #expect(shrunk * 4 < loaded * 3, "\(shrunk) bytes after the shrink, \(loaded) after the load")
        #expect(try other.read { try $0.tree(named: "rows")?.count } == 1_000)
        try other.write { try $0.openTree(named: "rows").setValue([9], forKey: Self.key(10_000)) }
        _ = try other.verify()
        #expect(try writer.read { try $0.tree(named: "rows")?.value(forKey: Self.key(10_000)) } == [9])
        try other.close()
        try writer.close()
    }
}
