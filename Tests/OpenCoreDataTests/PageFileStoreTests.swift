// The default on-disk store: the pinned row and key encoding, reopening, metadata and
// model compatibility, damaged files, unique constraints and optimistic locking.
import Foundation
import OpenCoreData
import StorageEngine
import TestSupport
import Testing

enum PageFileFixtures {
    static func attribute(_ name: String, _ type: NSAttributeType, optional: Bool = true, indexed: Bool = false)
        -> NSAttributeDescription
    {
        let attribute = NSAttributeDescription()
        attribute.name = name
        attribute.attributeType = type
        attribute.isOptional = optional
        attribute.isIndexed = indexed
        return attribute
    }

    /// Golden: name, count, ratio, flag, when — `count` indexed.
    static let goldenModel: NSManagedObjectModel = {
        let golden = NSEntityDescription()
        golden.name = "Golden"
        golden.properties = [
            attribute("name", .stringAttributeType), attribute("count", .integer32AttributeType, indexed: true),
            attribute("ratio", .doubleAttributeType), attribute("flag", .booleanAttributeType),
            attribute("when", .dateAttributeType),
        ]
        let model = NSManagedObjectModel()
        model.entities = [golden]
        return model
    }()

    /// Person (email unique, age indexed, lastName+firstName compound) and Team 1-n Person.
    static func makePeopleModel(extraAttribute: Bool = false, extraIsOptional: Bool = true) -> NSManagedObjectModel {
        let person = NSEntityDescription()
        person.name = "Person"
        let team = NSEntityDescription()
        team.name = "Team"
        person.properties =
            [
                attribute("firstName", .stringAttributeType), attribute("lastName", .stringAttributeType),
                attribute("age", .integer16AttributeType, indexed: true), attribute("email", .stringAttributeType),
            ] + (extraAttribute ? [attribute("nickname", .stringAttributeType, optional: extraIsOptional)] : [])
        person.uniquenessConstraints = [["email"]]
        person.indexes = [
            NSFetchIndexDescription(
                name: "byName",
                elements: [
                    NSFetchIndexElementDescription(property: person.properties[1], collationType: .binary),
                    NSFetchIndexElementDescription(property: person.properties[0], collationType: .binary),
                ])
        ]
        let members = NSRelationshipDescription()
        members.name = "members"
        members.destinationEntity = person
        members.maxCount = 0
        members.deleteRule = .nullifyDeleteRule
        let teamOf = NSRelationshipDescription()
        teamOf.name = "team"
        teamOf.destinationEntity = team
        teamOf.maxCount = 1
        members.inverseRelationship = teamOf
        teamOf.inverseRelationship = members
        person.properties.append(teamOf)
        team.properties = [attribute("title", .stringAttributeType), members]
        let model = NSManagedObjectModel()
        model.entities = [person, team]
        return model
    }

    static let peopleModel = makePeopleModel()

    static func temporaryURL(_ name: String = "Test.store") throws -> URL {
        let directory = try TestScratch.directory("pagefile")
        return directory.appendingPathComponent(name)
    }

    static func coordinator(_ model: NSManagedObjectModel, _ url: URL, type: String = NSSQLiteStoreType) throws
        -> NSPersistentStoreCoordinator
    {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(
            ofType: type, configurationName: nil, at: type == NSInMemoryStoreType ? nil : url,
            options: [PageFileStoreDurabilityOption: "off"])
        return coordinator
    }

    static func context(_ coordinator: NSPersistentStoreCoordinator) -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    /// The engine database at `url`; retries while a concurrently spawned child process
    /// (the crash test's) briefly holds an inherited lock between fork and exec.
    static func openDatabase(_ url: URL) throws -> Database {
        let deadline = Date().addingTimeInterval(5)
        while true {
            do {
                return try Database.open(at: url)
            } catch let error as StorageError where error.code == .busy && Date() < deadline {
                usleep(2_000)
            }
        }
    }

