// Prefetching on the default store resolves only the key paths asked: a destination
// loaded for a to-one step leaves its to-manys kept outside the row (SPEC.md §3.2 R1)
// for when they are read, and a to-many that a key path follows is resolved in the
// prefetch's own read. Either way the relationships read the same as without prefetching.
import Foundation
import Testing

@testable import OpenCoreData

@Suite struct PageFilePrefetchTests {
    typealias Fixtures = PageFileFixtures

    /// Companies A and B with three employees each (A0-A2, B0-B2), saved and reopened.
    static func populated() throws -> (URL, NSPersistentStoreCoordinator, NSManagedObjectContext) {
        let url = try Fixtures.temporaryURL()
        let (setupCoordinator, setup) = try PageFileToManyTests.open(url)
        for name in ["A", "B"] {
            let company = NSEntityDescription.insertNewObject(forEntityName: "Company", into: setup)
            company.setValue(name, forKey: "name")
            for index in 0..<3 {
                let employee = NSEntityDescription.insertNewObject(forEntityName: "Employee", into: setup)
                employee.setValue("\(name)\(index)", forKey: "name")
                employee.setValue(company, forKey: "company")
            }
        }
        try setup.save()
        try Fixtures.close(setupCoordinator)
        let (coordinator, context) = try PageFileToManyTests.open(url)
        return (url, coordinator, context)
    }

    /// The employees, sorted by name, with `keyPaths` prefetched.
    static func employees(_ context: NSManagedObjectContext, prefetching keyPaths: [String]) throws
        -> [NSManagedObject]
    {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        request.relationshipKeyPathsForPrefetching = keyPaths
        return try context.fetch(request)
    }

    /// The value in `object`'s pending row for relationship `name`, before the object fires.
    static func pendingValue(_ object: NSManagedObject, _ name: String) -> StoreValue? {
        guard case .row(let row) = object.pendingFault, let slot = object.layout.slotsByName[name],
            slot < row.values.count
        else { return nil }
        return row.values[slot]
    }

    /// The distinct companies of `employees`, in order of first appearance.
    static func companies(of employees: [NSManagedObject]) -> [NSManagedObject] {
        var seen: Set<NSManagedObjectID> = []
        return employees.compactMap { $0.value(forKey: "company") as? NSManagedObject }.filter {
            seen.insert($0.objectID).inserted
        }
    }

    /// Each company's employees by name, read in a context that prefetches nothing.
    static func employeesByCompany(_ coordinator: NSPersistentStoreCoordinator) throws -> [String: [String]] {
        let plain = Fixtures.context(coordinator)
        var result: [String: [String]] = [:]
        for company in try plain.fetch(NSFetchRequest<NSManagedObject>(entityName: "Company")) {
            let name = try #require(company.value(forKey: "name") as? String)
            result[name] = PageFileToManyTests.names(company.value(forKey: "employees"))
        }
        return result
    }

    @Test func aToOneStepLeavesItsDestinationsToManysUnread() throws {
        let (_, coordinator, context) = try Self.populated()
        defer { try? Fixtures.close(coordinator) }
        let employees = try Self.employees(context, prefetching: ["company"])
        let companies = Self.companies(of: employees)
        #expect(companies.count == 2)
        for company in companies {
            #expect(company.isFault, "prefetching gives the company its row without firing it")
            guard case .unresolved = Self.pendingValue(company, "employees") else {
                Issue.record("the company's employees were read though no key path follows them")
                continue
            }
        }
        let expected = try Self.employeesByCompany(coordinator)
        #expect(expected == ["A": ["A0", "A1", "A2"], "B": ["B0", "B1", "B2"]])
        for company in companies {
            let name = try #require(company.value(forKey: "name") as? String)
            #expect(PageFileToManyTests.names(company.value(forKey: "employees")) == expected[name])
        }
    }

    @Test func aFollowedToManyIsResolvedInThePrefetchRead() throws {
        let (_, coordinator, context) = try Self.populated()
        defer { try? Fixtures.close(coordinator) }
        let employees = try Self.employees(context, prefetching: ["company.employees"])
        let byName = Dictionary(
            employees.map { ($0.value(forKey: "name") as? String ?? "", $0) }, uniquingKeysWith: { first, _ in first })
        let companies = Self.companies(of: employees)
        #expect(companies.count == 2)
        let expected = try Self.employeesByCompany(coordinator)
        for company in companies {
            #expect(company.isFault, "prefetching gives the company its row without firing it")
            guard case .objectIDs(let ids) = Self.pendingValue(company, "employees") else {
                Issue.record("a to-many the key path follows was left to read later")
                continue
            }
            let name = try #require(company.value(forKey: "name") as? String)
            let members = ids.compactMap { id in byName.values.first { $0.objectID == id } }
            #expect(members.count == 3)
            #expect(members.compactMap { $0.value(forKey: "name") as? String }.sorted() == expected[name])
        }
        for company in companies {
            let name = try #require(company.value(forKey: "name") as? String)
            #expect(PageFileToManyTests.names(company.value(forKey: "employees")) == expected[name])
        }
    }
}
