// A loaded to-many set gains and loses members in place when the app sets their to-ones
// (`employee.company = company`): the set grows ahead of its members, and the change is
// recorded as any other (the company dirty, listed as updated, in changedValues and
// ObjectsDidChange, told to a results controller) with the context read once per edit.
import Foundation
import Testing

@testable import OpenCoreData

@Suite struct InverseSetEditTests {
    /// A saved company whose `employees` is loaded (empty), in a fresh context.
    static func savedCompany() throws -> (NSManagedObjectContext, TCompany) {
        let context = try TestStack.freshContext()
        let company = TCompany(context: context)
        company.name = "C"
        try context.save()
        #expect(company.employees.isEmpty)
        return (context, company)
    }

    @Test func aSavedCompanyGainsAndLosesManyEmployeesThroughTheirToOnes() throws {
        let (context, company) = try Self.savedCompany()
        let log = NotificationLog([.NSManagedObjectContextObjectsDidChange], from: context)
        // Past several growths of the set (8, 48, 192 members).
        let employees = (0..<300).map { index -> TEmployee in
            let employee = TEmployee(context: context)
            employee.name = "E\(index)"
            employee.company = company
            return employee
        }
        #expect(company.employees.count == 300)
        #expect(Set(employees) == company.employees)
        #expect(employees.allSatisfy { $0.company === company })
        #expect((company.changedValues()["employees"] as? Set<NSManagedObject>)?.count == 300)
        #expect(context.updatedObjects.contains(company))
        context.processPendingChanges()
        #expect(log.objects(NSUpdatedObjectsKey, in: 0) == [company])
        #expect(log.objects(NSInsertedObjectsKey, in: 0).count == 300)

        for employee in employees[..<100] { employee.company = nil }
        #expect(company.employees == Set(employees[100...]))
        // Setting a to-one to the company it already names changes nothing.
        employees[150].company = company
        #expect(company.employees.count == 200)
        try context.save()
        #expect(!company.hasChanges)

        let other = TestStack.context(try #require(context.persistentStoreCoordinator))
        let fetched = try #require(try other.fetch(TestStack.request("Company", TCompany.self)).first)
        #expect(Set(fetched.employees.compactMap(\.name)) == Set((100..<300).map { "E\($0)" }))
    }

    @Test func aResultsControllerIsToldOfTheEditedSet() throws {
        let (context, company) = try Self.savedCompany()
        let request = TestStack.request("Company", TCompany.self)
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        let controller = NSFetchedResultsController(
            fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: nil, cacheName: nil)
        try controller.performFetch()
        let employee = TEmployee(context: context)
        employee.company = company
        #expect(company.employees == [employee])
        #expect(company.changedValues()["employees"] as? Set<NSManagedObject> == [employee])
        #expect(context.updatedObjects.contains(company))
        employee.company = nil
        #expect(company.employees.isEmpty)
        #expect(controller.fetchedObjects == [company])
    }

    @Test func undoRestoresTheSetEditedThroughAToOne() throws {
        let (context, company) = try Self.savedCompany()
        let kept = TEmployee(context: context)
        kept.company = company
        let undoManager = UndoManager()
        undoManager.groupsByEvent = false
        context.undoManager = undoManager
        undoManager.beginUndoGrouping()
        let added = TEmployee(context: context)
        added.company = company
        context.processPendingChanges()
        undoManager.endUndoGrouping()
        #expect(company.employees == [kept, added])
        context.undo()
        #expect(company.employees == [kept])
        #expect(kept.company === company)
        context.redo()
        #expect(company.employees == [kept, added] && added.company === company)
    }

    @Test func growingAheadKeepsEveryMemberOnce() throws {
        let context = try TestStack.freshContext()
        let objects = (0..<200).map { _ in TEmployee(context: context) as NSManagedObject }
        var set: Set<NSManagedObject> = []
        for (index, object) in objects.enumerated() {
            let wasFull = set.count >= set.capacity
            let countBefore = set.count
            let inserted = set.insertGrowingAhead(object)
            #expect(inserted)
            if wasFull { #expect(set.capacity >= Swift.max(8, countBefore * 4), "grown by four at \(index)") }
        }
        #expect(set.count == 200 && set == Set(objects))
        let again = set.insertGrowingAhead(objects[17])
        #expect(!again)
        #expect(set.count == 200)
    }

    @Test func anObjectOfAnotherContextIsRefusedAndOneOfNoneIsNot() throws {
        let coordinator = try TestStack.coordinator()
        let one = TestStack.context(coordinator)
        let other = TestStack.context(coordinator)
        let employee = TEmployee(context: one)
        #expect(throws: (any Error).self) { try employee.writeValue(TCompany(context: other), forKey: "company") }
        #expect(employee.company == nil)
        let mine = TCompany(context: one)
        try employee.writeValue(mine, forKey: "company")
        #expect(employee.company === mine && mine.employees == [employee])
    }
}
