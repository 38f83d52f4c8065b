// To-many relationships of the default store kept outside the rows (SPEC.md §3.2 R1):
// one-to-many through the inverse's reference index, many-to-many, ordered and
// inverse-less ones in join trees. Round trips across reopen, order kept after moves,
// saves that write only the difference, every delete rule on big to-manys, prefetching,
// migration, and verify() catching damaged join trees.
import Foundation
import OpenCoreData
import StorageEngine
import TestSupport
import Testing

@Suite struct PageFileToManyTests {
    typealias Fixtures = PageFileFixtures

    /// Folder with `tags` (to-many, no inverse) and `pinned` (ordered, no inverse) to Tag.
    static let noInverseModel: NSManagedObjectModel = {
        let folder = NSEntityDescription()
        folder.name = "Folder"
        let tag = NSEntityDescription()
        tag.name = "Tag"
        tag.properties = [TestStack.attribute("label", .stringAttributeType)]
        folder.properties = [
            TestStack.attribute("name", .stringAttributeType),
            TestStack.relationship("tags", to: tag, toMany: true),
            TestStack.relationship("pinned", to: tag, toMany: true, ordered: true),
        ]
        let model = NSManagedObjectModel()
        model.entities = [folder, tag]
        return model
    }()

    static func open(_ url: URL, _ model: NSManagedObjectModel = TestStack.model, options: [String: Any] = [:]) throws
        -> (NSPersistentStoreCoordinator, NSManagedObjectContext)
    {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        var all: [String: Any] = [PageFileStoreDurabilityOption: "off"]
        all.merge(options) { _, new in new }
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: all)
        return (coordinator, Fixtures.context(coordinator))
    }

    static func fetchOne(_ context: NSManagedObjectContext, _ entity: String, _ key: String, _ value: String) throws
        -> NSManagedObject?
    {
        let request = NSFetchRequest<NSManagedObject>(entityName: entity)
        request.predicate = NSPredicate(format: "%K == %@", key, value)
        return try context.fetch(request).first
    }

    static func entries(_ url: URL, _ tree: String) throws -> [[UInt8]] {
        let database = try Fixtures.openDatabase(url)
        defer { try? database.close() }
        return try database.read { try $0.tree(named: tree)?.entries().map(\.key) ?? [] }
    }

    /// The display names of `objects`: sorted for a set, in order for an ordered set.
    static func names(_ objects: Any?) -> [String] {
        func name(_ object: Any) -> String? {
            guard let object = object as? NSManagedObject,
                let key = ["name", "label", "title"].first(where: { object.entity.propertiesByName[$0] != nil })
            else { return nil }
            return object.value(forKey: key) as? String
        }
        switch objects {
        case let set as Set<NSManagedObject>: return set.compactMap(name).sorted()
        case let ordered as NSOrderedSet: return ordered.array.compactMap(name)
        default: return []
        }
    }

    @Test func oneToManyIsReadThroughTheInverseAndSurvivesReopening() throws {
        let url = try Fixtures.temporaryURL()
        var (coordinator, context) = try Self.open(url)
        let company = NSEntityDescription.insertNewObject(forEntityName: "Company", into: context)
        company.setValue("Acme", forKey: "name")
        for index in 0..<40 {
            let entity = index % 4 == 0 ? "Manager" : "Employee"
            let employee = NSEntityDescription.insertNewObject(forEntityName: entity, into: context)
            employee.setValue("E\(index)", forKey: "name")
            employee.setValue(company, forKey: "company")
        }
        try context.save()
        try Fixtures.close(coordinator)
        // Nothing in the company's row: the employees' references are indexed per concrete entity.
        #expect(try Self.entries(url, "rel.Employee.company").count == 30)
        #expect(try Self.entries(url, "rel.Manager.company").count == 10)
        #expect(try Self.entries(url, "join.Company.employees").isEmpty)

        (coordinator, context) = try Self.open(url)
        let acme = try #require(try Self.fetchOne(context, "Company", "name", "Acme"))
        let employees = try #require(acme.value(forKey: "employees") as? Set<NSManagedObject>)
        #expect(employees.count == 40)
        #expect(employees.filter { $0.entity.name == "Manager" }.count == 10)
        // Moving one employee changes one reference entry, not a list.
        let moved = try #require(employees.first { $0.value(forKey: "name") as? String == "E3" })
        let other = NSEntityDescription.insertNewObject(forEntityName: "Company", into: context)
        other.setValue("Other", forKey: "name")
        moved.setValue(other, forKey: "company")
        try context.save()
        let counted = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        counted.predicate = NSPredicate(format: "company.name == 'Acme'")
        #expect(try context.count(for: counted) == 39)
        let withMany = NSFetchRequest<NSManagedObject>(entityName: "Company")
        withMany.predicate = NSPredicate(format: "employees.@count > 5")
        #expect(try context.fetch(withMany).compactMap { $0.value(forKey: "name") as? String } == ["Acme"])
        try Fixtures.close(coordinator)
        #expect(try PageFileStore.verify(at: url).isClean)
    }

    @Test func manyToManyKeepsBothDirectionsAndWritesOnlyTheDifference() throws {
        let url = try Fixtures.temporaryURL()
        var (coordinator, context) = try Self.open(url)
        let project = NSEntityDescription.insertNewObject(forEntityName: "Project", into: context)
        project.setValue("Big", forKey: "title")
        var people: [NSManagedObject] = []
        for index in 0..<200 {
            let employee = NSEntityDescription.insertNewObject(forEntityName: "Employee", into: context)
            employee.setValue("E\(index)", forKey: "name")
            people.append(employee)
        }
        project.setValue(Set(people), forKey: "members")
        try context.save()
        let before = Set(try Self.entriesWhileOpen(coordinator, "join.Project.members"))
        #expect(before.count == 200)
        project.mutableSetValue(forKey: "members").remove(people[7])
        let newcomer = NSEntityDescription.insertNewObject(forEntityName: "Employee", into: context)
        newcomer.setValue("New", forKey: "name")
        project.mutableSetValue(forKey: "members").add(newcomer)
        try context.save()
        let after = Set(try Self.entriesWhileOpen(coordinator, "join.Project.members"))
        #expect(after.subtracting(before).count == 1 && before.subtracting(after).count == 1)
        try Fixtures.close(coordinator)

        (coordinator, context) = try Self.open(url)
        let big = try #require(try Self.fetchOne(context, "Project", "title", "Big"))
        let members = try #require(big.value(forKey: "members") as? Set<NSManagedObject>)
        #expect(members.count == 200)
        #expect(!Self.names(members).contains("E7") && Self.names(members).contains("New"))
        let e8 = try #require(try Self.fetchOne(context, "Employee", "name", "E8"))
        #expect((e8.value(forKey: "projects") as? Set<NSManagedObject>)?.count == 1)
        let e7 = try #require(try Self.fetchOne(context, "Employee", "name", "E7"))
        #expect((e7.value(forKey: "projects") as? Set<NSManagedObject>)?.isEmpty == true)
        try Fixtures.close(coordinator)
        #expect(try PageFileStore.verify(at: url).isClean)
    }

    static func entriesWhileOpen(_ coordinator: NSPersistentStoreCoordinator, _ tree: String) throws -> [[UInt8]] {
        // The store holds the file: read its trees through a second coordinator-free handle
        // only after closing; here read through the verify report path instead.
        let store = try #require(coordinator.persistentStores.first as? PageFileStore)
        return try store.treeKeys(tree)
    }

    @Test func orderedToManyKeepsItsOrderAcrossMovesAndReopening() throws {
        let url = try Fixtures.temporaryURL()
        var (coordinator, context) = try Self.open(url)
        let project = NSEntityDescription.insertNewObject(forEntityName: "Project", into: context)
        project.setValue("Plan", forKey: "title")
        var tasks: [NSManagedObject] = []
        for index in 0..<50 {
            let task = NSEntityDescription.insertNewObject(forEntityName: "Task", into: context)
            task.setValue("T\(index)", forKey: "title")
            tasks.append(task)
        }
        project.setValue(NSOrderedSet(array: tasks), forKey: "tasks")
        try context.save()
        let before = Set(try Self.entriesWhileOpen(coordinator, "join.Project.tasks"))
        // Move the last task to the front and one from the middle to the end.
        let ordered = project.mutableOrderedSetValue(forKey: "tasks")
        ordered.moveObjects(at: IndexSet(integer: 49), to: 0)
        ordered.moveObjects(at: IndexSet(integer: 20), to: 49)
        try context.save()
        let after = Set(try Self.entriesWhileOpen(coordinator, "join.Project.tasks"))
        #expect(after.count == 50)
        #expect(after.subtracting(before).count == 2, "a move rewrites only the moved entries")
        var expected = (0..<50).map { "T\($0)" }
        expected.insert(expected.removeLast(), at: 0)
        expected.append(expected.remove(at: 20))
        try Fixtures.close(coordinator)

        (coordinator, context) = try Self.open(url)
        let plan = try #require(try Self.fetchOne(context, "Project", "title", "Plan"))
        #expect(Self.names(plan.value(forKey: "tasks")) == expected)
        // Inserting between two neighbours many times exhausts no gap silently.
        for round in 0..<40 {
            let task = NSEntityDescription.insertNewObject(forEntityName: "Task", into: context)
            task.setValue("I\(round)", forKey: "title")
            plan.mutableOrderedSetValue(forKey: "tasks").insert(task, at: 1)
            try context.save()
            expected.insert("I\(round)", at: 1)
        }
        try Fixtures.close(coordinator)
        (coordinator, context) = try Self.open(url)
        let reread = try #require(try Self.fetchOne(context, "Project", "title", "Plan"))
        #expect(Self.names(reread.value(forKey: "tasks")) == expected)
        // Setting the to-one side moves the task between the two ordered lists.
        let side = NSEntityDescription.insertNewObject(forEntityName: "Project", into: context)
        side.setValue("Side", forKey: "title")
        let movedTask = try #require(try Self.fetchOne(context, "Task", "title", expected[3]))
        movedTask.setValue(side, forKey: "project")
        try context.save()
        expected.remove(at: 3)
        try Fixtures.close(coordinator)
        (coordinator, context) = try Self.open(url)
        let plan2 = try #require(try Self.fetchOne(context, "Project", "title", "Plan"))
        #expect(Self.names(plan2.value(forKey: "tasks")) == expected)
        let side2 = try #require(try Self.fetchOne(context, "Project", "title", "Side"))
        #expect(Self.names(side2.value(forKey: "tasks")).count == 1)
        try Fixtures.close(coordinator)
        #expect(try PageFileStore.verify(at: url).isClean)

        // A join entry lost while the task still names its project is reported.
        let database = try Fixtures.openDatabase(url)
        try database.write { transaction in
            let tasks = try transaction.openTree(named: "join.Project.tasks")
            let first = try #require(try tasks.entries(limit: 1).first)
            _ = try tasks.removeValue(forKey: first.key)
        }
        try database.close()
        #expect(try PageFileStore.verify(at: url).problems.contains { $0.contains("references without their entry") })
    }

    @Test func toManyWithoutInverseRoundTrips() throws {
        let url = try Fixtures.temporaryURL()
        var (coordinator, context) = try Self.open(url, Self.noInverseModel)
        let folder = NSEntityDescription.insertNewObject(forEntityName: "Folder", into: context)
        folder.setValue("Inbox", forKey: "name")
        let tags = (0..<5).map { index -> NSManagedObject in
            let tag = NSEntityDescription.insertNewObject(forEntityName: "Tag", into: context)
            tag.setValue("t\(index)", forKey: "label")
            return tag
        }
        folder.setValue(Set(tags.prefix(3)), forKey: "tags")
        folder.setValue(NSOrderedSet(array: [tags[4], tags[0], tags[2]]), forKey: "pinned")
        try context.save()
        try Fixtures.close(coordinator)
        (coordinator, context) = try Self.open(url, Self.noInverseModel)
        let inbox = try #require(try Self.fetchOne(context, "Folder", "name", "Inbox"))
        #expect(Self.names(inbox.value(forKey: "tags")) == ["t0", "t1", "t2"])
        let pinned = (inbox.value(forKey: "pinned") as? NSOrderedSet)?.array.compactMap {
            ($0 as? NSManagedObject)?.value(forKey: "label") as? String
        }
        #expect(pinned == ["t4", "t0", "t2"])
        try Fixtures.close(coordinator)
        #expect(try PageFileStore.verify(at: url).isClean)
    }

    @Test func deleteRulesOnBigToManys() throws {
        let url = try Fixtures.temporaryURL()
        var (coordinator, context) = try Self.open(url)
        // Cascade: Company.employees; nullify: Employee.company, Project.members; ordered cascade: Project.tasks.
        let company = NSEntityDescription.insertNewObject(forEntityName: "Company", into: context)
        company.setValue("Gone", forKey: "name")
        let kept = NSEntityDescription.insertNewObject(forEntityName: "Company", into: context)
        kept.setValue("Kept", forKey: "name")
        let project = NSEntityDescription.insertNewObject(forEntityName: "Project", into: context)
        project.setValue("P", forKey: "title")
        for index in 0..<300 {
            let employee = NSEntityDescription.insertNewObject(
                forEntityName: index % 10 == 0 ? "Manager" : "Employee", into: context)
            employee.setValue("E\(index)", forKey: "name")
            employee.setValue(index < 250 ? company : kept, forKey: "company")
            if index % 2 == 0 { employee.mutableSetValue(forKey: "projects").add(project) }
            let task = NSEntityDescription.insertNewObject(forEntityName: "Task", into: context)
            task.setValue("T\(index)", forKey: "title")
            task.setValue(project, forKey: "project")
        }
        try context.save()
        try Fixtures.close(coordinator)

        (coordinator, context) = try Self.open(url)
        context.delete(try #require(try Self.fetchOne(context, "Company", "name", "Gone")))
        try context.save()
        #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Employee")) == 50)
        let p = try #require(try Self.fetchOne(context, "Project", "title", "P"))
        #expect((p.value(forKey: "members") as? Set<NSManagedObject>)?.count == 25)
        context.delete(p)
        try context.save()
        #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Task")) == 0)
        try Fixtures.close(coordinator)
        #expect(try PageFileStore.verify(at: url).isClean)
        #expect(try Self.entries(url, "join.Project.tasks").isEmpty)
        #expect(try Self.entries(url, "join.Project.members").isEmpty)
        #expect(try Self.entries(url, "join.Employee.projects").isEmpty)
        #expect(try Self.entries(url, "rel.Employee.company").count == 45)

        // No action: the project's members keep naming it (as Core Data leaves them), and
        // verify() reports those entries rather than trusting them.
        let noAction = TestStack.makeModel()
        noAction.entitiesByName["Project"]?.relationshipsByName["members"]?.deleteRule = .noActionDeleteRule
        (coordinator, context) = try Self.open(url, noAction)
        let doomed = NSEntityDescription.insertNewObject(forEntityName: "Project", into: context)
        doomed.setValue("Doomed", forKey: "title")
        let member = try #require(try Self.fetchOne(context, "Employee", "name", "E251"))
        member.mutableSetValue(forKey: "projects").add(doomed)
        try context.save()
        context.delete(doomed)
        try context.save()
        try Fixtures.close(coordinator)
        #expect(try Self.entries(url, "join.Project.members").isEmpty)
        #expect(try Self.entries(url, "join.Employee.projects").count == 1)
        #expect(try PageFileStore.verify(at: url).problems.contains { $0.contains("missing destination") })

        // Deny: a company with employees cannot go.
        let deny = TestStack.makeModel()
        deny.entitiesByName["Company"]?.relationshipsByName["employees"]?.deleteRule = .denyDeleteRule
        (coordinator, context) = try Self.open(url, deny)
        context.delete(try #require(try Self.fetchOne(context, "Company", "name", "Kept")))
        #expect(throws: NSError.self) { try context.save() }
        try Fixtures.close(coordinator)
    }

    @Test func prefetchingLoadsToManysKeptOutsideTheRows() throws {
        let url = try Fixtures.temporaryURL()
        var (coordinator, context) = try Self.open(url)
        for name in ["A", "B"] {
            let company = NSEntityDescription.insertNewObject(forEntityName: "Company", into: context)
            company.setValue(name, forKey: "name")
            let project = NSEntityDescription.insertNewObject(forEntityName: "Project", into: context)
            project.setValue("P\(name)", forKey: "title")
            for index in 0..<3 {
                let employee = NSEntityDescription.insertNewObject(forEntityName: "Employee", into: context)
                employee.setValue("\(name)\(index)", forKey: "name")
                employee.setValue(company, forKey: "company")
                employee.mutableSetValue(forKey: "projects").add(project)
            }
        }
        try context.save()
        try Fixtures.close(coordinator)
        (coordinator, context) = try Self.open(url)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Company")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        request.relationshipKeyPathsForPrefetching = ["employees", "employees.projects"]
        let companies = try context.fetch(request)
        #expect(companies.count == 2)
        let employees = try #require(companies.first?.value(forKey: "employees") as? Set<NSManagedObject>)
        #expect(Self.names(employees) == ["A0", "A1", "A2"])
        #expect(employees.allSatisfy { !$0.isFault })
        let projects = employees.compactMap { $0.value(forKey: "projects") as? Set<NSManagedObject> }
        #expect(projects.allSatisfy { $0.count == 1 && $0.first?.value(forKey: "title") as? String == "PA" })
        try Fixtures.close(coordinator)
    }

    @Test func migrationKeepsAndRebuildsJoinTrees() throws {
        let url = try Fixtures.temporaryURL()
        var (coordinator, context) = try Self.open(url)
        let project = NSEntityDescription.insertNewObject(forEntityName: "Project", into: context)
        project.setValue("M", forKey: "title")
        let company = NSEntityDescription.insertNewObject(forEntityName: "Company", into: context)
        company.setValue("C", forKey: "name")
        for index in 0..<6 {
            let employee = NSEntityDescription.insertNewObject(forEntityName: "Employee", into: context)
            employee.setValue("E\(index)", forKey: "name")
            employee.setValue(company, forKey: "company")
            employee.mutableSetValue(forKey: "projects").add(project)
        }
        try context.save()
        try Fixtures.close(coordinator)

        // New model: Company.employees becomes ordered (a join tree built from the
        // references), Employee gains an attribute (a new version hash).
        let changed = TestStack.makeModel()
        changed.entitiesByName["Company"]?.relationshipsByName["employees"]?.isOrdered = true
        changed.entitiesByName["Employee"]?.properties.append(TestStack.attribute("nickname", .stringAttributeType))
        (coordinator, context) = try Self.open(
            url, changed,
            options: [NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true])
        let c = try #require(try Self.fetchOne(context, "Company", "name", "C"))
        #expect((c.value(forKey: "employees") as? NSOrderedSet)?.count == 6)
        let m = try #require(try Self.fetchOne(context, "Project", "title", "M"))
        #expect((m.value(forKey: "members") as? Set<NSManagedObject>)?.count == 6)
        try Fixtures.close(coordinator)
        #expect(try PageFileStore.verify(at: url).isClean)
        #expect(try Self.entries(url, "join.Company.employees").count == 6)
        #expect(try Self.entries(url, "rel.Employee.company").isEmpty)
    }

    @Test func verifyReportsMissingAndExtraJoinEntries() throws {
        let url = try Fixtures.temporaryURL()
        let (coordinator, context) = try Self.open(url)
        let project = NSEntityDescription.insertNewObject(forEntityName: "Project", into: context)
        project.setValue("V", forKey: "title")
        for index in 0..<5 {
            let employee = NSEntityDescription.insertNewObject(forEntityName: "Employee", into: context)
            employee.setValue("E\(index)", forKey: "name")
            employee.mutableSetValue(forKey: "projects").add(project)
        }
        try context.save()
        try Fixtures.close(coordinator)
        #expect(try PageFileStore.verify(at: url).isClean)

        let database = try Fixtures.openDatabase(url)
        try database.write { transaction in
            let members = try transaction.openTree(named: "join.Project.members")
            let first = try #require(try members.entries(limit: 1).first)
            _ = try members.removeValue(forKey: first.key)
            // An entry whose source row does not exist.
            try transaction.openTree(named: "join.Employee.projects").setValue(
                [], forKey: [0x82, 0x03, 0xE7, 0x82, 0x81, 0x01, 0x81])
        }
        try database.close()
        let report = try PageFileStore.verify(at: url)
        #expect(report.problems.contains { $0.contains("join.Employee.projects") && $0.contains("mirror") })
        #expect(report.problems.contains { $0.contains("without their source row") })
    }

    @Test func randomEditsOfOrderedAndUnorderedToManysMatchAnOracle() throws {
        var random = SeededRandom(environmentOr: 0x70_3A11)
        let url = try Fixtures.temporaryURL()
        var (coordinator, context) = try Self.open(url, Self.noInverseModel)
        let folder = NSEntityDescription.insertNewObject(forEntityName: "Folder", into: context)
        folder.setValue("F", forKey: "name")
        for index in 0..<30 {
            NSEntityDescription.insertNewObject(forEntityName: "Tag", into: context).setValue(
                "t\(index)", forKey: "label")
        }
        try context.save()
        var pinned: [String] = []
        var tags: Set<String> = []
        for step in 0..<150 {
            let current = try #require(try Self.fetchOne(context, "Folder", "name", "F"))
            let allTags = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Tag"))
            func tag(_ label: String) -> NSManagedObject? {
                allTags.first { $0.value(forKey: "label") as? String == label }
            }
            let ordered = current.mutableOrderedSetValue(forKey: "pinned")
            for _ in 0..<(1 + Int(random.next() % 3)) {
                switch random.next() % 5 {
                case 0, 1:
                    let label = "t\(random.next() % 30)"
                    guard !pinned.contains(label), let object = tag(label) else { continue }
                    let position = Int(random.next() % UInt64(pinned.count + 1))
                    ordered.insert(object, at: position)
                    pinned.insert(label, at: position)
                case 2 where !pinned.isEmpty:
                    let position = Int(random.next() % UInt64(pinned.count))
                    ordered.removeObject(at: position)
                    pinned.remove(at: position)
                case 3 where pinned.count > 1:
                    let from = Int(random.next() % UInt64(pinned.count))
                    let to = Int(random.next() % UInt64(pinned.count))
                    ordered.moveObjects(at: IndexSet(integer: from), to: to)
                    pinned.insert(pinned.remove(at: from), at: to)
                default:
                    let label = "t\(random.next() % 30)"
                    guard let object = tag(label) else { continue }
                    if tags.remove(label) != nil {
                        current.mutableSetValue(forKey: "tags").remove(object)
                    } else {
                        tags.insert(label)
                        current.mutableSetValue(forKey: "tags").add(object)
                    }
                }
            }
            try context.save()
            if step % 30 == 29 {
                try Fixtures.close(coordinator)
                #expect(try PageFileStore.verify(at: url).isClean, "\(random.replayHint)")
                (coordinator, context) = try Self.open(url, Self.noInverseModel)
            } else {
                context.reset()
            }
            let reread = try #require(try Self.fetchOne(context, "Folder", "name", "F"))
            let storedPinned = (reread.value(forKey: "pinned") as? NSOrderedSet)?.array.compactMap {
                ($0 as? NSManagedObject)?.value(forKey: "label") as? String
            }
            #expect(storedPinned == pinned, "step \(step), \(random.replayHint)")
            #expect(Set(Self.names(reread.value(forKey: "tags"))) == tags, "step \(step), \(random.replayHint)")
            if storedPinned != pinned { break }
        }
        try Fixtures.close(coordinator)
    }
}
