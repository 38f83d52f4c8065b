// The model and stacks the object-layer tests share: a company/employee/project
// graph with typed subclasses, every relationship shape, and a sub-entity.
import OpenCoreData

final class TCompany: NSManagedObject {
    @Managed var name: String?
    @Managed var employees: Set<TEmployee>
    @Managed var ceo: TEmployee?
}

class TEmployee: NSManagedObject {
    @Managed var name: String?
    @Managed var age: Int16
    @Managed var salary: Double
    @Managed var company: TCompany?
    @Managed var projects: Set<TProject>
    @Managed var ledCompany: TCompany?
}

final class TManager: TEmployee {
    @Managed var level: Int32
}

final class TProject: NSManagedObject {
    @Managed var title: String?
    @Managed var budget: Double
    @Managed var members: Set<TEmployee>
    @Managed var tasks: NSOrderedSet
}

final class TTask: NSManagedObject {
    @Managed var title: String?
    @Managed var project: TProject?
}

enum TestStack {
    static func attribute(
        _ name: String, _ type: NSAttributeType, optional: Bool = true, defaultValue: Any? = nil, indexed: Bool = false
    ) -> NSAttributeDescription {
        let attribute = NSAttributeDescription()
        attribute.name = name
        attribute.attributeType = type
        attribute.isOptional = optional
        attribute.defaultValue = defaultValue
        attribute.isIndexed = indexed
        return attribute
    }

    static func relationship(
        _ name: String, to destination: NSEntityDescription, toMany: Bool, rule: NSDeleteRule = .nullifyDeleteRule,
        optional: Bool = true, ordered: Bool = false
    ) -> NSRelationshipDescription {
        let relationship = NSRelationshipDescription()
        relationship.name = name
        relationship.destinationEntity = destination
        relationship.maxCount = toMany ? 0 : 1
        relationship.deleteRule = rule
        relationship.isOptional = optional
        relationship.isOrdered = ordered
        return relationship
    }

    static func pair(_ a: NSRelationshipDescription, _ b: NSRelationshipDescription) {
        a.inverseRelationship = b
        b.inverseRelationship = a
    }

    /// Company 1-n Employee (cascade / nullify), Company 1-1 Employee (ceo / ledCompany),
    /// Employee n-n Project, Project 1-n ordered Task, Manager a sub-entity of Employee.
    static func makeModel() -> NSManagedObjectModel {
        let company = NSEntityDescription()
        company.name = "Company"
        company.managedObjectClassName = NSStringFromClass(TCompany.self)
        let employee = NSEntityDescription()
        employee.name = "Employee"
        employee.managedObjectClassName = NSStringFromClass(TEmployee.self)
        let manager = NSEntityDescription()
        manager.name = "Manager"
        manager.managedObjectClassName = NSStringFromClass(TManager.self)
        let project = NSEntityDescription()
        project.name = "Project"
        project.managedObjectClassName = NSStringFromClass(TProject.self)
        let task = NSEntityDescription()
        task.name = "Task"
        task.managedObjectClassName = NSStringFromClass(TTask.self)

        let employees = relationship("employees", to: employee, toMany: true, rule: .cascadeDeleteRule)
        let companyOf = relationship("company", to: company, toMany: false)
        pair(employees, companyOf)
        let ceo = relationship("ceo", to: employee, toMany: false)
        let ledCompany = relationship("ledCompany", to: company, toMany: false)
        pair(ceo, ledCompany)
        let projects = relationship("projects", to: project, toMany: true)
        let members = relationship("members", to: employee, toMany: true)
        pair(projects, members)
        let tasks = relationship("tasks", to: task, toMany: true, rule: .cascadeDeleteRule, ordered: true)
        let taskProject = relationship("project", to: project, toMany: false)
        pair(tasks, taskProject)

        company.properties = [attribute("name", .stringAttributeType, optional: false), employees, ceo]
        employee.properties = [
            attribute("name", .stringAttributeType),
            attribute("age", .integer16AttributeType, optional: false, defaultValue: 0),
            attribute("salary", .doubleAttributeType, optional: false, defaultValue: 0.0),
            companyOf, projects, ledCompany,
        ]
        manager.properties = [attribute("level", .integer32AttributeType, optional: false, defaultValue: 1)]
        employee.subentities = [manager]
        project.properties = [
            attribute("title", .stringAttributeType), attribute("budget", .doubleAttributeType, defaultValue: 0.0),
            members, tasks,
        ]
        task.properties = [attribute("title", .stringAttributeType), taskProject]
        let model = NSManagedObjectModel()
        model.entities = [company, employee, manager, project, task]
        return model
    }

    /// One model per process, as Core Data recommends (and as class lookup expects).
    static let model = makeModel()

    /// A coordinator with one in-memory store.
    static func coordinator(model: NSManagedObjectModel = TestStack.model) throws -> NSPersistentStoreCoordinator {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
        return coordinator
    }

    /// A private-queue context on `coordinator` (tests call it through performAndWait
    /// or directly from one thread at a time).
    static func context(_ coordinator: NSPersistentStoreCoordinator) -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    /// A fresh store and a context on it.
    static func freshContext() throws -> NSManagedObjectContext {
        context(try coordinator())
    }

    static func request<T>(_ entity: String, _ type: T.Type = NSManagedObject.self) -> NSFetchRequest<T> {
        NSFetchRequest<T>(entityName: entity)
    }

    /// A predicate comparing `key` with `value` through key-value reading (the placeholder
    /// block form, so these tests do not depend on the format-string parser).
    static func equals(_ key: String, _ value: String) -> NSPredicate {
        NSPredicate(block: { object, _ in
            ((object as? KeyValueReadable).flatMap { try? $0.readValue(forKey: key) } as? String) == value
        })
    }
}
