// Objects a context lets go of are freed: relationships loaded on both sides
// (`employee.company.employees`) make reference cycles that reset() and the context's
// deallocation break, as Core Data's turn their objects into faults. Weak references
// prove each object freed; the heap is measured around rounds of save, reset, refetch.
import Foundation
import Testing

@testable import OpenCoreData

#if canImport(Glibc)
    import Glibc
#endif

@Suite(.serialized) struct ObjectMemoryTests {
    /// Weak references to objects, to count those still alive.
    struct Probes {
        private final class Box {
            weak var object: NSManagedObject?
            init(_ object: NSManagedObject) { self.object = object }
        }
        private var boxes: [Box] = []

        mutating func watch(_ objects: some Sequence<NSManagedObject>) {
            for object in objects { boxes.append(Box(object)) }
        }

        var alive: Int { boxes.count { $0.object != nil } }
        var count: Int { boxes.count }
    }

    /// Saves a company with employees, projects (many-to-many) and ordered tasks, all
    /// related both ways; returns weak probes of every object.
    static func insertGraph(_ context: NSManagedObjectContext, round: Int, size: Int) throws -> Probes {
        var probes = Probes()
        let company = TCompany(context: context)
        company.name = "Company \(round)"
        let project = TProject(context: context)
        project.title = String(repeating: "p", count: 512)
        var objects: [NSManagedObject] = [company, project]
        for index in 0..<size {
            let employee = TEmployee(context: context)
            employee.name = "Employee \(round).\(index) " + String(repeating: "e", count: 2048)
            employee.company = company
            employee.projects = [project]
            let task = TTask(context: context)
            task.title = "Task \(index)"
            task.project = project
            objects += [employee, task]
        }
        company.ceo = objects[2] as? TEmployee
        try context.save()
        probes.watch(objects)
        return probes
    }

    /// Fetches every employee and loads both sides of each relationship.
    static func fetchGraph(_ context: NSManagedObjectContext) throws -> Probes {
        var probes = Probes()
        let employees = try context.fetch(TestStack.request("Employee", TEmployee.self))
        for employee in employees {
            if let company = employee.company { probes.watch([company] + Array(company.employees)) }
            for project in employee.projects {
                probes.watch([project] + Array(project.members) + project.tasks.array.compactMap { $0 as? TTask })
            }
        }
        probes.watch(employees)
        return probes
    }

    @Test func resetFreesObjectsWithBothSidesOfARelationshipLoaded() throws {
        let context = try TestStack.freshContext()
        var inserted = try Self.insertGraph(context, round: 0, size: 6)
        #expect(inserted.alive == inserted.count)
        context.reset()
        #expect(inserted.alive == 0, "inserted and saved objects related both ways are freed by reset()")
        var fetched = try Self.fetchGraph(context)
        #expect(fetched.count > 0 && fetched.alive > 0)
        #expect(!context.registeredObjects.isEmpty)
        context.reset()
        #expect(context.registeredObjects.isEmpty)
        #expect(fetched.alive == 0, "fetched objects with item.group.items loaded are freed by reset()")
        inserted = Probes()
        fetched = Probes()
    }

    @Test func aDeallocatedContextFreesItsObjects() throws {
        let coordinator = try TestStack.coordinator()
        var inserted = Probes()
        var fetched = Probes()
        do {
            let context = TestStack.context(coordinator)
            inserted = try Self.insertGraph(context, round: 0, size: 8)
        }
        #expect(inserted.alive == 0, "inserted and saved objects are freed with their context")
        do {
            let context = TestStack.context(coordinator)
            fetched = try Self.fetchGraph(context)
            #expect(fetched.alive > 0)
        }
        #expect(fetched.alive == 0, "fetched objects related both ways are freed with their context")
    }

