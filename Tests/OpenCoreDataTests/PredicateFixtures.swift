// Plain objects for the predicate, expression and sort tests: a small graph of
// people, companies and projects reachable by key-value coding, and a schema-backed
// record type exercising the slot resolution hook.
import OpenCoreData

final class TestPerson: KeyValueReadable, CustomStringConvertible {
    var firstName: String?
    var lastName: String?
    var age: Int16
    var email: String?
    var isActive: Bool
    var birthday: Date?
    var salary: Double
    var company: TestCompany?
    var children: [TestPerson] = []
    var tags: Set<String> = []

    init(
        _ firstName: String?, _ lastName: String?, age: Int16, email: String? = nil, isActive: Bool = true,
        salary: Double = 0
    ) {
        self.firstName = firstName
        self.lastName = lastName
        self.age = age
        self.email = email
        self.isActive = isActive
        self.salary = salary
    }

    func readValue(forKey key: String) throws -> Any? {
        switch key {
        case "firstName": firstName
        case "lastName": lastName
        case "age": age
        case "email": email
        case "isActive": isActive
        case "birthday": birthday
        case "salary": salary
        case "company": company
        case "children": children
        case "tags": tags
        default: throw KeyValueCodingError.unknownKey(key, in: "TestPerson")
        }
    }

    var description: String { firstName ?? "nil" }
}

final class TestCompany: KeyValueReadable {
    var name: String
    var employees: Set<TestEmployee> = []
    init(_ name: String) { self.name = name }

    func readValue(forKey key: String) throws -> Any? {
        switch key {
        case "name": name
        case "employees": employees
        default: throw KeyValueCodingError.unknownKey(key, in: "TestCompany")
        }
    }
}

final class TestEmployee: KeyValueReadable, Hashable {
    let name: String
    let age: Int
    var projects: [TestProject]
    init(_ name: String, age: Int, projects: [TestProject] = []) {
        self.name = name
        self.age = age
        self.projects = projects
    }

    func readValue(forKey key: String) throws -> Any? {
        switch key {
        case "name": name
        case "age": age
        case "projects": projects
        default: throw KeyValueCodingError.unknownKey(key, in: "TestEmployee")
        }
    }

    static func == (a: TestEmployee, b: TestEmployee) -> Bool { a === b }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

struct TestProject: KeyValueReadable {
    let title: String
    let budget: Double

    func readValue(forKey key: String) throws -> Any? {
        switch key {
        case "title": title
        case "budget": budget
        default: throw KeyValueCodingError.unknownKey(key, in: "TestProject")
        }
    }
}

/// A schema of named slots, as the object layer's entity layout will be.
final class TestSchema: KeyValueSchema, @unchecked Sendable {
    let schemaName: String
    var slots: [String: KeyValueSlot] = [:]
    /// How many times records of this schema were read by key (not by slot).
    var keyLookups = 0
    init(_ name: String) { schemaName = name }
    func slot(forKey key: String) -> KeyValueSlot? { slots[key] }
}

/// A record read by slot; counts key lookups so tests can see the slot path is taken.
final class TestRecord: KeyValueSlotReadable, @unchecked Sendable {
    let keyValueSchema: any KeyValueSchema
    var values: [Any?]

    init(schema: any KeyValueSchema, values: [Any?]) {
        keyValueSchema = schema
        self.values = values
    }

    func readValue(atSlot slot: Int) -> Any? { values[slot] }

    func readValue(forKey key: String) throws -> Any? {
        (keyValueSchema as? TestSchema)?.keyLookups += 1
        guard let slot = keyValueSchema.slot(forKey: key) else {
            throw KeyValueCodingError.unknownKey(key, in: keyValueSchema.schemaName)
        }
        return values[slot.index]
    }
}

enum Fixtures {
    static func people() -> [TestPerson] {
        let acme = TestCompany("Acme")
        let john = TestPerson("John", "Doe", age: 30, email: "john@gmail.com", salary: 5000)
        let jane = TestPerson("Jane", "Johnson", age: 17, isActive: false)
        let bob = TestPerson("Bob", "Smith", age: 65, email: "bob@corp.example", salary: 9000.5)
        let zoe = TestPerson("Zoë", "Émile", age: 29, isActive: false)
        john.company = acme
        bob.company = acme
        john.children = [jane, zoe]
        john.tags = ["admin", "dev"]
        bob.children = []
        return [john, jane, bob, zoe]
    }

    static func names(_ people: [TestPerson]) -> [String] { people.map { $0.firstName ?? "nil" } }
}