    static func close(_ coordinator: NSPersistentStoreCoordinator) throws {
        for store in coordinator.persistentStores { try coordinator.remove(store) }
    }

    @discardableResult
    static func person(
        _ context: NSManagedObjectContext, _ first: String, _ last: String, _ age: Int16, _ email: String?
    )
        -> NSManagedObject
    {
        let person = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
        person.setValue(first, forKey: "firstName")
        person.setValue(last, forKey: "lastName")
        person.setValue(age, forKey: "age")
        person.setValue(email, forKey: "email")
        return person
    }
}

@Suite struct PageFileStoreTests {
    @Test func rowAndIndexBytesArePinned() throws {
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = try PageFileFixtures.coordinator(PageFileFixtures.goldenModel, url)
        let context = PageFileFixtures.context(coordinator)
        let object = NSEntityDescription.insertNewObject(forEntityName: "Golden", into: context)
        object.setValue("Ada", forKey: "name")
        object.setValue(Int32(7), forKey: "count")
        object.setValue(0.5, forKey: "ratio")
        object.setValue(true, forKey: "flag")
        object.setValue(Date(timeIntervalSinceReferenceDate: 0), forKey: "when")
        try context.save()
        try PageFileFixtures.close(coordinator)

        let database = try PageFileFixtures.openDatabase(url)
        defer { try? database.close() }
        let primary: [UInt8] = [0x81, 1, 0x81]  // key 1: one significant byte, framed by 0x80 + 1
        let row = try database.read { try $0.tree(named: "rows.Golden")?.value(forKey: primary) }
        let expected: [UInt8] =
            [1]  // version 1 (row format 2), then the five slots to the end
            + [0x43, 0x41, 0x64, 0x61]  // "Ada": a short string, its length in the tag
            + [0x87]  // 7: a small integer in the tag
            + [2, 0, 0, 0, 0, 0, 0, 0xE0, 0x3F]  // 0.5
            + [5]  // true
            + [0x10, 0]  // reference date: whole seconds, zigzag 0
        #expect(row == expected)
        let indexKeys = try database.read { try $0.tree(named: "index.Golden.count")?.entries().map(\.key) }
        // 7.0 = 0x401C..., order bits 0xC01C...: groups 0x60, 0x07, the rest zero.
        #expect(indexKeys == [[0x10, 0xC1, 0x0E] + primary])
        #expect(try database.verify().treeCount >= 3)
    }

