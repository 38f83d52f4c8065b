// Batch requests and power loss or I/O faults, on the simulated file system: the default
// store (one engine transaction per batch) and the binary store (one file replace). A
// crash after any I/O operation of a batch leaves, once recovered, the graph and history
// either as before the batch or as after it — never part of it — and after it whenever
// the batch returned; the recovered default store passes verify(). A fault at any write
// or sync makes the batch throw or succeed whole, and the reopened store holds one state
// or the other.
import Foundation
import StorageEngine
import TestSupport
import Testing

@testable import OpenCoreData

@Suite struct BatchCrashTests {
    enum Batch: String, CaseIterable {
        case insert, update, delete

        func run(_ context: NSManagedObjectContext) throws {
            switch self {
            case .insert:
                let rows: [[String: Any]] = (0..<150).map {
                    [
                        "name": "new\($0)", "code": "n\($0)", "count": $0 % 7,
                        "payload": Data(count: $0 == 3 ? 70_000 : 8),
                    ]
                }
                try context.execute(NSBatchInsertRequest(entityName: "Item", objects: rows))
            case .update:
                let update = NSBatchUpdateRequest(entityName: "Item")
                update.predicate = NSPredicate(format: "count < 5")
                update.propertiesToUpdate = ["count": NSExpression(format: "count + 100"), "note": "updated"]
                try context.execute(update)
            case .delete:
                try context.execute(
                    NSBatchDeleteRequest(fetchRequest: NSFetchRequest<NSFetchRequestResult>(entityName: "Box")))
            }
        }
    }

    /// A coordinator on `files` at `path` (full durability: only synced bytes survive).
    static func open(_ type: String, _ files: SimulatedFileSystem, _ path: String) throws
        -> NSPersistentStoreCoordinator
    {
        try BatchFixtures.coordinator(
            type, url: URL(fileURLWithPath: path),
            options: [storeFileSystemOption: files, PageFileStoreDurabilityOption: "full"])
    }

    /// Two boxes of 30 items (tags on some), saved.
    static func seed(_ coordinator: NSPersistentStoreCoordinator) throws {
        let context = BatchFixtures.context(coordinator)
        let boxes = (0..<2).map { BatchFixtures.object("Box", context, ["label": "B\($0)"]) }
        let tag = BatchFixtures.object("Tag", context, ["word": "t"])
        for index in 0..<30 {
            let item = BatchFixtures.item(context, "I\(index)", code: "c\(index)", count: Int32(index % 10))
            item.setValue(boxes[index % 2], forKey: "box")
            if index % 3 == 0 { item.setValue(Set([tag]), forKey: "tags") }
        }
        try context.save()
    }

    /// The graph and the number of history transactions of the store on `files`.
    static func state(_ type: String, _ files: SimulatedFileSystem, _ path: String) throws -> (
        graph: [String], history: Int
    ) {
        let coordinator = try open(type, files, path)
        defer { for store in coordinator.persistentStores { try? coordinator.remove(store) } }
        let reader = BatchFixtures.context(coordinator)
        try BatchFixtures.verify(coordinator)
        return (try BatchFixtures.snapshot(coordinator), try BatchFixtures.history(reader, after: nil).count)
    }

    /// The state before and after `batch` on a freshly seeded store, and the I/O
    /// operations the batch took.
    static func expected(_ type: String, _ batch: Batch) throws
        -> (
            old: (graph: [String], history: Int), new: (graph: [String], history: Int), steps: Int,
            counts: [SimulatedFileSystem.Operation: Int]
        )
    {
        let files = SimulatedFileSystem()
        let path = "/sim/\(UUID().uuidString)/Batch.store"
        let coordinator = try open(type, files, path)
        try seed(coordinator)
        for store in coordinator.persistentStores { try coordinator.remove(store) }
        let old = try state(type, files, path)
        let again = try open(type, files, path)
        let start = files.operationCount
        let kinds: [SimulatedFileSystem.Operation] = [.write, .sync]
        let before = kinds.map { files.count(of: $0) }
        try batch.run(BatchFixtures.context(again))
        let steps = files.operationCount - start
        let counts = Dictionary(uniqueKeysWithValues: zip(kinds, before).map { ($0, files.count(of: $0) - $1) })
        for store in again.persistentStores { try again.remove(store) }
        let new = try state(type, files, path)
        #expect(old.graph != new.graph && new.history == old.history + 1, "\(batch) changes the graph, one transaction")
        return (old, new, steps, counts)
    }

