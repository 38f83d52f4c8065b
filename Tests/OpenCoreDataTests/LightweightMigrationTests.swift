// Lightweight migration on the stores that migrate (the default store and the binary
// store): every change Apple's guide lists as inferable keeps every value, and every
// change it cannot infer fails naming the entity and the property, leaving the store
// byte for byte as it was.
import Foundation
import Testing

@testable import OpenCoreData

enum MigrationFixtures {
    static let stores = [NSSQLiteStoreType, NSBinaryStoreType]

    static var automatic: [AnyHashable: Any] {
        [
            NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true,
            PageFileStoreDurabilityOption: "off",
        ]
    }

    static func entity(_ name: String, _ properties: [NSPropertyDescription], renamedFrom: String? = nil)
        -> NSEntityDescription
    {
        let entity = NSEntityDescription()
        entity.name = name
        entity.renamingIdentifier = renamedFrom
        entity.properties = properties
        return entity
    }

    static func attribute(
        _ name: String, _ type: NSAttributeType, optional: Bool = true, defaultValue: Any? = nil,
        renamedFrom: String? = nil
    ) -> NSAttributeDescription {
        let attribute = TestStack.attribute(name, type, optional: optional, defaultValue: defaultValue)
        attribute.renamingIdentifier = renamedFrom
        return attribute
    }

    static func model(_ entities: [NSEntityDescription], version: String = "") -> NSManagedObjectModel {
        let model = NSManagedObjectModel()
        model.entities = entities
        if !version.isEmpty { model.versionIdentifiers = [version] }
        return model
    }

    /// A coordinator with one store of `type` at `url` for `model`.
    static func open(
        _ model: NSManagedObjectModel, _ url: URL, type: String, options: [AnyHashable: Any] = automatic
    ) throws -> NSPersistentStoreCoordinator {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: url, options: options)
        return coordinator
    }

    /// Runs `body` with a context on a store of `model`, then closes the store.
    static func with<T>(
        _ model: NSManagedObjectModel, _ url: URL, type: String, options: [AnyHashable: Any] = automatic,
        _ body: (NSManagedObjectContext) throws -> T
    ) throws -> T {
        let coordinator = try open(model, url, type: type, options: options)
        defer { try? PageFileFixtures.close(coordinator) }
        let context = PageFileFixtures.context(coordinator)
        return try body(context)
    }

    static func insert(_ entity: String, _ values: [String: Any?], into context: NSManagedObjectContext)
        -> NSManagedObject
    {
        let object = NSEntityDescription.insertNewObject(forEntityName: entity, into: context)
        for (key, value) in values { object.setValue(value, forKey: key) }
        return object
    }

    static func fetch(_ entity: String, _ context: NSManagedObjectContext, sortedBy key: String) throws
        -> [NSManagedObject]
    {
        let request = NSFetchRequest<NSManagedObject>(entityName: entity)
        request.sortDescriptors = [NSSortDescriptor(key: key, ascending: true)]
        return try context.fetch(request)
    }

    /// The bytes of every file of the store at `url`.
    static func files(_ url: URL) throws -> [String: Data] {
        var result: [String: Data] = [:]
        for suffix in ["", "-wal", "-new", "-migrating"] {
            let path = url.path + suffix
            if FileManager.default.fileExists(atPath: path) {
                result[suffix] = try Data(contentsOf: URL(fileURLWithPath: path))
            }
        }
        return result
    }

    static func scratch(_ type: String) throws -> URL {
        try PageFileFixtures.temporaryURL("\(type).store")
    }
}

@Suite struct LightweightMigrationTests {
    typealias F = MigrationFixtures

    /// Person: name, age (Integer 16), nickname, born.
    static func people(ageType: NSAttributeType = .integer16AttributeType) -> NSManagedObjectModel {
        F.model([
            F.entity(
                "Person",
                [
                    F.attribute("name", .stringAttributeType), F.attribute("age", ageType),
                    F.attribute("nickname", .stringAttributeType), F.attribute("born", .dateAttributeType),
                ])
        ])
    }

    static func seedPeople(_ url: URL, type: String) throws {
        try F.with(people(), url, type: type) { context in
            for (index, name) in ["Ann", "Bob", "Cy"].enumerated() {
                _ = F.insert(
                    "Person",
                    [
                        "name": name, "age": Int16(30 + index), "nickname": index == 1 ? nil : "n\(index)",
                        "born": Date(timeIntervalSince1970: Double(index) * 1000),
                    ], into: context)
            }
            try context.save()
        }
    }

