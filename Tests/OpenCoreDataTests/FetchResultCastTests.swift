// fetch(_:) types its objects without a dynamic cast per object once an object of the
// same class passed one (FetchResultCast). These tests hold that fast path to the
// checked cast it replaces: same objects, same order, same refusals.
import Foundation
import OpenCoreData
import TestSupport
import Testing

@Suite struct FetchResultCastTests {
    /// A saved mix of employees and managers (a sub-entity with its own class), in a
    /// random interleaving, and a context that has not registered any of them.
    static func mixedStore(_ random: inout SeededRandom, count: Int) throws -> NSManagedObjectContext {
        let coordinator = try TestStack.coordinator()
        let writer = TestStack.context(coordinator)
        try writer.performAndWait {
            for index in 0..<count {
                let employee =
                    random.chance(0.3)
                    ? TManager(context: writer) as TEmployee : TEmployee(context: writer)
                employee.name = "E\(index)"
                employee.age = Int16(index)
            }
            try writer.save()
        }
        return TestStack.context(coordinator)
    }

    /// What the checked cast gives for every object of `objects`, as `T`.
    static func checked<T>(_ objects: [NSManagedObject], as _: T.Type) -> [T]? {
        var result: [T] = []
        for object in objects {
            guard let value = object as? T else { return nil }
            result.append(value)
        }
        return result
    }

    @Test func typedFetchesEqualTheCheckedCastOfEveryObject() throws {
        var random = SeededRandom(environmentOr: 0xCA57)
        for _ in 0..<8 {
            let context = try Self.mixedStore(&random, count: random.int(in: 1...40))
            try context.performAndWait {
                let sorted = [NSSortDescriptor(key: "age", ascending: true)]
                let untyped = TestStack.request("Employee", NSManagedObject.self)
                untyped.sortDescriptors = sorted
                let objects = try context.fetch(untyped)
                let reference = objects.map(ObjectIdentifier.init)

                func expectSame<T>(_: T.Type, _ identity: (T) -> ObjectIdentifier) throws {
                    let request = TestStack.request("Employee", T.self)
                    request.sortDescriptors = sorted
                    let fetched = try context.fetch(request)
                    #expect(fetched.map(identity) == reference, "\(T.self) (\(random.replayHint))")
                    #expect(Self.checked(objects, as: T.self)?.map(identity) == reference)
                }
                try expectSame(TEmployee.self) { ObjectIdentifier($0) }
                try expectSame(NSManagedObject.self) { ObjectIdentifier($0) }
                try expectSame(NSFetchRequestResult.self) { ObjectIdentifier($0) }
                try expectSame(AnyObject.self) { ObjectIdentifier($0) }
                let typed = TestStack.request("Employee", TEmployee.self)
                typed.sortDescriptors = sorted
                #expect(try context.fetch(typed).map { $0 is TManager } == objects.map { $0 is TManager })

                // Typed as the sub-entity's class: the checked cast refuses any plain
                // employee, wherever it comes after managers the fast path accepted.
                let managers = TestStack.request("Employee", TManager.self)
                managers.sortDescriptors = sorted
                if Self.checked(objects, as: TManager.self) == nil {
                    #expect(throws: (any Error).self, "\(random.replayHint)") { try context.fetch(managers) }
                } else {
                    #expect(try context.fetch(managers).map(ObjectIdentifier.init) == reference)
                }
            }
        }
    }

    /// A typed result whose objects are all of the type shares the fetch's array storage
    /// (FetchResultCast.array): it behaves as any `[T]` when changed, copied, grown and
    /// freed, and its elements are the objects the untyped fetch returns.
    @Test func aReinterpretedResultIsAnOrdinaryArray() throws {
        var random = SeededRandom(environmentOr: 0xA77A)
        let context = try Self.mixedStore(&random, count: 30)
        try context.performAndWait {
            let sorted = [NSSortDescriptor(key: "age", ascending: true)]
            let untyped = TestStack.request("Employee", NSManagedObject.self)
            untyped.sortDescriptors = sorted
            let reference = try context.fetch(untyped)
            let request = TestStack.request("Employee", TEmployee.self)
            request.sortDescriptors = sorted
            var fetched = try context.fetch(request)
            let copy = fetched
            let added = TEmployee(context: context)
            added.name = "added"
            fetched.append(added)
            fetched.removeFirst()
            fetched[0] = added
            #expect(copy.map(ObjectIdentifier.init) == reference.map(ObjectIdentifier.init))
            #expect(copy.map(\.name) == reference.map { $0.value(forKey: "name") as? String })
            #expect(fetched.count == reference.count)
            #expect(fetched.first === added && fetched.last === added)
            #expect(
                Array(fetched[1..<(fetched.count - 1)]).map(ObjectIdentifier.init)
                    == reference[2...].map(ObjectIdentifier.init))
            let upcast: [NSManagedObject] = copy
            #expect(upcast.map(ObjectIdentifier.init) == reference.map(ObjectIdentifier.init))
            #expect(copy.filter { $0 is TManager }.count == reference.filter { $0 is TManager }.count)
        }
    }

    @Test func aPlainObjectAfterSubclassObjectsIsRefusedWithTheResultTypeError() throws {
        let coordinator = try TestStack.coordinator()
        let context = TestStack.context(coordinator)
        try context.performAndWait {
            for (index, isManager) in [true, true, false].enumerated() {
                let employee = isManager ? TManager(context: context) as TEmployee : TEmployee(context: context)
                employee.age = Int16(index)
            }
            try context.save()
            let request = TestStack.request("Employee", TManager.self)
            request.sortDescriptors = [NSSortDescriptor(key: "age", ascending: true)]
            do {
                _ = try context.fetch(request)
                Issue.record("a TEmployee was returned as a TManager")
            } catch let error as NSError {
                #expect(error.domain == NSCocoaErrorDomain)
                #expect(error.code == NSCoreDataError)
            }
            request.predicate = NSPredicate(format: "age < 2")
            #expect(try context.fetch(request).map(\.age) == [0, 1])
        }
    }

    @Test func valueResultsKeepTheCheckedCast() throws {
        let context = try FetchResultsTests.populated()
        let ids = TestStack.request("Employee", NSManagedObjectID.self)
        ids.resultType = .managedObjectIDResultType
        #expect(try context.fetch(ids).count == 4)
        let wrong = TestStack.request("Employee", NSManagedObjectID.self)
        #expect(throws: (any Error).self) { try context.fetch(wrong) }
    }
}
