// Reading a to-many through its typed `@Managed` accessor and firing its destinations:
// the typed set holds exactly the relationship's objects (sub-entity objects included),
// a batch of faults loads each row under the ID its object already has, and a save's
// validation of a set to-one does not register its destination. On every store.
import Foundation
import Testing

@testable import OpenCoreData

@Suite struct ToManyTraversalTests {
    /// A company with `count` employees and one manager (a sub-entity), saved and reset.
    static func stack(_ type: String, employees count: Int, in directory: URL) throws -> NSManagedObjectContext {
        let coordinator = try TestStack.coordinator(type, model: TestStack.model, in: directory)
        let context = TestStack.context(coordinator)
        let company = TCompany(context: context)
        company.name = "C"
        for index in 0..<count {
            let employee = TEmployee(context: context)
            employee.name = "E\(index)"
            employee.age = Int16(20 + index)
            employee.company = company
        }
        let manager = TManager(context: context)
        manager.name = "M"
        manager.level = 3
        manager.company = company
        try context.save()
        context.reset()
        return context
    }

    /// Applies `change` to the employee named `name` in another context of `context`'s
    /// coordinator and saves it.
    static func saveElsewhere(
        _ context: NSManagedObjectContext, changing name: String,
        _ change: @escaping (TEmployee, NSManagedObjectContext) -> Void
    ) throws {
        let other = TestStack.context(try #require(context.persistentStoreCoordinator))
        try other.performAndWait {
            let request = TestStack.request("Employee", TEmployee.self)
            request.predicate = TestStack.equals("name", name)
            for employee in try other.fetch(request) { change(employee, other) }
            try other.save()
        }
    }

    @Test(arguments: TestStack.storeTypes)
    func theTypedSetHoldsTheRelationshipsObjects(_ type: String) throws {
        let directory = try TestStack.scratchDirectory("to-many-traversal")
        defer { try? FileManager.default.removeItem(at: directory) }
        let context = try Self.stack(type, employees: 40, in: directory)
        let company = try #require(try context.fetch(TestStack.request("Company", TCompany.self)).first)
        let typed = company.employees
        let untyped = try #require(company.value(forKey: "employees") as? Set<NSManagedObject>)
        #expect(typed.count == 41)
        #expect(Set(typed.map(ObjectIdentifier.init)) == Set(untyped.map(ObjectIdentifier.init)))
        #expect(typed.contains { $0 is TManager }, "the sub-entity's object is a member")
        // Every fault fires with its own row.
        let names = typed.map { $0.name ?? "?" }.sorted()
        #expect(names == (["M"] + (0..<40).map { "E\($0)" }).sorted())
        let ages = Dictionary(uniqueKeysWithValues: typed.map { ($0.name ?? "?", $0.age) })
        #expect(ages["E7"] == 27 && ages["M"] == 0)
        #expect(typed.allSatisfy { !$0.isFault && $0.company === company })
        // The same read again (now resolved) gives the same set.
        #expect(company.employees == typed)
    }

    @Test(arguments: TestStack.storeTypes)
    func aBatchOfFaultsOfTwoEntitiesLoadsEachRowAndMissesTheDeletedOne(_ type: String) throws {
        let directory = try TestStack.scratchDirectory("to-many-traversal")
        defer { try? FileManager.default.removeItem(at: directory) }
        let context = try Self.stack(type, employees: 12, in: directory)
        let company = try #require(try context.fetch(TestStack.request("Company", TCompany.self)).first)
        // One batch: eleven employees, the manager (another entity), and E3, deleted by
        // another context before the batch fires.
        let employees = Array(company.employees)
        #expect(employees.count == 13 && employees.allSatisfy(\.isFault))
        try Self.saveElsewhere(context, changing: "E3") { doomed, other in other.delete(doomed) }
        let touched = try #require(employees.first { $0 is TManager })
        #expect(touched.age == 0 && (touched as? TManager)?.level == 3, "the manager's row, from its own tree")
        for employee in employees { _ = employee.age }
        var ages: [String: Int16] = [:]
        for employee in employees where !employee.isDeleted { ages[employee.name ?? "?"] = employee.age }
        #expect(employees.filter(\.isDeleted).count == 1, "the deleted row's fault is inaccessible")
        #expect(ages.count == 12, "every row but the deleted one: \(ages.keys.sorted())")
        #expect(ages["E3"] == nil && ages["E11"] == 31 && ages["M"] == 0)
        for employee in employees {
            #expect(context.registeredObject(for: employee.objectID) === employee)
            #expect(!employee.isFault)
        }
    }

    @Test(arguments: TestStack.storeTypes)
    func firedMembersHoldTheSourceInTheirToOneUnlessTheirRowNamesAnother(_ type: String) throws {
        let directory = try TestStack.scratchDirectory("to-many-traversal")
        defer { try? FileManager.default.removeItem(at: directory) }
        let context = try Self.stack(type, employees: 12, in: directory)
        let company = try #require(try context.fetch(TestStack.request("Company", TCompany.self)).first)
        let employees = Array(company.employees)
        #expect(employees.count == 13)
        // Another context moves E5 to a company of its own before the batch fires.
        try Self.saveElsewhere(context, changing: "E5") { moved, other in
            let elsewhere = TCompany(context: other)
            elsewhere.name = "Elsewhere"
            moved.company = elsewhere
        }
        #expect(employees.allSatisfy { $0.isFault })
        // One member fires the batch: every member's row is loaded.
        _ = employees[0].age
        #expect(employees.allSatisfy { !$0.isFault })
        for employee in employees where employee.name != "E5" {
            #expect(!employee.hasFault(forRelationshipNamed: "company"), "\(employee.name ?? "?") holds its company")
            #expect(employee.company === company)
        }
        let moved = try #require(employees.first { $0.name == "E5" })
        #expect(moved.hasFault(forRelationshipNamed: "company"), "its row names another company")
        #expect(moved.company?.name == "Elsewhere" && moved.company !== company)
        #expect(!company.hasChanges && employees.allSatisfy { !$0.hasChanges })
    }

    @Test(arguments: TestStack.storeTypes)
    func theTypedSetIsAValueItsReaderMayChange(_ type: String) throws {
        let directory = try TestStack.scratchDirectory("to-many-traversal")
        defer { try? FileManager.default.removeItem(at: directory) }
        let context = try Self.stack(type, employees: 6, in: directory)
        let company = try #require(try context.fetch(TestStack.request("Company", TCompany.self)).first)
        var copy = company.employees
        let manager = try #require(copy.first { $0 is TManager })
        copy.remove(manager)
        copy.insert(TEmployee(context: context))
        #expect(copy.count == 7 && company.employees.count == 7)
        #expect(company.employees.contains(manager) && !company.hasChanges)
        // A change through the relationship is seen by the next read, not by the earlier copy.
        let held = company.employees
        manager.company = nil
        #expect(company.employees.count == 6 && held.count == 7 && held.contains(manager))
    }

    @Test(arguments: TestStack.storeTypes)
    func savingAnUpdateDoesNotRegisterTheToOnesDestination(_ type: String) throws {
        let directory = try TestStack.scratchDirectory("to-many-traversal")
        defer { try? FileManager.default.removeItem(at: directory) }
        let context = try Self.stack(type, employees: 5, in: directory)
        let request = TestStack.request("Employee", TEmployee.self)
        request.includesSubentities = false
        let employees = try context.fetch(request)
        #expect(employees.count == 5)
        for employee in employees { employee.age += 1 }
        try context.save()
        #expect(
            context.registeredObjects.allSatisfy { !($0 is TCompany) },
            "the company was never read, so validating the set to-one did not register it")
        // The to-one is still there, and still required where the model says so.
        #expect(employees.allSatisfy { $0.company?.name == "C" })
        context.reset()
        let saved = try context.fetch(request)
        #expect(saved.map(\.age).sorted() == (21...25).map(Int16.init))
    }
}
