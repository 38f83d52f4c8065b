import Foundation
import OpenCoreData
import Testing

@Suite struct FaultingPrefetchTests {
    @Test func withoutPrefetchingEachDestinationCostsAStoreCall() throws {
        let (coordinator, store) = try FaultingStack.populated(companies: 3, employeesPerCompany: 2)
        let reader = TestStack.context(coordinator)
        let employees = try reader.fetch(FaultingStack.employees())
        #expect(Set(employees.compactMap { $0.company?.name }) == ["C0", "C1", "C2"])
        #expect(store.rowCalls == 3, "one call per company: the N+1 that prefetching avoids")
    }

    @Test func aToOneKeyPathLoadsEveryDestinationInOneCall() throws {
        let (coordinator, store) = try FaultingStack.populated(companies: 3, employeesPerCompany: 2)
        let reader = TestStack.context(coordinator)
        let request = FaultingStack.employees()
        request.relationshipKeyPathsForPrefetching = ["company"]
        let employees = try reader.fetch(request)
        #expect(store.batchSizes == [3], "three distinct companies, one call")
        #expect(employees.allSatisfy { $0.isFault }, "prefetching reads the fetched rows without firing them")
        #expect(employees.map { $0.company?.name } == ["C0", "C0", "C1", "C1", "C2", "C2"])
        #expect(store.rowCalls == 0 && store.batchSizes == [3])
    }

    @Test func nestedAndToManyKeyPathsTakeOneCallPerStep() throws {
        let (coordinator, store) = try FaultingStack.populated(companies: 2, employeesPerCompany: 3)
        let setup = TestStack.context(coordinator)
        for company in try setup.fetch(NSFetchRequest<TCompany>(entityName: "Company")) {
            company.ceo = company.employees.min { $0.age < $1.age }
        }
        try setup.save()
        store.resetCounts()

        let reader = TestStack.context(coordinator)
        let request = NSFetchRequest<TCompany>(entityName: "Company")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        request.relationshipKeyPathsForPrefetching = ["employees", "ceo.company"]
        let companies = try reader.fetch(request)
        #expect(store.batchSizes == [6], "employees: one call for six; ceo.company: all at hand already")
        #expect(companies.map { $0.employees.count } == [3, 3])
        #expect(companies.map { $0.ceo?.name } == ["E0", "E3"])
        #expect(companies.map { $0.ceo?.company?.name } == ["C0", "C1"])
        #expect(store.rowCalls == 0 && store.batchSizes == [6])

        store.resetCounts()
        let other = TestStack.context(coordinator)
        let youngest = FaultingStack.employees(sorted: false)
        youngest.predicate = NSPredicate(format: "age == 20")
        youngest.relationshipKeyPathsForPrefetching = ["company.employees"]
        let found = try other.fetch(youngest)
        #expect(store.batchSizes == [1, 2], "the company, then its two colleagues not fetched yet")
        #expect(found.first?.company?.employees.map(\.age).sorted() == [20, 21, 22])
        #expect(store.rowCalls == 0 && store.batchSizes == [1, 2])
    }

    @Test func idOnlyFetchesLoadTheirSourcesInOneCallToo() throws {
        let (coordinator, store) = try FaultingStack.populated(companies: 2, employeesPerCompany: 2)
        let reader = TestStack.context(coordinator)
        let request = FaultingStack.employees(sorted: false)
        request.includesPropertyValues = false
        request.relationshipKeyPathsForPrefetching = ["company"]
        let employees = try reader.fetch(request)
        #expect(store.batchSizes == [4, 2])
        #expect(Set(employees.compactMap { $0.company?.name }) == ["C0", "C1"])
        #expect(store.rowCalls == 0)
    }

    @Test func aBatchedResultPrefetchesBatchByBatch() throws {
        let (coordinator, store) = try FaultingStack.populated(companies: 5, employeesPerCompany: 2)
        let reader = TestStack.context(coordinator)
        let request = FaultingStack.employees()
        request.fetchBatchSize = 4
        request.relationshipKeyPathsForPrefetching = ["company"]
        let employees = try reader.fetch(request)
        #expect(store.batchSizes.isEmpty, "nothing loads before an object is touched")
        #expect(employees[1].name == "E1")
        #expect(store.batchSizes == [4, 2], "the batch E0-E3, then its two companies")
        #expect(employees[0...3].map { $0.company?.name } == ["C0", "C0", "C1", "C1"])
        #expect(employees[4].company?.name == "C2")
        #expect(store.batchSizes == [4, 2, 4, 2])
        #expect(store.rowCalls == 0)
    }

    @Test func aKeyPathThatIsNotARelationshipThrows() throws {
        let (coordinator, _) = try FaultingStack.populated(companies: 1, employeesPerCompany: 1)
        let reader = TestStack.context(coordinator)
        let request = FaultingStack.employees()
        request.relationshipKeyPathsForPrefetching = ["name"]
        request.fetchBatchSize = 10
        #expect {
            try reader.fetch(request)
        } throws: { error in
            let error = error as NSError
            return error.code == NSCoreDataError && error.localizedDescription.contains("'name'")
        }
        request.relationshipKeyPathsForPrefetching = ["company.nope"]
        #expect {
            try reader.fetch(request)
        } throws: { error in
            (error as NSError).localizedDescription.contains("'nope' in 'company.nope'")
        }
    }
}
