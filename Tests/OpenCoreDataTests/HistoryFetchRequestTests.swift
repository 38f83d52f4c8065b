import Foundation
import Testing

@testable import OpenCoreData

/// History fetched through fetch requests on the transaction and change entities, as
/// the guides and Stage4 write them.
@Suite struct HistoryFetchRequestTests {
    /// A tracked in-memory store with three saves: "importer" inserts two companies,
    /// "editor" renames one, "importer" deletes the other.
    static func makeHistory() throws -> NSManagedObjectContext {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestStack.model)
        try coordinator.addPersistentStore(
            ofType: NSInMemoryStoreType, configurationName: nil, at: nil,
            options: [NSPersistentHistoryTrackingKey: true as NSNumber])
        let context = TestStack.context(coordinator)
        context.transactionAuthor = "importer"
        let acme = TCompany(context: context)
        acme.name = "Acme"
        let globex = TCompany(context: context)
        globex.name = "Globex"
        try context.save()
        context.transactionAuthor = "editor"
        acme.name = "Acme 2"
        try context.save()
        context.transactionAuthor = "importer"
        context.delete(globex)
        try context.save()
        return context
    }

    static func transactions(_ context: NSManagedObjectContext, _ request: NSPersistentHistoryChangeRequest)
        throws -> [NSPersistentHistoryTransaction]
    {
        (try context.execute(request) as? NSPersistentHistoryResult)?.result as? [NSPersistentHistoryTransaction] ?? []
    }

    @Test func entityDescriptionsNameTheHistoryEntities() throws {
        let context = try TestStack.freshContext()
        #expect(NSPersistentHistoryTransaction.entityDescription?.name == "NSPersistentHistoryTransaction")
        #expect(
            NSPersistentHistoryTransaction.entityDescription(with: context)?.name == "NSPersistentHistoryTransaction")
        #expect(NSPersistentHistoryChange.entityDescription?.name == "NSPersistentHistoryChange")
        #expect(NSPersistentHistoryChange.entityDescription(with: context)?.name == "NSPersistentHistoryChange")
        #expect(NSPersistentHistoryTransaction.fetchRequest?.entity?.name == "NSPersistentHistoryTransaction")
        #expect(NSPersistentHistoryChange.fetchRequest?.entity?.name == "NSPersistentHistoryChange")
        #expect(NSPersistentHistoryTransaction.entityDescription?.propertiesByName["author"] != nil)
    }

    @Test func fetchWithATransactionRequestFiltersTransactions() throws {
        let context = try Self.makeHistory()
        let byAuthor = try #require(NSPersistentHistoryTransaction.fetchRequest)
        byAuthor.predicate = NSPredicate(format: "author == %@", "importer")
        let imported = try Self.transactions(context, .fetchHistory(withFetch: byAuthor))
        #expect(imported.map(\.transactionNumber) == [1, 3])
        #expect(imported.first?.changes?.count == 2)

        let others = NSFetchRequest<NSFetchRequestResult>()
        others.entity = NSPersistentHistoryTransaction.entityDescription(with: context)
        others.predicate = NSPredicate(format: "author != %@", "importer")
        #expect(try Self.transactions(context, .fetchHistory(withFetch: others)).map(\.author) == ["editor"])

        let limited = try #require(NSPersistentHistoryTransaction.fetchRequest)
        limited.fetchLimit = 2
        #expect(try Self.transactions(context, .fetchHistory(withFetch: limited)).count == 2)
    }

    @Test func fetchAfterATokenNarrowedByFetchRequest() throws {
        let context = try Self.makeHistory()
        let first = try Self.transactions(context, .fetchHistory(after: nil as NSPersistentHistoryToken?))[0]
        let request = NSPersistentHistoryChangeRequest.fetchHistory(after: first.token)
        let notMine = NSPersistentHistoryTransaction.fetchRequest
        notMine?.predicate = NSPredicate(format: "author != %@", "editor")
        request.fetchRequest = notMine
        #expect(try Self.transactions(context, request).map(\.transactionNumber) == [3])
    }

    @Test func fetchWithAChangeRequestKeepsMatchingChanges() throws {
        let context = try Self.makeHistory()
        let deletes = try #require(NSPersistentHistoryChange.fetchRequest)
        deletes.predicate = NSPredicate(format: "changeType == %d", NSPersistentHistoryChangeType.delete.rawValue)
        let found = try Self.transactions(context, .fetchHistory(withFetch: deletes))
        #expect(found.map(\.transactionNumber) == [3])
        #expect(found.first?.changes?.map(\.changeType) == [.delete])

        let byEntity = try #require(NSPersistentHistoryChange.fetchRequest)
        byEntity.predicate = NSPredicate(
            format: "changedEntity == %@ AND transaction.author == %@", "Company", "importer")
        let changes = try Self.transactions(context, .fetchHistory(withFetch: byEntity)).flatMap { $0.changes ?? [] }
        #expect(changes.count == 3)
    }
}
