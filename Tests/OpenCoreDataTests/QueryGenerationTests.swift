import Foundation
import StorageEngine
import TestSupport
import Testing

@testable import OpenCoreData

/// Query generations: what Stage4 asserts, on every store; a pinned reader under a
/// concurrent writer; the space a generation keeps, freed when it goes.
@Suite struct QueryGenerationTests {
    static let storeTypes = [NSSQLiteStoreType, NSInMemoryStoreType, NSBinaryStoreType]

    static func people(_ context: NSManagedObjectContext, _ format: String = "TRUEPREDICATE") throws -> [String] {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
        request.predicate = NSPredicate(format: format)
        request.sortDescriptors = [NSSortDescriptor(key: "firstName", ascending: true)]
        return try context.fetch(request).compactMap { $0.value(forKey: "firstName") as? String }
    }

    static func count(_ context: NSManagedObjectContext, _ format: String = "TRUEPREDICATE") throws -> Int {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
        request.predicate = NSPredicate(format: format)
        return try context.count(for: request)
    }

    @Test(arguments: storeTypes) func aPinnedContextReadsOneGeneration(storeType: String) throws {
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = try PageFileFixtures.coordinator(PageFileFixtures.peopleModel, url, type: storeType)
        defer { try? PageFileFixtures.close(coordinator) }
        let seed = PageFileFixtures.context(coordinator)
        for index in 0..<5 {
            PageFileFixtures.person(seed, "G\(index)", "Generation", Int16(20 + index), "g\(index)@x")
        }
        try seed.save()
        let ids = try seed.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
            .sorted {
                ($0.value(forKey: "firstName") as? String ?? "") < ($1.value(forKey: "firstName") as? String ?? "")
            }
            .map(\.objectID)

        let pinned = PageFileFixtures.context(coordinator)
        #expect(pinned.queryGenerationToken == nil)
        try pinned.setQueryGenerationFrom(.current)
        #expect(pinned.queryGenerationToken != nil)
        #expect(try Self.count(pinned) == 5)
        let token = pinned.queryGenerationToken
        let g2 = pinned.object(with: ids[2])

        let writer = PageFileFixtures.context(coordinator)
        try writer.existingObject(with: ids[0]).setValue("Changed", forKey: "firstName")
        writer.delete(try writer.existingObject(with: ids[2]))
        PageFileFixtures.person(writer, "G5", "Generation", 25, "g5@x")
        PageFileFixtures.person(writer, "G6", "Generation", 26, "g6@x")
        try writer.save()

        #expect(g2.value(forKey: "firstName") as? String == "G2", "a fault fires from the pinned generation")
        #expect(try Self.count(pinned) == 5)
        #expect(try Self.count(pinned, "firstName == 'Changed'") == 0)
        #expect(try Self.people(pinned) == ["G0", "G1", "G2", "G3", "G4"])

        let sharer = PageFileFixtures.context(coordinator)
        try sharer.setQueryGenerationFrom(token)
        #expect(try Self.count(sharer) == 5)
        #expect(sharer.queryGenerationToken == token)
        let unpinned = PageFileFixtures.context(coordinator)
        #expect(try Self.count(unpinned) == 6)
        #expect(try Self.count(unpinned, "firstName == 'Changed'") == 1)

        try pinned.setQueryGenerationFrom(.current)
        #expect(try Self.count(pinned) == 6)
        #expect(try Self.count(pinned, "firstName == 'Changed'") == 1)
        PageFileFixtures.person(writer, "G7", "Generation", 27, "g7@x")
        try writer.save()
        #expect(try Self.count(pinned) == 6)
        try pinned.existingObject(with: ids[1]).setValue(Int16(99), forKey: "age")
        try pinned.save()
        #expect(try Self.count(pinned) == 7, "after its own save a pinned context sees the newest data")
        #expect(pinned.queryGenerationToken != nil, "still pinned, to a newer generation")

        // Child contexts defer to their parent.
        let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        child.parent = pinned
        #expect(child.queryGenerationToken == nil)
        #expect(throws: (any Error).self) { try child.setQueryGenerationFrom(.current) }
        PageFileFixtures.person(writer, "G8", "Generation", 28, "g8@x")
        try writer.save()
        #expect(try child.performAndWait { try Self.count(child) } == 7, "a child reads its parent's generation")

        // Unpinning reads the newest data again.
        try pinned.setQueryGenerationFrom(nil)
        #expect(pinned.queryGenerationToken == nil)
        #expect(try Self.count(pinned) == 8)
    }

