import OpenCoreData
import Testing

/// A user-written store: rows in an array, registered under its own type.
final class ArrayStore: NSPersistentStore, @unchecked Sendable {
    private var rows: [StoreRow] = []
    private var nextKey: Int64 = 100

    override var type: String { "ArrayStore" }

    override func fetchRows(_ request: NSFetchRequest<NSFetchRequestResult>) throws -> [StoreRow] {
        rows.filter { row in
            guard let entity = request.entity, row.objectID.entity.isKindOf(entity: entity) else { return false }
            guard let predicate = request.predicate else { return true }
            let view = StoreRowView(
                row: row, resolve: { id in self.rows.first { $0.objectID == id } }, resolveToMany: { _, _ in [] })
            return predicate.evaluate(with: view)
        }
    }

    override func row(for objectID: NSManagedObjectID) throws -> StoreRow? {
        rows.first { $0.objectID == objectID }
    }

    override func obtainPermanentIDs(for entities: [NSEntityDescription]) throws -> [NSManagedObjectID] {
        entities.map { entity in
            nextKey += 1
            return newObjectID(for: entity, key: nextKey)
        }
    }

    override func save(_ request: StoreSaveRequest) throws -> StoreSaveResult {
        rows.append(contentsOf: request.insertedRows)
        for update in request.updatedRows {
            guard let index = rows.firstIndex(where: { $0.objectID == update.objectID }) else { continue }
            for change in update.changes { rows[index].values[change.slot] = change.value }
            rows[index].version += 1
        }
        let deleted = Set(request.deletedObjects.map(\.objectID))
        rows.removeAll { deleted.contains($0.objectID) }
        return StoreSaveResult()
    }
}

@Suite struct InMemoryStoreTests {
    @Test func rowsNotObjectsCrossTheStoreBoundary() throws {
        let coordinator = try TestStack.coordinator()
        let store = try #require(coordinator.persistentStores.first as? NSInMemoryStore)
        let context = TestStack.context(coordinator)
        let company = TCompany(context: context)
        company.name = "Acme"
        let ada = TEmployee(context: context)
        ada.name = "Ada"
        ada.age = 36
        ada.company = company
        try context.save()
        let row = try #require(try store.row(for: ada.objectID))
        let layout = ada.entity.properties.map(\.name)
        #expect(row.version == 1)
        #expect(row.values[try #require(layout.firstIndex(of: "name"))] == .string("Ada"))
        #expect(row.values[try #require(layout.firstIndex(of: "age"))] == .integer(36))
        #expect(row.values[try #require(layout.firstIndex(of: "company"))] == .objectID(company.objectID))
        ada.age = 37
        try context.save()
        #expect(try store.row(for: ada.objectID)?.version == 2)

        let view = StoreRowView(
            row: row, resolve: { try store.row(for: $0) },
            resolveToMany: { try store.objectIDs(forRelationship: $0, of: $1) })
        #expect(try view.readValue(forKey: "name") as? String == "Ada")
        #expect(
            try (view.readValue(forKey: "company") as? StoreRowView)?.readValue(forKey: "name") as? String == "Acme")
        #expect(view.isEqual(ada))
        #expect(throws: KeyValueCodingError.self) { try view.readValue(forKey: "nope") }
    }

    @Test func staleUpdatesFailWithTheErrorPolicyAndWinWithTrump() throws {
        let coordinator = try TestStack.coordinator()
        let first = TestStack.context(coordinator)
        let company = TCompany(context: first)
        company.name = "Acme"
        try first.save()
        let second = TestStack.context(coordinator)
        let theirs = try #require(try second.existingObject(with: company.objectID) as? TCompany)
        theirs.name = "Second"
        try second.save()
        company.name = "First"
        #expect {
            try first.save()
        } throws: { error in
            (error as NSError).code == NSManagedObjectMergeError
                && ((error as NSError).userInfo[NSAffectedObjectsErrorKey] as? [NSManagedObjectID]) == [
                    company.objectID
                ]
        }
        first.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        try first.save()
        let reader = TestStack.context(coordinator)
        #expect((try reader.existingObject(with: company.objectID) as? TCompany)?.name == "First")
    }

    @Test func aRegisteredCustomStoreServesTheObjectLayer() throws {
        NSPersistentStoreCoordinator.registerStoreClass(ArrayStore.self, type: "ArrayStore")
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestStack.model)
        try coordinator.addPersistentStore(ofType: "ArrayStore", configurationName: nil, at: nil, options: nil)
        let context = TestStack.context(coordinator)
        let company = TCompany(context: context)
        company.name = "Custom"
        try context.save()
        #expect(company.objectID.storeKey == 101)
        let reader = TestStack.context(coordinator)
        let request = NSFetchRequest<TCompany>(entityName: "Company")
        request.predicate = TestStack.equals("name", "Custom")
        #expect(try reader.fetch(request).first?.name == "Custom")
        #expect(
            throws: NSError.self,
            "a store that does not implement objectIDs(forRelationship:of:) reports it"
        ) {
            _ = try coordinator.persistentStores[0].objectIDs(
                forRelationship: TestStack.model.entitiesByName["Company"]!.relationshipsByName["employees"]!,
                of: company.objectID)
        }
        try coordinator.remove(coordinator.persistentStores[0])
        #expect(coordinator.persistentStores.isEmpty)
    }
}

@Suite struct StoreMigrationTests {
    @Test func migratingAStoreCopiesTheGraph() throws {
        let coordinator = try TestStack.coordinator()
        let context = TestStack.context(coordinator)
        let company = TCompany(context: context)
        company.name = "Acme"
        for index in 0..<3 {
            let employee = TEmployee(context: context)
            employee.name = "E\(index)"
            employee.company = company
        }
        company.ceo = company.employees.first
        try context.save()
        let old = try #require(coordinator.persistentStores.first)
        let new = try coordinator.migratePersistentStore(
            old, to: URL(fileURLWithPath: "/dev/null"), type: NSInMemoryStoreType)
        #expect(coordinator.persistentStores.count == 1 && coordinator.persistentStores[0] === new)
        let reader = TestStack.context(coordinator)
        let companies = try reader.fetch(NSFetchRequest<TCompany>(entityName: "Company"))
        #expect(companies.count == 1 && companies[0].objectID.persistentStore === new)
        #expect(Set(companies[0].employees.compactMap(\.name)) == ["E0", "E1", "E2"])
        #expect(companies[0].ceo?.ledCompany === companies[0])
        #expect {
            try coordinator.migratePersistentStore(old, to: URL(fileURLWithPath: "/dev/null"), type: "Nope")
        } throws: {
            ($0 as NSError).code == NSPersistentStoreOperationError
        }
    }
}
