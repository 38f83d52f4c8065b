// Saves by other processes, noticed without reading the store: a store added with both
// PageFileStoreMultiProcessOption and NSPersistentStoreRemoteChangeNotificationPostOptionKey
// polls the engine's count of changes announced by other handles (8 bytes of the lock
// file) every pollInterval on a timer, and posts NSPersistentStoreRemoteChange through
// its coordinator when the count grew. The store's own saves post from the save itself
// (NSPersistentStoreCoordinator+History.swift) and do not grow the count. A checkpoint
// by another process grows it too and posts with an unchanged history token: a reader
// that fetches history after its last token finds nothing new, which costs less than
// missing a save (telling a checkpoint from a save would need a read transaction, and
// a save of this process racing the poll could hide the other's).
//
// Inotify would wake sooner, but the lock file is written with pwrite by every
// process, so a poll of one read is as cheap and portable; a quarter second keeps the
// notification within a second of the other process's commit.
import Dispatch
import Foundation
import StorageEngine

final class PageFileRemoteChangeWatcher: @unchecked Sendable {
    /// How often the count is read.
    static let pollInterval: DispatchTimeInterval = .milliseconds(250)

    private let timer: DispatchSourceTimer
    private weak var store: PageFileStore?
    private let database: Database
    private let lock = NSLock()
    private var seenChanges: UInt64
    private var isStopped = false

    /// Starts watching `database` for `store`; nil when the database is not shared between processes.
    init?(store: PageFileStore, database: Database) {
        guard let changes = try? database.changesAnnouncedByOtherHandles() else { return nil }
        self.store = store
        self.database = database
        self.seenChanges = changes
        self.timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global(qos: .utility))
        timer.schedule(deadline: .now() + Self.pollInterval, repeating: Self.pollInterval)
        timer.setEventHandler { [weak self] in self?.poll() }
        timer.resume()
    }

    /// Stops the timer (when the store is removed); returns once no poll runs, so the
    /// database may close.
    func stop() {
        timer.cancel()
        lock.withLock { isStopped = true }
    }

    deinit {
        timer.cancel()
    }

    private func poll() {
        guard let store else { return }
        let posts = lock.withLock { () -> Bool in
            // Under the lock: stop() waits for this read before the database closes.
            guard !isStopped, let changes = try? database.changesAnnouncedByOtherHandles(), changes > seenChanges
            else { return false }
            seenChanges = changes
            return true
        }
        guard posts, let coordinator = store.persistentStoreCoordinator else { return }
        coordinator.postRemoteChangeNotification(for: store)
    }
}