    /// Core Data's header: save, reset and merges move a pinned context to the newest data;
    /// refreshing objects does not.
    @Test(arguments: storeTypes) func resetAndMergesMoveTheGenerationRefreshDoesNot(storeType: String) throws {
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = try PageFileFixtures.coordinator(PageFileFixtures.peopleModel, url, type: storeType)
        defer { try? PageFileFixtures.close(coordinator) }
        let writer = PageFileFixtures.context(coordinator)
        for index in 0..<3 { PageFileFixtures.person(writer, "R\(index)", "L", 1, nil) }
        try writer.save()
        let pinned = PageFileFixtures.context(coordinator)
        try pinned.setQueryGenerationFrom(.current)
        #expect(try Self.count(pinned) == 3)

        let log = NotificationLog([.NSManagedObjectContextDidSave], from: writer)
        PageFileFixtures.person(writer, "R3", "L", 1, nil)
        try writer.save()
        pinned.refreshAllObjects()
        #expect(try Self.count(pinned) == 3, "refreshAllObjects() keeps the generation")
        pinned.mergeChanges(fromContextDidSave: try #require(log.all.last))
        #expect(try Self.count(pinned) == 4, "mergeChanges(fromContextDidSave:) moves it")

        PageFileFixtures.person(writer, "R4", "L", 1, nil)
        try writer.save()
        #expect(try Self.count(pinned) == 4)
        pinned.reset()
        #expect(try Self.count(pinned) == 5, "reset() moves it")

        let inserted = PageFileFixtures.person(writer, "R5", "L", 1, nil)
        try writer.save()
        #expect(try Self.count(pinned) == 5)
        NSManagedObjectContext.mergeChanges(
            fromRemoteContextSave: [NSInsertedObjectsKey: [inserted.objectID]], into: [pinned])
        #expect(try Self.count(pinned) == 6, "mergeChanges(fromRemoteContextSave:into:) moves it")
        #expect(pinned.queryGenerationToken != nil, "still pinned, to the newest data")

        pinned.automaticallyMergesChangesFromParent = true
        PageFileFixtures.person(writer, "R6", "L", 1, nil)
        try writer.save()
        #expect(try pinned.performAndWait { try Self.count(pinned) } == 7, "an automatic merge moves it")
    }

    /// Core Data: a generation spans the stores there were when it bound; a store added
    /// later is left out of its reads until the generation moves.
    @Test func aStoreAddedAfterBindingIsLeftOutUntilTheGenerationMoves() throws {
        let url = try PageFileFixtures.temporaryURL()
        let laterURL = try PageFileFixtures.temporaryURL("Later.store")
        let other = try PageFileFixtures.coordinator(PageFileFixtures.peopleModel, laterURL)
        let otherContext = PageFileFixtures.context(other)
        for index in 0..<3 { PageFileFixtures.person(otherContext, "Later\(index)", "L", 1, nil) }
        try otherContext.save()
        try PageFileFixtures.close(other)

        let coordinator = try PageFileFixtures.coordinator(PageFileFixtures.peopleModel, url)
        defer { try? PageFileFixtures.close(coordinator) }
        let writer = PageFileFixtures.context(coordinator)
        for index in 0..<2 { PageFileFixtures.person(writer, "First\(index)", "L", 1, nil) }
        try writer.save()
        let pinned = PageFileFixtures.context(coordinator)
        try pinned.setQueryGenerationFrom(.current)
        #expect(try Self.count(pinned) == 2)

        let later = try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: laterURL,
            options: [PageFileStoreDurabilityOption: "off"])
        let laterID = try #require(
            PageFileFixtures.context(coordinator).fetch(
                NSFetchRequest<NSManagedObject>(entityName: "Person")
            ).first { $0.objectID.persistentStore === later }?.objectID)
        #expect(try Self.count(PageFileFixtures.context(coordinator)) == 5)
        #expect(try Self.count(pinned) == 2, "the added store is not read in the old generation")
        #expect(try Self.people(pinned) == ["First0", "First1"])
        let fault = pinned.object(with: laterID)
        #expect(fault.value(forKey: "firstName") == nil, "nor are its rows fetched by ID")

