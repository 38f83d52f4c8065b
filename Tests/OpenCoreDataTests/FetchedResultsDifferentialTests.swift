// The results controller against the fetch it stands for: random inserts, updates and
// deletes in its context, saves of another context merged in, and batch inserts, updates
// and deletes merged through mergeChanges(fromRemoteContextSave:into:). After every step,
// replaying the delegate calls on the previous rows (as a table view applies a batch)
// must give exactly what a fresh fetch returns, sections included; the same for the
// CollectionDifference delegate on object IDs. On every store type.
import Foundation
import OpenCoreData
import TestSupport
import Testing

/// Keeps the object IDs a CollectionDifference delegate is told about, applying each
/// difference to the previous list.
final class DifferenceRecorder: NSObject, NSFetchedResultsControllerDelegate {
    var ids: [NSManagedObjectID] = []
    var failures: [String] = []
    var differences = 0

    func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>,
        didChangeContentWith diff: CollectionDifference<NSManagedObjectID>
    ) {
        differences += 1
        guard let next = ids.applying(diff) else {
            failures.append("a difference does not apply to \(ids.count) IDs")
            return
        }
        ids = next
    }
}

@Suite struct FetchedResultsDifferentialTests {
    static let lastNames: [String?] = ["Adams", "Baker", "Brown", "Clark", "Young", nil]
    static let firstNames = ["Ann", "Bob", "Cid", "Dee", "Eve", "Fay"]

    /// The main context, its controllers and their recorders.
    final class World {
        let coordinator: NSPersistentStoreCoordinator
        let context: NSManagedObjectContext
        var random: SeededRandom
        var serial: Int64 = 0
        var sectioned: [(NSFetchedResultsController<RPerson>, ChangeRecorder)] = []
        var flat: (NSFetchedResultsController<RPerson>, DifferenceRecorder)?

        init(_ storeType: String, seed: UInt64) throws {
            coordinator = try ResultsFixtures.coordinator(storeType)
            context = ResultsFixtures.context(coordinator)
            random = SeededRandom(environmentOr: seed)
        }

        func nextSerial() -> Int64 {
            serial += 1
            return serial
        }

        func randomValues() -> [String: Any] {
            var values: [String: Any] = [
                "firstName": random.pick(FetchedResultsDifferentialTests.firstNames),
                "age": Int16(random.int(in: 0...60)), "serial": nextSerial(),
            ]
            if let last = random.pick(FetchedResultsDifferentialTests.lastNames) { values["lastName"] = last }
            return values
        }

        @discardableResult
        func insert(in context: NSManagedObjectContext) -> RPerson {
            let person = RPerson(context: context)
            for (key, value) in randomValues() { person.setValue(value, forKey: key) }
            return person
        }

        func change(_ person: RPerson) {
            switch random.int(in: 0...3) {
            case 0: person.firstName = random.pick(FetchedResultsDifferentialTests.firstNames)
            case 1: person.lastName = random.pick(FetchedResultsDifferentialTests.lastNames)
            case 2: person.age = Int16(random.int(in: 0...60))
            default:
                person.age = Int16(random.int(in: 0...60))
                person.lastName = random.pick(FetchedResultsDifferentialTests.lastNames)
            }
        }

        func people(in context: NSManagedObjectContext) throws -> [RPerson] {
            let request = NSFetchRequest<RPerson>(entityName: "Person")
            request.sortDescriptors = [NSSortDescriptor(key: "serial", ascending: true)]
            return try context.fetch(request)
        }

