// An inverse to-many the context only adds to or removes from is not loaded: setting
// `employee.company = company` records the edit on the company's unloaded `employees`,
// and reading it later shows the stored employees, less the removed, plus the added, on
// every store, through save, rollback, refresh, undo and reset. A to-many read by the app
// fires its destinations in batches, and a one-object save does not list the company's
// employees.
import Foundation
import Testing

@testable import OpenCoreData

@Suite struct PendingToManyEditsTests {
    /// A context on a store of `type` holding company "C" with employees "E0"..."E<count-1>",
    /// reset so nothing is registered; the store's directory goes with the stack.
    final class Stack {
        let directory: URL
        let context: NSManagedObjectContext

        init(_ type: String, employees count: Int) throws {
            directory = try TestStack.scratchDirectory("pending-to-many")
            let coordinator = try TestStack.coordinator(type, model: TestStack.model, in: directory)
            context = TestStack.context(coordinator)
            let company = TCompany(context: context)
            company.name = "C"
            for index in 0..<count {
                let employee = TEmployee(context: context)
                employee.name = "E\(index)"
                employee.company = company
            }
            try context.save()
            context.reset()
        }

        deinit { try? FileManager.default.removeItem(at: directory) }
    }

    static func company(_ context: NSManagedObjectContext) throws -> TCompany {
        try #require(try context.fetch(TestStack.request("Company", TCompany.self)).first)
    }

    static func employee(_ name: String, _ context: NSManagedObjectContext) throws -> TEmployee {
        let request = TestStack.request("Employee", TEmployee.self)
        request.predicate = TestStack.equals("name", name)
        return try #require(try context.fetch(request).first)
    }

    /// Adds a new employee `name` to the company and takes the employee `leaving` out of
    /// it, both by setting their to-one; returns the company and the employee who left.
    static func edit(_ context: NSManagedObjectContext, adding name: String, removing leaving: String) throws
        -> (TCompany, TEmployee)
    {
        let company = try Self.company(context)
        let left = try Self.employee(leaving, context)
        let added = TEmployee(context: context)
        added.name = name
        added.company = company
        left.company = nil
        return (company, left)
    }

    static func names(_ company: TCompany) -> Set<String> {
        Set(company.employees.compactMap(\.name))
    }

    @Test(arguments: TestStack.storeTypes)
    func settingTheToOneLeavesTheInverseUnloadedAndReadingItAppliesTheEdits(_ type: String) throws {
        let stack = try Stack(type, employees: 20)
        let context = stack.context
        let (company, _) = try Self.edit(context, adding: "New", removing: "E3")
        #expect(company.hasFault(forRelationshipNamed: "employees"), "the inverse to-many stays unloaded")
        #expect(context.registeredObjects.count == 3, "no stored employee registered as a fault")
        #expect(company.isUpdated)
        var expected = Set((0..<20).map { "E\($0)" })
        expected.remove("E3")
        expected.insert("New")
        #expect(Self.names(company) == expected, "stored + added - removed")
        try context.save()
        #expect(Self.names(company) == expected)
        context.reset()
        #expect(Self.names(try Self.company(context)) == expected, "as saved, on \(type)")
    }

    @Test(arguments: TestStack.storeTypes)
    func editsRecordedAcrossSavesAndSaveEachDoesNotLoadTheList(_ type: String) throws {
        let stack = try Stack(type, employees: 50)
        let context = stack.context
        let company = try Self.company(context)
        for index in 0..<5 {
            let employee = TEmployee(context: context)
            employee.name = "S\(index)"
            employee.company = company
            try context.save()
            #expect(company.hasFault(forRelationshipNamed: "employees"))
            #expect(context.registeredObjects.count == 2 + index, "the saves register no stored employee")
        }
        #expect(company.employees.count == 55)
        context.reset()
        #expect(try Self.company(context).employees.count == 55)
        #expect(try context.count(for: TestStack.request("Employee")) == 55)
    }

    @Test(arguments: TestStack.storeTypes)
    func rollbackDiscardsTheEdits(_ type: String) throws {
        let stack = try Stack(type, employees: 4)
        let context = stack.context
        let (company, moved) = try Self.edit(context, adding: "New", removing: "E1")
        context.rollback()
        #expect(!company.hasChanges)
        #expect(Self.names(company) == ["E0", "E1", "E2", "E3"])
        #expect(moved.company === company)
    }

