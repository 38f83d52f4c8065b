import Foundation
import OpenCoreData
import Testing

@Suite struct FaultingTests {
    @Test func fetchedObjectsAreFaultsThatFireFromTheFetchedRow() throws {
        let (coordinator, store) = try FaultingStack.populated()
        let reader = TestStack.context(coordinator)
        let employees = try reader.fetch(FaultingStack.employees())
        #expect(employees.count == 6)
        #expect(employees.allSatisfy { $0.isFault }, "returnsObjectsAsFaults is true by default")
        #expect(employees.map(\.name) == ["E0", "E1", "E2", "E3", "E4", "E5"], "sorted without firing faults")
        #expect(employees.allSatisfy { !$0.isFault })
        #expect(store.rowCalls == 0 && store.batchSizes.isEmpty, "the fetched rows fulfill the faults")
    }

    @Test func returnsObjectsAsFaultsFalseLoadsValues() throws {
        let (coordinator, store) = try FaultingStack.populated()
        let reader = TestStack.context(coordinator)
        let request = FaultingStack.employees()
        request.returnsObjectsAsFaults = false
        let employees = try reader.fetch(request)
        #expect(employees.allSatisfy { !$0.isFault })
        #expect(employees.first?.age == 20)
        #expect(store.rowCalls == 0)
    }

    @Test func includesPropertyValuesFalseFetchesIDsAndFiresThroughTheStore() throws {
        let (coordinator, store) = try FaultingStack.populated()
        let reader = TestStack.context(coordinator)
        let request = FaultingStack.employees(sorted: false)
        request.includesPropertyValues = false
        let employees = try reader.fetch(request)
        #expect(employees.count == 6 && employees.allSatisfy { $0.isFault })
        #expect(store.rowCalls == 0)
        #expect(Set(employees.map(\.age)) == Set((20..<26).map(Int16.init)))
        #expect(store.rowCalls == 6, "each fault loads its own row on first access")
    }

    @Test func aFetchKeepsLoadedObjectsAndTheirUnsavedChanges() throws {
        let (coordinator, _) = try FaultingStack.populated()
        let reader = TestStack.context(coordinator)
        let first = try reader.fetch(FaultingStack.employees())
        first[0].name = "Changed"
        _ = first[1].name
        let again = try reader.fetch(FaultingStack.employees())
        #expect(again[0] === first[0] && again[0].name == "Changed" && !again[0].isFault)
        #expect(!again[1].isFault, "a loaded object is not turned back into a fault")
        #expect(again[2].isFault)
    }

    @Test func firingAFaultWhoseRowIsGoneMarksItDeleted() throws {
        let (coordinator, store) = try FaultingStack.populated(companies: 1, employeesPerCompany: 2)
        let reader = TestStack.context(coordinator)
        let request = FaultingStack.employees()
        request.includesPropertyValues = false
        let employees = try reader.fetch(request)
        let writer = TestStack.context(coordinator)
        for employee in try writer.fetch(FaultingStack.employees()) { writer.delete(employee) }
        try writer.save()
        store.resetCounts()

        #expect(employees[0].name == nil, "an inaccessible fault reads default values, it does not trap")
        #expect(employees[0].age == 0)
        #expect(employees[0].isDeleted, "shouldDeleteInaccessibleFaults (the default) marks it deleted")
        #expect(!reader.hasChanges, "marking it deleted does not schedule a delete")
        #expect(store.rowCalls == 1)
        #expect {
            try reader.existingObject(with: employees[1].objectID)
        } throws: { ($0 as NSError).code == NSManagedObjectReferentialIntegrityError }

