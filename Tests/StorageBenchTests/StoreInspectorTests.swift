import Foundation
import OpenCoreData
import Testing

/// opencoredata-store run as a user runs it: output, JSON parsed back, exit statuses, a
/// store another process holds open, and no files left beside missing or foreign paths.
@Suite struct StoreInspectorTests {
    static func inspect(_ arguments: [String]) throws -> BenchRun {
        try StorageBenchProcess.run(arguments, tool: "opencoredata-store")
    }

    static func model() -> NSManagedObjectModel {
        func attribute(_ name: String, _ type: NSAttributeType, indexed: Bool = false) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.isIndexed = indexed
            return attribute
        }
        let person = NSEntityDescription()
        person.name = "Person"
        let team = NSEntityDescription()
        team.name = "Team"
        let members = NSRelationshipDescription()
        members.name = "members"
        members.destinationEntity = person
        members.maxCount = 0
        let teamOf = NSRelationshipDescription()
        teamOf.name = "team"
        teamOf.destinationEntity = team
        teamOf.maxCount = 1
        members.inverseRelationship = teamOf
        teamOf.inverseRelationship = members
        person.properties = [
            attribute("name", .stringAttributeType), attribute("age", .integer16AttributeType, indexed: true), teamOf,
        ]
        team.properties = [attribute("title", .stringAttributeType), members]
        person.uniquenessConstraints = [["name"]]
        let model = NSManagedObjectModel()
        model.entities = [person, team]
        return model
    }

    /// A store with a team of five people (ages 20, 30, ... 60) and history; the
    /// coordinator is returned so a test can keep the store open.
    static func makeStore(in directory: URL) throws -> (URL, NSPersistentStoreCoordinator) {
        let url = directory.appendingPathComponent("People.store")
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model())
        try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: url,
            options: [NSPersistentHistoryTrackingKey: true as NSNumber, PageFileStoreDurabilityOption: "off"])
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            let team = NSEntityDescription.insertNewObject(forEntityName: "Team", into: context)
            team.setValue("Red", forKey: "title")
            for (index, name) in ["Ada", "Grace", "Alan", "Edsger", "Barbara"].enumerated() {
                let person = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
                person.setValue(name, forKey: "name")
                person.setValue(Int16(20 + 10 * index), forKey: "age")
                person.setValue(team, forKey: "team")
            }
            try context.save()
            let ada = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person")).first {
                $0.value(forKey: "name") as? String == "Ada"
            }
            ada?.setValue(Int16(21), forKey: "age")
            try context.save()
        }
        return (url, coordinator)
    }

    static func withStore(keepOpen: Bool = false, _ body: (URL) throws -> Void) throws {
        let directory = try StorageBenchProcess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (url, coordinator) = try makeStore(in: directory)
        if !keepOpen { for store in coordinator.persistentStores { try coordinator.remove(store) } }
        try body(url)
        withExtendedLifetime(coordinator) {}
    }

    @Test func helpListsEveryCommandAndEachHasItsOwn() throws {
        let help = try Self.inspect(["--help"])
        #expect(help.status == 0)
        for command in ["schema", "query", "count", "history", "check", "space", "vacuum", "migrate"] {
            #expect(help.stdout.contains("  \(command) "), "\(command) listed")
            let own = try Self.inspect(["help", command])
            #expect(own.status == 0 && own.stdout.hasPrefix("usage: opencoredata-store \(command)"))
        }
        #expect(try Self.inspect(["query", "--help"]).stdout.contains("example:"))
        let unknown = try Self.inspect(["select"])
        #expect(unknown.status == 2 && unknown.stderr.contains("no command 'select'"))
        #expect(try Self.inspect([]).status == 2)
    }

    @Test func schemaShowsEntitiesPropertiesAndConstraints() throws {
        try Self.withStore { url in
            let text = try Self.inspect(["schema", url.path])
            #expect(text.status == 0, "\(text.stderr)")
            #expect(text.stdout.contains("entity Person"))
            #expect(text.stdout.contains("age: Integer 16 indexed"))
            #expect(text.stdout.contains("team: to-one Team (nullify, inverse members)"))
            #expect(text.stdout.contains("unique: name"))
            let json = try Self.inspect(["schema", url.path, "--json"])
            let parsed = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
            let entities = try #require(parsed["entities"] as? [[String: Any]])
            #expect(entities.compactMap { $0["name"] as? String } == ["Person", "Team"])
            #expect((parsed["modelVersionChecksum"] as? String)?.isEmpty == false)
        }
    }

    @Test func queryFiltersSortsLimitsAndPrintsJSON() throws {
        try Self.withStore { url in
            let table = try Self.inspect([
                "query", url.path, "Person", "age >= 30", "--sort", "age:desc", "--limit", "2",
            ])
            #expect(table.status == 0, "\(table.stderr)")
            let lines = table.stdout.split(separator: "\n").map(String.init)
            #expect(lines.first?.hasPrefix("objectID") == true && lines.first?.contains("age") == true)
            #expect(lines.count == 5, "header, rule, two rows, the count: \(lines)")
            #expect(lines[2].contains("Barbara") && lines[3].contains("Edsger"))
            #expect(lines.last == "(2 objects)")
            let json = try Self.inspect([
                "query", url.path, "Person", "name BEGINSWITH[c] 'a'", "--sort", "name", "--json",
            ])
            let rows = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
            #expect(rows.compactMap { $0["name"] as? String } == ["Ada", "Alan"])
            #expect(rows.compactMap { $0["age"] as? Int } == [21, 40])
            #expect((rows.first?["team"] as? String)?.hasPrefix("x-coredata://") == true, "relationships as object IDs")
            let teams = try Self.inspect(["query", url.path, "Team", "--json"])
            let team = try #require(
                (try JSONSerialization.jsonObject(with: Data(teams.stdout.utf8)) as? [[String: Any]])?.first)
            #expect((team["members"] as? [String])?.count == 5)
        }
    }

    @Test func countAndItsErrors() throws {
        try Self.withStore { url in
            let all = try Self.inspect(["count", url.path, "Person"])
            #expect(all.status == 0 && all.stdout == "5\n")
            #expect(try Self.inspect(["count", url.path, "Person", "age BETWEEN {25, 45}"]).stdout == "2\n")
            let badPredicate = try Self.inspect(["count", url.path, "Person", "age >>> 3"])
            #expect(badPredicate.status == 1 && badPredicate.stderr.contains("the predicate does not parse"))
            let badEntity = try Self.inspect(["count", url.path, "Dog"])
            #expect(badEntity.status == 1 && badEntity.stderr.contains("no entity 'Dog' (it has: Person, Team)"))
            let badKey = try Self.inspect(["count", url.path, "Person", "shoeSize > 3"])
            #expect(badKey.status == 1 && badKey.stderr.contains("shoeSize"))
            #expect(try Self.inspect(["count", url.path]).status == 2)
            #expect(try Self.inspect(["query", url.path, "Person", "--limit", "x"]).status == 2)
        }
    }

    @Test func historyListsTransactionsAndTheirChanges() throws {
        try Self.withStore { url in
            let text = try Self.inspect(["history", url.path])
            #expect(text.status == 0, "\(text.stderr)")
            #expect(text.stdout.contains("  insert x-coredata://"))
            #expect(text.stdout.contains("  update x-coredata://") && text.stdout.contains("(age)"))
            #expect(text.stdout.hasSuffix("(2 transactions)\n"))
            let json = try Self.inspect(["history", url.path, "--json"])
            let transactions = try #require(
                try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
            #expect(transactions.count == 2)
            #expect((transactions.first?["changes"] as? [[String: Any]])?.count == 6)
            let first = try #require(transactions.first?["transaction"] as? Int)
            let later = try Self.inspect(["history", url.path, "--after", "\(first)", "--json"])
            #expect((try JSONSerialization.jsonObject(with: Data(later.stdout.utf8)) as? [Any])?.count == 1)
        }
    }

    @Test func checkSpaceAndVacuum() throws {
        try Self.withStore { url in
            let check = try Self.inspect(["check", url.path])
            #expect(check.status == 0 && check.stdout.contains("is sound"), "\(check.stderr)")
            #expect(try Self.inspect(["space", url.path]).status == 0)
            let vacuum = try Self.inspect(["vacuum", url.path])
            #expect(vacuum.status == 0 && vacuum.stdout.contains("bytes ->"), "\(vacuum.stderr)")
            #expect(
                try Self.inspect(["count", url.path, "Person"]).stdout == "5\n", "the vacuumed store reads the same")
            #expect(try Self.inspect(["check", url.path]).status == 0)
        }
    }

    @Test func aStoreAnotherProcessHasOpenIsReadFromASnapshot() throws {
        try Self.withStore(keepOpen: true) { url in
            let count = try Self.inspect(["count", url.path, "Person", "age > 25"])
            #expect(count.status == 0 && count.stdout == "4\n", "\(count.stderr)")
            let check = try Self.inspect(["check", url.path])
            #expect(check.status == 0 && check.stdout.contains("snapshot"), "\(check.stderr)")
            let vacuum = try Self.inspect(["vacuum", url.path])
            #expect(vacuum.status == 1 && vacuum.stderr.contains("in use"), "\(vacuum.stderr)")
            let files = try FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path)
            #expect(Set(files) == ["People.store", "People.store-wal", "People.store-lock"], "\(files)")
        }
    }

    @Test func missingAndForeignPathsLeaveNoFiles() throws {
        let directory = try StorageBenchProcess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let missing = directory.appendingPathComponent("missing.store").path
        for command in [
            ["schema", missing], ["count", missing, "Person"], ["check", missing], ["history", missing],
        ] {
            let run = try Self.inspect(command)
            #expect(run.status == 1 && run.stderr.contains("no such file"), "\(command): \(run.stderr)")
        }
        let foreign = directory.appendingPathComponent("notes.txt")
        try Data("these are not the pages you are looking for".utf8).write(to: foreign)
        for command in [["schema", foreign.path], ["query", foreign.path, "Person"], ["check", foreign.path]] {
            #expect(try Self.inspect(command).status == 1, "\(command)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["notes.txt"])
    }

    @Test func migrateIsADryRunOnly() throws {
        try Self.withStore { url in
            let bare = try Self.inspect(["migrate", url.path])
            #expect(bare.status == 2 && bare.stderr.contains("only --dry-run"))
            let noModel = try Self.inspect(["migrate", url.path, "--dry-run"])
            #expect(noModel.status == 2 && noModel.stderr.contains("--model"))
        }
    }
}
