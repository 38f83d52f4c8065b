// A fetch decodes each to-one reference into one object ID per destination
// (PageFileInternedObjectIDs.swift) and keeps a stored to-one without an array
// (UnresolvedRelationship(destination:)): every reference must still name its own
// stored destination, through fetching, resolving, saving and refetching, across table
// collisions and entities. The rows of one fetch or batch of faults naming one destination
// share one stored to-one value: each must still read as the store's general decode reads
// its row, and a change of one object's to-one must leave the others' alone.
import Foundation
import Testing

@testable import OpenCoreData

@Suite struct InternedReferenceTests {
    /// More companies than the table has entries, so references collide in it.
    static let companyCount = 300

    /// A page-file store holding `companyCount` companies and employees (some of them
    /// managers, a sub-entity) each of one company, or of none; returns the directory and
    /// each employee's company name by employee name.
    static func makeStore() throws -> (URL, [String: String?]) {
        let directory = try TestStack.scratchDirectory("interned-references")
        let coordinator = try TestStack.coordinator(NSSQLiteStoreType, model: TestStack.model, in: directory)
        let context = TestStack.context(coordinator)
        let companies = (0..<companyCount).map { index in
            let company = TCompany(context: context)
            company.name = "company \(index)"
            return company
        }
        var expected: [String: String?] = [:]
        for index in 0..<1_500 {
            let employee: TEmployee = index % 5 == 0 ? TManager(context: context) : TEmployee(context: context)
            employee.name = "employee \(index)"
            employee.age = Int16(index % 100)
            // A stride coprime with the count visits companies out of key order.
            let company = index % 11 == 0 ? nil : companies[(index &* 37) % companyCount]
            employee.company = company
            expected[employee.name ?? ""] = company?.name
        }
        try context.save()
        return (directory, expected)
    }

    /// Each employee of the store in `directory`, fetched by a new context, names the
    /// company `expected` gives for its name.
    static func expectReloaded(from directory: URL, _ expected: [String: String?]) throws {
        // The reading context kept alive: an object of a deallocated context reads defaults.
        let reader = try TestStack.context(
            TestStack.coordinator(NSSQLiteStoreType, model: TestStack.model, in: directory))
        let request = TestStack.request("Employee", TEmployee.self)
        request.returnsObjectsAsFaults = false
        let reloaded = try reader.fetch(request)
        #expect(reloaded.count == expected.count)
        #expect(reloaded.allSatisfy { $0.name != nil })
        for employee in reloaded {
            #expect(employee.company?.name == expected[employee.name ?? ""] ?? nil, "\(employee.name ?? "?")")
        }
        withExtendedLifetime(reader) {}
    }

    @Test func fetchedReferencesNameTheirStoredDestinations() throws {
        let (directory, expected) = try Self.makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let coordinator = try TestStack.coordinator(NSSQLiteStoreType, model: TestStack.model, in: directory)
        let context = TestStack.context(coordinator)
        let request = TestStack.request("Employee", TEmployee.self)
        request.returnsObjectsAsFaults = false
        let employees = try context.fetch(request)
        #expect(employees.count == expected.count)
        // Before any is resolved: each names a company of the store, most through an ID
        // shared with other references (the table keeps one per entry).
        let slot = try #require(employees.first?.layout.slotsByName["company"])
        var idByKey: [Int64: NSManagedObjectID] = [:]
        var instances: Set<ObjectIdentifier> = []
        var references = 0
        for employee in employees {
            guard case .unresolved(let unresolved) = employee.values.storage[slot],
                let destination = unresolved.destination
            else {
                #expect(expected[employee.name ?? ""] == .some(nil), "\(employee.name ?? "?") has a company")
                continue
            }
            #expect(destination.entity.name == "Company")
            #expect(!destination.isTemporaryID)
            #expect(destination.persistentStore === coordinator.persistentStores.first)
            if let earlier = idByKey[destination.key] { #expect(earlier == destination) }
            idByKey[destination.key] = destination
            instances.insert(ObjectIdentifier(destination))
            references += 1
        }
        #expect(idByKey.count == Self.companyCount)
        #expect(instances.count < references / 2, "\(instances.count) IDs for \(references) references")
        // Each resolves to its own company, as a store lookup of the ID reads it.
        for employee in employees {
            #expect(employee.company?.name == expected[employee.name ?? ""] ?? nil, "\(employee.name ?? "?")")
        }
        for (key, id) in idByKey {
            let row = try #require(try coordinator.persistentStores.first?.row(for: id))
            #expect(row.objectID.key == key)
            #expect(
                context.object(with: id).value(forKey: "name") as? String
                    == row.values.first.flatMap {
                        if case .string(let name) = $0 { return name }
                        return nil
                    })
        }
    }