    @Test(arguments: TestStack.storeTypes)
    func refreshDropsOrKeepsTheEditsAsAskedAndMergesWithAnotherSave(_ type: String) throws {
        let stack = try Stack(type, employees: 3)
        let context = stack.context
        let company = try Self.company(context)
        let added = TEmployee(context: context)
        added.name = "Kept"
        added.company = company
        // Another context adds an employee meanwhile.
        let other = TestStack.context(try #require(context.persistentStoreCoordinator))
        let elsewhere = TEmployee(context: other)
        elsewhere.name = "Elsewhere"
        elsewhere.company = try Self.company(other)
        try other.save()
        context.refresh(company, mergeChanges: true)
        #expect(
            Self.names(company) == ["E0", "E1", "E2", "Elsewhere", "Kept"], "the edits stay; the store's news show")
        try context.save()
        context.reset()
        #expect(Self.names(try Self.company(context)) == ["E0", "E1", "E2", "Elsewhere", "Kept"])

        let again = try Self.company(context)
        let dropped = TEmployee(context: context)
        dropped.name = "Dropped"
        dropped.company = again
        context.refresh(again, mergeChanges: false)
        #expect(Self.names(again) == ["E0", "E1", "E2", "Elsewhere", "Kept"], "refreshing without merging drops them")
    }

    @Test(arguments: TestStack.storeTypes)
    func undoAndRedoRestoreBothSides(_ type: String) throws {
        let stack = try Stack(type, employees: 3)
        let context = stack.context
        context.undoManager = UndoManager()
        let company = try Self.company(context)
        let moved = try Self.employee("E0", context)
        context.processPendingChanges()
        moved.company = nil
        context.processPendingChanges()
        #expect(Self.names(company) == ["E1", "E2"])
        context.undo()
        #expect(moved.company === company)
        #expect(Self.names(company) == ["E0", "E1", "E2"])
        context.redo()
        #expect(moved.company == nil)
        #expect(Self.names(company) == ["E1", "E2"])
        try context.save()
        context.reset()
        #expect(Self.names(try Self.company(context)) == ["E1", "E2"])
    }

    @Test(arguments: TestStack.storeTypes)
    func aChildContextSavesItsEditsIntoItsParent(_ type: String) throws {
        let stack = try Stack(type, employees: 3)
        let parent = stack.context
        let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        child.parent = parent
        try child.performAndWait {
            let company = try Self.company(child)
            let added = TEmployee(context: child)
            added.name = "Child"
            added.company = company
            try child.save()
        }
        let company = try Self.company(parent)
        #expect(Self.names(company) == ["E0", "E1", "E2", "Child"])
        try parent.save()
        parent.reset()
        #expect(Self.names(try Self.company(parent)) == ["E0", "E1", "E2", "Child"])
    }

    @Test(arguments: TestStack.storeTypes)
    func deletingAnEmployeeRemovesItFromTheUnloadedList(_ type: String) throws {
        let stack = try Stack(type, employees: 4)
        let context = stack.context
        let company = try Self.company(context)
        let gone = try Self.employee("E2", context)
        context.delete(gone)
        try context.save()
        #expect(Self.names(company) == ["E0", "E1", "E3"])
        context.reset()
        #expect(Self.names(try Self.company(context)) == ["E0", "E1", "E3"])
    }

