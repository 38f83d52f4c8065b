// The file after an app deletes 15% of its objects at random in one save (issue 11's
// "Space"): peer-bench's app model (Person with indexed id and age, a to-one company whose
// inverse is Company's to-many), loaded in one save, then pruned. Every leaf of every tree
// loses ~15% of its cells; the shrink that follows packs them (SPEC.md §2.13 step 2), so
// the closed file's bytes per remaining person stay those of the load.
// OPENCOREDATA_SPACE_OBJECTS=100000 runs it at peer-bench's size (and prints the figures).
import Foundation
import OpenCoreData
import StorageEngine
import TestSupport
import Testing

@Suite struct PageFileDeleteSpaceTests {
    static let model: NSManagedObjectModel = {
        let person = NSEntityDescription()
        person.name = "Person"
        let company = NSEntityDescription()
        company.name = "Company"
        let toCompany = TestStack.relationship("company", to: company, toMany: false)
        let employees = TestStack.relationship("employees", to: person, toMany: true)
        TestStack.pair(toCompany, employees)
        toCompany.deleteRule = .nullifyDeleteRule
        employees.deleteRule = .nullifyDeleteRule
        person.properties = [
            PageFileFixtures.attribute("id", .integer64AttributeType, optional: false, indexed: true),
            PageFileFixtures.attribute("firstName", .stringAttributeType, optional: false),
            PageFileFixtures.attribute("lastName", .stringAttributeType, optional: false),
            PageFileFixtures.attribute("age", .integer16AttributeType, optional: false, indexed: true),
            PageFileFixtures.attribute("email", .stringAttributeType, optional: false),
            PageFileFixtures.attribute("dateOfBirth", .dateAttributeType, optional: false),
            PageFileFixtures.attribute("isActive", .booleanAttributeType, optional: false), toCompany,
        ]
        company.properties = [
            PageFileFixtures.attribute("id", .integer64AttributeType, optional: false, indexed: true),
            PageFileFixtures.attribute("name", .stringAttributeType, optional: false), employees,
        ]
        let model = NSManagedObjectModel()
        model.entities = [person, company]
        return model
    }()

    static func fileBytes(_ url: URL) throws -> Int {
        try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int ?? 0
    }

    @Test func deletingFifteenPercentKeepsTheBytesPerPerson() throws {
        let count = Int(ProcessInfo.processInfo.environment["OPENCOREDATA_SPACE_OBJECTS"] ?? "") ?? 20_000
        let url = try PageFileFixtures.temporaryURL()
        var random = SeededRandom(seed: 11)
        let firsts = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "John"]
        let lasts = ["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Thompson", "Berners-Lee"]
        var coordinator = try PageFileFixtures.coordinator(Self.model, url)
        var context = PageFileFixtures.context(coordinator)
        try context.performAndWait {
            let companies = (1...100).map { id in
                let company = NSEntityDescription.insertNewObject(forEntityName: "Company", into: context)
                company.setValue(Int64(id), forKey: "id")
                company.setValue("Company \(id)", forKey: "name")
                return company
            }
            for id in 1...count {
                let first = firsts[Int(random.next() % UInt64(firsts.count))]
                let last = lasts[Int(random.next() % UInt64(lasts.count))]
                let person = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
                person.setValue(Int64(id), forKey: "id")
                person.setValue(first, forKey: "firstName")
                person.setValue(last, forKey: "lastName")
                person.setValue(Int16(18 + random.next() % 72), forKey: "age")
                person.setValue("\(first.lowercased()).\(last.lowercased())\(id)@example.com", forKey: "email")
                person.setValue(
                    Date(timeIntervalSinceReferenceDate: -Double(random.next() % 2_800_000_000)), forKey: "dateOfBirth")
                person.setValue(random.next() % 4 != 0, forKey: "isActive")
                person.setValue(companies[id % 100], forKey: "company")
            }
            try context.save()
        }
        try PageFileFixtures.close(coordinator)
        let loaded = try Self.fileBytes(url)

        coordinator = try PageFileFixtures.coordinator(Self.model, url)
        context = PageFileFixtures.context(coordinator)
        var doomed = Set<Int64>()
        while doomed.count < count * 15 / 100 { doomed.insert(Int64(random.next() % UInt64(count)) + 1) }
        try context.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
            request.predicate = NSPredicate(format: "id IN %@", doomed.map { NSNumber(value: $0) })
            let people = try context.fetch(request)
            #expect(people.count == doomed.count)
            for person in people { context.delete(person) }
            try context.save()
        }
        try PageFileFixtures.close(coordinator)
        let pruned = try Self.fileBytes(url)
        let report = try PageFileStore.verify(at: url)
        #expect(report.isClean, "\(report.problems)")
        let remaining = count - doomed.count
        let perPersonLoaded = Double(loaded) / Double(count)
        let perPersonPruned = Double(pruned) / Double(remaining)
        print("bytes per person: \(perPersonLoaded) after load, \(perPersonPruned) after deleting 15%")
        // Unpacked, the pruned file would hold 1/0.85 = 1.18 times the bytes per person.
        #expect(perPersonPruned <= perPersonLoaded * 1.06, "load \(perPersonLoaded), pruned \(perPersonPruned)")
    }
}