    @Test(arguments: [NSSQLiteStoreType, NSBinaryStoreType])
    func aCrashAtAnyOperationLeavesAllOrNothing(storeType: String) throws {
        var random = SeededRandom(environmentOr: 0xC2A5_B47C)
        for batch in Batch.allCases {
            var sawOld = false
            var sawNew = false
            let (old, new, steps, _) = try Self.expected(storeType, batch)
            for crashAt in stride(from: 0, through: steps, by: max(1, steps / 60)) {
                for model in SimulatedFileSystem.CrashModel.allCases {
                    let hint = Comment(
                        rawValue: "\(batch), crash after \(crashAt) of \(steps), \(model), \(random.replayHint)")
                    let files = SimulatedFileSystem()
                    let path = "/sim/\(UUID().uuidString)/Batch.store"
                    let seeding = try Self.open(storeType, files, path)
                    try Self.seed(seeding)
                    for store in seeding.persistentStores { try seeding.remove(store) }
                    // Reopened as the expected states were made, so keys are handed out alike.
                    let coordinator = try Self.open(storeType, files, path)
                    files.crashAfter(operations: crashAt)
                    var acknowledged = false
                    do {
                        try batch.run(BatchFixtures.context(coordinator))
                        acknowledged = true
                    } catch {}
                    for store in coordinator.persistentStores { try? coordinator.remove(store) }
                    let recovered = files.afterCrash(model: model, random: &random)
                    let found = try Self.state(storeType, recovered, path)
                    let isOld = found.graph == old.graph && found.history == old.history
                    let isNew = found.graph == new.graph && found.history == new.history
                    #expect(
                        isOld || isNew,
                        "\(hint.rawValue): history \(found.history) (old \(old.history)), \(found.graph.count) objects, first differing \(found.graph.first { !old.graph.contains($0) && !new.graph.contains($0) } ?? "-"); old \(old.graph.first { !found.graph.contains($0) } ?? "-")"
                    )
                    if acknowledged { #expect(isNew, "an acknowledged batch survives: \(hint.rawValue)") }
                    sawOld = sawOld || isOld
                    sawNew = sawNew || isNew
                }
            }
            #expect(sawOld && sawNew, "\(batch): both outcomes reached")
        }
    }

    @Test(arguments: [NSSQLiteStoreType, NSBinaryStoreType])
    func aFaultAtAnyWriteOrSyncLeavesAllOrNothing(storeType: String) throws {
        for batch in Batch.allCases {
            let (old, new, _, counts) = try Self.expected(storeType, batch)
            for kind in [SimulatedFileSystem.Operation.write, .sync] {
                // Every write or sync of the batch, and one past them (a fault never reached).
                for index in 0...(counts[kind] ?? 0) {
                    for persistent in [false, true] {
                        let hint = Comment(rawValue: "\(batch), fault at \(kind) \(index), persistent \(persistent)")
                        let files = SimulatedFileSystem()
                        let path = "/sim/\(UUID().uuidString)/Batch.store"
                        let coordinator = try Self.open(storeType, files, path)
                        try Self.seed(coordinator)
                        for store in coordinator.persistentStores { try coordinator.remove(store) }
                        let again = try Self.open(storeType, files, path)
                        files.injectFault(.ioError, at: index, of: kind, persistent: persistent)
                        var succeeded = false
                        do {
                            try batch.run(BatchFixtures.context(again))
                            succeeded = true
                        } catch {
                            _ = error
                        }
                        for store in again.persistentStores { try? again.remove(store) }
                        files.clearFaults()
                        let found = try Self.state(storeType, files.snapshotOfCurrentState(), path)
                        let isOld = found.graph == old.graph && found.history == old.history
                        let isNew = found.graph == new.graph && found.history == new.history
                        #expect(isOld || isNew, hint)
                        if succeeded { #expect(isNew, hint) }
                    }
                }
            }
        }
    }
}
