// The soak: its ledger settles a killed child's save by the counter in the store, its
// final check finds each kind of violation in a store made to hold them (and none in a
// sound one), and the command runs end to end with usage errors refused.
import Foundation
import OpenCoreData
import Testing

@testable import storage_bench

@Suite struct SoakTests {
    static let ownerKey: Int64 = 3 << 40 | 1

    @Test func aKilledChildsPendingSaveIsSettledByTheStoredCounter() {
        let ledger = SoakLedger()
        var first = SoakEffects(counter: 1)
        first.insertedOwners = [10]
        ledger.begin("p0", first)
        ledger.acknowledgePending("p0", first)
        var written = SoakEffects(counter: 2)
        written.insertedOwners = [20]
        ledger.begin("p0", written)
        // Killed before `ack 2`; the next instance finds counter 2: the save was written.
        ledger.resume("p0", storeCounter: 2)
        var lost = SoakEffects(counter: 3)
        lost.insertedOwners = [30]
        ledger.begin("p0", lost)
        // Killed again; counter 2 in the store: save 3 never happened.
        ledger.resume("p0", storeCounter: 2)
        let state = ledger.writers["p0"]
        #expect(state?.acknowledgedCounter == 2)
        #expect(state?.owners == [10, 20])
        #expect(state?.pending == nil)
        #expect(ledger.violations.isEmpty)
        ledger.resume("p0", storeCounter: 1)
        #expect(ledger.violations.map(\.kind) == [.lostSave])
        ledger.acknowledgePending("p0", SoakEffects(counter: 9))
        #expect(ledger.violations.map(\.kind) == [.lostSave, .process])
    }

    @Test func deletesAndValuesFollowTheLastAcknowledgedSave() {
        var ledger = WriterLedger()
        var insert = SoakEffects(counter: 1)
        insert.insertedOwners = [1]
        insert.insertedItems = [11, 12, 13]
        insert.itemValues = [[11, 1], [12, 1], [13, 1]]
        ledger.apply(insert)
        var change = SoakEffects(counter: 2)
        change.deletedItems = [11]
        change.cascadedItems = [[12, 1]]
        change.deletedOwners = [1]
        change.itemValues = [[13, 2]]
        ledger.apply(change)
        #expect(ledger.owners.isEmpty && ledger.ownersReleased == [1])
        #expect(ledger.items == [13])
        #expect(ledger.itemsDeleted == [11: nil, 12: 1])
        #expect(ledger.itemValues == [13: 2])
    }

    /// The deletes of a rollback save not read back (a killed child's pending save) are
    /// not claimed either way: the policy may have undone them.
    @Test func deletesARollbackMayHaveUndoneAreNotClaimed() {
        var ledger = WriterLedger()
        var insert = SoakEffects(counter: 1)
        insert.insertedItems = [11, 12, 13]
        ledger.apply(insert)
        var change = SoakEffects(counter: 2)
        change.deletedItems = [11]
        change.cascadedItems = [[12, 1]]
        change.deletesMayBeUndone = true
        ledger.apply(change)
        #expect(ledger.items == [13])
        #expect(ledger.itemsDeleted.isEmpty)
    }

