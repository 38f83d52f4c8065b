import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

/// Random interleavings of saves from a writing context and a stale one, under random
/// merge policies, give the same results on every store type: the same saves succeed
/// or fail with the same error, and the stores end holding the same objects.
@Suite struct ConflictDifferentialTests {
    static let storeTypes = [NSInMemoryStoreType, NSSQLiteStoreType, NSBinaryStoreType]
    static let policyTypes: [NSMergePolicyType] = [
        .errorMergePolicyType, .mergeByPropertyStoreTrumpMergePolicyType, .mergeByPropertyObjectTrumpMergePolicyType,
        .overwriteMergePolicyType, .rollbackMergePolicyType,
    ]

    /// One step of a script; `person` picks among the emails used so far.
    enum Step {
        case writerInserts(email: Int)
        case writerUpdates(person: Int, age: Int)
        case writerDeletes(person: Int)
        case staleReads(person: Int)
        case staleUpdates(person: Int, age: Int, lastName: String)
        case staleDeletes(person: Int)
        case staleInserts(email: Int, firstName: String)
        case staleSaves(NSMergePolicyType)
        /// Team 0 or 1, or none (2).
        case writerJoins(person: Int, team: Int)
        case staleJoins(person: Int, team: Int)
    }

    static func script(_ random: inout SeededRandom, length: Int) -> [Step] {
        var steps: [Step] = []
        var emails = 0
        for _ in 0..<length {
            let person = random.int(in: 0...max(0, emails - 1))
            switch random.int(in: 0...11) {
            case 0, 1:
                steps.append(.writerInserts(email: emails))
                emails += 1
            case 2: steps.append(.writerUpdates(person: person, age: random.int(in: 1...99)))
            case 3: steps.append(.writerDeletes(person: person))
            case 4, 5: steps.append(.staleReads(person: person))
            case 6: steps.append(.staleUpdates(person: person, age: random.int(in: 1...99), lastName: "L\(person)"))
            case 7: steps.append(.staleDeletes(person: person))
            case 8:
                // A new email or one in use: a uniqueness clash.
                let email = random.chance(0.5) ? person : emails
                if email == emails { emails += 1 }
                steps.append(.staleInserts(email: email, firstName: "S\(steps.count)"))
            case 9: steps.append(.writerJoins(person: person, team: random.int(in: 0...2)))
            case 10: steps.append(.staleJoins(person: person, team: random.int(in: 0...2)))
            default: steps.append(.staleSaves(random.pick(policyTypes)))
            }
        }
        steps.append(.staleSaves(random.pick(policyTypes)))
        return steps
    }

    static func email(_ number: Int) -> String { "p\(number)@x" }

    /// A subclass overriding nothing: conflicts take the path a subclass's do (uniqueness
    /// clashes reported to the policy, then the save built again), with the same results.
    final class SubclassedPolicy: NSMergePolicy, @unchecked Sendable {}

