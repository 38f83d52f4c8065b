// The app-level "ours" side: OpenCoreData's default on-disk store through the public
// Core Data API only, written as an app writes it — a model built in code (Person with an
// indexed `id` and `age`, a to-one `company` whose inverse is Company's to-many
// `employees`), NSManagedObject subclasses with @Managed properties, one context,
// `NSPredicate(format:)` built per call, objects materialised (returnsObjectsAsFaults
// false) and read. After each fetch the context is reset, so every call starts from the
// store (as the SQL sides start every statement from their page cache); saves keep the
// context as an app does, with its companies registered.
import Foundation
import OpenCoreData

final class EmployeeObject: NSManagedObject {
    @Managed var id: Int64
    @Managed var firstName: String
    @Managed var lastName: String
    @Managed var age: Int16
    @Managed var email: String
    @Managed var dateOfBirth: Date
    @Managed var isActive: Bool
    @Managed var company: CompanyObject?
}

final class CompanyObject: NSManagedObject {
    @Managed var id: Int64
    @Managed var name: String
    @Managed var employees: Set<EmployeeObject>
}

final class OursAppStore: AppStore {
    static let sideName = "ours"

    static func files(at path: String) -> [String] { [path, path + "-wal"] }

    private static let model: NSManagedObjectModel = {
        func attribute(_ name: String, _ type: NSAttributeType, indexed: Bool = false) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.isOptional = false
            attribute.isIndexed = indexed
            return attribute
        }
        let person = NSEntityDescription()
        person.name = "Person"
        person.managedObjectClassName = NSStringFromClass(EmployeeObject.self)
        let company = NSEntityDescription()
        company.name = "Company"
        company.managedObjectClassName = NSStringFromClass(CompanyObject.self)
        let toCompany = NSRelationshipDescription()
        toCompany.name = "company"
        toCompany.destinationEntity = company
        toCompany.maxCount = 1
        toCompany.deleteRule = .nullifyDeleteRule
        let employees = NSRelationshipDescription()
        employees.name = "employees"
        employees.destinationEntity = person
        employees.maxCount = 0
        employees.deleteRule = .nullifyDeleteRule
        toCompany.inverseRelationship = employees
        employees.inverseRelationship = toCompany
        person.properties = [
            attribute("id", .integer64AttributeType, indexed: true), attribute("firstName", .stringAttributeType),
            attribute("lastName", .stringAttributeType), attribute("age", .integer16AttributeType, indexed: true),
            attribute("email", .stringAttributeType), attribute("dateOfBirth", .dateAttributeType),
            attribute("isActive", .booleanAttributeType), toCompany,
        ]
        company.properties = [
            attribute("id", .integer64AttributeType, indexed: true), attribute("name", .stringAttributeType),
            employees,
        ]
        let model = NSManagedObjectModel()
        model.entities = [person, company]
        return model
    }()

    private let coordinator: NSPersistentStoreCoordinator
    private let store: NSPersistentStore
    private let context: NSManagedObjectContext
    /// The companies by id, fetched once for saves; emptied when the context is reset.
    private var companies: [Int64: CompanyObject] = [:]

    init(path: String, durability: AppDurability) throws {
        coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.model)
        store = try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: URL(fileURLWithPath: path),
            options: [PageFileStoreDurabilityOption: durability.rawValue])
        context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
    }

    private func reset() {
        companies = [:]
        context.reset()
    }

    private static func person(_ object: EmployeeObject) -> Person {
        Person(
            id: object.id, firstName: object.firstName, lastName: object.lastName, age: object.age,
            email: object.email, dateOfBirth: object.dateOfBirth, isActive: object.isActive)
    }

    private func insert(_ employee: Employee, company: CompanyObject?) {
        let object = EmployeeObject(context: context)
        object.id = employee.person.id
        object.firstName = employee.person.firstName
        object.lastName = employee.person.lastName
        object.age = employee.person.age
        object.email = employee.person.email
        object.dateOfBirth = employee.person.dateOfBirth
        object.isActive = employee.person.isActive
        object.company = company
    }

    func load(companies: [Company], employees: [Employee]) throws {
        defer { reset() }
        var byID: [Int64: CompanyObject] = [:]
        for company in companies {
            let object = CompanyObject(context: context)
            object.id = company.id
            object.name = company.name
            byID[company.id] = object
        }
        for employee in employees { insert(employee, company: byID[employee.companyID]) }
        try context.save()
    }

    func save(_ employee: Employee) throws {
        if companies.isEmpty {
            let request = NSFetchRequest<CompanyObject>(entityName: "Company")
            for company in try context.fetch(request) { companies[company.id] = company }
        }
        insert(employee, company: companies[employee.companyID])
        try context.save()
    }

    func fetch(id: Int64) throws -> Person? {
        defer { reset() }
        let request = NSFetchRequest<EmployeeObject>(entityName: "Person")
        request.predicate = NSPredicate(format: "id == %lld", id)
        request.returnsObjectsAsFaults = false
        return try context.fetch(request).first.map(Self.person)
    }

    func fetch(ageBetween lower: Int16, and upper: Int16, limit: Int, withCompany: Bool) throws -> [(Person, String?)] {
        defer { reset() }
        let request = NSFetchRequest<EmployeeObject>(entityName: "Person")
        request.predicate = NSPredicate(format: "age BETWEEN {%d, %d}", Int(lower), Int(upper))
        request.sortDescriptors = [NSSortDescriptor(key: "lastName", ascending: true)]
        request.fetchLimit = limit
        request.returnsObjectsAsFaults = false
        if withCompany { request.relationshipKeyPathsForPrefetching = ["company"] }
        return try context.fetch(request).map { object in
            (Self.person(object), withCompany ? object.company?.name : nil)
        }
    }

    func fetch(firstNameContaining text: String) throws -> [Person] {
        defer { reset() }
        let request = NSFetchRequest<EmployeeObject>(entityName: "Person")
        request.predicate = NSPredicate(format: "firstName CONTAINS[c] %@", text)
        request.returnsObjectsAsFaults = false
        return try context.fetch(request).map(Self.person)
    }

    func countActive() throws -> Int {
        let request = NSFetchRequest<EmployeeObject>(entityName: "Person")
        request.predicate = NSPredicate(format: "isActive == YES")
        return try context.count(for: request)
    }

    func updateAges(between lower: Int16, and upper: Int16) throws -> Int {
        defer { reset() }
        let request = NSFetchRequest<EmployeeObject>(entityName: "Person")
        request.predicate = NSPredicate(format: "age BETWEEN {%d, %d}", Int(lower), Int(upper))
        request.returnsObjectsAsFaults = false
        let people = try context.fetch(request)
        for person in people {
            person.age += 1
            person.email = "updated\(person.id)@example.com"
        }
        try context.save()
        return people.count
    }

    func delete(ids: [Int64]) throws -> Int {
        defer { reset() }
        let request = NSFetchRequest<EmployeeObject>(entityName: "Person")
        request.predicate = NSPredicate(format: "id IN %@", ids.map { NSNumber(value: $0) })
        let people = try context.fetch(request)
        for person in people { context.delete(person) }
        try context.save()
        return people.count
    }

    func traverseEmployees() throws -> Int64 {
        defer { reset() }
        let request = NSFetchRequest<CompanyObject>(entityName: "Company")
        var total: Int64 = 0
        for company in try context.fetch(request) {
            var ages: Int64 = 0
            for employee in company.employees { ages += Int64(employee.age) }
            total += company.id * ages
        }
        return total
    }

    func importBatch(_ employees: [Employee]) throws {
        defer { reset() }
        let request = NSFetchRequest<CompanyObject>(entityName: "Company")
        var byID: [Int64: CompanyObject] = [:]
        for company in try context.fetch(request) { byID[company.id] = company }
        for employee in employees { insert(employee, company: byID[employee.companyID]) }
        try context.save()
    }

    func close() throws {
        reset()
        try coordinator.remove(store)
    }
}
