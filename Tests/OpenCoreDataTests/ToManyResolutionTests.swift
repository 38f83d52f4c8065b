// Resolving a to-many: its destinations registered in one pass that also picks the faults
// to load together. Compared with what the separate passes gave: the same members, the
// same objects for destinations registered already, batches of exactly the new faults.
import Foundation
import Testing

@testable import OpenCoreData

@Suite struct ToManyResolutionTests {
    /// Destinations registered before the to-many is read keep their own loading: a loaded
    /// one stays loaded, a fault holding its fetched row fires from it; only the new faults
    /// share the batch.
    @Test func onlyNewFaultsShareTheBatch() throws {
        let (coordinator, store) = try FaultingStack.populated(companies: 1, employeesPerCompany: 6)
        let context = TestStack.context(coordinator)
        let loaded = FaultingStack.employees()
        loaded.predicate = NSPredicate(format: "name IN %@", ["E0", "E1"])
        loaded.returnsObjectsAsFaults = false
        let early = try context.fetch(loaded)
        let pending = FaultingStack.employees()
        pending.predicate = NSPredicate(format: "name == %@", "E2")
        let fetchedFault = try #require(try context.fetch(pending).first)
        #expect(fetchedFault.isFault && early.allSatisfy { !$0.isFault })
        let company = try #require(try context.fetch(TestStack.request("Company", TCompany.self)).first)
        store.resetCounts()

        let members = company.employees
        #expect(members.count == 6)
        for object in early + [fetchedFault] {
            #expect(members.contains { $0 === object }, "\(object.name ?? "?") is the registered object")
        }
        #expect(members.filter { $0.isFault }.count == 4, "E2 and the three new ones are faults")
        #expect(members.map { Int($0.age) }.sorted() == Array(20...25))
        #expect(store.batchSizes == [3], "E3, E4 and E5 in one call; E0 and E1 loaded, E2 from its row")
        #expect(store.rowCalls == 0)
        #expect(members.allSatisfy { $0.company === company }, "every member's to-one names the company itself")
    }

    /// A to-many larger than one batch loads a bounded slice per store call, each slice
    /// when its first member fires.
    @Test func aLargeToManyLoadsOneBoundedBatchAtATime() throws {
        let limit = NSManagedObjectContext.relationshipFaultBatchLimit
        let (coordinator, store) = try FaultingStack.populated(companies: 1, employeesPerCompany: limit + 3)
        let context = TestStack.context(coordinator)
        let company = try #require(try context.fetch(TestStack.request("Company", TCompany.self)).first)
        store.resetCounts()

        let members = company.employees
        #expect(members.count == limit + 3)
        #expect(store.batchSizes.isEmpty, "reading the set fires no member")
        let total = members.reduce(0) { $0 + Int($1.age) }
        #expect(total == (0..<(limit + 3)).reduce(0) { $0 + 20 + $1 })
        #expect(store.batchSizes.sorted() == [3, limit], "two store calls: a full batch and the rest")
        #expect(store.rowCalls == 0)
    }

    /// A child context's destinations fire through its parent one by one (no batch: the
    /// parent may hold newer values), with the same members.
    @Test func aChildContextsToManyHasTheSameMembersWithoutBatches() throws {
        let (coordinator, _) = try FaultingStack.populated(companies: 1, employeesPerCompany: 4)
        let parent = TestStack.context(coordinator)
        let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        child.parent = parent
        let company = try #require(try child.fetch(TestStack.request("Company", TCompany.self)).first)
        let members = company.employees
        #expect(members.allSatisfy { $0.pendingFault == nil })
        #expect(members.map { Int($0.age) }.sorted() == [20, 21, 22, 23])
    }
}
