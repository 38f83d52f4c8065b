// The history journal through a migration (SPEC.md §3.7 H6): after entities and
// properties are renamed, history names the new ones, changes of removed entities and
// removed properties are gone, and tokens taken before the migration keep working.
import Foundation
import Testing

@testable import OpenCoreData

@Suite struct MigrationHistoryTests {
    typealias F = MigrationFixtures

    static var tracking: [AnyHashable: Any] {
        var options = F.automatic
        options[NSPersistentHistoryTrackingKey] = true as NSNumber
        return options
    }

    /// Each transaction after `token` as "kind entity updated-or-tombstone" per change,
    /// with its author.
    static func history(after token: NSPersistentHistoryToken?, in context: NSManagedObjectContext) throws
        -> [String]
    {
        let result = try context.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: token))
        let transactions = (result as? NSPersistentHistoryResult)?.result as? [NSPersistentHistoryTransaction] ?? []
        return transactions.map { transaction in
            let changes = (transaction.changes ?? []).map { change in
                let updated = (change.updatedProperties ?? []).map(\.name).sorted().joined(separator: ",")
                let tombstone = (change.tombstone ?? [:]).map { "\($0.key)=\($0.value)" }.sorted().joined()
                return
                    "\(change.changeType.rawValue) \(change.changedObjectID.entity.name ?? "") \(updated)\(tombstone)"
            }
            return "\(transaction.author ?? "-"): " + changes.sorted().joined(separator: "; ")
        }
    }

    /// Person (name preserved in tombstones, age, nickname) and Note; four saves by
    /// "app": inserts, an update, a delete, a change to a Note alone. Returns the token
    /// after the second save.
    static func seed(_ url: URL, type: String) throws -> NSPersistentHistoryToken? {
        let v1 = LightweightMigrationTests.people()
        v1.entitiesByName["Person"]?.attributesByName["name"]?.preservesValueInHistoryOnDeletion = true
        v1.entities.append(F.entity("Note", [F.attribute("text", .stringAttributeType)]))
        return try F.with(v1, url, type: type, options: tracking) { context in
            context.transactionAuthor = "app"
            let ann = F.insert("Person", ["name": "Ann", "age": Int16(1)], into: context)
            let bob = F.insert("Person", ["name": "Bob"], into: context)
            let note = F.insert("Note", ["text": "x"], into: context)
            try context.save()
            ann.setValue("n", forKey: "nickname")
            ann.setValue(Int16(2), forKey: "age")
            try context.save()
            let token = context.persistentStoreCoordinator?.currentPersistentHistoryToken(fromStores: nil)
            context.delete(bob)
            try context.save()
            note.setValue("y", forKey: "text")
            try context.save()
            return token
        }
    }

    @Test(arguments: F.stores)
    func historyNamesTheNewEntitiesAndPropertiesAndTokensKeepWorking(type: String) throws {
        let url = try F.scratch(type)
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let token = try #require(try Self.seed(url, type: type))
        let v2 = F.model([
            F.entity(
                "Member",
                [
                    F.attribute("fullName", .stringAttributeType, renamedFrom: "name"),
                    F.attribute("alias", .stringAttributeType, renamedFrom: "nickname"),
                ], renamedFrom: "Person")
        ])
        try F.with(v2, url, type: type, options: Self.tracking) { context in
            // Age and Note are gone: so are their changes; the Note's transaction stays
            // (empty) so sequences and tokens do not move.
            #expect(
                try Self.history(after: nil, in: context) == [
                    "app: 0 Member ; 0 Member ", "app: 1 Member alias", "app: 2 Member fullName=Bob", "app: ",
                ])
            #expect(try Self.history(after: token, in: context) == ["app: 2 Member fullName=Bob", "app: "])
            let end = context.persistentStoreCoordinator?.currentPersistentHistoryToken(fromStores: nil)
            #expect(try Self.history(after: end, in: context).isEmpty)
            context.transactionAuthor = "v2"
            let member = try #require(try F.fetch("Member", context, sortedBy: "fullName").first)
            member.setValue("A", forKey: "alias")
            try context.save()
            #expect(try Self.history(after: end, in: context) == ["v2: 1 Member alias"])
            _ = try context.execute(NSPersistentHistoryChangeRequest.deleteHistory(before: token))
            #expect(try Self.history(after: nil, in: context).count == 4)
        }
    }

    @Test func aMigrationThatRenamesNothingKeepsTheRecordsByteForByte() throws {
        let v1 = LightweightMigrationTests.people()
        let v2 = LightweightMigrationTests.people()
        v2.entitiesByName["Person"]?.properties.append(F.attribute("email", .stringAttributeType))
        let plan = try LightweightMigrationPlan(inferringFrom: v1, to: v2)
        #expect(!MigrationHistoryRewrite(plan).changesNames)
        let renamed = LightweightMigrationTests.people()
        renamed.entitiesByName["Person"]?.attributesByName["age"]?.renamingIdentifier = "age"
        #expect(!MigrationHistoryRewrite(try LightweightMigrationPlan(inferringFrom: v1, to: renamed)).changesNames)
        let dropped = F.model([F.entity("Person", [F.attribute("name", .stringAttributeType)])])
        #expect(MigrationHistoryRewrite(try LightweightMigrationPlan(inferringFrom: v1, to: dropped)).changesNames)
    }

    @Test func aStoreWithoutARecordRewritesItsHistoryByName() throws {
        let url = try F.scratch(NSSQLiteStoreType)
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        _ = try Self.seed(url, type: NSSQLiteStoreType)
        let v1 = LightweightMigrationTests.people()
        v1.entitiesByName["Person"]?.attributesByName["name"]?.preservesValueInHistoryOnDeletion = true
        v1.entities.append(F.entity("Note", [F.attribute("text", .stringAttributeType)]))
        let coordinator = try F.open(v1, url, type: NSSQLiteStoreType, options: Self.tracking)
        let store = try #require(coordinator.persistentStores.first)
        var metadata = store.metadata ?? [:]
        metadata[ModelRecord.metadataKey] = nil
        coordinator.setMetadata(metadata, for: store)
        let context = PageFileFixtures.context(coordinator)
        context.transactionAuthor = "app"
        try F.fetch("Person", context, sortedBy: "name").first?.setValue(Int16(3), forKey: "age")
        try context.save()
        try PageFileFixtures.close(coordinator)
        let v2 = F.model([
            F.entity(
                "Person",
                [
                    F.attribute("fullName", .stringAttributeType, renamedFrom: "name"),
                    F.attribute("years", .integer16AttributeType, renamedFrom: "age"),
                ])
        ])
        let lines = try F.with(v2, url, type: NSSQLiteStoreType, options: Self.tracking) { context in
            try Self.history(after: nil, in: context)
        }
        // Note is gone, so are its changes; the property renames follow.
        #expect(
            lines == [
                "app: 0 Person ; 0 Person ", "app: 1 Person years", "app: 2 Person fullName=Bob", "app: ",
                "app: 1 Person years",
            ])
    }
}
