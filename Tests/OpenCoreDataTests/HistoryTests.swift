import Foundation
import StorageEngine
import TestSupport
import Testing

@testable import OpenCoreData

/// A note model whose `title` is kept in deletion tombstones.
private enum NoteModel {
    static let model: NSManagedObjectModel = {
        let note = NSEntityDescription()
        note.name = "Note"
        let title = TestStack.attribute("title", .stringAttributeType)
        title.preservesValueInHistoryOnDeletion = true
        let body = TestStack.attribute("body", .stringAttributeType)
        let rank = TestStack.attribute("rank", .integer64AttributeType, optional: false, defaultValue: 0)
        rank.preservesValueInHistoryOnDeletion = true
        note.properties = [title, body, rank]
        let model = NSManagedObjectModel()
        model.entities = [note]
        return model
    }()
}

private func trackingCoordinator(
    model: NSManagedObjectModel = TestStack.model, tracking: Bool = true
) throws -> NSPersistentStoreCoordinator {
    let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
    try coordinator.addPersistentStore(
        ofType: NSInMemoryStoreType, configurationName: nil, at: nil,
        options: [NSPersistentHistoryTrackingKey: tracking as NSNumber])
    return coordinator
}

private func transactions(
    _ context: NSManagedObjectContext, _ request: NSPersistentHistoryChangeRequest
) throws -> [NSPersistentHistoryTransaction] {
    let result = try context.execute(request) as? NSPersistentHistoryResult
    return result?.result as? [NSPersistentHistoryTransaction] ?? []
}

@Suite struct HistoryTests {
    @Test func everySaveIsOneTransactionWithAuthorAndContextName() throws {
        let coordinator = try trackingCoordinator()
        let context = TestStack.context(coordinator)
        context.name = "editor"
        context.transactionAuthor = "importer"
        let company = TCompany(context: context)
        company.name = "Acme"
        for index in 0..<3 {
            let employee = TEmployee(context: context)
            employee.name = "E\(index)"
            employee.company = company
        }
        try context.save()
        try context.save()  // nothing changed: no transaction
        context.transactionAuthor = nil
        company.name = "Acme 2"
        try context.save()

        let all = try transactions(context, .fetchHistory(after: nil as NSPersistentHistoryToken?))
        #expect(all.count == 2)
        #expect(all.map(\.author) == ["importer", nil])
        #expect(all.map(\.contextName) == ["editor", "editor"])
        #expect(all.map(\.transactionNumber) == [1, 2])
        let store = try #require(coordinator.persistentStores.first)
        #expect(all.allSatisfy { $0.storeID == store.identifier && $0.bundleID == "" && $0.processID == "" })
        #expect(all[0].changes?.count == 4)
        #expect(all[0].changes?.allSatisfy { $0.changeType == .insert && $0.transaction === all[0] } == true)
        let insertedIDs = Set(all[0].changes?.map(\.changedObjectID) ?? [])
        #expect(insertedIDs.contains(company.objectID))
        let update = try #require(all[1].changes?.first)
        #expect(update.changeType == .update && update.changedObjectID == company.objectID)
        #expect(update.updatedProperties?.map(\.name) == ["name"])
        #expect(all[0].timestamp <= all[1].timestamp)
    }

