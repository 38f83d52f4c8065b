// Where the default store's bytes go: rows, index entries and page fill, for the
// peer benchmark's Person model (issue 5's "file size <= 1.2x SQLite").
import Foundation
import OpenCoreData
import StorageEngine
import TestSupport
import Testing

@Suite struct PageFileSpaceTests {
    /// The peer benchmark's Person: six non-optional attributes, age indexed.
    static let benchModel: NSManagedObjectModel = {
        let entity = NSEntityDescription()
        entity.name = "Person"
        entity.properties = [
            PageFileFixtures.attribute("firstName", .stringAttributeType, optional: false),
            PageFileFixtures.attribute("lastName", .stringAttributeType, optional: false),
            PageFileFixtures.attribute("age", .integer16AttributeType, optional: false, indexed: true),
            PageFileFixtures.attribute("email", .stringAttributeType, optional: false),
            PageFileFixtures.attribute("dateOfBirth", .dateAttributeType, optional: false),
            PageFileFixtures.attribute("isActive", .booleanAttributeType, optional: false),
        ]
        let model = NSManagedObjectModel()
        model.entities = [entity]
        return model
    }()

    @Test func bytesPerObjectStayCompact() throws {
        let count = Int(ProcessInfo.processInfo.environment["OPENCOREDATA_SPACE_OBJECTS"] ?? "") ?? 20_000
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = try PageFileFixtures.coordinator(Self.benchModel, url)
        let context = PageFileFixtures.context(coordinator)
        var random = SeededRandom(seed: 5)
        let firsts = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "John"]
        let lasts = ["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Thompson", "Berners-Lee"]
        try context.performAndWait {
            for id in 1...count {
                let first = firsts[Int(random.next() % UInt64(firsts.count))]
                let last = lasts[Int(random.next() % UInt64(lasts.count))]
                let person = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
                person.setValue(first, forKey: "firstName")
                person.setValue(last, forKey: "lastName")
                person.setValue(Int16(18 + random.next() % 72), forKey: "age")
                person.setValue("\(first.lowercased()).\(last.lowercased())\(id)@example.com", forKey: "email")
                person.setValue(
                    Date(timeIntervalSinceReferenceDate: -Double(random.next() % 2_800_000_000)),
                    forKey: "dateOfBirth")
                person.setValue(random.next() % 4 != 0, forKey: "isActive")
            }
            try context.save()
        }
        try PageFileFixtures.close(coordinator)
        let report = try PageFileStore.spaceReport(at: url)
        print(report.description)
        let fileBytes = try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int ?? 0
        print("file: \(fileBytes) bytes, \(Double(fileBytes) / Double(count)) per object")
        let rows = try #require(report.trees.first { $0.name == "rows.Person" })
        #expect(rows.entries == count)
        // Payload bytes per object (row key + value + index key), before page overhead.
        let payload = report.trees.filter { $0.name.hasPrefix("rows.") || $0.name.hasPrefix("index.") }
            .reduce(0) { $0 + $1.keyBytes + $1.valueBytes }
        #expect(Double(payload) / Double(count) < 80, "\(random.replayHint)")
        #expect(report.fill > 0.8, "leaf pages should be mostly full after sequential inserts")
    }
}