    @Test(arguments: F.stores)
    func aTypeChangeFailsNamingEntityAndPropertyAndLeavesTheStoreAsItWas(type: String) throws {
        let url = try F.scratch(type)
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        try Self.seedPeople(url, type: type)
        let before = try F.files(url)
        for changed in [NSAttributeType.stringAttributeType, .integer32AttributeType, .doubleAttributeType] {
            #expect {
                _ = try F.open(Self.people(ageType: changed), url, type: type)
            } throws: { error in
                let error = error as NSError
                return error.code == NSMigrationMissingMappingModelError
                    && error.userInfo["entity"] as? String == "Person"
                    && error.userInfo["property"] as? String == "age"
                    && error.localizedDescription.contains("Person.age")
            }
            #expect(try F.files(url) == before, "\(type): the files are byte for byte as they were")
            #expect {
                _ = try NSMappingModel.inferredMappingModel(
                    forSourceModel: Self.people(), destinationModel: Self.people(ageType: changed))
            } throws: { ($0 as NSError).code == NSInferredMappingModelError }
        }
        let ages = try F.with(Self.people(), url, type: type, options: [:]) { context in
            try F.fetch("Person", context, sortedBy: "name").map { $0.value(forKey: "age") as? Int16 }
        }
        #expect(ages == [30, 31, 32], "\(type): the old model still reads every value")
    }

    @Test(arguments: F.stores)
    func renamedAttributesAndEntitiesKeepTheirValues(type: String) throws {
        let url = try F.scratch(type)
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        try Self.seedPeople(url, type: type)
        let renamed = F.model([
            F.entity(
                "Member",
                [
                    F.attribute("fullName", .stringAttributeType, renamedFrom: "name"),
                    F.attribute("age", .integer16AttributeType),
                    F.attribute("alias", .stringAttributeType, renamedFrom: "nickname"),
                    F.attribute("birthday", .dateAttributeType, renamedFrom: "born"),
                ], renamedFrom: "Person")
        ])
        try F.with(renamed, url, type: type) { context in
            let members = try F.fetch("Member", context, sortedBy: "fullName")
            #expect(members.map { $0.value(forKey: "fullName") as? String } == ["Ann", "Bob", "Cy"])
            #expect(members.map { $0.value(forKey: "alias") as? String } == ["n0", nil, "n2"])
            #expect(members.map { $0.value(forKey: "age") as? Int16 } == [30, 31, 32])
            #expect(
                members.map { $0.value(forKey: "birthday") as? Date }
                    == [0, 1000, 2000].map { Date(timeIntervalSince1970: $0) })
        }
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: type, at: url, options: nil)
        #expect(renamed.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        #expect(!Self.people().isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
    }

    @Test(arguments: F.stores)
    func optionalToMandatoryTakesTheDefaultOrFailsWithoutOne(type: String) throws {
        let url = try F.scratch(type)
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        try Self.seedPeople(url, type: type)
        let before = try F.files(url)
        let withoutDefault = F.model([
            F.entity(
                "Person",
                [
                    F.attribute("name", .stringAttributeType), F.attribute("age", .integer16AttributeType),
                    F.attribute("nickname", .stringAttributeType, optional: false),
                    F.attribute("born", .dateAttributeType),
                ])
        ])
        // Bob has no nickname: Core Data's validation failure during migration, 134110.
        #expect {
            _ = try F.open(withoutDefault, url, type: type)
        } throws: { error in
            let error = error as NSError
            return error.code == NSMigrationError && error.userInfo["entity"] as? String == "Person"
                && error.userInfo["attribute"] as? String == "nickname"
                && (error.userInfo["reason"] as? String)?.contains("mandatory destination attribute") == true
        }
        #expect(try F.files(url) == before, "\(type): the files are byte for byte as they were")
        let withDefault = F.model([
            F.entity(
                "Person",
                [
                    F.attribute("name", .stringAttributeType), F.attribute("age", .integer16AttributeType),
                    F.attribute("nickname", .stringAttributeType, optional: false, defaultValue: "none"),
                    F.attribute("born", .dateAttributeType),
                ])
        ])
        let nicknames = try F.with(withDefault, url, type: type) { context in
            try F.fetch("Person", context, sortedBy: "name").map { $0.value(forKey: "nickname") as? String }
        }
        #expect(nicknames == ["n0", "none", "n2"])
    }

    @Test(arguments: F.stores)
    func addedAndRemovedAttributesAndEntities(type: String) throws {
        let url = try F.scratch(type)
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        try Self.seedPeople(url, type: type)
        let next = F.model([
            F.entity(
                "Person",
                [
                    F.attribute("name", .stringAttributeType), F.attribute("age", .integer16AttributeType),
                    F.attribute("level", .integer32AttributeType, optional: false, defaultValue: Int32(1)),
                    F.attribute("note", .stringAttributeType),
                ]),
            F.entity("Badge", [F.attribute("code", .stringAttributeType)]),
        ])
        try F.with(next, url, type: type) { context in
            let people = try F.fetch("Person", context, sortedBy: "name")
            #expect(people.map { $0.value(forKey: "level") as? Int32 } == [1, 1, 1])
            #expect(people.map { $0.value(forKey: "note") as? String } == [nil, nil, nil])
            #expect(people.map { $0.value(forKey: "age") as? Int16 } == [30, 31, 32])
            #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Badge")) == 0)
            _ = F.insert("Badge", ["code": "x"], into: context)
            let third = F.insert("Person", ["name": "Dee", "age": Int16(5)], into: context)
            try context.save()
            #expect(third.objectID.uriRepresentation() != people[0].objectID.uriRepresentation())
        }
    }
}