    /// A store holding writer c3's counter at 5, an owner with items 1 (value 3) and 2.
    static func makeStore(at url: URL) throws {
        let coordinator = try SoakModel.coordinator(url: url, durability: "normal")
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            let counter = SoakCounter(context: context)
            counter.writer = "c3"
            counter.value = 5
            let owner = SoakOwner(context: context)
            owner.key = ownerKey
            owner.writer = "c3"
            let tag = SoakTag(context: context)
            tag.name = SoakModel.tagName(1)
            owner.mutableSetValue(forKey: "tags").add(tag)
            owner.favorite = tag
            for key in [ownerKey + 1, ownerKey + 2] {
                let item = SoakItem(context: context)
                item.key = key
                item.value = 3
                owner.mutableOrderedSetValue(forKey: "items").add(item)
            }
            try context.save()
        }
        for store in coordinator.persistentStores { try coordinator.remove(store) }
    }

    /// Writer c3's claims: its counter, owners at `owners` past ownerKey, the store's two
    /// items, the first at `itemValue`.
    static func claims(counter: Int64, owners: [Int64], itemValue: Int64) -> SoakEffects {
        var claims = SoakEffects(counter: counter)
        claims.insertedOwners = owners.map { ownerKey + $0 }
        claims.insertedItems = [ownerKey + 1, ownerKey + 2]
        claims.itemValues = [[ownerKey + 1, itemValue]]
        return claims
    }

    /// The final check of `ledger` against makeStore's store.
    static func check(_ ledger: SoakLedger) throws -> SoakCensus {
        let directory = try StorageBenchProcess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("Soak.store")
        try makeStore(at: url)
        return try SoakCheck.run(url: url, durability: "normal", ledger: ledger, names: [3: "c3"])
    }

    @Test func theFinalCheckFindsLostSavesDeletedObjectsAndStaleValues() throws {
        let ledger = SoakLedger()
        ledger.acknowledge("c3", Self.claims(counter: 7, owners: [0, 40], itemValue: 4))
        var delete = SoakEffects(counter: 7)
        delete.deletedItems = [Self.ownerKey + 2]
        ledger.acknowledge("c3", delete)
        let census = try Self.check(ledger)
        #expect(census.owners == 1 && census.items == 2 && census.tags == 1 && census.counters == 1)
        let found = ledger.violations.map { "\($0.kind): \($0.message)" }
        #expect(
            found.sorted() == [
                "deletedBack: c3: Item c3:3, deleted by an acknowledged save, exists (its owner now: Owner c3:1)",
                "lostSave: c3: Owner c3:41 inserted by an acknowledged save is missing",
                "lostSave: c3: counter 5 in the store, 7 acknowledged",
                "valueBehind: c3: Item c3:2 has value 3, acknowledged 4",
            ])
    }

    @Test func aSoundStoreWithAnHonestLedgerHasNoViolations() throws {
        let ledger = SoakLedger()
        ledger.acknowledge("c3", Self.claims(counter: 5, owners: [0], itemValue: 3))
        _ = try Self.check(ledger)
        #expect(ledger.violations.isEmpty, "\(ledger.violations.map(\.message))")
    }

    @Test func theSoakRunsEndToEndAndItsStatusMatchesItsReport() throws {
        let directory = try StorageBenchProcess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try StorageBenchProcess.run([
            "soak", "--seconds", "5", "--contexts", "3", "--processes", "1", "--seed", "7", "--directory",
            directory.path, "--durability", "normal",
        ])
        #expect(run.status == 0 || run.status == 1, "\(run.stderr)")
        for section in ["THROUGHPUT", "CONFLICTS AND FAILED SAVES BY MERGE POLICY", "MEMORY", "store at the end:"] {
            #expect(run.stdout.contains(section))
        }
        for writer in ["c0 ", "c1 ", "c2 ", "p0 ", "view "] {
            #expect(run.stdout.contains("\n\(writer)"), "a row for \(writer)")
        }
        #expect(run.stdout.contains("parent/child chain"))
        #expect(run.stdout.contains("seed 7"))
        if run.status == 0 {
            #expect(run.stdout.contains("soak: passed"))
            #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("Soak.store").path))
        } else {
            #expect(run.stdout.contains("VIOLATIONS"))
            #expect(run.stdout.contains("soak: FAILED"))
            #expect(run.stdout.contains("--seed 7"))
            #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("Soak.store").path))
        }
    }

    /// One context saving alone (with the view context reading) has nothing to conflict
    /// with, so the store must end exactly as its acknowledged saves left it, and reset()
    /// must free what it probes: any violation here is the soak's own mistake or a leak.
    @Test func aWriterAloneLeavesAStoreTheLedgerAgreesWith() throws {
        let directory = try StorageBenchProcess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try StorageBenchProcess.run([
            "soak", "--seconds", "3", "--contexts", "1", "--processes", "0", "--policies", "error", "--seed", "3",
            "--directory", directory.path, "--durability", "off",
        ])
        #expect(run.stdout.contains("error        c0:"))
        #expect(run.stdout.contains("--policies error"))
        #expect(
            run.status == 0, "\(run.stdout.components(separatedBy: "VIOLATIONS").dropFirst().joined())\(run.stderr)")
    }

    @Test(arguments: [
        ["soak", "--seconds", "abc"], ["soak", "--contexts", "0"], ["soak", "--bogus"], ["soak", "extra"],
        ["soak", "--durability", "sometimes"], ["soak", "--seed"], ["soak", "--policies", "error,sometimes"],
    ])
    func badSoakOptionsAreUsageErrors(_ arguments: [String]) throws {
        let run = try StorageBenchProcess.run(arguments)
        #expect(run.status == 2)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.contains("storage-bench help soak"))
    }
}
