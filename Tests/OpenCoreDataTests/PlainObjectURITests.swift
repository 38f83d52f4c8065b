// Object ID URIs split by hand give exactly what URL's parser gives (host, path
// components), on random URIs mixing plain and special characters; anything the hand
// split is unsure of goes to URL.
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

struct PlainObjectURITests {
    @Test func handSplitAgreesWithURL() {
        var random = SeededRandom(environmentOr: 4_242)
        let pieces = [
            "a", "Z", "9", "-", "_", ".", "..", "/", "//", "%20", "%2F", ":", ":80", "@", "?q", "#f", " ", "é", "p",
            "p12",
            "Person", "0A1B-C2", "+",
        ]
        var plain = 0
        for _ in 0..<3_000 {
            func part() -> String {
                (0..<random.int(in: 0...3)).map { _ in
                    random.chance(0.8) ? random.pick(["a", "Z", "9", "-", "p", "Person"]) : random.pick(pieces)
                }
                .joined()
            }
            let scheme =
                random.chance(0.9) ? "x-coredata://" : random.pick(["http://", "x-coredata:/", "X-CoreData://"])
            let text =
                scheme + part() + "/" + part() + "/" + (random.chance(0.7) ? "p\(random.int(in: 0...999))" : part())
            guard let url = URL(string: text) else { continue }
            guard let split = PlainObjectURI(url.absoluteString) else { continue }
            plain += 1
            #expect(url.scheme == "x-coredata", "\(text) (\(random.replayHint))")
            #expect(url.host == split.host, "\(text) (\(random.replayHint))")
            #expect(
                url.path.split(separator: "/").map(String.init) == [split.entity, split.key],
                "\(text) (\(random.replayHint))")
        }
        #expect(plain > 300, "only \(plain) plain URIs (\(random.replayHint))")
    }

    @Test func storeURIsRoundTripThroughTheCoordinator() throws {
        let entity = NSEntityDescription()
        entity.name = "Person"
        let model = NSManagedObjectModel()
        model.entities = [entity]
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(
            ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
        let id = store.newObjectID(for: entity, key: 42)
        let found = coordinator.managedObjectID(forURIRepresentation: id.uriRepresentation())
        #expect(found == id)
        let identifier = store.identifier ?? ""
        #expect(
            coordinator.managedObjectID(forURIRepresentation: URL(string: "x-coredata://\(identifier)/Person/p7")!)?
                .storeKey == 7)
        #expect(
            coordinator.managedObjectID(forURIRepresentation: URL(string: "x-coredata://\(identifier)/Nobody/p7")!)
                == nil)
        #expect(
            coordinator.managedObjectID(forURIRepresentation: URL(string: "x-coredata://\(identifier)/Person/q7")!)
                == nil)
        #expect(coordinator.managedObjectID(forURIRepresentation: URL(string: "x-coredata://OTHER/Person/p7")!) == nil)
    }
}