        try pinned.setQueryGenerationFrom(.current)
        #expect(try Self.count(pinned) == 5, "a new generation reads every store")
    }

    /// A pinned default-store generation keeps the pages it reaches from reuse while it
    /// lives; releasing the context, or unpinning it, lets rewrites reuse them.
    @Test(arguments: [true, false]) func aGenerationHoldsPagesOnlyWhileItLives(releasesTheContext: Bool) throws {
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = try PageFileFixtures.coordinator(PageFileFixtures.peopleModel, url)
        defer { try? PageFileFixtures.close(coordinator) }
        let store = try #require(coordinator.persistentStores.first as? PageFileStore)
        let database = try store.openDatabase()
        let writer = PageFileFixtures.context(coordinator)
        let padding = String(repeating: "x", count: 400)
        var people: [NSManagedObject] = []
        for index in 0..<40 { people.append(PageFileFixtures.person(writer, "S\(index)", padding, 1, nil)) }
        try writer.save()
        var round = 0
        func rewriteEveryRow() throws -> Int {
            round += 1
            for person in people { person.setValue("\(padding)\(round)", forKey: "lastName") }
            try writer.save()
            try database.checkpoint()
            return try database.verify().pageCount
        }
        _ = try rewriteEveryRow()

        var pinned: NSManagedObjectContext? = PageFileFixtures.context(coordinator)
        try pinned?.setQueryGenerationFrom(.current)
        #expect(try pinned.map { try Self.count($0) } == 40)
        var whilePinned = [try rewriteEveryRow()]
        for _ in 0..<4 { whilePinned.append(try rewriteEveryRow()) }
        #expect(zip(whilePinned, whilePinned.dropFirst()).allSatisfy { $0 < $1 }, "pinned: \(whilePinned)")
        #expect(try pinned.map { try Self.count($0, "lastName == '\(padding)1'") } == 40, "the pinned rows are kept")

        if releasesTheContext {
            pinned = nil
        } else {
            try pinned?.setQueryGenerationFrom(nil)
        }
        var afterwards = [try rewriteEveryRow()]
        for _ in 0..<6 { afterwards.append(try rewriteEveryRow()) }
        #expect(
            afterwards.last == afterwards[1], "released: the file stops growing \(afterwards), pinned \(whilePinned)")
        #expect(try store.verify().isClean)
    }

    /// Another process's saves on a shared default store are not seen by a pinned context
    /// until it moves; the other process saves and closes while the generation is held.
    @Test func anotherProcessSavesWhileAGenerationIsPinned() throws {
        guard let executable = SharedStoreChild.executable() else { return }
        let url = try PageFileFixtures.temporaryURL("pinned.store")
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let coordinator = try SharedStoreChild.coordinator(url)
        defer { try? PageFileFixtures.close(coordinator) }
        let records = NSFetchRequest<NSManagedObject>(entityName: "StoreRecord")
        let writer = PageFileFixtures.context(coordinator)
        SharedStoreChild.insertRecord("parent", into: writer)
        try writer.save()
        let pinned = PageFileFixtures.context(coordinator)
        try pinned.setQueryGenerationFrom(.current)
        #expect(try pinned.count(for: records) == 1)

        let child = try SharedStoreChild.run(executable, at: url, count: 3)
        #expect(child.status == 0, "child said: \(child.output)")
        #expect(try PageFileFixtures.context(coordinator).count(for: records) == 4)
        #expect(try pinned.count(for: records) == 1, "the other process's saves are not in the generation")
        try pinned.setQueryGenerationFrom(.current)
        #expect(try pinned.count(for: records) == 4)
    }

    /// A pinned reader under a concurrent writer never sees a row change until it moves.
    @Test(arguments: storeTypes) func aPinnedReaderUnderAConcurrentWriterSeesNoChange(storeType: String) throws {
        let base = SeededRandom.environmentSeed ?? 11
        let seeds = SeededRandom.environmentSeed == nil ? 8 : 1
        for seed in base..<base + UInt64(seeds) {
            try Self.readUnderConcurrentWriter(seed: seed, storeType: storeType)
        }
    }

    static func readUnderConcurrentWriter(seed: UInt64, storeType: String) throws {
        var random = SeededRandom(seed: seed)
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = try PageFileFixtures.coordinator(PageFileFixtures.peopleModel, url, type: storeType)
        defer { try? PageFileFixtures.close(coordinator) }
        let seedContext = PageFileFixtures.context(coordinator)
        for index in 0..<20 { PageFileFixtures.person(seedContext, "P\(index)", "L", Int16(index), "p\(index)@x") }
        try seedContext.save()
        let reader = PageFileFixtures.context(coordinator)
        let writer = PageFileFixtures.context(coordinator)
        for _ in 0..<3 {
            let writes = (0..<12).map { _ in
                (
                    person: random.int(in: 0...19), age: random.int(in: 1...99), inserts: random.chance(0.2),
                    deletes: random.chance(0.1)
                )
            }
            try reader.performAndWait { try reader.setQueryGenerationFrom(.current) }
            let before = try reader.performAndWait { try Self.state(reader) }
            let finished = Flag()
            let errors = ErrorBox()
            writer.perform {
                do {
                    for write in writes {
                        let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
                        request.predicate = NSPredicate(format: "firstName == %@", "P\(write.person)")
                        if let person = try writer.fetch(request).first {
                            if write.deletes {
                                writer.delete(person)
                            } else {
                                person.setValue(Int16(write.age), forKey: "age")
                            }
                        }
                        if write.inserts { PageFileFixtures.person(writer, "N\(UUID().uuidString)", "L", 1, nil) }
                        try writer.save()
                    }
                } catch { errors.set(error) }
                finished.set()
            }
            var reads = 0
            repeat {
                let now = try reader.performAndWait { () -> [String] in
                    // A fault fired by ID reads the generation too.
                    let object = try reader.existingObject(with: try Self.anyID(reader))
                    let line = "\(object.value(forKey: "firstName") ?? "-") \(object.value(forKey: "age") ?? "-")"
                    #expect(before.contains(line), "seed \(seed) on \(storeType): a fault read \(line)")
                    return try Self.state(reader)
                }
                #expect(now == before, "seed \(seed) on \(storeType): a pinned read changed")
                reads += 1
            } while !finished.isSet || reads < 2
            #expect(errors.value == nil, "seed \(seed) on \(storeType): \(String(describing: errors.value))")
            let after = try reader.performAndWait { () -> [String] in
                try reader.setQueryGenerationFrom(.current)
                return try Self.state(reader)
            }
            let fresh = PageFileFixtures.context(coordinator)
            let newest = try fresh.performAndWait { try Self.state(fresh) }
            #expect(after == newest, "seed \(seed) on \(storeType): moving forward shows the newest data")
        }
    }

    /// Set once, read from any thread.
    final class Flag: @unchecked Sendable {
        private let lock = NSLock()
        private var value = false
        func set() { lock.withLock { value = true } }
        var isSet: Bool { lock.withLock { value } }
    }

    final class ErrorBox: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: Error?
        func set(_ error: Error) { lock.withLock { stored = error } }
        var value: Error? { lock.withLock { stored } }
    }

    static func anyID(_ context: NSManagedObjectContext) throws -> NSManagedObjectID {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
        request.fetchLimit = 1
        return try context.fetch(request)[0].objectID
    }

    /// The rows as the context's store reads give them: registered objects are turned into
    /// faults first (which does not move a generation), so every value comes from the store.
    static func state(_ context: NSManagedObjectContext) throws -> [String] {
        for object in context.registeredObjects { context.refresh(object, mergeChanges: false) }
        let request = NSFetchRequest<NSDictionary>(entityName: "Person")
        request.resultType = .dictionaryResultType
        request.propertiesToFetch = ["firstName", "age"]
        return try context.fetch(request).map { "\($0["firstName"] ?? "-") \($0["age"] ?? "-")" }.sorted()
    }
}
