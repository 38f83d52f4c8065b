// A multi-process writer killed between its log append and its announcement (the lock
// file's change counter) leaves a commit in the log that a newly opened handle recovers
// and reads; a handle opened before it, told of no change by the counter, must still not
// append over that commit (README "Soak", eighth session).
import Foundation
import StorageEngine
import TestSupport
import Testing

@Suite struct UnannouncedCommitTests {
    @Test func aCommitAFreshHandleReadStaysAfterAnOlderHandleWrites() throws {
        let path = DatabaseBasicsTests.temporaryPath("unannounced")
        let options = MultiProcessTests.options()
        let key = MultiProcessTests.key
        let dying = try Database.open(at: path, options: options)
        let older = try Database.open(at: path, options: options)
        try dying.write { try $0.openTree(named: "rows").setValue([0], forKey: key(0)) }
        _ = try older.read { try $0.tree(named: "rows")?.count ?? 0 }
        let lock = try #require(FileHandle(forUpdatingAtPath: path + "-lock"))
        let counter = lock.readData(ofLength: 8)
        try dying.write { try $0.openTree(named: "rows").setValue([1], forKey: key(1)) }
        // The writer "dies" after its append and before its announcement: the counter as it was.
        lock.seek(toFileOffset: 0)
        lock.write(counter)
        try lock.synchronize()
        try lock.close()
        let fresh = try Database.open(at: path, options: options)
        #expect(try fresh.read { try $0.tree(named: "rows")?.value(forKey: key(1)) } == [1])
        try older.write { try $0.openTree(named: "other").setValue([2], forKey: key(2)) }
        try fresh.close()
        try older.close()
        try dying.close()
        let reopened = try Database.open(at: path, options: options)
        let kept = try reopened.read { try $0.tree(named: "rows")?.value(forKey: key(1)) }
        #expect(kept == [1])
        try reopened.close()
    }

    /// The lock file as it was before the dying commit, transaction id included: the next
    /// handle to open recovers a state nobody announced and announces it, so a handle
    /// opened before reads what the new one reads (L4).
    @Test func aHandleOpenedAfterAnUnannouncedCommitAnnouncesIt() throws {
        let path = DatabaseBasicsTests.temporaryPath("unannounced-open")
        let options = MultiProcessTests.options()
        let key = MultiProcessTests.key
        let dying = try Database.open(at: path, options: options)
        let older = try Database.open(at: path, options: options)
        try dying.write { try $0.openTree(named: "rows").setValue([0], forKey: key(0)) }
        #expect(try older.read { try $0.tree(named: "rows")?.count ?? 0 } == 1)
        let lock = try #require(FileHandle(forUpdatingAtPath: path + "-lock"))
        let announcement = lock.readData(ofLength: 16)
        try dying.write { try $0.openTree(named: "rows").setValue([1], forKey: key(1)) }
        lock.seek(toFileOffset: 0)
        lock.write(announcement)
        try lock.synchronize()
        try lock.close()
        #expect(try older.read { try $0.tree(named: "rows")?.count ?? 0 } == 1, "nobody announced it yet")
        let fresh = try Database.open(at: path, options: options)
        #expect(try fresh.read { try $0.tree(named: "rows")?.value(forKey: key(1)) } == [1])
        #expect(try older.read { try $0.tree(named: "rows")?.value(forKey: key(1)) } == [1])
        try fresh.close()
        try older.close()
        try dying.close()
    }
}
