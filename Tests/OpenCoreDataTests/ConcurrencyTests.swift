import OpenCoreData
import Testing

/// Run these under the thread sanitizer as well:
/// `swift test --sanitize=thread --filter ConcurrencyTests`.
@Suite struct ConcurrencyTests {
    @Test func backgroundContextsOnManyThreadsShareOneCoordinator() throws {
        let coordinator = try TestStack.coordinator()
        let workers = 6
        let perWorker = 150
        let failures = ErrorBox()
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            let context = TestStack.context(coordinator)
            context.name = "worker \(worker)"
            context.performAndWait {
                do {
                    let company = TCompany(context: context)
                    company.name = "C\(worker)"
                    for index in 0..<perWorker {
                        let employee = TEmployee(context: context)
                        employee.name = "W\(worker)-\(index)"
                        employee.age = Int16(index % 100)
                        employee.company = company
                        if index % 50 == 49 { try context.save() }
                    }
                    try context.save()
                    // Read what the others wrote meanwhile.
                    _ = try context.fetch(NSFetchRequest<TCompany>(entityName: "Company")).map(\.employees.count)
                } catch {
                    failures.record(error)
                }
            }
        }
        #expect(failures.errors.isEmpty, "\(failures.errors)")
        let reader = TestStack.context(coordinator)
        try reader.performAndWait {
            #expect(try reader.count(for: NSFetchRequest<TEmployee>(entityName: "Employee")) == workers * perWorker)
            let companies = try reader.fetch(NSFetchRequest<TCompany>(entityName: "Company"))
            #expect(companies.count == workers)
            #expect(companies.allSatisfy { $0.employees.count == perWorker })
        }
    }

    @Test func readersAndWritersWithAutomaticMerging() async throws {
        let coordinator = try TestStack.coordinator()
        let watcher = TestStack.context(coordinator)
        watcher.automaticallyMergesChangesFromParent = true
        let counterID = try await watcher.perform {
            let company = TCompany(context: watcher)
            company.name = "0"
            try watcher.save()
            return company.objectID
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<4 {
                group.addTask {
                    let context = TestStack.context(coordinator)
                    context.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
                    for round in 0..<25 {
                        try await context.perform {
                            let company = try context.existingObject(with: counterID) as! TCompany
                            company.name = "\(writer)-\(round)"
                            let employee = TEmployee(context: context)
                            employee.name = "\(writer)-\(round)"
                            try context.save()
                            context.refreshAllObjects()
                        }
                    }
                }
            }
            group.addTask {
                for _ in 0..<50 {
                    _ = try await watcher.perform {
                        try watcher.count(for: NSFetchRequest<TEmployee>(entityName: "Employee"))
                    }
                }
            }
            try await group.waitForAll()
        }
        let (count, name) = try await watcher.perform {
            (
                try watcher.count(for: NSFetchRequest<TEmployee>(entityName: "Employee")),
                (try watcher.existingObject(with: counterID) as? TCompany)?.name
            )
        }
        #expect(count == 100)
        #expect(name?.hasSuffix("-24") == true)
    }

    @Test func childContextsOnTheirOwnQueues() throws {
        let coordinator = try TestStack.coordinator()
        let parent = TestStack.context(coordinator)
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            child.parent = parent
            child.performAndWait {
                for index in 0..<20 {
                    let employee = TEmployee(context: child)
                    employee.name = "\(worker)-\(index)"
                }
                try? child.save()
            }
        }
        try parent.performAndWait {
            #expect(parent.insertedObjects.count == 80)
            try parent.save()
            #expect(try parent.count(for: NSFetchRequest<TEmployee>(entityName: "Employee")) == 80)
        }
    }
}

/// Errors collected from several threads.
final class ErrorBox: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [Error] = []

    func record(_ error: Error) {
        lock.lock()
        list.append(error)
        lock.unlock()
    }

    var errors: [Error] {
        lock.lock()
        defer { lock.unlock() }
        return list
    }
}