/// Relationships and hierarchies through lightweight migration.
@Suite struct LightweightRelationshipMigrationTests {
    typealias F = MigrationFixtures

    /// Team -< Player (to-one `team`, inverse to-many `players`, ordered when asked),
    /// Player >-< Tag (many-to-many, no inverse from Tag when `tagsHaveInverse` is false).
    static func league(
        teamName: String = "Team", teamRenamedFrom: String? = nil, playersOrdered: Bool = false,
        playerTeamToMany: Bool = false, playersName: String = "players", playersRenamedFrom: String? = nil
    ) -> NSManagedObjectModel {
        let team = F.entity(teamName, [F.attribute("name", .stringAttributeType)], renamedFrom: teamRenamedFrom)
        let player = F.entity("Player", [F.attribute("name", .stringAttributeType)])
        let players = TestStack.relationship(playersName, to: player, toMany: true, ordered: playersOrdered)
        players.renamingIdentifier = playersRenamedFrom
        let playerTeam = TestStack.relationship(playerTeamToMany ? "teams" : "team", to: team, toMany: playerTeamToMany)
        playerTeam.renamingIdentifier = "team"
        TestStack.pair(players, playerTeam)
        team.properties.append(players)
        player.properties.append(playerTeam)
        return F.model([team, player])
    }

    static func seed(_ url: URL, type: String, model: NSManagedObjectModel = league(playersOrdered: true)) throws {
        try F.with(model, url, type: type) { context in
            let red = F.insert("Team", ["name": "Red"], into: context)
            let blue = F.insert("Team", ["name": "Blue"], into: context)
            _ = F.insert("Team", ["name": "Empty"], into: context)
            let players = ["p1", "p2", "p3", "p4"].map { F.insert("Player", ["name": $0], into: context) }
            if model.entitiesByName["Team"]?.relationshipsByName["players"]?.isOrdered == true {
                red.mutableOrderedSetValue(forKey: "players").addObjects(from: [players[2], players[0], players[1]])
            } else {
                red.mutableSetValue(forKey: "players").addObjects(from: [players[2], players[0], players[1]])
            }
            blue.mutableSetValue(forKey: "players").add(players[3])
            try context.save()
        }
    }

    func names(_ value: Any?) -> [String] {
        let objects: [NSManagedObject]
        switch value {
        case let set as NSOrderedSet: objects = set.array.compactMap { $0 as? NSManagedObject }
        case let set as Set<NSManagedObject>:
            objects = set.sorted {
                ($0.value(forKey: "name") as? String ?? "") < ($1.value(forKey: "name") as? String ?? "")
            }
        case let array as [NSManagedObject]: objects = array
        case let object as NSManagedObject: objects = [object]
        default: objects = []
        }
        return objects.compactMap { $0.value(forKey: "name") as? String }
    }

