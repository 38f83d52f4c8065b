// `storage-bench store-share-child PATH COUNT` (hidden; the shared-store test's child):
// opens the default store at PATH with the multi-process option and history tracking,
// inserts COUNT records one save each (names "PID-i"), printing `ack I` after save I
// returned, then prints `done N` with the number of records it then sees in the file.
import Foundation
import OpenCoreData

func runStoreShareChild(path: String, count: Int) -> Int32 {
    do {
        let coordinator = try StoreBench.coordinator(
            type: NSSQLiteStoreType, url: URL(fileURLWithPath: path),
            options: [
                NSPersistentHistoryTrackingKey: true as NSNumber, PageFileStoreMultiProcessOption: true as NSNumber,
                PageFileStoreDurabilityOption: "normal", NSPersistentStoreTimeoutOption: 30 as NSNumber,
            ])
        let context = StoreBench.context(coordinator)
        context.transactionAuthor = "child-\(getpid())"
        for index in 0..<count {
            let record = StoreBenchRecord(context: context)
            StoreBench.fill(record, index)
            record.name = "\(getpid())-\(index)"
            try context.save()
            context.reset()
            FileHandle.standardOutput.write(Data("ack \(index + 1)\n".utf8))
        }
        let seen = try context.count(for: NSFetchRequest<StoreBenchRecord>(entityName: "StoreRecord"))
        FileHandle.standardOutput.write(Data("done \(seen)\n".utf8))
        for store in coordinator.persistentStores { try coordinator.remove(store) }
        return 0
    } catch {
        FileHandle.standardError.write(Data("store-share-child: \(error)\n".utf8))
        return 1
    }
}
