// The object layer's fast paths give the answers of the paths they replace: a to-many
// edited in place (inverse maintenance) leaves the committed values, a caller's copy and
// rollback as they were; a count on the default store without a usable index counts
// encoded rows and agrees with the fetch; predicate formats tokenized from the cache parse
// with each call's own arguments.
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

struct ObjectLayerFastPathTests {
    /// A saved company with three employees, fetched into a fresh context.
    private static func savedCompany() throws -> (NSManagedObjectContext, TCompany) {
        let coordinator = try TestStack.coordinator()
        let writer = TestStack.context(coordinator)
        let company = TCompany(context: writer)
        company.name = "Acme"
        for index in 0..<3 {
            let employee = TEmployee(context: writer)
            employee.name = "E\(index)"
            employee.company = company
        }
        try writer.save()
        let context = TestStack.context(coordinator)
        let fetched = try context.fetch(TestStack.request("Company", TCompany.self))
        return (context, try #require(fetched.first))
    }

    @Test func inverseAddInPlaceKeepsCommittedValuesAndCopies() throws {
        let (context, company) = try Self.savedCompany()
        let before = company.employees
        let newcomer = TEmployee(context: context)
        newcomer.name = "New"
        newcomer.company = company
        #expect(before.count == 3)
        #expect(company.employees.count == 4)
        #expect(company.employees.contains(newcomer))
        let committed = company.committedValues(forKeys: ["employees"])["employees"]
        #expect((committed as? Set<NSManagedObject>)?.count == 3)
        #expect(company.changedValues().keys.contains("employees"))
        newcomer.company = nil
        #expect(company.employees.count == 3)
        #expect(!company.employees.contains(newcomer))
        newcomer.company = company
        context.rollback()
        #expect(company.employees.count == 3)
        #expect(company.employees.allSatisfy { $0.name?.hasPrefix("E") == true })
    }

    @Test func inverseRemoveInPlaceSavesAndRollsBack() throws {
        let (context, company) = try Self.savedCompany()
        let leaver = try #require(company.employees.first { $0.name == "E1" })
        leaver.company = nil
        #expect(company.employees.count == 2)
        context.rollback()
        #expect(company.employees.count == 3)
        #expect(leaver.company === company)
        leaver.company = nil
        try context.save()
        let reader = TestStack.context(try #require(context.persistentStoreCoordinator))
        let names = try reader.fetch(TestStack.request("Company", TCompany.self)).first?.employees.compactMap(\.name)
        #expect(Set(names ?? []) == ["E0", "E2"])
    }

    static let model: NSManagedObjectModel = PageFileEncodedScanTests.model

    @Test func unindexedCountsAgreeWithFetchesOnTheDefaultStore() throws {
        var random = SeededRandom(environmentOr: 4_711)
        let directory = try TestScratch.directory("fastpath")
        defer { try? FileManager.default.removeItem(at: directory) }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.model)
        try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: directory.appendingPathComponent("store"),
            options: [PageFileStoreDurabilityOption: "off"])
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let keys = ["name", "age", "score", "born", "flag", "note"]
        for _ in 0..<300 {
            let object = NSManagedObject(
                entity: try #require(Self.model.entitiesByName["Person"]), insertInto: context)
            for (slot, key) in keys.enumerated() {
                switch PageFileEncodedScanTests.randomValue(slot, &random) {
                case .string(let text): object.setValue(text, forKey: key)
                case .integer(let number): object.setValue(Int16(number), forKey: key)
                case .double(let number): object.setValue(number, forKey: key)
                case .date(let date): object.setValue(date, forKey: key)
                case .boolean(let flag): object.setValue(flag, forKey: key)
                default: break
                }
            }
        }
        try context.save()
        context.reset()
        var compared = 0
        for _ in 0..<150 {
            let predicate = PageFileEncodedScanTests.randomPredicate(&random)
            guard predicate.validationError == nil else { continue }
            let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
            request.predicate = predicate
            let hint = "\(predicate.predicateFormat) (\(random.replayHint))"
            switch (Result { try context.fetch(request).count }, Result { try context.count(for: request) }) {
            case (.success(let fetched), .success(let counted)):
                #expect(fetched == counted, "\(hint)")
                compared += 1
            case (.failure, .failure): break
            case (let fetched, let counted): Issue.record("fetch \(fetched) but count \(counted): \(hint)")
            }
            context.reset()
        }
        #expect(compared > 100)
    }

    @Test func cachedFormatsBindEachCallsArguments() throws {
        let people: [[String: Any]] = [["age": 10, "name": "Ada"], ["age": 40, "name": "Alan"]]
        for (bound, expected) in [(5, 2), (20, 1), (50, 0)] {
            let predicate = NSPredicate(format: "age > %d", bound)
            #expect(people.filter { predicate.evaluate(with: $0) }.count == expected)
        }
        // More formats than the cache keeps: every one still parses with its own arguments.
        for index in 0..<(PredicateFormatCache.limit + 20) {
            let predicate = NSPredicate(format: "age > %d AND name != 'x\(index)'", 30)
            #expect(people.filter { predicate.evaluate(with: $0) }.count == 1)
        }
        #expect(NSPredicate(format: "name == %@", "Ada").evaluate(with: people[0]))
        #expect(!NSPredicate(format: "name == %@", "Alan").evaluate(with: people[0]))
        // A malformed format is refused every time, never cached as if it parsed.
        for _ in 0..<2 { #expect(NSPredicate(format: "age >> %d", 3).validationError != nil) }
        let long = (0..<80).map { "age != \($0)" }.joined(separator: " AND ")
        #expect(NSPredicate(format: long).evaluate(with: people[1]) == false)
        #expect(NSPredicate(format: long + " OR TRUEPREDICATE").evaluate(with: people[1]))
    }
}
