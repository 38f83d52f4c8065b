import OpenCoreData
import Testing

/// Records its life-cycle calls (top level: NSClassFromString finds only top-level classes).
final class Hooked: NSManagedObject {
    nonisolated(unsafe) static var events: [String] = []
    @Managed var name: String?
    override func awakeFromInsert() { Hooked.events.append("insert") }
    override func awakeFromFetch() { Hooked.events.append("fetch") }
    override func willSave() { Hooked.events.append("willSave") }
    override func didSave() { Hooked.events.append("didSave") }
    override func prepareForDeletion() { Hooked.events.append("delete") }
}

@Suite struct ManagedObjectTests {
    @Test func managedPropertiesReadAndWriteTheEntityProperties() throws {
        let context = try TestStack.freshContext()
        let employee = TEmployee(context: context)
        #expect(employee.age == 0 && employee.salary == 0 && employee.name == nil)
        employee.name = "Ada"
        employee.age = 36
        #expect(employee.value(forKey: "name") as? String == "Ada")
        #expect(employee.value(forKey: "age") as? Int16 == 36)
        employee.setValue(40, forKey: "age")
        #expect(employee.age == 40)
        employee.name = nil
        #expect(employee.value(forKey: "name") == nil)
        let manager = TManager(context: context)
        manager.level = 3
        manager.name = "Grace"
        #expect(manager.level == 3 && manager.name == "Grace" && manager.entity.name == "Manager")
    }

    @Test func objectIDsAreTemporaryUntilSavedAndMapBackFromURIs() throws {
        let context = try TestStack.freshContext()
        let company = TCompany(context: context)
        company.name = "Acme"
        #expect(company.objectID.isTemporaryID)
        #expect(company.objectID.persistentStore == nil)
        try context.save()
        let id = company.objectID
        #expect(!id.isTemporaryID)
        #expect(id.persistentStore != nil)
        let uri = id.uriRepresentation()
        #expect(uri.scheme == "x-coredata")
        let coordinator = try #require(context.persistentStoreCoordinator)
        #expect(coordinator.managedObjectID(forURIRepresentation: uri) == id)
        #expect(coordinator.managedObjectID(forURIRepresentation: URL(string: "x-coredata://nope/Company/p1")!) == nil)
        #expect(context.object(with: id) === company)
        let set: Set<NSManagedObjectID> = [id, coordinator.managedObjectID(forURIRepresentation: uri)!]
        #expect(set.count == 1)
    }

    @Test func changedAndCommittedValues() throws {
        let context = try TestStack.freshContext()
        let employee = TEmployee(context: context)
        employee.name = "Ada"
        try context.save()
        #expect(employee.changedValues().isEmpty && !employee.hasChanges)
        employee.name = "Grace"
        #expect(employee.isUpdated && employee.hasChanges)
        #expect(employee.changedValues()["name"] as? String == "Grace")
        #expect(employee.changedValues()["age"] == nil)
        #expect(employee.committedValues(forKeys: ["name"])["name"] as? String == "Ada")
        employee.name = nil
        #expect(employee.changedValues()["name"] is NSNull)
    }

    @Test func keyPathsAndMutableSets() throws {
        let context = try TestStack.freshContext()
        let company = TCompany(context: context)
        company.name = "Acme"
        let ada = TEmployee(context: context)
        ada.name = "Ada"
        company.mutableSetValue(forKey: "employees").add(ada)
        #expect(ada.company === company)
        #expect(ada.value(forKeyPath: "company.name") as? String == "Acme")
        #expect(company.value(forKeyPath: "employees.name") as? [String] == ["Ada"])
        let employees = company.mutableSetValue(forKey: "employees")
        #expect(employees.count == 1 && employees.contains(ada))
        employees.remove(ada)
        #expect(ada.company == nil && company.employees.isEmpty)
    }

    @Test func orderedRelationshipsKeepOrder() throws {
        let context = try TestStack.freshContext()
        let project = TProject(context: context)
        let tasks = (0..<4).map { index -> TTask in
            let task = TTask(context: context)
            task.title = "T\(index)"
            return task
        }
        let ordered = project.mutableOrderedSetValue(forKey: "tasks")
        for task in tasks.reversed() { ordered.add(task) }
        ordered.insert(tasks[3], at: 0)  // already present: ignored
        #expect(project.tasks.array.compactMap { ($0 as? TTask)?.title } == ["T3", "T2", "T1", "T0"])
        #expect(tasks.allSatisfy { $0.project === project })
        ordered.removeObject(at: 0)
        #expect(tasks[3].project == nil)
        try context.save()
        let reader = TestStack.context(try #require(context.persistentStoreCoordinator))
        let fetched = try #require(try reader.fetch(NSFetchRequest<TProject>(entityName: "Project")).first)
        #expect(fetched.tasks.array.compactMap { ($0 as? TTask)?.title } == ["T2", "T1", "T0"])
    }

    @Test func lifeCycleHooksRun() throws {
        let entity = NSEntityDescription()
        entity.name = "Hooked"
        entity.managedObjectClassName = NSStringFromClass(Hooked.self)
        entity.properties = [TestStack.attribute("name", .stringAttributeType)]
        let model = NSManagedObjectModel()
        model.entities = [entity]
        let coordinator = try TestStack.coordinator(model: model)
        let context = TestStack.context(coordinator)
        let object = Hooked(context: context)
        object.name = "x"
        try context.save()
        let other = TestStack.context(coordinator)
        let fetched = try other.fetch(NSFetchRequest<Hooked>(entityName: "Hooked"))
        #expect(fetched.count == 1)
        other.delete(fetched[0])
        try other.save()
        #expect(Hooked.events == ["insert", "willSave", "didSave", "fetch", "delete", "willSave"])
    }
}
