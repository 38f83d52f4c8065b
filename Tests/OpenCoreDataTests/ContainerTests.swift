import OpenCoreData
import Testing

@Suite struct ContainerTests {
    static func container(readOnly: Bool = false) throws -> NSPersistentContainer {
        let container = NSPersistentContainer(name: "Tests", managedObjectModel: TestStack.model)
        let description = NSPersistentStoreDescription()
        description.type = NSInMemoryStoreType
        description.isReadOnly = readOnly
        description.setOption(true as NSNumber, forKey: NSPersistentHistoryTrackingKey)
        container.persistentStoreDescriptions = [description]
        var loadError: Error?
        container.loadPersistentStores { loaded, error in
            #expect(loaded === description)
            loadError = error
        }
        if let loadError { throw loadError }
        return container
    }

    @Test func backgroundTasksShareTheStore() async throws {
        let container = try Self.container()
        #expect(container.persistentStoreCoordinator.persistentStores.count == 1)
        #expect(container.viewContext.concurrencyType == .mainQueueConcurrencyType)
        #expect(container.viewContext === container.viewContext)
        let id = try await container.performBackgroundTask { context in
            let company = TCompany(context: context)
            company.name = "Acme"
            try context.save()
            return company.objectID
        }
        #expect(Self.nameInBackgroundTask(container, id) == "Acme")
        let background = container.newBackgroundContext()
        #expect(background.concurrencyType == .privateQueueConcurrencyType)
        let count = try await background.perform {
            try background.count(for: NSFetchRequest<TCompany>(entityName: "Company"))
        }
        #expect(count == 1)
    }

    /// The closure form of performBackgroundTask (from synchronous code).
    static func nameInBackgroundTask(_ container: NSPersistentContainer, _ id: NSManagedObjectID) -> String? {
        let done = DispatchSemaphore(value: 0)
        let names = ErrorBox()
        container.performBackgroundTask { context in
            if let company = try? context.existingObject(with: id) as? TCompany, let name = company.name {
                names.record(NSError(domain: name, code: 0))
            }
            done.signal()
        }
        done.wait()
        return names.errors.first.map { ($0 as NSError).domain }
    }

    @Test func readOnlyStoresRefuseSaves() throws {
        let container = try Self.container(readOnly: true)
        let context = container.newBackgroundContext()
        try context.performAndWait { () throws -> Void in
            let company = TCompany(context: context)
            company.name = "Acme"
            #expect { try context.save() } throws: { ($0 as NSError).code == NSPersistentStoreSaveError }
            #expect(context.hasChanges)
            #expect(try context.count(for: NSFetchRequest<TCompany>(entityName: "Company")) == 1)
        }
    }
}
