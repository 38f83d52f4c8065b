import Foundation
import Testing

@testable import OpenCoreData

/// `NSPersistentStoreRemoteChange` for saves made by another process on a shared store.
@Suite struct RemoteChangeNotificationTests {
    /// Notifications received on any thread.
    final class Received: @unchecked Sendable {
        private let lock = NSLock()
        private var notes: [(Date, Notification)] = []
        func append(_ note: Notification) { lock.withLock { notes.append((Date(), note)) } }
        var all: [(date: Date, note: Notification)] { lock.withLock { notes.map { (date: $0.0, note: $0.1) } } }
        /// Waits until `condition` holds or `seconds` pass.
        func wait(seconds: Double, until condition: ([(date: Date, note: Notification)]) -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                if condition(all) { return true }
                usleep(10_000)
            }
            return condition(all)
        }
    }

    @Test func anotherProcessSavePostsWithinASecond() throws {
        guard let executable = SharedStoreChild.executable() else { return }
        let url = try PageFileFixtures.temporaryURL("remote.store")
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let coordinator = try SharedStoreChild.coordinator(
            url, options: [NSPersistentStoreRemoteChangeNotificationPostOptionKey: true as NSNumber])
        defer { try? PageFileFixtures.close(coordinator) }
        let received = Received()
        let observer = NotificationCenter.default.addObserver(
            forName: .NSPersistentStoreRemoteChange, object: coordinator, queue: nil
        ) { received.append($0) }
        defer { NotificationCenter.default.removeObserver(observer) }

        // An auto-merging context does not merge other processes' saves by itself.
        let viewer = PageFileFixtures.context(coordinator)
        viewer.automaticallyMergesChangesFromParent = true
        let viewerChanges = Received()
        let viewerObserver = NotificationCenter.default.addObserver(
            forName: .NSManagedObjectContextObjectsDidChange, object: viewer, queue: nil
        ) { viewerChanges.append($0) }
        defer { NotificationCenter.default.removeObserver(viewerObserver) }

        // This process's own save: one notification, from the save.
        let context = PageFileFixtures.context(coordinator)
        try context.performAndWait {
            SharedStoreChild.insertRecord("parent", into: context)
            try context.save()
        }
        #expect(received.all.count == 1)
        let ownToken = try #require(
            received.all.first?.note.userInfo?[NSPersistentHistoryTokenKey] as? NSPersistentHistoryToken)
        usleep(600_000)
        #expect(received.all.count == 1, "the watcher posted this process's own save again")

        let child = try SharedStoreChild.run(executable, at: url, count: 3)
        let exited = Date()
        #expect(child.status == 0, "child said: \(child.output)")

        let arrived = received.wait(seconds: 1) { notes in
            notes.count > 1
                && (notes.last?.note.userInfo?[NSPersistentHistoryTokenKey] as? NSPersistentHistoryToken)
                    == coordinator.currentPersistentHistoryToken(fromStores: nil)
        }
        #expect(arrived, "no notification carrying the newest token within a second of the child's exit")
        let remote = try #require(received.all.last)
        #expect(remote.date.timeIntervalSince(exited) < 1)
        let storeURL = remote.note.userInfo?[NSPersistentStoreURLKey] as? URL
        #expect(storeURL?.standardizedFileURL.path == url.standardizedFileURL.path)

        // The history-merge recipe: fetch after the last token, merge each transaction.
        let reader = PageFileFixtures.context(coordinator)
        let transactions = try reader.performAndWait {
            let result = try reader.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: ownToken))
            return (result as? NSPersistentHistoryResult)?.result as? [NSPersistentHistoryTransaction] ?? []
        }
        #expect(transactions.count == 3)
        #expect(transactions.allSatisfy { $0.author?.hasPrefix("child-") == true })
        #expect(viewerChanges.all.isEmpty, "an auto-merging context merged another process's save by itself")
        viewer.performAndWait {
            for transaction in transactions {
                viewer.mergeChanges(fromContextDidSave: transaction.objectIDNotification())
            }
        }
        #expect(
            try viewer.performAndWait {
                try viewer.count(for: NSFetchRequest<NSManagedObject>(entityName: "StoreRecord"))
            } == 4)
    }
}
