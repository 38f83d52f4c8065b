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
        let executable = PageFileStoreCrashTests.childExecutable
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            Issue.record("\(executable.path) is missing: run `swift build` before `swift test`")
            return
        }
        let url = try PageFileFixtures.temporaryURL("remote.store")
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: PageFileStoreCrashTests.model)
        try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: url,
            options: [
                PageFileStoreMultiProcessOption: true as NSNumber, NSPersistentHistoryTrackingKey: true as NSNumber,
                NSPersistentStoreRemoteChangeNotificationPostOptionKey: true as NSNumber,
                PageFileStoreDurabilityOption: "normal", NSPersistentStoreTimeoutOption: 30 as NSNumber,
            ])
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
            let record = NSEntityDescription.insertNewObject(forEntityName: "StoreRecord", into: context)
            record.setValue("parent", forKey: "name")
            record.setValue(Int64(1), forKey: "score")
            record.setValue(Int16(1), forKey: "age")
            record.setValue(0.5, forKey: "weight")
            record.setValue(true, forKey: "active")
            try context.save()
        }
        #expect(received.all.count == 1)
        let ownToken = try #require(
            received.all.first?.note.userInfo?[NSPersistentHistoryTokenKey] as? NSPersistentHistoryToken)
        usleep(600_000)
        #expect(received.all.count == 1, "the watcher posted this process's own save again")

        let process = Process()
        process.executableURL = executable
        process.arguments = ["store-share-child", url.path, "3"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        process.waitUntilExit()
        let exited = Date()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0, "child said: \(text)")

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
