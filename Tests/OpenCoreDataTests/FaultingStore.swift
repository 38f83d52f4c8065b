// A store that counts the row loads the object layer asks for, so faulting, batch and
// prefetch tests can prove how many store calls a behaviour costs.
import Foundation
import OpenCoreData

/// The in-memory store, counting `row(for:)` and `rows(for:)` calls.
final class CountingStore: NSInMemoryStore, @unchecked Sendable {
    static let typeName = "OpenCoreDataTests.CountingStore"
    private let lock = NSLock()
    private var singleLoads = 0
    private var batches: [Int] = []

    /// Calls of `row(for:)`.
    var rowCalls: Int { lock.withLock { singleLoads } }
    /// The size of each `rows(for:)` call, in order.
    var batchSizes: [Int] { lock.withLock { batches } }

    override func row(for objectID: NSManagedObjectID) throws -> StoreRow? {
        lock.withLock { singleLoads += 1 }
        return try super.row(for: objectID)
    }

    override func rows(for objectIDs: [NSManagedObjectID]) throws -> [StoreRow?] {
        lock.withLock { batches.append(objectIDs.count) }
        return try objectIDs.map { try super.row(for: $0) }
    }

    func resetCounts() {
        lock.withLock {
            singleLoads = 0
            batches = []
        }
    }
}

/// A store that keeps the default `rows(for:)`: batches fall back to one `row(for:)` per ID.
final class SingleRowStore: NSInMemoryStore, @unchecked Sendable {
    static let typeName = "OpenCoreDataTests.SingleRowStore"
    private let lock = NSLock()
    private var singleLoads = 0

    var rowCalls: Int { lock.withLock { singleLoads } }

    override func row(for objectID: NSManagedObjectID) throws -> StoreRow? {
        lock.withLock { singleLoads += 1 }
        return try super.row(for: objectID)
    }
}

enum FaultingStack {
    /// A coordinator on a store of `storeClass`, registered under `type`.
    static func coordinator<Store: NSPersistentStore>(_ storeClass: Store.Type, type: String) throws
        -> (NSPersistentStoreCoordinator, Store)
    {
        NSPersistentStoreCoordinator.registerStoreClass(storeClass, type: type)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestStack.model)
        let store = try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: nil, options: nil)
        guard let typed = store as? Store else { throw NSError(domain: "FaultingStack", code: 1) }
        return (coordinator, typed)
    }

    /// A counting store holding companies "C0"... with `employeesPerCompany` employees
    /// each ("E0"... with ages 20, 21, ...), saved by a writer context.
    static func populated(companies: Int = 2, employeesPerCompany: Int = 3) throws
        -> (NSPersistentStoreCoordinator, CountingStore)
    {
        let (coordinator, store) = try coordinator(CountingStore.self, type: CountingStore.typeName)
        let writer = TestStack.context(coordinator)
        var index = 0
        for companyIndex in 0..<companies {
            let company = TCompany(context: writer)
            company.name = "C\(companyIndex)"
            for _ in 0..<employeesPerCompany {
                let employee = TEmployee(context: writer)
                employee.name = "E\(index)"
                employee.age = Int16(20 + index)
                employee.company = company
                index += 1
            }
        }
        try writer.save()
        store.resetCounts()
        return (coordinator, store)
    }

    static func employees(sorted: Bool = true) -> NSFetchRequest<TEmployee> {
        let request = NSFetchRequest<TEmployee>(entityName: "Employee")
        if sorted { request.sortDescriptors = [NSSortDescriptor(key: "age", ascending: true)] }
        return request
    }
}
