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

    /// The guide's generic manager creates objects with `T(context:)`.
    @Test func genericCodeCreatesObjectsWithTheRequiredInitializer() throws {
        func create<T: NSManagedObject>(_: T.Type, in context: NSManagedObjectContext) -> T { T(context: context) }
        let context = try TestStack.freshContext()
        let manager = create(TManager.self, in: context)
        #expect(manager.entity.name == "Manager" && context.insertedObjects.contains(manager))
    }

    /// `fetchRequest()` untyped, beside a subclass's typed one.
    @Test func untypedFetchRequestNamesTheClassEntity() throws {
        let context = try TestStack.freshContext()
        _ = TProject(context: context)
        _ = TCompany(context: context)
        let request: NSFetchRequest<NSFetchRequestResult> = TProject.fetchRequest()
        #expect(request.entityName == "Project")
        #expect(try context.count(for: request) == 1)
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

    @Test func orderedRelationshipBulkEditsGoThroughTheRelationship() throws {
        let context = try TestStack.freshContext()
        let project = TProject(context: context)
        let tasks = (0..<5).map { index -> TTask in
            let task = TTask(context: context)
            task.title = "T\(index)"
            return task
        }
        func titles() -> [String] { project.tasks.array.compactMap { ($0 as? TTask)?.title } }
        let ordered = project.mutableOrderedSetValue(forKey: "tasks")
        ordered.addObjects(from: [tasks[0], tasks[1], tasks[0]])
        #expect(titles() == ["T0", "T1"], "addObjects(from:) appends in order, once each")
        #expect(tasks[0].project === project && tasks[1].project === project, "and sets the inverse")
        ordered.insert([tasks[2], tasks[3]], at: IndexSet([0, 2]))
        #expect(titles() == ["T2", "T0", "T3", "T1"], "insert(_:at:) places each object at its index")
        ordered.removeObjects(in: [tasks[0], tasks[4]])
        #expect(titles() == ["T2", "T3", "T1"] && tasks[0].project == nil, "removeObjects(in:)")
        ordered.removeObjects(at: IndexSet([0, 2]))
        #expect(titles() == ["T3"] && tasks[2].project == nil && tasks[1].project == nil, "removeObjects(at:)")
        try context.save()
        let reader = TestStack.context(try #require(context.persistentStoreCoordinator))
        let fetched = try #require(try reader.fetch(NSFetchRequest<TProject>(entityName: "Project")).first)
        #expect(fetched.tasks.array.compactMap { ($0 as? TTask)?.title } == ["T3"])
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

@Suite struct ManagedObjectDetailTests {
    @Test func transientAttributesAreNeverStored() throws {
        let entity = NSEntityDescription()
        entity.name = "Note"
        let text = TestStack.attribute("text", .stringAttributeType)
        let scratch = TestStack.attribute("scratch", .stringAttributeType, optional: false)
        scratch.isTransient = true
        entity.properties = [text, scratch]
        let model = NSManagedObjectModel()
        model.entities = [entity]
        let coordinator = try TestStack.coordinator(model: model)
        let context = TestStack.context(coordinator)
        let note = NSManagedObject(entity: entity, insertInto: context)
        note.setValue("kept", forKey: "text")
        note.setValue("memory only", forKey: "scratch")
        try context.save()
        #expect(note.value(forKey: "scratch") as? String == "memory only")
        let reader = TestStack.context(coordinator)
        let fetched = try #require(try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Note")).first)
        #expect(fetched.value(forKey: "text") as? String == "kept")
        #expect(fetched.value(forKey: "scratch") == nil)
    }

    @Test func primitiveAccessSkipsInverses() throws {
        let context = try TestStack.freshContext()
        let company = TCompany(context: context)
        company.name = "Acme"
        let employee = TEmployee(context: context)
        employee.setPrimitiveValue(company, forKey: "company")
        #expect(employee.primitiveValue(forKey: "company") as? TCompany === company)
        #expect(company.employees.isEmpty, "primitive setters do not maintain inverses")
        employee.company = nil
        employee.company = company
        #expect(company.employees == [employee])
    }

    @Test func relationshipFaultsResolveOnAccess() throws {
        let coordinator = try TestStack.coordinator()
        let writer = TestStack.context(coordinator)
        let company = TCompany(context: writer)
        company.name = "Acme"
        let employee = TEmployee(context: writer)
        employee.company = company
        try writer.save()
        let reader = TestStack.context(coordinator)
        let fetched = try #require(try reader.existingObject(with: employee.objectID) as? TEmployee)
        #expect(fetched.hasFault(forRelationshipNamed: "company"))
        #expect(fetched.company?.name == "Acme")
        #expect(!fetched.hasFault(forRelationshipNamed: "company"))
        let lazy = reader.object(with: company.objectID)
        #expect(lazy.isFault == false, "already loaded through the relationship")
        reader.refreshAllObjects()
        #expect(lazy.isFault)
        #expect((lazy as? TCompany)?.employees.count == 1)
    }

    @Test func oneToOneStealsFromThePreviousOwner() throws {
        let context = try TestStack.freshContext()
        let first = TCompany(context: context)
        let second = TCompany(context: context)
        let boss = TEmployee(context: context)
        first.ceo = boss
        second.ceo = boss
        #expect(first.ceo == nil && second.ceo === boss && boss.ledCompany === second)
        let other = TEmployee(context: context)
        second.ceo = other
        #expect(boss.ledCompany == nil && other.ledCompany === second)
    }
}