    /// Rows naming one company share one unresolved to-one value within a fetch
    /// (PageFileInternedObjectIDs.toOne): reading, moving and clearing one employee's
    /// company leaves the others sharing it as stored, in memory, in the companies'
    /// employee sets and after a save and reload.
    @Test func sharedToOneValuesStayPerObject() throws {
        let (directory, stored) = try Self.makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let coordinator = try TestStack.coordinator(NSSQLiteStoreType, model: TestStack.model, in: directory)
        let context = TestStack.context(coordinator)
        let request = TestStack.request("Employee", TEmployee.self)
        request.returnsObjectsAsFaults = false
        let employees = try context.fetch(request).sorted { ($0.name ?? "") < ($1.name ?? "") }
        let slot = try #require(employees.first?.layout.slotsByName["company"])
        var values: Set<ObjectIdentifier> = []
        var references = 0
        for employee in employees {
            guard case .unresolved(let unresolved) = employee.values.storage[slot] else { continue }
            #expect(!unresolved.hasEdits)
            values.insert(ObjectIdentifier(unresolved))
            references += 1
        }
        #expect(values.count < references / 2, "\(values.count) values for \(references) to-ones")
        let companies = try context.fetch(TestStack.request("Company", TCompany.self))
        let byName = Dictionary(uniqueKeysWithValues: companies.map { ($0.name ?? "", $0) })
        var expected = stored
        // Every third employee moves to another company, every seventh loses its company,
        // the rest are read only after the others changed.
        for (index, employee) in employees.enumerated() where index % 3 == 0 || index % 7 == 0 {
            let name = employee.name ?? ""
            if index % 7 == 0 {
                employee.company = nil
                expected[name] = .some(nil)
            } else {
                let destination = companies[(index &* 13) % companies.count]
                employee.company = destination
                expected[name] = destination.name
            }
        }
        for employee in employees {
            #expect(employee.company?.name == expected[employee.name ?? ""] ?? nil, "\(employee.name ?? "?")")
        }
        for (name, company) in byName {
            let members = Set(company.employees.map { $0.name ?? "" })
            let wanted = Set(expected.compactMap { $0.value == name ? $0.key : nil })
            #expect(members == wanted, "\(name)")
        }
        try context.save()
        try Self.expectReloaded(from: directory, expected)
    }

    @Test func unresolvedToOnesSaveAndReloadUnchanged() throws {
        let (directory, expected) = try Self.makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let coordinator = try TestStack.coordinator(NSSQLiteStoreType, model: TestStack.model, in: directory)
        let context = TestStack.context(coordinator)
        let request = TestStack.request("Employee", TEmployee.self)
        request.returnsObjectsAsFaults = false
        // An attribute changed, the to-one never read: the row is written with its stored reference.
        for employee in try context.fetch(request) { employee.age += 1 }
        try context.save()
        context.reset()
        try Self.expectReloaded(from: directory, expected)
    }

    @Test func theTableKeepsEntitiesAndKeysApart() throws {
        let directory = try TestStack.scratchDirectory("interned-table")
        defer { try? FileManager.default.removeItem(at: directory) }
        let coordinator = try TestStack.coordinator(NSSQLiteStoreType, model: TestStack.model, in: directory)
        let store = try #require(coordinator.persistentStores.first)
        let company = try #require(TestStack.model.entitiesByName["Company"])
        let employee = try #require(TestStack.model.entitiesByName["Employee"])
        let table = PageFileInternedObjectIDs()
        var made = 0
        let make: (NSEntityDescription, Int64) -> NSManagedObjectID = { entity, key in
            made += 1
            return NSManagedObjectID(entity: entity, store: store, key: key)
        }
        // Enough references that the table is in use, over more keys than it has entries.
        for round in 0..<3 {
            for key in Int64(0)..<600 {
                for entity in [company, employee] {
                    let id = table.objectID(entity, key, make: make)
                    #expect(id.entity === entity && id.key == key, "round \(round), key \(key)")
                }
            }
        }
        // A few objects named again and again are made about once each.
        made = 0
        for _ in 0..<10 {
            for key in Int64(1_000)..<1_050 {
                let id = table.objectID(company, key, make: make)
                #expect(id.entity === company && id.key == key)
            }
        }
        #expect(made < 100)
        let again = table.objectID(employee, 1_007, make: make)
        #expect(table.objectID(employee, 1_007, make: make) === again)
        #expect(table.objectID(company, 1_007, make: make) !== again)
    }

    /// The company slot of an employee's values.
    static func companySlot(_ employee: NSManagedObject) throws -> Int {
        try #require(employee.layout.slotsByName["company"])
    }

    /// The stored to-one in `slot` of `values`, which must name what the row's general
    /// decode (`row(for:)`, no interning, no shared values) names there.
    static func checkedToOne(
        _ values: SlotValues, slot: Int, of id: NSManagedObjectID, in store: NSPersistentStore
    ) throws -> UnresolvedRelationship? {
        let row = try #require(try store.row(for: id))
        guard case .unresolved(let unresolved) = values.storage[slot] else {
            #expect(row.values[slot] == .null, "\(id) has a stored company the slot does not hold")
            return nil
        }
        #expect(row.values[slot] == .objectID(try #require(unresolved.destination)), "\(id)")
        return unresolved
    }