    @Test(arguments: F.stores)
    func orderedToUnorderedAndBackKeepsEveryDestination(type: String) throws {
        let url = try F.scratch(type)
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        try Self.seed(url, type: type)
        try F.with(Self.league(playersOrdered: false), url, type: type) { context in
            let teams = try F.fetch("Team", context, sortedBy: "name")
            #expect(teams.map { names($0.value(forKey: "players")) } == [["p4"], [], ["p1", "p2", "p3"]])
            let players = try F.fetch("Player", context, sortedBy: "name")
            #expect(players.map { names($0.value(forKey: "team")) } == [["Red"], ["Red"], ["Red"], ["Blue"]])
        }
        try F.with(Self.league(playersOrdered: true), url, type: type) { context in
            let red = try F.fetch("Team", context, sortedBy: "name")[2]
            #expect(names(red.value(forKey: "players")) == ["p1", "p2", "p3"], "unordered to ordered: key order")
        }
    }

    @Test(arguments: F.stores)
    func renamedEntityAndRelationshipKeepTheirDestinationsAndOrder(type: String) throws {
        let url = try F.scratch(type)
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        try Self.seed(url, type: type)
        let renamed = Self.league(
            teamName: "Club", teamRenamedFrom: "Team", playersOrdered: true, playersName: "roster",
            playersRenamedFrom: "players")
        try F.with(renamed, url, type: type) { context in
            let clubs = try F.fetch("Club", context, sortedBy: "name")
            #expect(clubs.map { names($0.value(forKey: "roster")) } == [["p4"], [], ["p3", "p1", "p2"]])
            let players = try F.fetch("Player", context, sortedBy: "name")
            #expect(players.map { names($0.value(forKey: "team")) } == [["Red"], ["Red"], ["Red"], ["Blue"]])
        }
    }

