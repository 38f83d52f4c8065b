// FetchRequestMatcher: "does this object match the request, and where does it sort?" asked
// of one object on its current values — pending in its context or merged from another
// context's save — and answering as a fetch would.
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

@Suite struct FetchRequestMatcherTests {
    private func employee(_ name: String, age: Int16, in context: NSManagedObjectContext) -> TEmployee {
        let employee = TEmployee(context: context)
        employee.name = name
        employee.age = age
        return employee
    }

    private func matcher(
        _ context: NSManagedObjectContext, _ request: NSFetchRequest<NSFetchRequestResult>
    ) throws -> FetchRequestMatcher {
        let entity = try #require(context.persistentStoreCoordinator?.managedObjectModel.entitiesByName["Employee"])
        return FetchRequestMatcher(request, entity: entity)
    }

    @Test func pendingObjectsMatchOnTheirUnsavedValues() throws {
        let context = try TestStack.freshContext()
        let young = employee("Ada", age: 30, in: context)
        let old = employee("Bob", age: 60, in: context)
        let company = TCompany(context: context)
        company.name = "Acme"
        try context.save()
        let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Employee")
        request.predicate = NSPredicate(format: "age < 40")
        let matcher = try matcher(context, request)
        #expect(try matcher.matches(young))
        #expect(try !matcher.matches(old))
        old.age = 35
        #expect(try matcher.matches(old))
        young.age = 41
        #expect(try !matcher.matches(young))
        // Another entity, and a deleted object, are never results.
        #expect(try !matcher.matches(company))
        context.delete(old)
        #expect(try !matcher.matches(old))
    }

    @Test func subEntitiesMatchWhenTheRequestIncludesThem() throws {
        let context = try TestStack.freshContext()
        let manager = TManager(context: context)
        manager.age = 50
        manager.level = 3
        let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Employee")
        #expect(try matcher(context, request).matches(manager))
        request.includesSubentities = false
        #expect(try !matcher(context, request).matches(manager))
        // A key only the sub-entity has: compiled for the object's own entity, as stores compile it.
        let byLevel = NSFetchRequest<NSFetchRequestResult>(entityName: "Employee")
        byLevel.predicate = NSPredicate(format: "level > 2")
        #expect(try matcher(context, byLevel).matches(manager))
        #expect(try context.fetch(byLevel).map { $0 as? TManager } == [manager])
    }

    @Test func mergedObjectsMatchOnTheirMergedValues() throws {
        let coordinator = try TestStack.coordinator()
        let main = TestStack.context(coordinator)
        let ada = employee("Ada", age: 30, in: main)
        try main.save()
        let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Employee")
        request.predicate = NSPredicate(format: "age > 40")
        let matcher = try matcher(main, request)
        #expect(try !matcher.matches(ada))
        let background = TestStack.context(coordinator)
        let log = NotificationLog([.NSManagedObjectContextDidSave], from: background)
        try background.performAndWait {
            let theirs = try #require(try background.existingObject(with: ada.objectID) as? TEmployee)
            theirs.age = 45
            try background.save()
        }
        main.mergeChanges(fromContextDidSave: try #require(log.all.first))
        #expect(ada.age == 45)
        #expect(try matcher.matches(ada))
    }

    @Test func comparesByTheRequestsSortDescriptors() throws {
        let context = try TestStack.freshContext()
        let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Employee")
        request.sortDescriptors = [
            NSSortDescriptor(key: "age", ascending: true), NSSortDescriptor(key: "name", ascending: false),
        ]
        let matcher = try matcher(context, request)
        let ada = employee("Ada", age: 30, in: context)
        let bob = employee("Bob", age: 30, in: context)
        let cyd = employee("Cyd", age: 20, in: context)
        #expect(try matcher.compare(cyd, ada) == .orderedAscending)
        #expect(try matcher.compare(bob, ada) == .orderedAscending)
        #expect(try matcher.compare(ada, ada) == .orderedSame)
        #expect(try matcher.areInIncreasingOrder(bob, ada))
        #expect(try !matcher.areInIncreasingOrder(ada, bob))
    }

    /// The index the matcher gives a new pending object in a sorted result is where the next
    /// fetch (which merges pending objects after the store's rows, then sorts stably) puts it.
    @Test func insertionIndexIsWhereTheNextFetchPlacesAPendingObject() throws {
        let context = try TestStack.freshContext()
        var random = SeededRandom(environmentOr: 0x0F_E7C4)
        let hint = random.replayHint
        for index in 0..<40 { _ = employee("E\(index)", age: Int16(random.int(in: 20...30)), in: context) }
        try context.save()
        let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Employee")
        request.sortDescriptors = [NSSortDescriptor(key: "age", ascending: random.chance(0.5))]
        let matcher = try matcher(context, request)
        for _ in 0..<20 {
            let sorted = try context.fetch(request).compactMap { $0 as? TEmployee }
            let newcomer = employee("N", age: Int16(random.int(in: 18...32)), in: context)
            let predicted = try matcher.insertionIndex(of: newcomer, in: sorted)
            let fetched = try context.fetch(request).compactMap { $0 as? TEmployee }
            #expect(fetched.firstIndex(of: newcomer) == predicted, "\(hint)")
            try context.save()
        }
        #expect(try matcher.insertionIndex(of: employee("Z", age: 1, in: context), in: [TEmployee]()) == 0)
    }
}