        /// Controllers over the same people three ways: in sections, in one list with a
        /// fetch limit, and in one list reported as differences.
        func makeControllers() throws {
            let sectionedRequest = NSFetchRequest<RPerson>(entityName: "Person")
            sectionedRequest.predicate = NSPredicate(format: "age >= %d", 18)
            sectionedRequest.sortDescriptors = [
                NSSortDescriptor(key: "lastName", ascending: true),
                NSSortDescriptor(key: "firstName", ascending: false),
                NSSortDescriptor(key: "serial", ascending: true),
            ]
            let limitedRequest = NSFetchRequest<RPerson>(entityName: "Person")
            limitedRequest.predicate = NSPredicate(format: "age < %d", 40)
            limitedRequest.sortDescriptors = [
                NSSortDescriptor(key: "firstName", ascending: true), NSSortDescriptor(key: "serial", ascending: true),
            ]
            limitedRequest.fetchLimit = 8
            for (request, keyPath) in [(sectionedRequest, "lastName"), (limitedRequest, nil)] {
                let controller = NSFetchedResultsController(
                    fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: keyPath, cacheName: nil)
                let recorder = ChangeRecorder()
                controller.delegate = recorder
                try controller.performFetch()
                recorder.load(controller)
                sectioned.append((controller, recorder))
            }
            let flatRequest = NSFetchRequest<RPerson>(entityName: "Person")
            flatRequest.sortDescriptors = [
                NSSortDescriptor(key: "age", ascending: false), NSSortDescriptor(key: "serial", ascending: true),
            ]
            let controller = NSFetchedResultsController(
                fetchRequest: flatRequest, managedObjectContext: context, sectionNameKeyPath: nil, cacheName: nil)
            let recorder = DifferenceRecorder()
            controller.delegate = recorder
            try controller.performFetch()
            recorder.ids = controller.fetchedObjects?.map(\.objectID) ?? []
            flat = (controller, recorder)
        }

        /// Object IDs by the last part of their URI, for a readable failure.
        static func short(_ ids: [NSManagedObjectID]) -> String {
            ids.map { $0.uriRepresentation().lastPathComponent }.joined(separator: " ")
        }