    @Test(arguments: F.stores)
    func toOneToToManyAndBackFailsOnlyWhenAnObjectHoldsSeveral(type: String) throws {
        let url = try F.scratch(type)
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        try Self.seed(url, type: type)
        let manyToMany = Self.league(playersOrdered: true, playerTeamToMany: true)
        try F.with(manyToMany, url, type: type) { context in
            let players = try F.fetch("Player", context, sortedBy: "name")
            #expect(players.map { names($0.value(forKey: "teams")) } == [["Red"], ["Red"], ["Red"], ["Blue"]])
            let red = try F.fetch("Team", context, sortedBy: "name")[2]
            #expect(names(red.value(forKey: "players")) == ["p3", "p1", "p2"])
            // p4 joins Red too: two teams.
            players[3].mutableSetValue(forKey: "teams").add(red)
            try context.save()
        }
        let before = try F.files(url)
        #expect {
            _ = try F.open(Self.league(playersOrdered: true), url, type: type)
        } throws: { error in
            let error = error as NSError
            return error.code == NSMigrationError && error.userInfo["entity"] as? String == "Player"
                && error.userInfo["relationship"] as? String == "team"
        }
        #expect(try F.files(url) == before)
        try F.with(manyToMany, url, type: type) { context in
            let players = try F.fetch("Player", context, sortedBy: "name")
            players[3].mutableSetValue(forKey: "teams").remove(try F.fetch("Team", context, sortedBy: "name")[2])
            try context.save()
        }
        try F.with(Self.league(playersOrdered: true), url, type: type) { context in
            let players = try F.fetch("Player", context, sortedBy: "name")
            #expect(players.map { names($0.value(forKey: "team")) } == [["Red"], ["Red"], ["Red"], ["Blue"]])
        }
    }

    @Test(arguments: F.stores)
    func aNewInverseIsFilledFromTheRelationshipItInverts(type: String) throws {
        let url = try F.scratch(type)
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        // Version 1: Team.members to-many without inverse.
        let team = F.entity("Team", [F.attribute("name", .stringAttributeType)])
        let player = F.entity("Player", [F.attribute("name", .stringAttributeType)])
        team.properties.append(TestStack.relationship("players", to: player, toMany: true))
        try Self.seed(url, type: type, model: F.model([team, player]))
        // Version 2: the inverse Player.team appears.
        try F.with(Self.league(), url, type: type) { context in
            let players = try F.fetch("Player", context, sortedBy: "name")
            #expect(players.map { names($0.value(forKey: "team")) } == [["Red"], ["Red"], ["Red"], ["Blue"]])
            let teams = try F.fetch("Team", context, sortedBy: "name")
            #expect(teams.map { names($0.value(forKey: "players")) } == [["p4"], [], ["p1", "p2", "p3"]])
        }
    }

    @Test(arguments: F.stores)
    func propertiesMoveUpAndDownAHierarchy(type: String) throws {
        let url = try F.scratch(type)
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        func model(inParent: Bool) -> NSManagedObjectModel {
            let item = F.entity("Item", [F.attribute("title", .stringAttributeType)])
            item.isAbstract = true
            let book = F.entity("Book", [F.attribute("pages", .integer32AttributeType)])
            let disc = F.entity("Disc", [F.attribute("minutes", .integer32AttributeType)])
            let price = F.attribute("price", .doubleAttributeType)
            if inParent { item.properties.append(price) } else { book.properties.append(price) }
            item.subentities = [book, disc]
            return F.model([item, book, disc])
        }
        try F.with(model(inParent: false), url, type: type) { context in
            _ = F.insert("Book", ["title": "B", "pages": Int32(10), "price": 9.5], into: context)
            _ = F.insert("Disc", ["title": "D", "minutes": Int32(50)], into: context)
            try context.save()
        }
        try F.with(model(inParent: true), url, type: type) { context in
            let items = try F.fetch("Item", context, sortedBy: "title")
            #expect(items.map { $0.value(forKey: "price") as? Double } == [9.5, nil])
            #expect(items.map { $0.value(forKey: "title") as? String } == ["B", "D"])
            items[1].setValue(3.0, forKey: "price")
            try context.save()
        }
        // Down again: the disc's price goes with the property that left its entity.
        try F.with(model(inParent: false), url, type: type) { context in
            let items = try F.fetch("Item", context, sortedBy: "title")
            #expect(items.map { $0.entity.name } == ["Book", "Disc"])
            #expect(
                items[0].value(forKey: "price") as? Double == 9.5 && items[0].value(forKey: "pages") as? Int32 == 10)
            #expect(items[1].value(forKey: "minutes") as? Int32 == 50)
        }
    }

    @Test(arguments: F.stores)
    func renamingIdentifiersChainFromTheFirstVersion(type: String) throws {
        let url = try F.scratch(type)
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let v1 = F.model([F.entity("Office", [F.attribute("town", .stringAttributeType)])], version: "1")
        let v3 = F.model(
            [
                F.entity(
                    "Branch", [F.attribute("city", .stringAttributeType, renamedFrom: "town")], renamedFrom: "Office")
            ],
            version: "3")
        try F.with(v1, url, type: type) { context in
            _ = F.insert("Office", ["town": "Oslo"], into: context)
            try context.save()
        }
        let cities = try F.with(v3, url, type: type) { context in
            try F.fetch("Branch", context, sortedBy: "city").map { $0.value(forKey: "city") as? String }
        }
        #expect(cities == ["Oslo"])
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: type, at: url, options: nil)
        #expect(metadata[NSStoreModelVersionIdentifiersKey] as? [String] == ["3"])
    }
}

/// Default stores written before stores recorded their model migrate by property name.
@Suite struct LegacyMigrationTests {
    typealias F = MigrationFixtures