    @Test func updatesListTheirPropertiesAndDeletesCarryTombstones() throws {
        let coordinator = try trackingCoordinator(model: NoteModel.model)
        let context = TestStack.context(coordinator)
        let note = NSManagedObject(entity: try #require(NoteModel.model.entitiesByName["Note"]), insertInto: context)
        note.setValue("Groceries", forKey: "title")
        note.setValue("milk", forKey: "body")
        note.setValue(Int64(3), forKey: "rank")
        try context.save()
        note.setValue("milk, eggs", forKey: "body")
        note.setValue(Int64(4), forKey: "rank")
        try context.save()
        let id = note.objectID
        context.delete(note)
        try context.save()

        let all = try transactions(context, .fetchHistory(after: nil as NSPersistentHistoryToken?))
        #expect(all.count == 3)
        let update = try #require(all[1].changes?.first)
        #expect(update.changeType == .update)
        #expect(Set(update.updatedProperties?.map(\.name) ?? []) == ["body", "rank"])
        #expect(update.tombstone == nil)
        let deletion = try #require(all[2].changes?.first)
        #expect(deletion.changeType == .delete && deletion.changedObjectID == id)
        #expect(deletion.updatedProperties == nil)
        let tombstone = try #require(deletion.tombstone)
        #expect(tombstone["title"] as? String == "Groceries")
        #expect(tombstone["rank"] as? Int64 == 4)
        #expect(tombstone["body"] == nil)
    }

    @Test func fetchAfterTokenDateAndTransaction() throws {
        let coordinator = try trackingCoordinator()
        let context = TestStack.context(coordinator)
        var names: [String] = []
        for index in 0..<4 {
            let company = TCompany(context: context)
            company.name = "C\(index)"
            names.append("C\(index)")
            try context.save()
        }
        let all = try transactions(context, .fetchHistory(after: nil as NSPersistentHistoryToken?))
        #expect(all.count == 4)
        let afterToken = try transactions(context, .fetchHistory(after: all[1].token))
        #expect(afterToken.map(\.transactionNumber) == [3, 4])
        let afterTransaction = try transactions(context, .fetchHistory(after: all[2]))
        #expect(afterTransaction.map(\.transactionNumber) == [4])
        let afterDate = try transactions(context, .fetchHistory(after: all[2].timestamp))
        #expect(afterDate.allSatisfy { $0.timestamp > all[2].timestamp })
        #expect(afterDate.contains { $0.transactionNumber == 4 })
        #expect(try transactions(context, .fetchHistory(after: Date.distantPast)).count == 4)
        #expect(try transactions(context, .fetchHistory(after: all[3].token)).isEmpty)

        let counted = NSPersistentHistoryChangeRequest.fetchHistory(after: all[0].token)
        counted.resultType = .count
        #expect((try context.execute(counted) as? NSPersistentHistoryResult)?.result as? NSNumber == 3)
        let ids = NSPersistentHistoryChangeRequest.fetchHistory(after: all[2].token)
        ids.resultType = .objectIDs
        let idResult = (try context.execute(ids) as? NSPersistentHistoryResult)?.result as? [NSManagedObjectID]
        #expect(idResult?.count == 1)
        let bare = NSPersistentHistoryChangeRequest.fetchHistory(after: nil as NSPersistentHistoryToken?)
        bare.resultType = .transactionsOnly
        #expect(try transactions(context, bare).allSatisfy { $0.changes == nil })
    }

    @Test func fetchRequestPredicateFiltersTransactions() throws {
        let coordinator = try trackingCoordinator()
        let context = TestStack.context(coordinator)
        for author in ["app", "sync", "app"] {
            context.transactionAuthor = author
            let company = TCompany(context: context)
            company.name = author
            try context.save()
        }
        let fetch = try #require(NSPersistentHistoryTransaction.fetchRequest)
        fetch.predicate = NSPredicate(format: "author != %@", "sync")
        let request = NSPersistentHistoryChangeRequest.fetchHistory(withFetch: fetch)
        #expect(try transactions(context, request).map(\.transactionNumber) == [1, 3])
    }

    @Test func deleteBeforeIsStrictAndExpiredTokensThrow() throws {
        let coordinator = try trackingCoordinator()
        let context = TestStack.context(coordinator)
        for index in 0..<5 {
            let company = TCompany(context: context)
            company.name = "C\(index)"
            try context.save()
        }
        let all = try transactions(context, .fetchHistory(after: nil as NSPersistentHistoryToken?))
        let purge = NSPersistentHistoryChangeRequest.deleteHistory(before: all[2].token)
        purge.resultType = .count
        #expect((try context.execute(purge) as? NSPersistentHistoryResult)?.result as? NSNumber == 2)
        let left = try transactions(context, .fetchHistory(after: nil as NSPersistentHistoryToken?))
        #expect(left.map(\.transactionNumber) == [3, 4, 5])
        // The token of transaction 2 still works: nothing after it was deleted.
        #expect(try transactions(context, .fetchHistory(after: all[1].token)).count == 3)
        let error = #expect(throws: NSError.self) {
            _ = try context.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: all[0].token))
        }
        #expect(error?.code == NSPersistentHistoryTokenExpiredError && error?.domain == NSCocoaErrorDomain)
        #expect(error?.localizedDescription.contains("expired") == true)

        _ = try context.execute(NSPersistentHistoryChangeRequest.deleteHistory(before: Date.distantFuture))
        #expect(try transactions(context, .fetchHistory(after: nil as NSPersistentHistoryToken?)).isEmpty)
        // Sequences are never reused after a purge.
        let company = TCompany(context: context)
        company.name = "later"
        try context.save()
        let latest = try transactions(context, .fetchHistory(after: nil as NSPersistentHistoryToken?))
        #expect(latest.map(\.transactionNumber) == [6])
        _ = try context.execute(
            NSPersistentHistoryChangeRequest.deleteHistory(before: nil as NSPersistentHistoryToken?))
        #expect(try transactions(context, .fetchHistory(after: nil as NSPersistentHistoryToken?)).isEmpty)
        // Nothing after transaction 6 was deleted; after 5, transaction 6 was.
        #expect(try transactions(context, .fetchHistory(after: latest[0])).isEmpty)
        #expect(throws: NSError.self) {
            _ = try context.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: all[4]))
        }
    }

    @Test func extremeTokenSequencesNeitherTrapNorLoseHistory() throws {
        let coordinator = try trackingCoordinator()
        let context = TestStack.context(coordinator)
        for index in 0..<3 {
            let company = TCompany(context: context)
            company.name = "C\(index)"
            try context.save()
        }
        let store = try #require(coordinator.persistentStores.first?.identifier)
        func token(_ sequence: Int64) -> NSPersistentHistoryToken {
            NSPersistentHistoryToken(storeIdentifier: store, sequence: sequence)
        }
        #expect(try transactions(context, .fetchHistory(after: token(.min))).count == 3)
        #expect(try transactions(context, .fetchHistory(after: token(.max))).isEmpty)
        _ = try context.execute(NSPersistentHistoryChangeRequest.deleteHistory(before: token(.min)))
        #expect(try transactions(context, .fetchHistory(after: token(0))).count == 3)
        _ = try context.execute(NSPersistentHistoryChangeRequest.deleteHistory(before: token(2)))
        #expect(throws: NSError.self) {
            _ = try context.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: token(.min)))
        }
        _ = try context.execute(NSPersistentHistoryChangeRequest.deleteHistory(before: token(.max)))
        #expect(try transactions(context, .fetchHistory(after: nil as NSPersistentHistoryToken?)).isEmpty)
    }

    @Test func objectIDNotificationMergesIntoAnotherContext() throws {
        let coordinator = try trackingCoordinator()
        let writer = TestStack.context(coordinator)
        let company = TCompany(context: writer)
        company.name = "Before"
        let doomed = TCompany(context: writer)
        doomed.name = "Doomed"
        try writer.save()
        let token = coordinator.currentPersistentHistoryToken(fromStores: nil)

        let reader = TestStack.context(coordinator)
        let readerCompany = try #require(reader.existingObject(with: company.objectID) as? TCompany)
        let readerDoomed = try #require(reader.existingObject(with: doomed.objectID) as? TCompany)
        #expect(readerCompany.name == "Before")

        company.name = "After"
        writer.delete(doomed)
        try writer.save()
        let newer = try transactions(writer, .fetchHistory(after: token))
        #expect(newer.count == 1)
        let notification = try #require(newer.first).objectIDNotification()
        let updatedIDs = notification.userInfo?[NSUpdatedObjectIDsKey] as? Set<NSManagedObjectID>
        #expect(updatedIDs == [company.objectID])
        reader.mergeChanges(fromContextDidSave: notification)
        #expect(readerCompany.name == "After")
        #expect(readerDoomed.managedObjectContext == nil)
    }

    @Test func currentTokenAdvancesAndRoundTripsThroughCodable() throws {
        let coordinator = try trackingCoordinator()
        let context = TestStack.context(coordinator)
        let empty = try #require(coordinator.currentPersistentHistoryToken(fromStores: nil))
        let company = TCompany(context: context)
        company.name = "A"
        try context.save()
        let current = try #require(coordinator.currentPersistentHistoryToken(fromStores: coordinator.persistentStores))
        #expect(empty < current && !(current < empty) && empty != current)
        let all = try transactions(context, .fetchHistory(after: nil as NSPersistentHistoryToken?))
        #expect(all.last?.token == current)
        let data = try JSONEncoder().encode(current)
        let restored = try JSONDecoder().decode(NSPersistentHistoryToken.self, from: data)
        #expect(restored == current && restored.hash == current.hash)
        #expect(try transactions(context, .fetchHistory(after: restored)).isEmpty)
        #expect(try transactions(context, .fetchHistory(after: empty)).count == 1)
    }

    @Test func savesPostRemoteChangeNotificationsWithTheNewToken() throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestStack.model)
        let store = try coordinator.addPersistentStore(
            ofType: NSInMemoryStoreType, configurationName: nil, at: nil,
            options: [
                NSPersistentHistoryTrackingKey: true as NSNumber,
                NSPersistentStoreRemoteChangeNotificationPostOptionKey: true as NSNumber,
            ])
        let received = LockedBox<[Notification]>([])
        let observer = NotificationCenter.default.addObserver(
            forName: .NSPersistentStoreRemoteChange, object: coordinator, queue: nil
        ) { note in received.mutate { $0.append(note) } }
        defer { NotificationCenter.default.removeObserver(observer) }
        let context = TestStack.context(coordinator)
        let company = TCompany(context: context)
        company.name = "A"
        try context.save()
        company.name = "B"
        try context.save()
        let notes = received.value
        #expect(notes.count == 2)
        #expect(notes.last?.userInfo?[NSStoreUUIDKey] as? String == store.identifier)
        let token = notes.last?.userInfo?[NSPersistentHistoryTokenKey] as? NSPersistentHistoryToken
        #expect(token == coordinator.currentPersistentHistoryToken(fromStores: nil))
        #expect(token?.sequence(forStore: store.identifier) == 2)
    }

    @Test func storesWithoutTrackingRefuseHistoryRequests() throws {
        let coordinator = try trackingCoordinator(tracking: false)
        let context = TestStack.context(coordinator)
        let company = TCompany(context: context)
        company.name = "A"
        try context.save()
        #expect(coordinator.currentPersistentHistoryToken(fromStores: nil) == nil)
        let error = #expect(throws: NSError.self) {
            _ = try context.execute(
                NSPersistentHistoryChangeRequest.fetchHistory(after: nil as NSPersistentHistoryToken?))
        }
        #expect(error?.code == NSPersistentStoreUnsupportedRequestTypeError)
    }

    /// Random saves, purges and (for the binary store) reopens: the fetched history always
    /// equals an oracle's list of what each save did.
    @Test(arguments: [NSInMemoryStoreType, NSBinaryStoreType])
    func randomSavesMatchAnOracle(storeType: String) throws {
        var random = SeededRandom(environmentOr: 0x4157)
        let files = SimulatedFileSystem()
        func open() throws -> NSPersistentStoreCoordinator {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestStack.model)
            var options: [AnyHashable: Any] = [NSPersistentHistoryTrackingKey: true as NSNumber]
            if storeType == NSBinaryStoreType { options[storeFileSystemOption] = files }
            try coordinator.addPersistentStore(
                ofType: storeType, configurationName: nil, at: URL(fileURLWithPath: "/sim/History.binary"),
                options: options)
            return coordinator
        }
        typealias Change = (type: NSPersistentHistoryChangeType, uri: URL, properties: Set<String>)
        func describe(_ changes: [Change]) -> [String] {
            changes.map { "\($0.type.rawValue) \($0.uri) \($0.properties.sorted())" }.sorted()
        }
        var coordinator = try open()
        var context = TestStack.context(coordinator)
        var live: [URL] = []
        var oracle: [(number: Int64, author: String?, changes: [String])] = []
        var tokens: [NSPersistentHistoryToken] = []
        var purged: Int64 = 0
        var counter = 0
        for step in 0..<40 {
            let hint = "step \(step), \(random.replayHint)"
            if storeType == NSBinaryStoreType, random.chance(0.2) {
                try coordinator.remove(try #require(coordinator.persistentStores.first))
                coordinator = try open()
                context = TestStack.context(coordinator)
            }
            func object(_ uri: URL) throws -> TCompany {
                guard let id = coordinator.managedObjectID(forURIRepresentation: uri),
                    let company = try context.existingObject(with: id) as? TCompany
                else { throw NSError(domain: "HistoryTests", code: 1, userInfo: [NSLocalizedDescriptionKey: hint]) }
                return company
            }
            var inserted: [TCompany] = []
            var changes: [Change] = []
            for _ in 0..<random.int(in: 0...3) {
                let company = TCompany(context: context)
                counter += 1
                company.name = "C\(counter)"
                inserted.append(company)
            }
            var touched: Set<URL> = []
            for _ in 0..<random.int(in: 0...2) where !live.isEmpty {
                let uri = random.pick(live)
                guard !touched.contains(uri) else { continue }
                touched.insert(uri)
                counter += 1
                try object(uri).name = "C\(counter)"
                changes.append((.update, uri, ["name"]))
            }
            if random.chance(0.3), let uri = live.first(where: { !touched.contains($0) }) {
                context.delete(try object(uri))
                live.removeAll { $0 == uri }
                changes.append((.delete, uri, []))
            }
            let author = random.chance(0.5) ? "author\(step % 3)" : nil
            context.transactionAuthor = author
            try context.save()
            for company in inserted {
                live.append(company.objectID.uriRepresentation())
                changes.append((.insert, company.objectID.uriRepresentation(), []))
            }
            if !changes.isEmpty {
                let number = (oracle.last?.number ?? purged) + 1
                oracle.append((number, author, describe(changes)))
                tokens.append(try #require(coordinator.currentPersistentHistoryToken(fromStores: nil), "\(hint)"))
            }
            if random.chance(0.15), !tokens.isEmpty {
                let index = random.int(in: 0...(tokens.count - 1))
                let token = tokens[index]
                _ = try context.execute(NSPersistentHistoryChangeRequest.deleteHistory(before: token))
                let sequence = try #require(token.sequencesByStore.values.first)
                oracle.removeAll { $0.number < sequence }
                purged = max(purged, sequence - 1)
                if sequence > 1 {
                    let stale = NSPersistentHistoryToken(sequencesByStore: token.sequencesByStore.mapValues { $0 - 2 })
                    #expect(
                        Comment(rawValue: hint),
                        performing: {
                            _ = try context.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: stale))
                        },
                        throws: { ($0 as NSError).code == NSPersistentHistoryTokenExpiredError })
                }
            }
            let fetched = try transactions(context, .fetchHistory(after: nil as NSPersistentHistoryToken?))
            let actual = fetched.map { transaction in
                let changes = (transaction.changes ?? []).map { change -> Change in
                    (
                        change.changeType, change.changedObjectID.uriRepresentation(),
                        Set(change.updatedProperties?.map(\.name) ?? [])
                    )
                }
                return "\(transaction.transactionNumber) \(transaction.author ?? "-") \(describe(changes))"
            }
            let expected = oracle.map { "\($0.number) \($0.author ?? "-") \($0.changes)" }
            #expect(actual == expected, "\(hint)")
            if actual != expected { return }
        }
    }

    // MARK: The record format (SPEC.md §3, "History journal")

    @Test func recordBytesAreGolden() throws {
        let record = PersistentHistoryRecord(
            timestamp: Date(timeIntervalSince1970: 1), author: "a", contextName: nil,
            changes: [
                .init(kind: .insert, entityName: "E", key: 1),
                .init(kind: .update, entityName: "E", key: -1, updatedProperties: ["p"]),
                .init(
                    kind: .delete, entityName: "E", key: 300,
                    tombstone: [.init(name: "p", value: .integer(-2)), .init(name: "q", value: .string("é"))]),
            ])
        let bytes = record.encoded()
        let body: [UInt8] = [
            1, 0, 0, 0, 0, 0, 0, 0, 0xF0, 0x3F,  // version, flags, 1.0 as a little-endian double
            4, 1, 0x61, 1, 0x45, 1, 0x70, 1, 0x71,  // strings: "a", "E", "p", "q"
            1, 0, 3,  // author = string 0, no context name, three changes
            0, 1, 2,  // insert E key 1
            1, 1, 1, 1, 2,  // update E key -1: [p]
            2, 1, 0xD8, 0x04, 2, 2, 1, 3, 3, 6, 2, 0xC3, 0xA9,  // delete E key 300: p = -2, q = "é"
        ]
        #expect(Array(bytes.dropLast(8)) == body)
        let checksum = bytes.suffix(8).enumerated().reduce(UInt64(0)) {
            $0 | UInt64($1.element) << UInt64($1.offset * 8)
        }
        #expect(checksum == 0xACD7_8938_7A9F_EB7F)
        #expect(try PersistentHistoryRecord(decoding: bytes, what: "record") == record)
    }

    @Test func damagedRecordsAreErrorsNotTraps() throws {
        var random = SeededRandom(environmentOr: 7)
        let record = PersistentHistoryRecord(
            timestamp: Date(), author: "author", contextName: "context",
            changes: (0..<20).map {
                .init(kind: .update, entityName: "Entity", key: Int64($0), updatedProperties: ["x"])
            })
        let bytes = record.encoded()
        for length in 0..<bytes.count {
            #expect(throws: NSError.self) {
                _ = try PersistentHistoryRecord(decoding: Array(bytes[..<length]), what: "r")
            }
        }
        for _ in 0..<200 {
            var damaged = bytes
            let index = Int(random.next() % UInt64(damaged.count))
            damaged[index] ^= UInt8(1 << (random.next() % 8))
            #expect(throws: NSError.self, "\(random.replayHint)") {
                _ = try PersistentHistoryRecord(decoding: damaged, what: "r")
            }
        }
    }
}

/// A value shared with a notification observer.
private final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }
    func mutate(_ body: (inout Value) -> Void) {
        lock.lock()
        defer { lock.unlock() }
        body(&stored)
    }
}
