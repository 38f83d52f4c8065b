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

    /// The default store's batch read (runs of one entity through one row tree) returns
    /// what one `row(for:)` per ID returns, in order: IDs of two entities interleaved,
    /// runs of each, and a key with no row.
    @Test func theDefaultStoresBatchReadMatchesOneReadPerID() throws {
        let url = try PageFileFixtures.temporaryURL()
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let coordinator = try PageFileFixtures.coordinator(TestStack.model, url)
        let writer = PageFileFixtures.context(coordinator)
        var companies: [TCompany] = []
        var employees: [TEmployee] = []
        for index in 0..<3 {
            let company = TCompany(context: writer)
            company.name = "C\(index)"
            companies.append(company)
            for offset in 0..<3 {
                let employee = TEmployee(context: writer)
                employee.name = "E\(index)-\(offset)"
                employee.age = Int16(20 + index * 3 + offset)
                employee.company = company
                employees.append(employee)
            }
        }
        try writer.save()
        let store = try #require(coordinator.persistentStores.first)
        let gone = NSManagedObjectID(entity: employees[0].entity, store: store, key: 1_000_000)
        let ids =
            [companies[0], employees[0], employees[1], companies[1], companies[2], employees[4]].map(\.objectID)
            + [gone, employees[8].objectID, companies[0].objectID]
        let batch = try store.rows(for: ids)
        #expect(batch.count == ids.count)
        for (id, row) in zip(ids, batch) {
            // One read per ID, its to-manys kept outside the row resolved as a batch read resolves them.
            var single = try store.row(for: id)
            for slot in single?.values.indices ?? 0..<0 {
                guard case .unresolved = single?.values[slot],
                    let relationship = id.entity.layout.relationshipBySlot[slot]
                else { continue }
                single?.values[slot] = .objectIDs(try store.objectIDs(forRelationship: relationship, of: id))
            }
            #expect(row?.objectID === id || (row == nil && single == nil))
            #expect(row?.version == single?.version)
            #expect(row.map { "\($0.values)" } == single.map { "\($0.values)" }, "\(id)")
        }
        #expect(batch[6] == nil, "no row under the key")
    }

    /// An unordered to-many read with no edit pending is built into its set while its
    /// destinations register; with an edit pending it goes through the array the edit
    /// applies to. Both hold the members a fetch through the inverse finds (employees and
    /// managers, a sub-entity, interleaved across companies in the default store), and the
    /// objects registered before keep their identity.
    @Test func theSetBuiltWhileRegisteringHoldsTheGeneralPathsMembers() throws {
        let url = try PageFileFixtures.temporaryURL()
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let coordinator = try PageFileFixtures.coordinator(TestStack.model, url)
        let writer = PageFileFixtures.context(coordinator)
        let firms = (0..<3).map { index -> TCompany in
            let company = TCompany(context: writer)
            company.name = "C\(index)"
            return company
        }
        for index in 0..<450 {
            let employee = index % 7 == 0 ? TManager(context: writer) : TEmployee(context: writer)
            employee.name = "E\(index)"
            employee.age = Int16(index % 90)
            employee.company = firms[index % 3]
        }
        try writer.save()

        let plain = PageFileFixtures.context(coordinator)
        let edited = PageFileFixtures.context(coordinator)
        let early = FaultingStack.employees(sorted: false)
        early.predicate = NSPredicate(format: "age < 10")
        early.returnsObjectsAsFaults = false
        let registered = try plain.fetch(early)
        let byName = NSSortDescriptor(key: "name", ascending: true)
        let companies = TestStack.request("Company", TCompany.self)
        companies.sortDescriptors = [byName]
        for (company, editedCompany) in zip(try plain.fetch(companies), try edited.fetch(companies)) {
            let added = TEmployee(context: edited)
            added.name = "added"
            added.company = editedCompany
            let slot = try #require(editedCompany.layout.slotsByName["employees"])
            guard case .unresolved(let pending) = editedCompany.values.storage[slot] else {
                Issue.record("the edited company's employees are resolved before they are read")
                continue
            }
            #expect(pending.hasEdits, "the edit is pending on the unresolved to-many")

            let fast = company.employees
            let general = editedCompany.employees
            let inverse = FaultingStack.employees(sorted: false)
            inverse.predicate = NSPredicate(format: "company == %@", company)
            let fetched = try plain.fetch(inverse)
            #expect(fast.count == 150 && fetched.count == 150)
            #expect(Set(fast.map(\.objectID)) == Set(fetched.map(\.objectID)))
            #expect(Set(fast.compactMap(\.name)) == Set(fetched.compactMap(\.name)))
            #expect(Set(general.compactMap(\.name)) == Set(fetched.compactMap(\.name)).union(["added"]))
            #expect(general.count == 151)
            for object in registered where object.company === company {
                #expect(fast.contains { $0 === object }, "\(object.name ?? "?") is the registered object")
            }
            #expect(fast.map { Int($0.age) }.sorted() == fetched.map { Int($0.age) }.sorted())
            #expect(fast.filter { $0 is TManager }.count == fetched.filter { $0 is TManager }.count)
        }
    }
}