        reader.shouldDeleteInaccessibleFaults = false
        #expect(employees[1].name == nil)
        #expect(!employees[1].isDeleted)
    }

    @Test func deletingAFaultWhoseRowIsGoneDirectlyOrByCascadeIsANoOp() throws {
        let (coordinator, _) = try FaultingStack.populated(companies: 1, employeesPerCompany: 2)
        let reader = TestStack.context(coordinator)
        let company = try #require(try reader.fetch(NSFetchRequest<TCompany>(entityName: "Company")).first)
        let employees = Array(company.employees)
        #expect(employees.count == 2 && employees.allSatisfy(\.isFault))
        let writer = TestStack.context(coordinator)
        for employee in try writer.fetch(FaultingStack.employees()) { writer.delete(employee) }
        try writer.save()

        // Found gone while being deleted: once directly, once by the company's cascade.
        reader.delete(employees[0])
        #expect(employees[0].isDeleted && !reader.deletedObjects.contains(employees[0]))
        reader.delete(company)
        reader.processPendingChanges()
        #expect(employees[1].isDeleted)
        #expect(reader.deletedObjects == [company])
        try reader.save()
        #expect(try TestStack.context(coordinator).count(for: NSFetchRequest<TCompany>(entityName: "Company")) == 0)
    }

    @Test func refreshWithoutMergingTurnsAnObjectBackIntoAFault() throws {
        let (coordinator, store) = try FaultingStack.populated(companies: 1, employeesPerCompany: 1)
        let reader = TestStack.context(coordinator)
        let employee = try #require(try reader.fetch(FaultingStack.employees()).first)
        #expect(employee.name == "E0")
        employee.name = "Unsaved"
        let writer = TestStack.context(coordinator)
        try #require(try writer.fetch(FaultingStack.employees()).first).name = "Saved elsewhere"
        try writer.save()
        store.resetCounts()

        reader.refresh(employee, mergeChanges: false)
        #expect(employee.isFault && !employee.hasChanges)
        #expect(employee.name == "Saved elsewhere", "the fault reloads from the store, not the old fetched row")
        #expect(store.rowCalls == 1)
    }

    @Test func shouldRefreshRefetchedObjectsUpdatesLoadedObjects() throws {
        let (coordinator, _) = try FaultingStack.populated(companies: 1, employeesPerCompany: 2)
        let reader = TestStack.context(coordinator)
        let loaded = try reader.fetch(FaultingStack.employees())
        #expect(loaded.map(\.name) == ["E0", "E1"])
        loaded[1].age = 99
        let writer = TestStack.context(coordinator)
        let theirs = try writer.fetch(FaultingStack.employees())
        theirs[0].name = "Renamed"
        theirs[1].name = "Also renamed"
        theirs[1].age = 50
        try writer.save()

        _ = try reader.fetch(FaultingStack.employees())
        #expect(loaded[0].name == "E0", "without the flag a refetch keeps loaded values")
        let refreshing = FaultingStack.employees()
        refreshing.shouldRefreshRefetchedObjects = true
        _ = try reader.fetch(refreshing)
        #expect(loaded[0].name == "Renamed")
        #expect(loaded[1].name == "Also renamed", "unchanged properties take the stored value")
        #expect(loaded[1].age == 99, "unsaved changes win")
    }

    @Test func sortingThroughAToOneKeyPathKeepsObjectsFaults() throws {
        let (coordinator, _) = try FaultingStack.populated(companies: 2, employeesPerCompany: 2)
        let reader = TestStack.context(coordinator)
        let request = FaultingStack.employees(sorted: false)
        request.sortDescriptors = [
            NSSortDescriptor(key: "company.name", ascending: false), NSSortDescriptor(key: "age", ascending: true),
        ]
        let employees = try reader.fetch(request)
        #expect(employees.allSatisfy { $0.isFault })
        #expect(employees.map(\.name) == ["E2", "E3", "E0", "E1"])
    }

    @Test func pendingChangesAndSubentitiesMixWithFaults() throws {
        let (coordinator, _) = try FaultingStack.populated(companies: 1, employeesPerCompany: 2)
        let writer = TestStack.context(coordinator)
        let manager = TManager(context: writer)
        manager.name = "M"
        manager.age = 25
        manager.level = 7
        try writer.save()

        let reader = TestStack.context(coordinator)
        let inserted = TEmployee(context: reader)
        inserted.name = "New"
        inserted.age = 1
        let stored = try reader.fetch(FaultingStack.employees())
        #expect(stored.map(\.isFault) == [false, true, true, true], "the inserted object is no fault")
        #expect(stored.first === inserted)
        #expect(stored.map { type(of: $0) == TManager.self } == [false, false, false, true])
        #expect((stored[3] as? TManager)?.level == 7, "a sub-entity fault fires with its own slots")

        stored[1].age = 30
        let again = try reader.fetch(FaultingStack.employees())
        #expect(again[1].isFault)
        #expect(again.map(\.name) == ["New", "E1", "M", "E0"], "the changed object sorts by its unsaved value")

        let withoutPending = FaultingStack.employees()
        withoutPending.includesPendingChanges = false
        let fromStore = try reader.fetch(withoutPending)
        #expect(fromStore.count == 3 && !fromStore.contains(inserted))

        let onlyEmployees = FaultingStack.employees()
        onlyEmployees.includesSubentities = false
        #expect(try reader.fetch(onlyEmployees).allSatisfy { type(of: $0) == TEmployee.self })
    }

    @Test func aChildContextsFaultsFireThroughItsParent() throws {
        let (coordinator, store) = try FaultingStack.populated(companies: 1, employeesPerCompany: 2)
        let parent = TestStack.context(coordinator)
        let parentEmployees = try parent.fetch(FaultingStack.employees())
        parentEmployees[0].name = "Parent's change"
        let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        child.parent = parent
        let request = FaultingStack.employees(sorted: false)
        request.predicate = NSPredicate(format: "age == 21")
        let employees = try child.fetch(request)
        #expect(employees.count == 1 && employees[0].isFault)
        #expect(employees[0].name == "E1")
        #expect(try child.fetch(FaultingStack.employees()).first?.name == "Parent's change")

        let eager = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        eager.parent = parent
        let loading = FaultingStack.employees()
        loading.returnsObjectsAsFaults = false
        let loaded = try eager.fetch(loading)
        #expect(loaded.map(\.isFault) == [false, false])
        #expect(loaded.first?.name == "Parent's change")
        _ = store
    }
}
