// A soak writer saving alone, on scripted operations: what its acknowledged saves claim
// must be what the store holds. A save that upserts one of the writer's owners (a fresh
// object under a stored key) and then deletes that owner must delete the stored owner and
// its items. The writer used to delete whichever object a fetch by key found first; the
// fetch includes pending changes, as Core Data's does, so it also finds the upsert's
// fresh object, and deleting that one only discards the pending insert (Core Data's
// behaviour too): the stored owner and its items stayed while the ledger claimed them
// deleted. That was every "deleted object back" of the release soak, seed 301.
import Foundation
import OpenCoreData
import Testing

@testable import storage_bench

@Suite struct SoakWriterTests {
    @Test(arguments: [SoakPolicy.objectTrump, .overwrite, .storeTrump, .rollback])
    func anOwnerUpsertedAndDeletedInOneSaveGoesWithItsItems(_ policy: SoakPolicy) throws {
        let directory = try StorageBenchProcess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("Soak.store")
        let coordinator = try SoakModel.coordinator(url: url, durability: "off")
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let ledger = SoakLedger()
        let writer = try SoakWriter(
            name: "c0", number: 0, policy: policy, context: context, writerNumbers: [0], countsConflicts: false,
            seed: 5)
        writer.didSave = { ledger.acknowledge("c0", $0) }
        for _ in 0..<6 { #expect(writer.step(operations: [.insertOwner])) }
        // About five owners to choose from: now and then the item, the upsert and the delete
        // go to one owner. The item makes the stored owner a changed object, which a fetch
        // lists after the inserted ones.
        for _ in 0..<150 {
            #expect(writer.step(operations: [.insertOwner, .addItem, .upsertOwner, .deleteOwner]))
        }
        context.performAndWait { context.reset() }
        for store in coordinator.persistentStores { try coordinator.remove(store) }
        _ = try SoakCheck.run(url: url, durability: "off", ledger: ledger, names: [0: "c0"])
        #expect((ledger.writers["c0"]?.ownersReleased.count ?? 0) > 100)
        #expect((ledger.writers["c0"]?.itemsDeleted.count ?? 0) > 100)
        #expect(ledger.violations.isEmpty, "\(ledger.violations.map { "\($0.kind): \($0.message)" })")
    }
}