    /// Runs `steps` on a store of `storeType`: the outcome of every save, then the stored people.
    static func run(_ steps: [Step], storeType: String, subclassed: Bool = false) throws -> [String] {
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = try PageFileFixtures.coordinator(PageFileFixtures.peopleModel, url, type: storeType)
        let writer = PageFileFixtures.context(coordinator)
        let stale = PageFileFixtures.context(coordinator)
        var log: [String] = []
        func find(_ context: NSManagedObjectContext, _ number: Int) throws -> NSManagedObject? {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
            request.predicate = NSPredicate(format: "email == %@", email(number))
            return try context.fetch(request).first
        }
        /// The stale context's newest stored object with that email, when registered and not
        /// deleted (objects it inserts share emails: those are the clashes; older ones may be
        /// registered still after their rows were deleted).
        func registered(_ number: Int) -> NSManagedObject? {
            stale.registeredObjects.filter {
                $0.entity.name == "Person" && !$0.isInserted && !$0.isDeleted
                    && ($0.value(forKey: "email") as? String) == email(number)
            }.max { $0.objectID.key < $1.objectID.key }
        }
        func save(_ context: NSManagedObjectContext) -> String {
            do {
                try context.save()
                return "ok"
            } catch {
                context.rollback()
                return "\((error as NSError).code)"
            }
        }
        for title in ["T0", "T1"] {
            NSEntityDescription.insertNewObject(forEntityName: "Team", into: writer).setValue(title, forKey: "title")
        }
        try writer.save()
        func team(_ context: NSManagedObjectContext, _ number: Int) throws -> NSManagedObject? {
            guard number < 2 else { return nil }
            let request = NSFetchRequest<NSManagedObject>(entityName: "Team")
            request.predicate = NSPredicate(format: "title == %@", "T\(number)")
            return try context.fetch(request).first
        }
        for step in steps {
            switch step {
            case .writerJoins(let number, let teamNumber):
                guard let person = try find(writer, number) else { continue }
                person.setValue(try team(writer, teamNumber), forKey: "team")
                log.append("wt \(save(writer))")
            case .staleJoins(let number, let teamNumber):
                guard let person = registered(number) else { continue }
                person.setValue(try team(stale, teamNumber), forKey: "team")
            case .writerInserts(let number):
                PageFileFixtures.person(writer, "W", "W", 1, email(number))
                log.append("w+ \(save(writer))")
            case .writerUpdates(let number, let age):
                guard let person = try find(writer, number) else { continue }
                person.setValue(Int16(age), forKey: "age")
                log.append("w~ \(save(writer))")
            case .writerDeletes(let number):
                guard let person = try find(writer, number) else { continue }
                writer.delete(person)
                log.append("w- \(save(writer))")
            case .staleReads(let number):
                _ = try find(stale, number)
            case .staleUpdates(let number, let age, let lastName):
                // Only objects already registered: they may be stale.
                guard
                    let person = registered(number)
                else { continue }
                person.setValue(Int16(age), forKey: "age")
                person.setValue(lastName, forKey: "lastName")
            case .staleDeletes(let number):
                guard
                    let person = registered(number)
                else { continue }
                stale.delete(person)
            case .staleInserts(let number, let firstName):
                PageFileFixtures.person(stale, firstName, "S", 2, email(number))
            case .staleSaves(let type):
                stale.mergePolicy = subclassed ? SubclassedPolicy(merge: type) : NSMergePolicy(merge: type)
                log.append("s \(type.rawValue) \(save(stale))")
            }
        }
        let reader = PageFileFixtures.context(coordinator)
        let people = try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person")).map { person in
            [
                person.value(forKey: "email") as? String ?? "nil",
                person.value(forKey: "firstName") as? String ?? "nil",
                person.value(forKey: "lastName") as? String ?? "nil",
                "\((person.value(forKey: "age") as? Int16).map(Int.init) ?? -1)",
                (person.value(forKey: "team") as? NSManagedObject)?.value(forKey: "title") as? String ?? "-",
            ].joined(separator: ",")
        }
        // The to-many side as each store holds it: the default store derives a one-to-many
        // from its inverse (SPEC.md §3.2 R1), the in-memory and binary stores keep the list
        // in the row; after every merge both sides agree in every store.
        let teams = try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Team")).map { team in
            let members = (team.value(forKey: "members") as? Set<NSManagedObject> ?? []).map {
                $0.value(forKey: "email") as? String ?? "nil"
            }
            return "\(team.value(forKey: "title") as? String ?? "nil"): \(members.sorted().joined(separator: " "))"
        }
        let byToOne = Dictionary(grouping: people.map { $0.split(separator: ",", omittingEmptySubsequences: false) }) {
            String($0[4])
        }
        let teamsFromToOne = try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Team")).map { team in
            let title = team.value(forKey: "title") as? String ?? "nil"
            let members = (byToOne[title] ?? []).map { String($0[0]) }
            return "\(title): \(members.sorted().joined(separator: " "))"
        }
        if let store = coordinator.persistentStores.first as? PageFileStore {
            log.append("verify \(try store.verify().isClean)")
        }
        log.append("sides agree \(teams.sorted() == teamsFromToOne.sorted())")
        return log + people.sorted() + teamsFromToOne.sorted()
    }

    @Test func everyStoreTypeResolvesTheSameConflictsTheSameWay() throws {
        var random = SeededRandom(environmentOr: 0xC0FF1C7)
        for _ in 0..<12 {
            let steps = Self.script(&random, length: 40)
            let expected = try Self.run(steps, storeType: NSInMemoryStoreType)
            #expect(expected.contains("sides agree true"), "\(random.replayHint)")
            for (storeType, subclassed) in [
                (NSSQLiteStoreType, false), (NSBinaryStoreType, false), (NSInMemoryStoreType, true),
                (NSSQLiteStoreType, true),
            ] {
                var outcome = try Self.run(steps, storeType: storeType, subclassed: subclassed)
                if storeType == NSSQLiteStoreType {
                    #expect(outcome.last(where: { $0.hasPrefix("verify") }) == "verify true", "\(random.replayHint)")
                    outcome.removeAll { $0.hasPrefix("verify") }
                }
                let path = subclassed ? " (subclassed policy)" : ""
                #expect(
                    outcome == expected, "\(storeType)\(path) differs from the in-memory store; \(random.replayHint)")
            }
        }
    }
}
