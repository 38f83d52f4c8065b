import OpenCoreData
import Testing

/// Collects the notifications one context posts.
final class NotificationLog: @unchecked Sendable {
    private let lock = NSLock()
    private var notes: [Notification] = []
    private var observers: [NSObjectProtocol] = []

    init(_ names: [Notification.Name], from context: NSManagedObjectContext) {
        for name in names {
            observers.append(
                NotificationCenter.default.addObserver(forName: name, object: context, queue: nil) { [weak self] note in
                    guard let self else { return }
                    self.lock.lock()
                    self.notes.append(note)
                    self.lock.unlock()
                })
        }
    }

    deinit { for observer in observers { NotificationCenter.default.removeObserver(observer) } }

    var all: [Notification] {
        lock.lock()
        defer { lock.unlock() }
        return notes
    }

    func objects(_ key: String, in index: Int) -> Set<NSManagedObject> {
        let list = all
        guard list.indices.contains(index) else { return [] }
        return list[index].userInfo?[key] as? Set<NSManagedObject> ?? []
    }
}

@Suite struct ContextTests {
    @Test func fetchMergesPendingChanges() throws {
        let context = try TestStack.freshContext()
        for name in ["Ada", "Grace", "Linus"] {
            let employee = TEmployee(context: context)
            employee.name = name
        }
        try context.save()
        let all = try context.fetch(NSFetchRequest<TEmployee>(entityName: "Employee"))
        let grace = try #require(all.first { $0.name == "Grace" })
        let linus = try #require(all.first { $0.name == "Linus" })
        grace.name = "Hopper"  // stored row still says Grace: must not match any more
        context.delete(linus)
        let newcomer = TEmployee(context: context)
        newcomer.name = "Grace"
        let request = NSFetchRequest<TEmployee>(entityName: "Employee")
        request.predicate = TestStack.equals("name", "Grace")
        #expect(try context.fetch(request) == [newcomer])
        request.includesPendingChanges = false
        #expect(try context.fetch(request) == [grace])
        let everyone = NSFetchRequest<TEmployee>(entityName: "Employee")
        #expect(Set(try context.fetch(everyone).compactMap(\.name)) == ["Ada", "Hopper", "Grace"])
        #expect(try context.count(for: everyone) == 3)
    }

    @Test func resultTypesWindowsAndSubentities() throws {
        let context = try TestStack.freshContext()
        for index in 0..<6 {
            let employee = index < 2 ? TManager(context: context) : TEmployee(context: context)
            employee.name = "E\(index)"
            employee.age = Int16(30 + index)
        }
        try context.save()
        let ids = NSFetchRequest<NSManagedObjectID>(entityName: "Employee")
        ids.resultType = .managedObjectIDResultType
        #expect(try context.fetch(ids).count == 6)
        let counted = NSFetchRequest<NSNumber>(entityName: "Employee")
        counted.resultType = .countResultType
        #expect(try context.fetch(counted) == [6])
        let managers = NSFetchRequest<TManager>(entityName: "Manager")
        #expect(try context.fetch(managers).count == 2)
        let direct = NSFetchRequest<TEmployee>(entityName: "Employee")
        direct.includesSubentities = false
        #expect(try context.count(for: direct) == 4)
        let page = NSFetchRequest<TEmployee>(entityName: "Employee")
        page.sortDescriptors = [NSSortDescriptor(key: "age", ascending: false)]
        page.fetchOffset = 1
        page.fetchLimit = 2
        #expect(try context.fetch(page).map(\.age) == [34, 33])
        #expect(try context.count(for: page) == 2)
        let dictionaries = NSFetchRequest<NSDictionary>(entityName: "Employee")
        dictionaries.resultType = .dictionaryResultType
        dictionaries.propertiesToFetch = ["name"]
        dictionaries.sortDescriptors = [NSSortDescriptor(key: "age", ascending: true)]
        let rows = try context.fetch(dictionaries)
        #expect(rows.first?["name"] as? String == "E0" && rows.first?["age"] == nil)
        #expect(throws: NSError.self) { try context.fetch(NSFetchRequest<TCompany>(entityName: "Employee")) }
    }