        /// Compares every recorder's rows with a fresh fetch.
        func check(_ hint: Comment, sourceLocation: SourceLocation = #_sourceLocation) throws {
            for (controller, recorder) in sectioned {
                let fresh = try context.fetch(controller.fetchRequest)
                var expected: [(name: String, ids: [ObjectIdentifier])] = []
                for person in fresh {
                    let name = controller.sectionNameKeyPath == nil ? "" : (person.lastName ?? "")
                    if expected.last?.name != name { expected.append((name, [])) }
                    expected[expected.count - 1].ids.append(ObjectIdentifier(person))
                }
                let actual = ChangeRecorder.rows(of: controller)
                let names = "\(controller.sectionNameKeyPath ?? "one section")"
                #expect(recorder.replayFailures.isEmpty, "\(names): \(recorder.replayFailures) \(hint)")
                #expect(
                    recorder.rows.map(\.name) == expected.map(\.name)
                        && recorder.rows.map(\.ids) == expected.map(\.ids),
                    "\(names): replayed calls differ from a fresh fetch \(hint)", sourceLocation: sourceLocation)
                #expect(
                    actual.map(\.name) == expected.map(\.name) && actual.map(\.ids) == expected.map(\.ids),
                    "\(names): the controller's sections differ from a fresh fetch \(hint)",
                    sourceLocation: sourceLocation)
                recorder.replayFailures = []
                recorder.rows = expected
            }
            if let (controller, recorder) = flat {
                let fresh = try context.fetch(controller.fetchRequest).map(\.objectID)
                #expect(recorder.failures.isEmpty, "\(recorder.failures) \(hint)", sourceLocation: sourceLocation)
                let same = recorder.ids == fresh
                let lists = "\(Self.short(recorder.ids)) against \(Self.short(fresh))"
                #expect(
                    same, "differences replayed differ from a fresh fetch: \(lists) \(hint)",
                    sourceLocation: sourceLocation)
                recorder.failures = []
                recorder.ids = fresh
            }
        }
    }

    @Test(arguments: ResultsFixtures.storeTypes)
    func replayingReportedChangesGivesTheNewFetch(storeType: String) throws {
        let world = try World(storeType, seed: 0xF5C_D1FF)
        let context = world.context
        for _ in 0..<30 { world.insert(in: context) }
        try context.save()
        try world.makeControllers()
        let background = ResultsFixtures.context(world.coordinator)
        let saves = NotificationLog([.NSManagedObjectContextDidSave], from: background)
        var kinds: [Int: Int] = [:]
        for step in 0..<60 {
            let kind = world.random.int(in: 0...6)
            kinds[kind, default: 0] += 1
            let hint = Comment(rawValue: "step \(step) kind \(kind), \(world.random.replayHint)")
            if kind >= 3, context.hasChanges {
                // Changes saved elsewhere are merged into a context without unsaved changes.
                try context.save()
                try world.check(hint)
            }
            switch kind {
            case 0:
                for _ in 0..<world.random.int(in: 1...3) {
                    let person = world.insert(in: context)
                    try context.obtainPermanentIDs(for: [person])
                }
            case 1:
                let people = try world.people(in: context)
                for _ in 0..<world.random.int(in: 1...4) where !people.isEmpty {
                    world.change(world.random.pick(people))
                }
            case 2:
                let people = try world.people(in: context)
                for _ in 0..<world.random.int(in: 1...2) where !people.isEmpty {
                    context.delete(world.random.pick(people))
                }
            case 3:
                let savesBefore = saves.all.count
                try background.performAndWait {
                    let people = try world.people(in: background)
                    for _ in 0..<world.random.int(in: 0...2) { world.insert(in: background) }
                    for _ in 0..<world.random.int(in: 0...3) where !people.isEmpty {
                        world.change(world.random.pick(people))
                    }
                    if world.random.chance(0.5), let victim = people.randomElement(using: &world.random) {
                        background.delete(victim)
                    }
                    try background.save()
                    background.reset()
                }
                if saves.all.count > savesBefore, let save = saves.all.last {
                    context.mergeChanges(fromContextDidSave: save)
                }
            case 4:
                let low = world.random.int(in: 0...50)
                let update = NSBatchUpdateRequest(entityName: "Person")
                update.predicate = NSPredicate(format: "age >= %d AND age < %d", low, low + 12)
                update.propertiesToUpdate =
                    world.random.chance(0.5)
                    ? ["age": NSExpression(forConstantValue: world.random.int(in: 0...60))]
                    : ["lastName": NSExpression(forConstantValue: world.random.pick(Self.lastNames) ?? "Zed")]
                update.resultType = .updatedObjectIDsResultType
                let result = try context.execute(update) as? NSBatchUpdateResult
                let ids = result?.result as? [NSManagedObjectID] ?? []
                NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSUpdatedObjectsKey: ids], into: [context])
            case 5:
                let fetch = NSFetchRequest<NSFetchRequestResult>(entityName: "Person")
                let low = world.random.int(in: 0...58)
                fetch.predicate = NSPredicate(format: "age >= %d AND age < %d", low, low + 3)
                let delete = NSBatchDeleteRequest(fetchRequest: fetch)
                delete.resultType = .resultTypeObjectIDs
                let result = try context.execute(delete) as? NSBatchDeleteResult
                let ids = result?.result as? [NSManagedObjectID] ?? []
                NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSDeletedObjectsKey: ids], into: [context])
            default:
                let rows = (0..<world.random.int(in: 1...4)).map { _ in world.randomValues() }
                let insert = NSBatchInsertRequest(entityName: "Person", objects: rows)
                insert.resultType = .objectIDs
                let result = try context.execute(insert) as? NSBatchInsertResult
                let ids = result?.result as? [NSManagedObjectID] ?? []
                NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSInsertedObjectsKey: ids], into: [context])
            }
            if world.random.chance(0.4) { try context.save() } else { context.processPendingChanges() }
            try world.check(hint)
        }
        #expect(kinds.count == 7, "every kind of change ran: \(kinds)")
        #expect(world.sectioned.allSatisfy { $0.1.batchesSeen > 10 }, "the controllers saw the changes")
        #expect((world.flat?.1.differences ?? 0) > 10)
    }
}