    /// Many edits of one unloaded list, past several growths of its tables: a third of the
    /// employees deleted, others moved out (some of them back in), new ones added (some
    /// of them taken out again): the list read before and after the save is the stored
    /// one less the removed plus the added.
    @Test(arguments: TestStack.storeTypes)
    func manyEditsOfOneUnloadedListAddUp(_ type: String) throws {
        let stack = try Stack(type, employees: 120)
        let context = stack.context
        let company = try Self.company(context)
        var byName: [String: TEmployee] = [:]
        for employee in try context.fetch(TestStack.request("Employee", TEmployee.self)) {
            byName[try #require(employee.name)] = employee
        }
        var expected = Set((0..<120).map { "E\($0)" })
        for index in 0..<120 where index % 3 == 0 {
            context.delete(try #require(byName["E\(index)"]))
            expected.remove("E\(index)")
        }
        context.processPendingChanges()
        for index in 0..<90 where index % 3 == 1 {
            try #require(byName["E\(index)"]).company = nil
            expected.remove("E\(index)")
        }
        for index in 0..<45 where index % 3 == 1 {
            try #require(byName["E\(index)"]).company = company
            expected.insert("E\(index)")
        }
        for index in 0..<50 {
            let added = TEmployee(context: context)
            added.name = "N\(index)"
            added.company = company
            expected.insert("N\(index)")
            if index % 5 == 0 {
                added.company = nil
                expected.remove("N\(index)")
            }
        }
        #expect(company.hasFault(forRelationshipNamed: "employees"), "the edits are recorded, not loaded")
        #expect(Self.names(company) == expected)
        try context.save()
        #expect(Self.names(company) == expected)
        context.reset()
        #expect(Self.names(try Self.company(context)) == expected, "as saved, on \(type)")
    }

    /// The company's unloaded `employees` value, as the object holds it.
    static func unresolvedEmployees(_ company: TCompany) throws -> UnresolvedRelationship {
        let slot = try #require(company.entity.layout.slotsByName["employees"])
        return try #require(UnresolvedRelationship.from(company.values[slot]))
    }

    /// Saves of an edited list, one after another: after each the list holds no edits, and
    /// the next edit goes into a value of its own, so the committed list, which rollback
    /// restores and a merge compares with, stays the saved one.
    @Test(arguments: TestStack.storeTypes)
    func eachSaveSettlesTheListAndTheNextEditLeavesTheCommittedOneAlone(_ type: String) throws {
        let stack = try Stack(type, employees: 3)
        let context = stack.context
        let company = try Self.company(context)
        var saved: Set<String> = ["E0", "E1", "E2"]
        for index in 0..<3 {
            let employee = TEmployee(context: context)
            employee.name = "S\(index)"
            employee.company = company
            saved.insert("S\(index)")
            #expect(try Self.unresolvedEmployees(company).hasEdits)
            try context.save()
            #expect(!(try Self.unresolvedEmployees(company).hasEdits))
            #expect(company.hasFault(forRelationshipNamed: "employees"))
        }
        let committedBefore = try Self.unresolvedEmployees(company)
        let extra = TEmployee(context: context)
        extra.name = "Unsaved"
        extra.company = company
        try Self.employee("E0", context).company = nil
        #expect(try Self.unresolvedEmployees(company) !== committedBefore, "the edit has a value of its own")
        #expect(!committedBefore.hasEdits, "the committed value is unchanged")
        #expect(Self.names(company) == saved.subtracting(["E0"]).union(["Unsaved"]))
        context.rollback()
        #expect(!company.hasChanges)
        #expect(Self.names(company) == saved, "rollback restores the list as last saved")
        context.reset()
        #expect(Self.names(try Self.company(context)) == saved, "as saved, on \(type)")
    }

    /// Deletes after the first remove the employee from the company's list in place, with
    /// nothing more recorded; once the context has told its observers of the change, the
    /// next delete records the company as changed again, and rollback restores the list.
    @Test(arguments: TestStack.storeTypes)
    func deletesEditTheListInPlaceAndTheCompanyIsReportedChangedAfterEachNotice(_ type: String) throws {
        let stack = try Stack(type, employees: 6)
        let context = stack.context
        let company = try Self.company(context)
        let log = NotificationLog([.NSManagedObjectContextObjectsDidChange], from: context)
        let first = try Self.employee("E0", context)
        let second = try Self.employee("E1", context)
        let third = try Self.employee("E2", context)
        context.processPendingChanges()
        let before = log.all.count
        context.delete(first)
        context.delete(second)
        context.processPendingChanges()
        #expect(company.isUpdated)
        #expect(context.updatedObjects.contains(company))
        #expect(log.all.count == before + 1)
        #expect(log.objects(NSUpdatedObjectsKey, in: before).contains(company), "the company in the first notice")
        context.delete(third)
        context.processPendingChanges()
        #expect(log.all.count == before + 2)
        #expect(log.objects(NSUpdatedObjectsKey, in: before + 1).contains(company), "and in the next one")
        #expect(company.hasFault(forRelationshipNamed: "employees"))
        #expect(company.changedValues().keys.contains("employees"))
        #expect(Self.names(company) == ["E3", "E4", "E5"])
        context.rollback()
        #expect(!company.hasChanges)
        #expect(Self.names(company) == ["E0", "E1", "E2", "E3", "E4", "E5"])
        context.delete(try Self.employee("E4", context))
        context.delete(try Self.employee("E5", context))
        try context.save()
        #expect(Self.names(company) == ["E0", "E1", "E2", "E3"])
        context.reset()
        #expect(Self.names(try Self.company(context)) == ["E0", "E1", "E2", "E3"], "as saved, on \(type)")
    }

    /// The objects an unloaded to-many's edits name are freed by reset() like any other.
    @Test func resetFreesTheObjectsTheEditsName() throws {
        let stack = try Stack(NSSQLiteStoreType, employees: 3)
        let context = stack.context
        // Unsaved, then saved: either way the company's unloaded list names the new objects.
        for saves in [false, true] {
            var probes = ObjectMemoryTests.Probes()
            do {
                let company = try Self.company(context)
                for index in 0..<4 {
                    let employee = TEmployee(context: context)
                    employee.name = "Added \(index) \(saves)"
                    employee.company = company
                    probes.watch([employee])
                }
                if saves { try context.save() }
                probes.watch([company])
            }
            context.reset()
            #expect(
                probes.alive == 0, "\(probes.alive) of \(probes.count) objects alive after reset() (saved: \(saves))")
        }
    }

    /// Reading every object of a to-many loads them with one store call per batch.
    @Test func iteratingAToManyFiresItsFaultsInOneStoreCall() throws {
        let (coordinator, store) = try FaultingStack.populated(companies: 2, employeesPerCompany: 30)
        let context = TestStack.context(coordinator)
        for company in try context.fetch(TestStack.request("Company", TCompany.self)) {
            store.resetCounts()
            let ages = company.employees.map { Int($0.age) }
            #expect(ages.count == 30)
            #expect(store.rowCalls == 0, "no lookup per employee")
            #expect(store.batchSizes == [30], "one batch of the company's employees")
        }
    }
}