    @Test func rollbackResetAndRefresh() throws {
        let coordinator = try TestStack.coordinator()
        let context = TestStack.context(coordinator)
        let company = TCompany(context: context)
        company.name = "Acme"
        let ada = TEmployee(context: context)
        ada.name = "Ada"
        ada.company = company
        try context.save()

        let temp = TEmployee(context: context)
        temp.company = company
        ada.company = nil
        ada.name = "Changed"
        context.delete(company)
        context.rollback()
        #expect(!context.hasChanges)
        #expect(temp.managedObjectContext == nil)
        #expect(company.employees == [ada] && ada.company === company && ada.name == "Ada" && !company.isDeleted)

        let other = TestStack.context(coordinator)
        let otherAda = try #require(try other.existingObject(with: ada.objectID) as? TEmployee)
        otherAda.name = "Elsewhere"
        try other.save()
        #expect(ada.name == "Ada", "registered objects keep their values until refreshed")
        context.refresh(ada, mergeChanges: false)
        #expect(ada.isFault)
        #expect(ada.name == "Elsewhere")
        otherAda.age = 50
        try other.save()
        ada.salary = 10
        context.refresh(ada, mergeChanges: true)
        #expect(ada.age == 50 && ada.salary == 10 && ada.hasChanges)

        context.reset()
        #expect(context.registeredObjects.isEmpty && !context.hasChanges)
        #expect(try context.count(for: NSFetchRequest<TEmployee>(entityName: "Employee")) == 1)
    }

    @Test func objectLookupAndPermanentIDs() throws {
        let context = try TestStack.freshContext()
        let company = TCompany(context: context)
        company.name = "Acme"
        let temporary = company.objectID
        try context.obtainPermanentIDs(for: [company])
        #expect(!company.objectID.isTemporaryID && company.objectID != temporary)
        #expect(context.registeredObject(for: company.objectID) === company)
        try context.save()
        #expect(try context.existingObject(with: company.objectID) === company)
        context.delete(company)
        try context.save()
        let reader = TestStack.context(try #require(context.persistentStoreCoordinator))
        #expect {
            try reader.existingObject(with: company.objectID)
        } throws: { ($0 as NSError).code == NSManagedObjectReferentialIntegrityError }
        let ghost = reader.object(with: company.objectID)
        #expect(ghost.isFault && ghost.value(forKey: "name") == nil)
    }

    @Test func notificationsCarryCoreDataKeys() throws {
        let context = try TestStack.freshContext()
        let log = NotificationLog(
            [.NSManagedObjectContextObjectsDidChange, .NSManagedObjectContextWillSave, .NSManagedObjectContextDidSave],
            from: context)
        let company = TCompany(context: context)
        company.name = "Acme"
        try context.save()
        company.name = "Acme 2"
        let doomed = TEmployee(context: context)
        try context.save()
        context.delete(doomed)
        try context.save()
        let names = log.all.map(\.name)
        #expect(
            names == [
                .NSManagedObjectContextObjectsDidChange, .NSManagedObjectContextWillSave,
                .NSManagedObjectContextDidSave,
                .NSManagedObjectContextObjectsDidChange, .NSManagedObjectContextWillSave,
                .NSManagedObjectContextDidSave,
                .NSManagedObjectContextObjectsDidChange, .NSManagedObjectContextWillSave,
                .NSManagedObjectContextDidSave,
            ])
        #expect(log.objects(NSInsertedObjectsKey, in: 2) == [company])
        #expect(log.objects(NSUpdatedObjectsKey, in: 5) == [company])
        #expect(log.objects(NSInsertedObjectsKey, in: 5) == [doomed])
        #expect(log.objects(NSDeletedObjectsKey, in: 8) == [doomed])
        #expect(log.objects(NSDeletedObjectsKey, in: 6) == [doomed])
    }

    @Test func mergingADidSaveNotification() throws {
        let scenario = try SavedElsewhere()
        let note = try scenario.renameCompanyAndDeleteAda()
        scenario.main.mergeChanges(fromContextDidSave: note)
        #expect(scenario.company.name == "Renamed")
        #expect(scenario.ada.managedObjectContext == nil)
        #expect(scenario.company.employees.isEmpty)
    }

    @Test func automaticMergingFromTheCoordinator() async throws {
        let coordinator = try TestStack.coordinator()
        let watcher = TestStack.context(coordinator)
        watcher.automaticallyMergesChangesFromParent = true
        let company = try await watcher.perform {
            let company = TCompany(context: watcher)
            company.name = "Acme"
            try watcher.save()
            return company.objectID
        }
        let writer = TestStack.context(coordinator)
        try await writer.perform {
            let theirs = try writer.existingObject(with: company) as! TCompany
            theirs.name = "Merged"
            try writer.save()
        }
        // The merge was queued on the watcher's queue behind the save; this runs after it.
        let name = await watcher.perform { (watcher.registeredObject(for: company) as? TCompany)?.name }
        #expect(name == "Merged")
    }

    @Test func unknownEntityAndMissingCoordinatorThrow() throws {
        let context = try TestStack.freshContext()
        #expect { try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Nobody")) } throws: {
            ($0 as NSError).code == NSCoreDataError && ($0 as NSError).localizedDescription.contains("Nobody")
        }
        #expect(NSEntityDescription.entity(forEntityName: "Nobody", in: context) == nil)
        let lonely = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        #expect(throws: NSError.self) { try lonely.fetch(NSFetchRequest<NSManagedObject>(entityName: "Company")) }
    }
}
