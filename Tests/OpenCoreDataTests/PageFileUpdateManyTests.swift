// The app's update of many rows in one save: the store writes them in key order through
// one editor per row tree and removes the replaced entries of ordinary attribute indexes
// in one sorted walk (PageFileWriter+InPlace.swift). Rows that grow past their leaf's
// room, rows that shrink, indexed values that move, come back to where they were or stay,
// to-ones that move between teams and unique keys that change must leave every index,
// the inverse to-many and the rows exactly as a save of each change alone would.
import Foundation
import OpenCoreData
import TestSupport
import Testing

@Suite struct PageFileUpdateManyTests {
    /// What the test expects of person `index` after `round` rounds of changes.
    struct Expected: Equatable {
        var age: Int16
        var lastName: String
        var team: Int
        var email: String
    }

    static func change(_ expected: inout Expected, index: Int, round: Int) {
        switch (index + round) % 5 {
        case 0: expected.age = Int16((index * 7 + round) % 40)
        case 1: expected.lastName = String(repeating: "Long\(round)", count: 1 + (index % 9) * 6)
        case 2: expected.lastName = "L\(index % 3)"
        case 3: expected.team = (expected.team + 1 + round) % 5
        default:
            expected.email = "p\(index)-r\(round)@example.com"
            expected.age = Int16((expected.age + 1) % 40)
        }
    }

    @Test func updatingManyInOneSaveLeavesExactlyTheChangedEntries() throws {
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = try PageFileFixtures.coordinator(PageFileFixtures.peopleModel, url)
        let context = PageFileFixtures.context(coordinator)
        var expected: [Expected] = []
        try context.performAndWait {
            let teams = (0..<5).map { index in
                NSEntityDescription.insertNewObject(forEntityName: "Team", into: context).with(title: "Team \(index)")
            }
            for index in 0..<400 {
                let entry = Expected(
                    age: Int16(index % 40), lastName: "Last\(index % 11)", team: index % 5,
                    email: "p\(index)@example.com")
                let person = PageFileFixtures.person(context, "First\(index)", entry.lastName, entry.age, entry.email)
                person.setValue(teams[entry.team], forKey: "team")
                expected.append(entry)
            }
            try context.save()
            for round in 1...3 {
                context.reset()
                let teams = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Team"))
                    .sorted {
                        ($0.value(forKey: "title") as? String ?? "") < ($1.value(forKey: "title") as? String ?? "")
                    }
                let people = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
                #expect(people.count == expected.count)
                for person in people {
                    let index = try #require(Int((person.value(forKey: "firstName") as? String ?? "").dropFirst(5)))
                    // Every third person stays as it is this round.
                    guard (index + round) % 3 != 0 else { continue }
                    Self.change(&expected[index], index: index, round: round)
                    let entry = expected[index]
                    person.setValue(entry.age, forKey: "age")
                    person.setValue(entry.lastName, forKey: "lastName")
                    person.setValue(teams[entry.team], forKey: "team")
                    person.setValue(entry.email, forKey: "email")
                }
                try context.save()
                context.reset()
                try Self.expect(context, holds: expected, round: round)
            }
        }
        let store = try #require(coordinator.persistentStores.first as? PageFileStore)
        let report = try store.verify()
        #expect(report.isClean, "\(report.problems)")
    }

    /// Every index answers as the expected rows say.
    static func expect(_ context: NSManagedObjectContext, holds expected: [Expected], round: Int) throws {
        for age in 0..<40 {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
            request.predicate = NSPredicate(format: "age == %d", age)
            let fetched = try context.fetch(request).compactMap { $0.value(forKey: "firstName") as? String }.sorted()
            let wanted = expected.indices.filter { expected[$0].age == Int16(age) }.map { "First\($0)" }.sorted()
            #expect(fetched == wanted, "round \(round): age \(age)")
        }
        for lastName in Set(expected.map(\.lastName)) {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
            request.predicate = NSPredicate(format: "lastName == %@ AND firstName BEGINSWITH %@", lastName, "First")
            let count = expected.filter { $0.lastName == lastName }.count
            #expect(try context.count(for: request) == count, "round \(round): lastName \(lastName.prefix(12))")
        }
        for (index, entry) in expected.enumerated() where index % 7 == round {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
            request.predicate = NSPredicate(format: "email == %@", entry.email)
            let found = try context.fetch(request)
            #expect(found.count == 1, "round \(round): email of \(index)")
            #expect(found.first?.value(forKey: "lastName") as? String == entry.lastName, "round \(round): row \(index)")
        }
        for team in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Team")) {
            let title = try #require(team.value(forKey: "title") as? String)
            let number = try #require(Int(title.dropFirst(5)))
            let members = try #require(team.value(forKey: "members") as? Set<NSManagedObject>)
            #expect(members.count == expected.filter { $0.team == number }.count, "round \(round): \(title)")
        }
    }
}

extension NSManagedObject {
    /// The object, its `title` set (a team of the people model).
    fileprivate func with(title: String) -> NSManagedObject {
        setValue(title, forKey: "title")
        return self
    }
}
