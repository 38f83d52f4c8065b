// Stores that count the row loads the object layer asks for, so faulting, batch and
// prefetch tests can prove how many store calls a behaviour costs.
import Foundation
import OpenCoreData

/// A small store of rows in a dictionary: the tests' base for stores that observe the
/// calls a context makes.
class DictionaryStore: NSPersistentStore, @unchecked Sendable {
    private var rows: [NSManagedObjectID: StoreRow] = [:]
    private var order: [NSManagedObjectID] = []
    private var nextKey: Int64 = 1

    override func fetchRows(_ request: NSFetchRequest<NSFetchRequestResult>) throws -> [StoreRow] {
        guard let entity = request.entity else { throw NSError(domain: "DictionaryStore", code: 1) }
        var entities: Set<ObjectIdentifier> = [ObjectIdentifier(entity)]
        if request.includesSubentities {
            var pending = entity.subentities
            while let next = pending.popLast() {
                entities.insert(ObjectIdentifier(next))
                pending.append(contentsOf: next.subentities)
            }
        }
        var result: [StoreRow] = []
        for id in order where entities.contains(ObjectIdentifier(id.entity)) {
            guard let row = rows[id] else { continue }
            if let predicate = request.predicate {
                let view = StoreRowView(
                    row: row, resolve: { [unowned self] in self.rows[$0] },
                    resolveToMany: { [unowned self] in try self.objectIDs(forRelationship: $0, of: $1) })
                guard try predicate.evaluateThrowing(with: view) else { continue }
            }
            result.append(row)
        }
        return result
    }

    override func row(for objectID: NSManagedObjectID) throws -> StoreRow? {
        rows[objectID]
    }

    override func objectIDs(forRelationship relationship: NSRelationshipDescription, of objectID: NSManagedObjectID)
        throws -> [NSManagedObjectID]
    {
        guard let row = rows[objectID],
            let slot = objectID.entity.properties.firstIndex(where: { $0.name == relationship.name }),
            slot < row.values.count
        else { return [] }
        switch row.values[slot] {
        case .objectIDs(let destinations): return destinations
        case .objectID(let destination): return [destination]
        default: return []
        }
    }

    override func obtainPermanentIDs(for entities: [NSEntityDescription]) throws -> [NSManagedObjectID] {
        entities.map { entity in
            defer { nextKey += 1 }
            return newObjectID(for: entity, key: nextKey)
        }
    }

    override func save(_ request: StoreSaveRequest) throws -> StoreSaveResult {
        for update in request.updatedRows where request.checksVersions {
            if rows[update.objectID]?.version != update.expectedVersion {
                throw NSError(domain: NSCocoaErrorDomain, code: NSManagedObjectMergeError)
            }
        }
        var result = StoreSaveResult()
        for inserted in request.insertedRows {
            var row = inserted
            row.version = 1
            rows[row.objectID] = row
            order.append(row.objectID)
        }
        for update in request.updatedRows {
            guard var row = rows[update.objectID] else { continue }
            for change in update.changes where change.slot < row.values.count { row.values[change.slot] = change.value }
            row.version += 1
            rows[update.objectID] = row
            result.versions[row.objectID] = row.version
        }
        for deleted in request.deletedObjects {
            rows[deleted.objectID] = nil
            order.removeAll { $0 == deleted.objectID }
        }
        return result
    }
}

/// Counts `row(for:)` and `rows(for:)` calls.
final class CountingStore: DictionaryStore, @unchecked Sendable {
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

/// Keeps the default `rows(for:)`: batches fall back to one `row(for:)` per ID.
final class SingleRowStore: DictionaryStore, @unchecked Sendable {
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
