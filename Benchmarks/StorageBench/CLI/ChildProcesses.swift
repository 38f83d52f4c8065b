// The hidden child processes of the store tests (Tests/OpenCoreDataTests):
//
//   storage-bench store-kill-child PATH          PageFileStoreCrashTests: saves until killed
//   storage-bench store-share-child PATH COUNT   SharedStoreFileTests: COUNT saves beside others
import Foundation
import OpenCoreData

/// `storage-bench store-share-child PATH COUNT`: opens the default store at PATH with
/// the multi-process option and history tracking, inserts COUNT records one save each
/// (names "PID-i"), printing `ack I` after save I returned, then prints `done N` with the
/// number of records it then sees in the file.
func runStoreShareChild(path: String, count: Int) -> Int32 {
    do {
        // OPENCOREDATA_SHARE_CHILD_ALONE: open without the multi-process option (the default
        // a second process must be refused under), waiting at most one second.
        let alone = ProcessInfo.processInfo.environment["OPENCOREDATA_SHARE_CHILD_ALONE"] != nil
        let coordinator = try StoreBench.coordinator(
            type: NSSQLiteStoreType, url: URL(fileURLWithPath: path),
            options: [
                NSPersistentHistoryTrackingKey: true as NSNumber,
                PageFileStoreMultiProcessOption: (!alone) as NSNumber,
                PageFileStoreDurabilityOption: "normal", NSPersistentStoreTimeoutOption: (alone ? 1 : 30) as NSNumber,
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
        let code = (error as NSError).code
        FileHandle.standardError.write(Data("store-share-child: error \(code): \(error)\n".utf8))
        return 1
    }
}

/// `storage-bench store-kill-child PATH` (hidden; the object-level crash test's child):
/// saves forever in full durability with history tracking — each save inserts 1 to 4
/// records with the next scores and updates an older one — and prints `ack N` once
/// records 0..<N are saved.
func runStoreKillChild(path: String) -> Int32 {
    do {
        let coordinator = try StoreBench.coordinator(
            type: NSSQLiteStoreType, url: URL(fileURLWithPath: path),
            options: [NSPersistentHistoryTrackingKey: true as NSNumber])
        let context = StoreBench.context(coordinator)
        var next = try context.count(for: NSFetchRequest<StoreBenchRecord>(entityName: "StoreRecord"))
        var generator = SystemRandomNumberGenerator()
        while true {
            let batch = Int.random(in: 1...4, using: &generator)
            for offset in 0..<batch { StoreBench.fill(StoreBenchRecord(context: context), next + offset) }
            if next > 0 {
                let request = NSFetchRequest<StoreBenchRecord>(entityName: "StoreRecord")
                request.predicate = NSPredicate(
                    format: "score == %lld", Int64.random(in: 0..<Int64(next), using: &generator))
                for record in try context.fetch(request) { record.weight += 1 }
            }
            try context.save()
            context.reset()
            next += batch
            FileHandle.standardOutput.write(Data("ack \(next)\n".utf8))
        }
    } catch {
        FileHandle.standardError.write(Data("store-kill-child: \(error)\n".utf8))
        return 1
    }
}
