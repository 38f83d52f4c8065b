// The last store of a process on a file closes the engine handle even while a writer
// still runs on it: the close waits for the writer. It used to give up after the busy
// timeout and leave the files open (and locked) until the handle was freed, so an open
// right after, as a migration's, found the store busy (134090).
import Foundation
import StorageEngine
import Testing

@testable import OpenCoreData

@Suite struct SharedDatabaseCloseTests {
    @Test func theLastReleaseClosesTheFilesOnceARunningWriterIsDone() throws {
        let url = try PageFileFixtures.temporaryURL("Shared.store")
        var options = Database.Options()
        options.busyTimeout = 0.05
        let shared = try PageFileSharedDatabase.acquire(url, options: options, timeout: 1)
        let database = UncheckedBox(shared.database)
        let writing = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            try? database.value.write { transaction in
                _ = try transaction.openTree(named: "t")
                writing.signal()
                // Holds the writer gate well past the busy timeout.
                usleep(400_000)
            }
            finished.signal()
        }
        writing.wait()
        shared.release()
        #expect(!PageFileSharedDatabase.isOpen(url))
        // The files are closed: an exclusive open that does not wait succeeds.
        var exclusive = Database.Options()
        exclusive.createIfMissing = false
        exclusive.busyTimeout = 0
        let reopened = try Database.open(at: url.path, options: exclusive)
        try reopened.close()
        finished.wait()
    }
}
