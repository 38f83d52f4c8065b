// One NSFetchRequest shared by contexts on different threads: a fetch reads the request and
// never writes to it (beyond resolving its entity once, under a lock), so one context's
// fetch cannot change what another's store call does. Run under the thread sanitizer too:
// `swift test --sanitize=thread --filter FetchSharedRequestTests`.
import Foundation
import OpenCoreData
import Testing

@Suite struct FetchSharedRequestTests {
    /// Item: `rank` (Int32, indexed: the default store may walk the index for a sort + limit).
    static let model: NSManagedObjectModel = {
        let item = NSEntityDescription()
        item.name = "Item"
        item.properties = [PageFileFixtures.attribute("rank", .integer32AttributeType, indexed: true)]
        let model = NSManagedObjectModel()
        model.entities = [item]
        return model
    }()

    private func ranks(_ context: NSManagedObjectContext, _ request: NSFetchRequest<NSManagedObject>) throws -> [Int32]
    {
        try context.performAndWait {
            try context.fetch(request).compactMap { $0.value(forKey: "rank") as? Int32 }
        }
    }

    @Test func twoContextsFetchingWithOneSharedRequestEachGetTheirOwnAnswer() throws {
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = try PageFileFixtures.coordinator(Self.model, url)
        let setup = PageFileFixtures.context(coordinator)
        try setup.performAndWait {
            for rank in Int32(0)..<200 {
                NSEntityDescription.insertNewObject(forEntityName: "Item", into: setup).setValue(rank, forKey: "rank")
            }
            try setup.save()
        }
        // The clean context lets its store stop after the window; the dirty one must not, since
        // its unsaved deletes and its update change which rows make the first twenty.
        let clean = PageFileFixtures.context(coordinator)
        let dirty = PageFileFixtures.context(coordinator)
        try dirty.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
            request.predicate = NSPredicate(format: "rank < 11")
            for object in try dirty.fetch(request) {
                let rank = object.value(forKey: "rank") as? Int32 ?? 0
                if rank < 5 { dirty.delete(object) }
                if rank == 10 { object.setValue(Int32(1000), forKey: "rank") }
            }
        }
        let expected: [[Int32]] = [Array(0..<20), Array(5...9) + Array(11...25)]
        let failures = ErrorBox()
        // A fresh request per round: resolving its entity from the name is part of the race.
        for round in 0..<60 {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
            request.sortDescriptors = [NSSortDescriptor(key: "rank", ascending: true)]
            request.fetchLimit = 20
            DispatchQueue.concurrentPerform(iterations: 2) { side in
                for _ in 0..<20 {
                    do {
                        let answer = try ranks(side == 0 ? clean : dirty, request)
                        if answer != expected[side] {
                            failures.record(FetchMismatch(description: "round \(round), side \(side): \(answer)"))
                        }
                    } catch {
                        failures.record(error)
                    }
                }
            }
            if !failures.errors.isEmpty { break }
        }
        #expect(failures.errors.isEmpty, "\(failures.errors)")
    }
}

private struct FetchMismatch: Error, CustomStringConvertible {
    let description: String
}