    @Test func theRowsOfAFetchShareTheirDestinationsToOneValue() throws {
        let (directory, expected) = try Self.makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let coordinator = try TestStack.coordinator(NSSQLiteStoreType, model: TestStack.model, in: directory)
        let store = try #require(coordinator.persistentStores.first)
        let context = TestStack.context(coordinator)
        let request = TestStack.request("Employee", TEmployee.self)
        request.returnsObjectsAsFaults = false
        let employees = try context.fetch(request)
        var shared: Set<ObjectIdentifier> = []
        var references = 0
        for employee in employees {
            let slot = try Self.companySlot(employee)
            guard let unresolved = try Self.checkedToOne(employee.values, slot: slot, of: employee.objectID, in: store)
            else { continue }
            shared.insert(ObjectIdentifier(unresolved))
            references += 1
        }
        #expect(references > 1_000)
        #expect(shared.count < references / 2, "\(shared.count) values for \(references) references")
        // One employee moves to another company: the others naming its old one keep it.
        let moved = try #require(employees.first { expected[$0.name ?? ""] != .some(nil) })
        let oldName = try #require(expected[moved.name ?? ""] ?? nil)
        let newCompany = TCompany(context: context)
        newCompany.name = "new company"
        moved.company = newCompany
        #expect(moved.company === newCompany)
        for employee in employees where employee !== moved {
            #expect(employee.company?.name == expected[employee.name ?? ""] ?? nil, "\(employee.name ?? "?")")
        }
        #expect(
            employees.filter { $0.company?.name == oldName }.count
                == expected.values.filter { $0 == oldName }.count - 1)
        try context.save()
        let reloaded = try TestStack.context(coordinator).fetch(request)
        for employee in reloaded {
            let name = employee.name ?? ""
            #expect(employee.company?.name == (name == moved.name ? "new company" : expected[name] ?? nil), "\(name)")
        }
    }

    @Test func aBatchOfFaultsSharesTheToOneValueOfTheObjectItNames() throws {
        let (directory, _) = try Self.makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let coordinator = try TestStack.coordinator(NSSQLiteStoreType, model: TestStack.model, in: directory)
        let store = try #require(coordinator.persistentStores.first)
        let context = TestStack.context(coordinator)
        let companies = try context.fetch(TestStack.request("Company", TCompany.self))
        #expect(companies.count == Self.companyCount)
        var checked = 0
        for company in companies.prefix(20) {
            let request = TestStack.request("Employee", TEmployee.self)
            request.predicate = NSPredicate(format: "company == %@", company)
            let ids = try context.fetch(request).map(\.objectID)
            let rows = try store.objectRows(for: ids, naming: company.objectID)
            var shared: Set<ObjectIdentifier> = []
            for (id, row) in zip(ids, rows) {
                let row = try #require(row)
                let values = try #require(row.slots?.values, "a batch row decoded into slots")
                let slot = try #require(id.entity.layout.slotsByName["company"])
                let unresolved = try #require(try Self.checkedToOne(values, slot: slot, of: id, in: store))
                #expect(unresolved.destination == company.objectID)
                shared.insert(ObjectIdentifier(unresolved))
                checked += 1
            }
            #expect(shared.count <= 1)
            // Firing the faults resolves each to-one to the company itself.
            for employee in company.employees { #expect(employee.company === company) }
        }
        #expect(checked > 50)
    }

    @Test func theTableSharesOneToOneValuePerDestination() throws {
        let directory = try TestStack.scratchDirectory("interned-to-ones")
        defer { try? FileManager.default.removeItem(at: directory) }
        let coordinator = try TestStack.coordinator(NSSQLiteStoreType, model: TestStack.model, in: directory)
        let store = try #require(coordinator.persistentStores.first)
        let company = try #require(TestStack.model.entitiesByName["Company"])
        let table = PageFileInternedObjectIDs()
        let make: (NSEntityDescription, Int64) -> NSManagedObjectID = { entity, key in
            NSManagedObjectID(entity: entity, store: store, key: key)
        }
        // More destinations than the table has entries: each value names its own ID.
        for round in 0..<3 {
            for key in Int64(0)..<600 {
                let id = table.objectID(company, key, make: make)
                let toOne = table.toOne(naming: id)
                #expect(toOne.destination === id, "round \(round), key \(key)")
                #expect(!toOne.hasEdits)
            }
        }
        let id = table.objectID(company, 7, make: make)
        #expect(table.toOne(naming: id) === table.toOne(naming: id))
        // An equal ID of another instance (made before the table) gets a value of its own.
        let other = make(company, 7)
        #expect(table.toOne(naming: other).destination === other)
    }
}
