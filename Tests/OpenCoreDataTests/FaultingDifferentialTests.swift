import Foundation
import OpenCoreData
import TestSupport
import Testing

/// Faulting options change when values load, never what a fetch returns: every
/// combination must give the values the eager fetch gives, with the same pending changes.
@Suite struct FaultingDifferentialTests {
    /// Applies the same unsaved changes to `context` for the same `seed`.
    static func applyPendingChanges(seed: UInt64, to context: NSManagedObjectContext) throws {
        var random = SeededRandom(seed: seed)
        let employees = try context.fetch(FaultingStack.employees())
        for employee in employees where random.chance(0.15) {
            employee.age = Int16(random.int(in: 0...60))
        }
        for employee in employees where random.chance(0.1) { context.delete(employee) }
        for index in 0..<random.int(in: 0...3) {
            let inserted = TEmployee(context: context)
            inserted.name = "New\(index)"
            inserted.age = Int16(random.int(in: 0...60))
        }
        // Leave the fetched, unchanged objects as faults again so the variants start cold.
        for employee in employees where !employee.hasChanges { context.refresh(employee, mergeChanges: false) }
    }

    static func snapshot(_ employees: [TEmployee]) -> [String] {
        employees.map { "\($0.name ?? "-")/\($0.age)/\($0.company?.name ?? "-")" }
    }

    @Test func everyFaultingOptionReturnsTheEagerResults() throws {
        var random = SeededRandom(environmentOr: 0xFA17)
        for _ in 0..<12 {
            let (coordinator, _) = try FaultingStack.populated(
                companies: random.int(in: 1...4), employeesPerCompany: random.int(in: 1...6))
            let changesSeed = random.next()
            let minimumAge = Int16(random.int(in: 15...40))
            let offset = random.int(in: 0...3)
            let limit = random.int(in: 0...6)
            func request() -> NSFetchRequest<TEmployee> {
                let request = NSFetchRequest<TEmployee>(entityName: "Employee")
                request.predicate = NSPredicate(format: "age >= %d", minimumAge)
                request.sortDescriptors = [
                    NSSortDescriptor(key: "company.name", ascending: false),
                    NSSortDescriptor(key: "age", ascending: true), NSSortDescriptor(key: "name", ascending: true),
                ]
                request.fetchOffset = offset
                request.fetchLimit = limit
                return request
            }
            let eagerContext = TestStack.context(coordinator)
            try Self.applyPendingChanges(seed: changesSeed, to: eagerContext)
            let eager = request()
            eager.returnsObjectsAsFaults = false
            let expected = Self.snapshot(try eagerContext.fetch(eager))

            for variant in 0..<6 {
                let context = TestStack.context(coordinator)
                try Self.applyPendingChanges(seed: changesSeed, to: context)
                let fetch = request()
                switch variant {
                case 0: break
                case 1: fetch.includesPropertyValues = false
                case 2: fetch.fetchBatchSize = random.int(in: 1...4)
                case 3: fetch.relationshipKeyPathsForPrefetching = ["company", "company.employees"]
                case 4:
                    fetch.fetchBatchSize = 2
                    fetch.relationshipKeyPathsForPrefetching = ["company"]
                default: fetch.shouldRefreshRefetchedObjects = true
                }
                let results = try context.fetch(fetch)
                #expect(
                    Self.snapshot(results) == expected, "variant \(variant), \(random.replayHint)")
            }
        }
    }
}