    @Test func rowsRelationshipsAndMetadataSurviveReopening() throws {
        let url = try PageFileFixtures.temporaryURL()
        var coordinator = try PageFileFixtures.coordinator(PageFileFixtures.peopleModel, url)
        var context = PageFileFixtures.context(coordinator)
        let team = NSEntityDescription.insertNewObject(forEntityName: "Team", into: context)
        team.setValue("Core", forKey: "title")
        for index in 0..<20 {
            let person = PageFileFixtures.person(context, "F\(index)", "L\(index % 3)", Int16(index), "p\(index)@x")
            person.setValue(team, forKey: "team")
        }
        try context.save()
        let store = try #require(coordinator.persistentStores.first)
        #expect(store.type == NSSQLiteStoreType)
        var metadata = coordinator.metadata(for: store)
        metadata["custom"] = "kept"
        coordinator.setMetadata(metadata, for: store)
        PageFileFixtures.person(context, "Late", "L9", 99, "late@x")
        try context.save()
        let uuid = store.identifier
        try PageFileFixtures.close(coordinator)

        let stored = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: NSSQLiteStoreType, at: url, options: nil)
        #expect(stored[NSStoreUUIDKey] as? String == uuid)
        #expect(stored["custom"] as? String == "kept")
        #expect(PageFileFixtures.peopleModel.isConfiguration(withName: nil, compatibleWithStoreMetadata: stored))
        #expect(
            !PageFileFixtures.makePeopleModel(extraAttribute: true).isConfiguration(
                withName: nil, compatibleWithStoreMetadata: stored))

        coordinator = try PageFileFixtures.coordinator(PageFileFixtures.peopleModel, url)
        context = PageFileFixtures.context(coordinator)
        #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Person")) == 21)
        let teams = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Team"))
        #expect((teams.first?.value(forKey: "members") as? Set<NSManagedObject>)?.count == 20)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
        request.predicate = NSPredicate(format: "lastName == 'L1' AND firstName BEGINSWITH 'F1'")
        let names = try context.fetch(request).compactMap { $0.value(forKey: "firstName") as? String }.sorted()
        #expect(names == ["F1", "F10", "F13", "F16", "F19"])
        let range = NSFetchRequest<NSManagedObject>(entityName: "Person")
        range.predicate = NSPredicate(format: "age BETWEEN {5, 9}")
        #expect(try context.count(for: range) == 5)
        #expect(coordinator.persistentStores.first?.identifier == uuid)
        try PageFileFixtures.close(coordinator)
    }

    @Test func incompatibleModelIsRefusedWith134100() throws {
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = try PageFileFixtures.coordinator(PageFileFixtures.peopleModel, url)
        try PageFileFixtures.close(coordinator)
        let other = NSPersistentStoreCoordinator(
            managedObjectModel: PageFileFixtures.makePeopleModel(extraAttribute: true))
        #expect {
            try other.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
        } throws: { ($0 as NSError).code == NSPersistentStoreIncompatibleVersionHashError }
    }

    @Test func damagedAndForeignFilesAreRefusedWithClearErrors() throws {
        let garbage = try PageFileFixtures.temporaryURL("garbage.store")
        try Data((0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: garbage)
        #expect {
            _ = try PageFileFixtures.coordinator(PageFileFixtures.peopleModel, garbage)
        } throws: { error in
            let code = (error as NSError).code
            return code == NSFileReadCorruptFileError || code == NSPersistentStoreInvalidTypeError
        }
        // An engine database that is not a store.
        let foreign = try PageFileFixtures.temporaryURL("foreign.db")
        let database = try PageFileFixtures.openDatabase(foreign)
        try database.write { try $0.openTree(named: "other").setValue([1], forKey: [1]) }
        try database.close()
        #expect {
            _ = try PageFileFixtures.coordinator(PageFileFixtures.peopleModel, foreign)
        } throws: { ($0 as NSError).code == NSPersistentStoreInvalidTypeError }
    }

    @Test func uniqueConstraintIsAnErrorOrAnUpsertByMergePolicy() throws {
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = try PageFileFixtures.coordinator(PageFileFixtures.peopleModel, url)
        let first = PageFileFixtures.context(coordinator)
        let original = PageFileFixtures.person(first, "Ada", "Lovelace", 36, "ada@x")
        try first.save()

        let strict = PageFileFixtures.context(coordinator)
        PageFileFixtures.person(strict, "Dup", "Dup", 1, "ada@x")
        #expect { try strict.save() } throws: { error in
            let nsError = error as NSError
            return nsError.code == NSManagedObjectConstraintMergeError
                && (nsError.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [Any])?.count == 1
        }

        let upsert = PageFileFixtures.context(coordinator)
        upsert.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        let replacement = PageFileFixtures.person(upsert, "Augusta", "King", 37, "ada@x")
        try upsert.save()
        #expect(replacement.objectID == original.objectID)

        let check = PageFileFixtures.context(coordinator)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
        request.predicate = NSPredicate(format: "email == 'ada@x'")
        let found = try check.fetch(request)
        #expect(found.count == 1)
        #expect(found.first?.value(forKey: "firstName") as? String == "Augusta")
        #expect(found.first?.value(forKey: "age") as? Int16 == 37)
        #expect(found.first?.objectID == original.objectID)
        try PageFileFixtures.close(coordinator)
    }

    @Test func staleSaveUnderTheErrorPolicyIsAMergeConflict() throws {
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = try PageFileFixtures.coordinator(PageFileFixtures.peopleModel, url)
        let writer = PageFileFixtures.context(coordinator)
        let person = PageFileFixtures.person(writer, "Ada", "Lovelace", 36, "ada@x")
        try writer.save()
        let other = PageFileFixtures.context(coordinator)
        let copy = try other.existingObject(with: person.objectID)
        #expect(copy.value(forKey: "age") as? Int16 == 36)
        person.setValue(Int16(40), forKey: "age")
        try writer.save()
        copy.setValue(Int16(50), forKey: "age")
        #expect { try other.save() } throws: { ($0 as NSError).code == NSManagedObjectMergeError }
        other.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        try other.save()
        let check = PageFileFixtures.context(coordinator)
        #expect(try check.existingObject(with: person.objectID).value(forKey: "age") as? Int16 == 50)
        try PageFileFixtures.close(coordinator)
    }

    @Test func historyJournalSurvivesReopeningAndKeepsItsPurgeBound() throws {
        let url = try PageFileFixtures.temporaryURL()
        let options: [AnyHashable: Any] = [
            NSPersistentHistoryTrackingKey: true as NSNumber, PageFileStoreDurabilityOption: "off",
        ]
        func open() throws -> (NSPersistentStoreCoordinator, NSManagedObjectContext) {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: PageFileFixtures.peopleModel)
            try coordinator.addPersistentStore(
                ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: options)
            return (coordinator, PageFileFixtures.context(coordinator))
        }
        func history(_ context: NSManagedObjectContext, after token: NSPersistentHistoryToken?) throws
            -> [NSPersistentHistoryTransaction]
        {
            let result = try context.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: token))
            return (result as? NSPersistentHistoryResult)?.result as? [NSPersistentHistoryTransaction] ?? []
        }
        var (coordinator, context) = try open()
        context.transactionAuthor = "writer"
        for index in 0..<3 {
            PageFileFixtures.person(context, "F\(index)", "L", Int16(index), "p\(index)@x")
            try context.save()
        }
        let upsert = PageFileFixtures.context(coordinator)
        upsert.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        PageFileFixtures.person(upsert, "New", "L", 0, "p0@x")
        try upsert.save()
        try PageFileFixtures.close(coordinator)

        (coordinator, context) = try open()
        let all = try history(context, after: nil)
        #expect(all.count == 4)
        #expect(all.first?.author == "writer")
        let last = try #require(all.last?.changes?.first)
        #expect(last.changeType == .update)
        #expect(last.updatedProperties?.map(\.name) == ["firstName"])
        _ = try context.execute(NSPersistentHistoryChangeRequest.deleteHistory(before: all[2].token))
        try PageFileFixtures.close(coordinator)

        (coordinator, context) = try open()
        #expect(try history(context, after: nil).count == 2)
        #expect { _ = try history(context, after: all[0].token) } throws: {
            ($0 as NSError).code == NSPersistentHistoryTokenExpiredError
        }
        #expect(try history(context, after: all[2].token).count == 1)
        try PageFileFixtures.close(coordinator)
    }

    @Test func damagedRowsAndIndexEntriesAreReportedNotTrusted() throws {
        let url = try PageFileFixtures.temporaryURL()
        var coordinator = try PageFileFixtures.coordinator(PageFileFixtures.peopleModel, url)
        let context = PageFileFixtures.context(coordinator)
        for index in 0..<30 { PageFileFixtures.person(context, "F\(index)", "L", Int16(index), "p\(index)@x") }
        try context.save()
        try PageFileFixtures.close(coordinator)
        #expect(try PageFileStore.verify(at: url).isClean)

        let database = try PageFileFixtures.openDatabase(url)
        var random = SeededRandom(environmentOr: 0xDA_3A6E)
        let rowKey: [UInt8] = [0x81, 3, 0x81]
        let original = try #require(try database.read { try $0.tree(named: "rows.Person")?.value(forKey: rowKey) })
        try database.write { transaction in
            // A truncated row, an index entry without its row, a row without its index entry.
            try transaction.openTree(named: "rows.Person").setValue(Array(original.prefix(3)), forKey: rowKey)
            try transaction.openTree(named: "index.Person.age").setValue(
                [], forKey: [0x10, 0xC1, 0x47, 0xCE] + [0x82, 0x03, 0xE7, 0x82])  // age 999, key 999
            let byName = try transaction.openTree(named: "index.Person.byName")
            let first = try #require(try byName.entries(limit: 1).first)
            _ = try byName.removeValue(forKey: first.key)
        }
        try database.close()
        let report = try PageFileStore.verify(at: url)
        #expect(!report.isClean)
        #expect(report.problems.contains { $0.contains("does not decode") })
        #expect(report.problems.contains { $0.contains("index.Person.age") && $0.contains("without their row") })
        #expect(report.problems.contains { $0.contains("index.Person.byName") && $0.contains("without their entry") })

        coordinator = try PageFileFixtures.coordinator(PageFileFixtures.peopleModel, url)
        #expect {
            _ = try PageFileFixtures.context(coordinator).fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
        } throws: { ($0 as NSError).code == NSFileReadCorruptFileError }
        try PageFileFixtures.close(coordinator)

        // Random damage to one row: a thrown error or a row, never a trap.
        for _ in 0..<300 {
            var bytes = original
            for _ in 0..<random.int(in: 1...4) {
                switch random.int(in: 0...2) {
                case 0: bytes[random.int(in: 0...(bytes.count - 1))] = UInt8(truncatingIfNeeded: random.next())
                case 1: bytes = Array(bytes.prefix(random.int(in: 0...bytes.count)))
                default: bytes += random.bytes(random.int(in: 1...8))
                }
                if bytes.isEmpty { bytes = [1] }
            }
            let damaged = try PageFileFixtures.openDatabase(url)
            try damaged.write { try $0.openTree(named: "rows.Person").setValue(bytes, forKey: rowKey) }
            try damaged.close()
            let store = try PageFileFixtures.coordinator(PageFileFixtures.peopleModel, url)
            let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
            request.predicate = NSPredicate(format: "age < 5")
            _ = try? PageFileFixtures.context(store).fetch(request)
            try PageFileFixtures.close(store)
        }
    }

    @Test func automaticMigrationRewritesRowsByNameAndRebuildsIndexes() throws {
        let url = try PageFileFixtures.temporaryURL()
        var coordinator = try PageFileFixtures.coordinator(PageFileFixtures.peopleModel, url)
        var context = PageFileFixtures.context(coordinator)
        let team = NSEntityDescription.insertNewObject(forEntityName: "Team", into: context)
        team.setValue("Core", forKey: "title")
        for index in 0..<20 {
            PageFileFixtures.person(context, "F\(index)", "L", Int16(index), "p\(index)@x").setValue(
                team, forKey: "team")
        }
        try context.save()
        try PageFileFixtures.close(coordinator)
        let migrate: [AnyHashable: Any] = [
            NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true,
            PageFileStoreDurabilityOption: "off",
        ]

        // A new mandatory attribute without a default cannot be inferred: 134110, file unchanged.
        let mandatory = NSPersistentStoreCoordinator(
            managedObjectModel: PageFileFixtures.makePeopleModel(extraAttribute: true, extraIsOptional: false))
        #expect {
            try mandatory.addPersistentStore(
                ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: migrate)
        } throws: { ($0 as NSError).code == NSMigrationError }
        #expect(try PageFileStore.verify(at: url).isClean)

        let newModel = PageFileFixtures.makePeopleModel(extraAttribute: true)
        coordinator = NSPersistentStoreCoordinator(managedObjectModel: newModel)
        let store = try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: migrate)
        #expect(newModel.isConfiguration(withName: nil, compatibleWithStoreMetadata: store.metadata))
        context = PageFileFixtures.context(coordinator)
        let people = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
        #expect(people.count == 20)
        #expect(people.allSatisfy { $0.value(forKey: "nickname") == nil })
        #expect(
            people.allSatisfy {
                ($0.value(forKey: "team") as? NSManagedObject)?.value(forKey: "title") as? String == "Core"
            })
        let range = NSFetchRequest<NSManagedObject>(entityName: "Person")
        range.predicate = NSPredicate(format: "age BETWEEN {5, 9}")
        #expect(try context.count(for: range) == 5)
        #expect(try #require(store as? PageFileStore).verify().isClean)
        try PageFileFixtures.close(coordinator)
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: NSSQLiteStoreType, at: url, options: nil)
        #expect(newModel.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
    }

    /// Account: handle, score; `migrated` adds a note, makes handle unique and indexes score.
    static func accountModel(migrated: Bool) -> NSManagedObjectModel {
        let account = NSEntityDescription()
        account.name = "Account"
        account.properties =
            [
                PageFileFixtures.attribute("handle", .stringAttributeType),
                PageFileFixtures.attribute("score", .integer32AttributeType, indexed: migrated),
            ] + (migrated ? [PageFileFixtures.attribute("note", .stringAttributeType)] : [])
        if migrated { account.uniquenessConstraints = [["handle"]] }
        let model = NSManagedObjectModel()
        model.entities = [account]
        return model
    }

    @Test(arguments: [false, true])
    func migrationBuildsNewUniqueAndOrdinaryIndexesAndRefusesDuplicates(duplicated: Bool) throws {
        let url = try PageFileFixtures.temporaryURL()
        var coordinator = try PageFileFixtures.coordinator(Self.accountModel(migrated: false), url)
        var context = PageFileFixtures.context(coordinator)
        for index in 0..<30 {
            let account = NSEntityDescription.insertNewObject(forEntityName: "Account", into: context)
            account.setValue(duplicated && index == 29 ? "user7" : "user\(index)", forKey: "handle")
            account.setValue(Int32(index % 10), forKey: "score")
        }
        try context.save()
        try PageFileFixtures.close(coordinator)

        coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.accountModel(migrated: true))
        let options: [AnyHashable: Any] = [
            NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true,
            PageFileStoreDurabilityOption: "off",
        ]
        func open() throws -> NSPersistentStore {
            try coordinator.addPersistentStore(
                ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: options)
        }
        guard !duplicated else {
            // Two rows share a handle: Core Data's NSMigrationConstraintViolationError (134111),
            // and the file is left as it was.
            #expect { try open() } throws: { error in
                (error as NSError).code == NSMigrationConstraintViolationError
                    && (error as NSError).localizedDescription.contains("uniqueness constraint handle")
            }
            #expect(try PageFileStore.verify(at: url).isClean)
            let old = try PageFileFixtures.coordinator(Self.accountModel(migrated: false), url)
            #expect(
                try PageFileFixtures.context(old).count(for: NSFetchRequest<NSManagedObject>(entityName: "Account"))
                    == 30)
            return
        }
        let store = try #require(try open() as? PageFileStore)
        #expect(try store.treeKeys("unique.Account.handle").count == 30)
        #expect(try store.treeKeys("index.Account.score").count == 30)
        #expect(try store.verify().isClean)
        context = PageFileFixtures.context(coordinator)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Account")
        request.predicate = NSPredicate(format: "score == 3")
        #expect(try context.count(for: request) == 3)
        let clash = NSEntityDescription.insertNewObject(forEntityName: "Account", into: context)
        clash.setValue("user4", forKey: "handle")
        #expect { try context.save() } throws: { ($0 as NSError).code == NSManagedObjectConstraintMergeError }
    }
}
