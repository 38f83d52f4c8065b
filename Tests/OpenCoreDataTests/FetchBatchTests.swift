import Foundation
import OpenCoreData
import Testing

@Suite struct FetchBatchTests {
    @Test func theFirstAccessInABatchLoadsTheWholeBatchInOneCall() throws {
        let (coordinator, store) = try FaultingStack.populated(companies: 2, employeesPerCompany: 5)
        let reader = TestStack.context(coordinator)
        let request = FaultingStack.employees()
        request.fetchBatchSize = 3
        let employees = try reader.fetch(request)
        #expect(employees.count == 10)
        #expect(employees.allSatisfy { $0.isFault })
        #expect(store.batchSizes.isEmpty && store.rowCalls == 0, "nothing loads before an object is touched")

        #expect(employees[4].name == "E4")
        #expect(store.batchSizes == [3], "touching index 4 loads batch 1 (indexes 3-5) in one call")
        #expect(employees[3...5].allSatisfy { !$0.isFault })
        #expect(employees[0...2].allSatisfy { $0.isFault } && employees[6...].allSatisfy { $0.isFault })
        #expect(employees[5].age == 25 && store.batchSizes == [3], "the rest of a loaded batch costs nothing")

        #expect(employees.map(\.name) == (0..<10).map { "E\($0)" })
        #expect(store.batchSizes == [3, 3, 3, 1])
        #expect(store.rowCalls == 0)
    }

    @Test func batchesFollowTheWindowAndSkipPendingAndLoadedObjects() throws {
        let (coordinator, store) = try FaultingStack.populated(companies: 1, employeesPerCompany: 6)
        let reader = TestStack.context(coordinator)
        let loaded = try reader.fetch(FaultingStack.employees())
        _ = loaded[2].name
        let inserted = TEmployee(context: reader)
        inserted.name = "New"
        inserted.age = 23
        let request = FaultingStack.employees()
        request.fetchBatchSize = 2
        request.fetchOffset = 1
        request.fetchLimit = 5
        store.resetCounts()
        let employees = try reader.fetch(request)
        #expect(employees.map { $0.objectID == inserted.objectID } == [false, false, false, true, false])
        #expect(employees.map(\.isFault) == [true, false, true, false, true])
        #expect(employees[0].name == "E1")
        #expect(store.batchSizes == [2], "a batch holds the faults of the result, E1 and E3")
        #expect(!employees[2].isFault && employees[4].isFault)
        #expect(employees.map(\.name) == ["E1", "E2", "E3", "New", "E4"])
        #expect(store.batchSizes == [2, 1])
    }

    @Test func storesWithoutABatchCallAnswerRowByRow() throws {
        let (coordinator, store) = try FaultingStack.coordinator(SingleRowStore.self, type: SingleRowStore.typeName)
        let writer = TestStack.context(coordinator)
        for index in 0..<4 {
            let employee = TEmployee(context: writer)
            employee.age = Int16(index)
        }
        try writer.save()
        let reader = TestStack.context(coordinator)
        let request = FaultingStack.employees()
        request.fetchBatchSize = 4
        let employees = try reader.fetch(request)
        #expect(store.rowCalls == 0)
        #expect(employees[0].age == 0)
        #expect(store.rowCalls == 4, "the default rows(for:) calls row(for:) per ID")
        #expect(employees.allSatisfy { !$0.isFault })
    }

    @Test func aBatchedFaultWhoseRowIsGoneIsInaccessible() throws {
        let (coordinator, _) = try FaultingStack.populated(companies: 1, employeesPerCompany: 3)
        let reader = TestStack.context(coordinator)
        let request = FaultingStack.employees()
        request.fetchBatchSize = 3
        let employees = try reader.fetch(request)
        let writer = TestStack.context(coordinator)
        let victim = try writer.existingObject(with: employees[1].objectID)
        writer.delete(victim)
        try writer.save()
        #expect(employees[0].name == "E0")
        #expect(employees[2].name == "E2")
        #expect(employees[1].name == nil && employees[1].isDeleted)
    }
}
