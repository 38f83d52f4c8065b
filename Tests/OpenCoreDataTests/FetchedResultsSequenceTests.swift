import Foundation
import Testing

@testable import OpenCoreData

/// The context's result sequences: the current results at once, then after each change
/// that affects them; differences that rebuild the list; mapped values; errors; and the
/// tracker stopping when the iteration ends.
@Suite struct FetchedResultsSequenceTests {
    static func seeded(_ storeType: String) async throws -> NSManagedObjectContext {
        let context = ResultsFixtures.context(try ResultsFixtures.coordinator(storeType))
        try await context.perform {
            ResultsFixtures.person("Ann", "Adams", age: 30, in: context)
            ResultsFixtures.person("Cid", "Brown", age: 25, in: context)
            ResultsFixtures.person("Kid", "Brown", age: 10, in: context)
            try context.save()
        }
        return context
    }

    static func adults() -> NSFetchRequest<RPerson> {
        let request = NSFetchRequest<RPerson>(entityName: "Person")
        request.predicate = NSPredicate(format: "age >= %d", 18)
        request.sortDescriptors = [
            NSSortDescriptor(key: "lastName", ascending: true), NSSortDescriptor(key: "firstName", ascending: true),
        ]
        return request
    }

    @Test(.timeLimit(.minutes(1)), arguments: ResultsFixtures.storeTypes)
    func snapshotsNowAndAfterChanges(storeType: String) async throws {
        let context = try await Self.seeded(storeType)
        var snapshots = context.results(for: Self.adults(), sectionNameKeyPath: "lastName").makeAsyncIterator()
        let first = try #require(try await snapshots.next())
        #expect(first.sectionIdentifiers == ["Adams", "Brown"] && first.numberOfItems == 2)
        try await context.perform {
            ResultsFixtures.person("Bea", "Clark", age: 44, in: context)
            try context.save()
        }
        // A slow consumer gets the newest snapshot: read until the insert shows.
        var latest = first
        for _ in 0..<3 where latest.numberOfItems < 3 || latest.itemIdentifiers.contains(where: \.isTemporaryID) {
            latest = try #require(try await snapshots.next())
        }
        #expect(latest.sectionIdentifiers == ["Adams", "Brown", "Clark"])
        #expect(latest.itemIdentifiers.allSatisfy { !$0.isTemporaryID }, "a save's permanent IDs are yielded")
        // A change the request does not see yields nothing; the next one that does, yields.
        try await context.perform {
            let pet = RPet(context: context)
            pet.name = "Rex"
            try context.save()
            let kid = try context.fetch(NSFetchRequest<RPerson>(entityName: "Person")).first { $0.firstName == "Kid" }
            kid?.age = 18
            context.processPendingChanges()
        }
        var afterKid = try #require(try await snapshots.next())
        if afterKid.itemIdentifiers(inSection: "Brown").count < 2 {
            afterKid = try #require(try await snapshots.next())
        }
        #expect(afterKid.itemIdentifiers(inSection: "Brown").count == 2)
    }

    @Test(.timeLimit(.minutes(1)), arguments: ResultsFixtures.storeTypes)
    func differencesRebuildTheList(storeType: String) async throws {
        let context = try await Self.seeded(storeType)
        var changes = context.resultChanges(for: Self.adults()).makeAsyncIterator()
        var ids: [NSManagedObjectID] = []
        func next() async throws -> FetchedResultsChange {
            let change = try #require(try await changes.next())
            ids = try #require(ids.applying(change.difference))
            #expect(ids == change.snapshot.itemIdentifiers)
            return change
        }
        #expect(try await next().snapshot.numberOfItems == 2)
        try await context.perform {
            let people = try context.fetch(NSFetchRequest<RPerson>(entityName: "Person"))
            for person in people where person.firstName == "Ann" { person.lastName = "Zulu" }
            for person in people where person.firstName == "Kid" { person.age = 11 }
            context.processPendingChanges()
        }
        let moved = try await next()
        #expect(moved.difference.insertions.count == 1 && moved.difference.removals.count == 1)
        #expect(moved.updatedObjectIDs.isEmpty)
        try await context.perform {
            let people = try context.fetch(NSFetchRequest<RPerson>(entityName: "Person"))
            for person in people where person.firstName == "Cid" { person.age = 26 }
            context.processPendingChanges()
        }
        let updated = try await next()
        #expect(updated.difference.isEmpty && updated.updatedObjectIDs.count == 1)
        try await context.perform {
            ResultsFixtures.person("Amy", "Adams", age: 44, in: context)
            try context.save()
        }
        // The insert (a temporary ID), then the save that makes it permanent.
        _ = try await next()
        let saved = try await next()
        #expect(saved.snapshot.numberOfItems == 3 && saved.snapshot.itemIdentifiers.allSatisfy { !$0.isTemporaryID })
    }

    @Test(.timeLimit(.minutes(1))) func mappedValuesAndErrors() async throws {
        let context = try await Self.seeded(NSInMemoryStoreType)
        for try await names in context.results(for: Self.adults(), transform: { $0.firstName ?? "" }) {
            #expect(names == ["Ann", "Cid"])
            break
        }
        let unsorted = NSFetchRequest<RPerson>(entityName: "Person")
        await #expect(throws: (any Error).self) {
            for try await _ in context.results(for: unsorted) {}
        }
    }

    @Test(.timeLimit(.minutes(1))) func endingTheIterationStopsFollowingTheContext() async throws {
        let context = try await Self.seeded(NSInMemoryStoreType)
        for try await snapshot in context.results(for: Self.adults()) {
            #expect(snapshot.numberOfItems == 2)
            #expect(await context.perform { context.lifecycle.resultsObserver != nil })
            break
        }
        // The iterator's end queues the stop on the context's queue, before this block.
        #expect(await context.perform { context.lifecycle.resultsObserver == nil })
    }
}
