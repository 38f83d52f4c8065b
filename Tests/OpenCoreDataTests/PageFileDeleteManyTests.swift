// The app's delete of many rows: an `IN %@` list of NSNumber constants on an indexed
// integer attribute (read once each, without bridging casts), then one save deleting
// the matches, whose ordinary index entries go in one sorted walk per index. IN lists
// with duplicates, non-integer, out-of-range, decimal and null members and the empty
// list must fetch what the evaluator selects; after the save every index, the inverse
// to-many and the freed unique keys must be exactly those of the remaining rows.
import Foundation
import OpenCoreData
import TestSupport
import Testing

@Suite struct PageFileDeleteManyTests {
    static let model: NSManagedObjectModel = {
        let item = NSEntityDescription()
        item.name = "Item"
        item.properties = [
            PageFileFixtures.attribute("uid", .integer64AttributeType, indexed: true),
            PageFileFixtures.attribute("rank", .integer16AttributeType, indexed: true),
        ]
        let model = NSManagedObjectModel()
        model.entities = [item]
        return model
    }()

    @Test func inListsOfNumbersFetchWhatTheEvaluatorSelects() throws {
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = try PageFileFixtures.coordinator(Self.model, url)
        let context = PageFileFixtures.context(coordinator)
        let reader = PageFileFixtures.context(coordinator)
        let huge = Int64(1) << 60
        try context.performAndWait {
            for index in 0..<120 {
                let object = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
                let uid: Int64? = index % 17 == 0 ? nil : (index == 5 ? huge : Int64(index))
                object.setValue(uid.map { NSNumber(value: $0) }, forKey: "uid")
                object.setValue(NSNumber(value: Int16(index)), forKey: "rank")
            }
            try context.save()
            let everyone = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item"))
            let lists: [[Any]] = [
                [],
                [NSNumber(value: 3), NSNumber(value: 3), NSNumber(value: 9), NSNumber(value: 3)],
                [NSNumber(value: 4.0), NSNumber(value: 4.5), NSNumber(value: -0.0), NSNumber(value: true)],
                [NSNumber(value: huge), NSNumber(value: huge + 1), NSNumber(value: UInt64.max), NSNumber(value: 7)],
                [NSDecimalNumber(string: "8"), NSDecimalNumber(string: "8.5"), NSNumber(value: Double.nan)],
                [NSNull(), NSNumber(value: 11), Int64(12), 13, Int16(14), Double(15), Float(16.5)],
                (0..<120).reversed().map { NSNumber(value: Int64($0 * 3 % 130)) },
            ]
            for members in lists {
                let predicate = NSPredicate(format: "uid IN %@", argumentArray: [members])
                let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
                request.predicate = predicate
                let expected = try everyone.filter { try predicate.evaluateThrowing(with: $0) }
                    .compactMap { $0.value(forKey: "rank") as? Int16 }.sorted()
                let (fetched, counted) = try reader.performAndWait {
                    reader.reset()
                    let fetched = try reader.fetch(request).compactMap { $0.value(forKey: "rank") as? Int16 }.sorted()
                    reader.reset()
                    return (fetched, try reader.count(for: request))
                }
                #expect(fetched == expected, "fetch of uid IN \(members)")
                #expect(counted == expected.count, "count of uid IN \(members)")
            }
        }
    }

    @Test func deletingManyInOneSaveLeavesExactlyTheRemainingEntries() throws {
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = try PageFileFixtures.coordinator(PageFileFixtures.peopleModel, url)
        let context = PageFileFixtures.context(coordinator)
        try context.performAndWait {
            var teams: [NSManagedObject] = []
            for index in 0..<6 {
                let team = NSEntityDescription.insertNewObject(forEntityName: "Team", into: context)
                team.setValue("Team \(index)", forKey: "title")
                teams.append(team)
            }
            for index in 0..<300 {
                let person = PageFileFixtures.person(
                    context, "First\(index % 7)", "Last\(index % 11)", Int16(index % 40), "p\(index)@example.com")
                person.setValue(teams[index % teams.count], forKey: "team")
            }
            try context.save()
            context.reset()
            // The app's shape: the victims by `age IN %@`, deleted one by one, one save; two
            // teams go in the same save (their members' entries are read while it runs).
            let ages = [3, 3, 8, 15, 22, 39].map { NSNumber(value: Int16($0)) }
            let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
            request.predicate = NSPredicate(format: "age IN %@", ages)
            let victims = try context.fetch(request)
            let survivors = (0..<300).filter { ![3, 8, 15, 22, 39].contains($0 % 40) }
            #expect(victims.count == 300 - survivors.count)
            for person in victims { context.delete(person) }
            let doomedTeams = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Team"))
                .filter { ["Team 1", "Team 4"].contains($0.value(forKey: "title") as? String) }
            for team in doomedTeams { context.delete(team) }
            try context.save()
            context.reset()

            let people = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
            #expect(people.count == survivors.count)
            for age in 0..<40 {
                let byAge = NSFetchRequest<NSManagedObject>(entityName: "Person")
                byAge.predicate = NSPredicate(format: "age == %d", age)
                #expect(try context.count(for: byAge) == survivors.filter { $0 % 40 == age }.count, "age \(age)")
            }
            let byName = NSFetchRequest<NSManagedObject>(entityName: "Person")
            byName.predicate = NSPredicate(format: "lastName == %@ AND firstName == %@", "Last3", "First3")
            #expect(
                try context.fetch(byName).count == survivors.filter { $0 % 11 == 3 && $0 % 7 == 3 }.count)
            for team in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Team")) {
                let members = try #require(team.value(forKey: "members") as? Set<NSManagedObject>)
                let title = try #require(team.value(forKey: "title") as? String)
                let number = try #require(Int(title.dropFirst(5)))
                #expect(members.count == survivors.filter { $0 % 6 == number }.count, "\(title)")
            }
            let orphans = people.filter { $0.value(forKey: "team") == nil }.count
            #expect(orphans == survivors.filter { $0 % 6 == 1 || $0 % 6 == 4 }.count)
            // A deleted person's unique email is free again.
            PageFileFixtures.person(context, "New", "Person", 3, "p3@example.com")
            try context.save()
        }
        let store = try #require(coordinator.persistentStores.first as? PageFileStore)
        let report = try store.verify()
        #expect(report.isClean, "\(report.problems)")
    }
}
