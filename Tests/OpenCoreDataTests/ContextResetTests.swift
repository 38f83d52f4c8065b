// reset() (ObjectLifecycle.forgetAll): every object is forgotten in the one pass that
// empties the registry. Objects the caller still holds become forgotten faults holding
// nothing; the others are freed; the registry works for the next round.
import Foundation
import Testing

@testable import OpenCoreData

@Suite struct ContextResetTests {
    /// A name longer than a small string, so its storage is released when the value goes.
    static func name(_ index: Int) -> String { "employee number \(index) of the reset tests" }

    /// A saved company with `count` employees, the context reset after.
    static func savedCompany(_ context: NSManagedObjectContext, employees count: Int) throws -> NSManagedObjectID {
        let company = TCompany(context: context)
        company.name = "Reset Company"
        for index in 0..<count {
            let employee = TEmployee(context: context)
            employee.name = name(index)
            employee.age = Int16(index % 90)
            employee.company = company
        }
        try context.save()
        let id = company.objectID
        context.reset()
        return id
    }

    @Test func resetForgetsHeldObjectsAndFreesTheRest() throws {
        let context = try TestStack.freshContext()
        let companyID = try Self.savedCompany(context, employees: 300)
        weak var company: TCompany?
        weak var other: TEmployee?
        weak var inserted: TEmployee?
        weak var discarded: TEmployee?
        var held: TEmployee?
        var heldID: NSManagedObjectID?
        do {
            let fetched = try #require(try context.existingObject(with: companyID) as? TCompany)
            company = fetched
            let employees = fetched.employees.sorted { $0.age < $1.age || ($0.age == $1.age && $0.name! < $1.name!) }
            #expect(employees.count == 300)
            // Every member loaded (the batch fired), each naming its company.
            #expect(employees.allSatisfy { !$0.isFault && $0.company === fetched })
            held = employees[5]
            heldID = employees[5].objectID
            other = employees[6]
            let new = TEmployee(context: context)
            new.name = Self.name(1_000)
            new.company = fetched
            inserted = new
            let gone = TEmployee(context: context)
            gone.name = Self.name(1_001)
            // Deleted before pending changes are processed: in no set, still to be discarded.
            context.delete(gone)
            discarded = gone
        }
        let heldName = held?.name
        context.reset()
        #expect(context.registeredObjects.isEmpty)
        #expect(!context.hasChanges)
        #expect(company == nil, "the company, its set and its other employees are freed")
        #expect(other == nil)
        #expect(inserted == nil)
        #expect(discarded == nil)
        let forgotten = try #require(held)
        #expect(forgotten.managedObjectContext == nil)
        #expect(forgotten.isFault)
        #expect(forgotten.values.isEmpty)
        #expect(forgotten.committed == nil)
        #expect(forgotten.pendingFault == nil)
        #expect(forgotten.objectID == heldID, "the object keeps its ID")
        // The next round: the same ID gives a new object with the stored values.
        let id = try #require(heldID)
        let again = try #require(try context.existingObject(with: id) as? TEmployee)
        #expect(again !== forgotten)
        #expect(again.name == heldName)
        #expect(again.company?.objectID == companyID)
        held = nil
    }

    /// Rounds of traverse and reset: each round registers, loads and frees all of its
    /// objects, the registry's table kept between rounds.
    @Test func roundsOfTraverseAndResetReadTheSameValues() throws {
        let context = try TestStack.freshContext()
        let companyID = try Self.savedCompany(context, employees: 1_500)
        var capacity: Int?
        for round in 0..<4 {
            weak var probe: TEmployee?
            do {
                let company = try #require(try context.existingObject(with: companyID) as? TCompany)
                var ages = 0
                var names = Set<String>()
                for employee in company.employees {
                    ages += Int(employee.age)
                    names.insert(employee.name ?? "")
                    probe = employee
                }
                #expect(names.count == 1_500, "round \(round)")
                #expect(ages == (0..<1_500).reduce(0) { $0 + $1 % 90 }, "round \(round)")
                #expect(context.registeredObjects.count == 1_501, "round \(round)")
            }
            context.reset()
            #expect(probe == nil, "round \(round)")
            #expect(context.registeredObjects.isEmpty, "round \(round)")
            if let capacity {
                #expect(context.registry.permanentCapacity == capacity, "round \(round): the table is kept")
            }
            capacity = context.registry.permanentCapacity
            #expect(capacity ?? 0 >= 1_501)
        }
    }
}
