// A fetched object's life made cheaper: a reset lets an object only the context holds go
// with its values (its deinit releases them) unless an observer watches; a resolved
// to-many's batch fires with its own member list when every member still waits, and with
// the waiting ones only when some member was loaded another way since.
import Foundation
import Testing

@testable import OpenCoreData

@Suite struct FetchedObjectLifeTests {
    /// Objects fetched loaded, the results dropped: the reset frees every one of them (the
    /// context held the last reference), and a held one is still forgotten.
    @Test func resetFreesTheObjectsOnlyTheContextHeld() throws {
        let (coordinator, _) = try FaultingStack.populated(companies: 2, employeesPerCompany: 5)
        let context = TestStack.context(coordinator)
        weak var dropped: TEmployee?
        weak var company: TCompany?
        var held: TEmployee?
        do {
            let request = FaultingStack.employees()
            request.returnsObjectsAsFaults = false
            let employees = try context.fetch(request)
            #expect(employees.count == 10 && employees.allSatisfy { !$0.isFault })
            dropped = employees[3]
            company = employees[4].company
            #expect(company?.name != nil)
            held = employees[1]
        }
        context.reset()
        #expect(dropped == nil, "freed with the registry's reference")
        #expect(company == nil, "freed once the employees naming it let go of their values")
        let forgotten = try #require(held)
        #expect(forgotten.managedObjectContext == nil)
        #expect(forgotten.values.isEmpty && forgotten.committed == nil)
        #expect(forgotten.isFault)
        #expect(context.registeredObjects.isEmpty)
        // The next round reads the same values.
        let request = FaultingStack.employees()
        request.returnsObjectsAsFaults = false
        #expect(try context.fetch(request).map(\.age) == (20..<30).map(Int16.init))
    }

    /// While an observer watches, every object leaves through the forgotten transition,
    /// the ones only the context held included.
    @Test func anObservedResetReportsEveryObjectForgotten() throws {
        let (coordinator, _) = try FaultingStack.populated(companies: 1, employeesPerCompany: 4)
        let context = TestStack.context(coordinator)
        let log = LifecycleLog()
        context.lifecycle.observer = log
        do {
            let request = FaultingStack.employees()
            request.returnsObjectsAsFaults = false
            #expect(try context.fetch(request).count == 4)
        }
        _ = log.take()
        context.reset()
        #expect(log.take() == Array(repeating: "Employee forgotten", count: 4))
    }

    /// A member loaded on its own after the to-many was read is left out of the batch: the
    /// others, before and after it, load in one store call with their own values.
    @Test func aBatchSkipsAMemberLoadedSinceAndFillsTheOthers() throws {
        let (coordinator, store) = try FaultingStack.populated(companies: 1, employeesPerCompany: 6)
        let context = TestStack.context(coordinator)
        let company = try #require(try context.fetch(TestStack.request("Company", TCompany.self)).first)
        let members = company.employees.sorted { $0.objectID.storeKey ?? 0 < $1.objectID.storeKey ?? 0 }
        #expect(members.count == 6 && members.allSatisfy(\.isFault))
        let loadedAlone = try context.existingObject(with: members[2].objectID)
        #expect(loadedAlone === members[2] && !loadedAlone.isFault)
        store.resetCounts()

        #expect(members[0].age == 20)
        #expect(store.batchSizes == [5], "the five still waiting, in one call")
        #expect(members.allSatisfy { !$0.isFault })
        #expect(members.map(\.age) == (20..<26).map(Int16.init))
        #expect(members.map(\.name) == (0..<6).map { "E\($0)" })
        #expect(members.allSatisfy { $0.company === company })
    }

    /// When every member still waits, the batch loads them all, whichever fires first.
    @Test func aBatchOfWaitingMembersLoadsThemAll() throws {
        let (coordinator, store) = try FaultingStack.populated(companies: 1, employeesPerCompany: 5)
        let context = TestStack.context(coordinator)
        let company = try #require(try context.fetch(TestStack.request("Company", TCompany.self)).first)
        let members = company.employees.sorted { $0.objectID.storeKey ?? 0 < $1.objectID.storeKey ?? 0 }
        store.resetCounts()
        #expect(members[4].age == 24)
        #expect(store.batchSizes == [5])
        #expect(store.rowCalls == 0)
        #expect(members.map(\.age) == (20..<25).map(Int16.init))
    }
}