    /// Objects another save deleted leave the context when it merges that save; related
    /// both ways, they kept each other (and the objects they name) alive for good.
    @Test func objectsAnotherSaveDeletedAreFreedOnceMerged() throws {
        let coordinator = try TestStack.coordinator()
        let writer = TestStack.context(coordinator)
        let reader = TestStack.context(coordinator)
        _ = try Self.insertGraph(writer, round: 0, size: 4)
        var fetched = try Self.fetchGraph(reader)
        #expect(fetched.alive > 0)
        var deleted: [NSManagedObjectID] = []
        for entity in ["Employee", "Company", "Task"] {
            for object in try writer.fetch(NSFetchRequest<NSManagedObject>(entityName: entity)) {
                deleted.append(object.objectID)
                writer.delete(object)
            }
        }
        try writer.save()
        NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSDeletedObjectsKey: deleted], into: [reader])
        reader.reset()
        #expect(fetched.alive == 0, "\(fetched.alive) of \(fetched.count) objects alive after the merge and reset()")
        fetched = Probes()
    }

    /// A resolved to-many's faults wait in batches that hold them and the object whose
    /// relationship it is: reset(), a merged delete and the context's deallocation free
    /// them, fired or not.
    @Test func batchesOfAResolvedToManyFreeTheirObjects() throws {
        let coordinator = try TestStack.coordinator()
        let writer = TestStack.context(coordinator)
        _ = try Self.insertGraph(writer, round: 0, size: 6)
        var probes = Probes()
        let reader = TestStack.context(coordinator)
        for fires in [false, true] {
            let company = try #require(try reader.fetch(TestStack.request("Company", TCompany.self)).first)
            let employees = Array(company.employees)
            if fires { _ = employees[0].name }
            probes.watch([company] + employees)
            reader.reset()
        }
        #expect(probes.alive == 0, "\(probes.alive) of \(probes.count) objects alive after reset()")
        // A member deleted by another save, merged before its batch fires.
        var doomed = Probes()
        do {
            let company = try #require(try reader.fetch(TestStack.request("Company", TCompany.self)).first)
            let employees = Array(company.employees)
            let victim = try #require(employees.first { $0.objectID != company.ceo?.objectID })
            doomed.watch([victim])
            let id = victim.objectID
            try writer.performAndWait {
                writer.delete(try writer.existingObject(with: id))
                try writer.save()
            }
            NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSDeletedObjectsKey: [id]], into: [reader])
        }
        reader.reset()
        #expect(doomed.alive == 0, "the merged delete's object is freed although its batch never fired")
        // A context deallocated with a batch pending.
        var pending = Probes()
        do {
            let context = TestStack.context(coordinator)
            let company = try #require(try context.fetch(TestStack.request("Company", TCompany.self)).first)
            pending.watch([company] + Array(company.employees))
        }
        #expect(pending.alive == 0, "\(pending.alive) of \(pending.count) objects alive with their context gone")
        probes = Probes()
        doomed = Probes()
        pending = Probes()
    }

    /// Objects a rollback takes out of the context (inserted since the last save) let go
    /// of the objects they name: related both ways, they kept each other, and the
    /// registered objects they named, alive after reset() (a failed save rolled back, in
    /// the soak).
    @Test func objectsARollbackDiscardsAreFreed() throws {
        let context = try TestStack.freshContext()
        _ = try Self.insertGraph(context, round: 0, size: 2)
        context.reset()
        var fetched = try Self.fetchGraph(context)
        var discarded = Probes()
        do {
            let project = try #require(try context.fetch(TestStack.request("Project", TProject.self)).first)
            let company = TCompany(context: context)
            company.name = "Discarded"
            discarded.watch([company])
            for index in 0..<3 {
                let employee = TEmployee(context: context)
                employee.name = "Discarded \(index)"
                employee.company = company
                employee.projects = [project]
                discarded.watch([employee])
            }
            context.rollback()
            #expect(company.name == "Discarded", "a discarded object still reads its attributes")
        }
        context.reset()
        #expect(discarded.alive == 0, "\(discarded.alive) of \(discarded.count) discarded objects alive")
        #expect(fetched.alive == 0, "\(fetched.alive) of \(fetched.count) fetched objects alive after reset()")
        discarded = Probes()
        fetched = Probes()
    }

    @Test func roundsOfSaveResetAndRefetchReturnToTheBaseline() throws {
        let coordinator = try TestStack.coordinator()
        let context = TestStack.context(coordinator)
        var heapAfterRound: [Int] = []
        let rounds = 40
        for round in 0..<rounds {
            var probes = try Self.insertGraph(context, round: round, size: 60)
            context.reset()
            #expect(probes.alive == 0, "round \(round): saved objects outlive reset()")
            probes = try Self.fetchGraph(context)
            #expect(context.registeredObjects.count > 2 * 60)
            context.reset()
            #expect(context.registeredObjects.isEmpty)
            #expect(probes.alive == 0, "round \(round): fetched objects outlive reset()")
            // The stored graph grows by one company a round; delete it again so the store
            // itself stays the same size and the heap measures objects alone.
            var deleted = Probes()
            do {
                let companies = try context.fetch(TestStack.request("Company", TCompany.self))
                let projects = try context.fetch(TestStack.request("Project", TProject.self))
                for object in companies + projects { context.delete(object) }
                try context.save()
                deleted.watch(companies + projects)
            }
            #expect(deleted.alive == 0, "round \(round): deleted and saved objects outlive the save")
            context.reset()
            heapAfterRound.append(Self.allocatedBytes())
            if probes.alive != 0 || deleted.alive != 0 { break }
        }
        #expect(try context.count(for: TestStack.request("Employee")) == 0)
        // One leaked round holds about 120 objects with 2 KiB strings (some 250 KiB): a leak
        // grows the heap steadily. The least heap of the last rounds must stay within
        // the most of the first ones (other tests allocate at the same time: the margin).
        guard heapAfterRound.count == rounds, let early = heapAfterRound.prefix(10).max(),
            let late = heapAfterRound.suffix(10).min(), early > 0
        else { return }
        #expect(late - early < 3 << 20, "heap grew from \(early) to \(late) bytes over \(rounds) rounds")
    }

    /// Bytes allocated on the heap now, from glibc's malloc_info (0 where it is missing).
    static func allocatedBytes() -> Int {
        #if canImport(Glibc)
            typealias MallocInfo = @convention(c) (Int32, UnsafeMutablePointer<FILE>?) -> Int32
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_info") else { return 0 }
            let mallocInfo = unsafeBitCast(symbol, to: MallocInfo.self)
            var buffer: UnsafeMutablePointer<CChar>?
            var length = 0
            guard let stream = open_memstream(&buffer, &length) else { return 0 }
            _ = mallocInfo(0, stream)
            fclose(stream)
            guard let buffer else { return 0 }
            defer { free(buffer) }
            let text = String(cString: buffer)
            // The totals over every arena follow the last heap element.
            guard let totals = text.range(of: "</heap>", options: .backwards).map({ text[$0.upperBound...] })
            else { return 0 }
            func total(_ tag: String) -> Int {
                guard let start = totals.range(of: tag) else { return 0 }
                let rest = totals[start.upperBound...]
                guard let open = rest.range(of: "size=\"") else { return 0 }
                return Int(rest[open.upperBound...].prefix { $0.isNumber }) ?? 0
            }
            let system = total("<system type=\"current\"")
            let unused = total("<total type=\"fast\"") + total("<total type=\"rest\"")
            return system - unused + total("<total type=\"mmap\"")
        #else
            return 0
        #endif
    }
}