    /// A default store of `people()` whose metadata lacks the model record, as stores
    /// written before records existed.
    static func legacyStore() throws -> URL {
        let url = try F.scratch(NSSQLiteStoreType)
        try LightweightMigrationTests.seedPeople(url, type: NSSQLiteStoreType)
        let coordinator = try F.open(LightweightMigrationTests.people(), url, type: NSSQLiteStoreType)
        let store = try #require(coordinator.persistentStores.first)
        var metadata = store.metadata ?? [:]
        metadata[ModelRecord.metadataKey] = nil
        coordinator.setMetadata(metadata, for: store)
        let context = PageFileFixtures.context(coordinator)
        try F.fetch("Person", context, sortedBy: "name").first?.setValue("Ann", forKey: "name")
        (try F.fetch("Person", context, sortedBy: "name")).first?.setValue("Anne", forKey: "nickname")
        try context.save()
        try PageFileFixtures.close(coordinator)
        let stored = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: NSSQLiteStoreType, at: url, options: nil)
        #expect(stored[ModelRecord.metadataKey] == nil)
        return url
    }

    @Test func aStoreWithoutARecordMigratesByNameAndRefusesValuesThatDoNotFit() throws {
        let url = try Self.legacyStore()
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        #expect {
            _ = try F.open(
                LightweightMigrationTests.people(ageType: .stringAttributeType), url, type: NSSQLiteStoreType)
        } throws: { error in
            (error as NSError).code == NSMigrationMissingMappingModelError
                && (error as NSError).userInfo["property"] as? String == "age"
        }
        let renamed = F.model([
            F.entity(
                "Person",
                [
                    F.attribute("name", .stringAttributeType),
                    F.attribute("years", .integer16AttributeType, renamedFrom: "age"),
                    F.attribute("alias", .stringAttributeType, renamedFrom: "nickname"),
                ])
        ])
        let migrated = try F.with(renamed, url, type: NSSQLiteStoreType) { context in
            try F.fetch("Person", context, sortedBy: "name").map {
                "\($0.value(forKey: "name") as? String ?? "-") \($0.value(forKey: "years") as? Int16 ?? -1) "
                    + "\($0.value(forKey: "alias") as? String ?? "-")"
            }
        }
        #expect(migrated == ["Ann 30 Anne", "Bob 31 -", "Cy 32 n2"])
    }
}

/// The dry run: what a migration would do, or why it cannot, with the store unchanged.
@Suite struct MigrationDryRunTests {
    typealias F = MigrationFixtures

    @Test(arguments: F.stores)
    func aDryRunReportsChangesCountsAndErrorsWithoutChangingTheStore(type: String) throws {
        let url = try F.scratch(type)
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        try LightweightMigrationTests.seedPeople(url, type: type)
        let before = try F.files(url)
        let renamed = F.model([
            F.entity(
                "Member",
                [
                    F.attribute("name", .stringAttributeType), F.attribute("age", .integer16AttributeType),
                    F.attribute("level", .integer32AttributeType, optional: false, defaultValue: Int32(1)),
                ], renamedFrom: "Person")
        ])
        let report = try NSPersistentStoreCoordinator(managedObjectModel: renamed).dryRunMigration(
            ofStoreAt: url, type: type)
        #expect(report.canMigrate && !report.isCompatible)
        #expect(report.objectCounts == ["Member": 3])
        #expect(
            report.changes.map { "\($0.kind.rawValue) \($0.entity).\($0.property ?? "")" }
                == [
                    "renameEntity Member.", "addProperty Member.level", "removeProperty Member.nickname",
                    "removeProperty Member.born",
                ])
        #expect(try F.files(url) == before)

        let mandatory = F.model([
            F.entity(
                "Person",
                [
                    F.attribute("name", .stringAttributeType),
                    F.attribute("nickname", .stringAttributeType, optional: false),
                ])
        ])
        let failing = try NSPersistentStoreCoordinator(managedObjectModel: mandatory).dryRunMigration(
            ofStoreAt: url, type: type)
        #expect(
            failing.error?.code == NSMigrationError && failing.error?.userInfo["attribute"] as? String == "nickname")
        let typeChange = try NSPersistentStoreCoordinator(
            managedObjectModel: LightweightMigrationTests.people(ageType: .stringAttributeType)
        )
        .dryRunMigration(ofStoreAt: url, type: type)
        #expect(typeChange.error?.code == NSMigrationMissingMappingModelError && typeChange.changes.isEmpty)
        let same = try NSPersistentStoreCoordinator(managedObjectModel: LightweightMigrationTests.people())
            .dryRunMigration(ofStoreAt: url, type: type)
        #expect(same.isCompatible && same.canMigrate)
        #expect(try F.files(url) == before)
    }

    @Test func aDryRunReadsAStoreThatIsOpen() throws {
        let url = try F.scratch(NSSQLiteStoreType)
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        try LightweightMigrationTests.seedPeople(url, type: NSSQLiteStoreType)
        let open = try F.open(LightweightMigrationTests.people(), url, type: NSSQLiteStoreType)
        defer { try? PageFileFixtures.close(open) }
        let next = F.model([F.entity("Person", [F.attribute("name", .stringAttributeType)])])
        let report = try NSPersistentStoreCoordinator(managedObjectModel: next).dryRunMigration(ofStoreAt: url)
        #expect(report.canMigrate && report.objectCounts == ["Person": 3])
    }
}
