// Derived attributes on every store: computed at save (copies, a to-one's attribute,
// lowercase/uppercase/canonical, @count/@sum/@max over a to-many, now()), kept right when
// sources and destinations change, fetchable and sortable; expressions the stores cannot
// compute refused at addPersistentStore; and a differential test: after random changes
// every derived value equals a recomputation from scratch.
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

@Suite struct DerivedAttributeTests {
    static let storeTypes = TestStack.storeTypes

    static func derived(_ name: String, _ type: NSAttributeType, _ format: String) -> NSDerivedAttributeDescription {
        let attribute = NSDerivedAttributeDescription()
        attribute.name = name
        attribute.attributeType = type
        attribute.derivationExpression = NSExpression(format: format)
        return attribute
    }

    /// Team (name, headcount = members.@count, payroll = members.@sum.salary, top =
    /// members.@max.salary, key = uppercase:(name), stamp = now()) and Member (name,
    /// salary, team, lower = lowercase:(name), folded = canonical:(name), teamName = team.name).
    static func model() -> NSManagedObjectModel {
        let team = NSEntityDescription()
        team.name = "Team"
        let member = NSEntityDescription()
        member.name = "Member"
        let members = TestStack.relationship("members", to: member, toMany: true)
        let teamOf = TestStack.relationship("team", to: team, toMany: false)
        TestStack.pair(members, teamOf)
        team.properties = [
            TestStack.attribute("name", .stringAttributeType), members,
            derived("headcount", .integer64AttributeType, "members.@count"),
            derived("payroll", .doubleAttributeType, "members.@sum.salary"),
            derived("top", .doubleAttributeType, "members.@max.salary"),
            derived("key", .stringAttributeType, "uppercase:(name)"),
            derived("stamp", .dateAttributeType, "now()"),
        ]
        member.properties = [
            TestStack.attribute("name", .stringAttributeType),
            TestStack.attribute("salary", .doubleAttributeType, optional: false, defaultValue: 0.0), teamOf,
            derived("lower", .stringAttributeType, "lowercase:(name)"),
            derived("folded", .stringAttributeType, "canonical:(name)"),
            derived("teamName", .stringAttributeType, "team.name"),
        ]
        let model = NSManagedObjectModel()
        model.entities = [team, member]
        return model
    }

    static let sharedModel = model()

    static func coordinator(_ type: String, _ model: NSManagedObjectModel = sharedModel) throws -> (
        NSPersistentStoreCoordinator, URL
    ) {
        let directory = try TestStack.scratchDirectory("derived")
        return (try TestStack.coordinator(type, model: model, in: directory), directory)
    }

    static func fetch(
        _ entity: String, _ context: NSManagedObjectContext, _ predicate: OpenCoreData.NSPredicate? = nil,
        sortedBy key: String = "name", ascending: Bool = true
    ) throws -> [NSManagedObject] {
        let request = NSFetchRequest<NSManagedObject>(entityName: entity)
        request.predicate = predicate
        request.sortDescriptors = [NSSortDescriptor(key: key, ascending: ascending)]
        return try context.fetch(request)
    }

    /// Which relationships derived values read through is the model's answer, known once
    /// a coordinator uses it (a save asks on every inverse edit: no lock, no plan walk).
    @Test func theModelKnowsTheRelationshipsDerivedValuesReadThrough() throws {
        let model = Self.model()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let members = try #require(model.entitiesByName["Team"]?.relationshipsByName["members"])
        let team = try #require(model.entitiesByName["Member"]?.relationshipsByName["team"])
        #expect(coordinator.derivesValues(through: members) && coordinator.derivesValues(through: team))
        let plain = TestStack.model
        let other = NSPersistentStoreCoordinator(managedObjectModel: plain)
        for entity in plain.entities {
            for relationship in entity.relationshipsByName.values {
                #expect(!other.derivesValues(through: relationship), "\(relationship.name)")
            }
        }
    }

    @Test(arguments: storeTypes) func valuesAreComputedAtSaveAndFollowChanges(type: String) throws {
        let (coordinator, directory) = try Self.coordinator(type)
        defer { try? FileManager.default.removeItem(at: directory) }
        let context = TestStack.context(coordinator)
        try context.performAndWait {
            func insert(_ entity: String, _ values: [String: Any]) -> NSManagedObject {
                let object = NSEntityDescription.insertNewObject(forEntityName: entity, into: context)
                for (key, value) in values { object.setValue(value, forKey: key) }
                return object
            }
            let acme = insert("Team", ["name": "Acme"])
            let globex = insert("Team", ["name": "Globex"])
            let doe = insert("Member", ["name": "Doé", "salary": 10.0, "team": acme])
            let smith = insert("Member", ["name": "SMITH", "salary": 30.0, "team": acme])
            let brown = insert("Member", ["name": "Brown", "salary": 5.0, "team": globex])
            let before = Date()
            try context.save()
            context.refreshAllObjects()
            #expect(
                doe.value(forKey: "lower") as? String == "doé" && smith.value(forKey: "lower") as? String == "smith")
            #expect(doe.value(forKey: "folded") as? String == "doe")
            #expect(doe.value(forKey: "teamName") as? String == "Acme")
            #expect(acme.value(forKey: "headcount") as? Int64 == 2 && globex.value(forKey: "headcount") as? Int64 == 1)
            #expect(acme.value(forKey: "payroll") as? Double == 40 && acme.value(forKey: "top") as? Double == 30)
            #expect(acme.value(forKey: "key") as? String == "ACME")
            let stamp = try #require(acme.value(forKey: "stamp") as? Date)
            #expect(stamp >= before.addingTimeInterval(-1))

            let smiths = try Self.fetch("Member", context, NSPredicate(format: "lower == %@", "smith"))
            #expect(smiths.map { $0.value(forKey: "name") as? String } == ["SMITH"])
            let byHeadcount = try Self.fetch("Team", context, sortedBy: "headcount", ascending: false)
            #expect(byHeadcount.map { $0.value(forKey: "name") as? String } == ["Acme", "Globex"])

            // A destination's attribute change, a deletion and a move, none touching the teams directly.
            smith.setValue(50.0, forKey: "salary")
            try context.save()
            context.refreshAllObjects()
            #expect(acme.value(forKey: "payroll") as? Double == 60 && acme.value(forKey: "top") as? Double == 50)
            context.delete(smith)
            brown.setValue(acme, forKey: "team")
            try context.save()
            context.refreshAllObjects()
            #expect(acme.value(forKey: "headcount") as? Int64 == 2 && globex.value(forKey: "headcount") as? Int64 == 0)
            #expect(acme.value(forKey: "payroll") as? Double == 15 && globex.value(forKey: "payroll") as? Double == 0)
            #expect(brown.value(forKey: "teamName") as? String == "Acme")
            // A source's change recomputes the objects copying it through a to-one.
            acme.setValue("Acme Two", forKey: "name")
            try context.save()
            context.refreshAllObjects()
            #expect(doe.value(forKey: "teamName") as? String == "Acme Two")
            #expect(acme.value(forKey: "key") as? String == "ACME TWO")
            // The context that saved keeps saving: the derived updates did not make its objects stale.
            globex.setValue("Globex Two", forKey: "name")
            doe.setValue(11.0, forKey: "salary")
            try context.save()
        }
    }

    @Test func derivedAttributesAreReadOnlyToTheApp() throws {
        let (coordinator, directory) = try Self.coordinator(NSInMemoryStoreType)
        defer { try? FileManager.default.removeItem(at: directory) }
        let context = TestStack.context(coordinator)
        try context.performAndWait {
            let member = NSEntityDescription.insertNewObject(forEntityName: "Member", into: context)
            member.setValue("Ada", forKey: "name")
            let error = try #require(throws: NSError.self) { try member.writeValue("x", forKey: "lower") }
            #expect(error.code == NSManagedObjectValidationError && error.localizedDescription.contains("Member.lower"))
            member.setValue("set by the app", forKey: "lower")
            try context.save()
            context.refreshAllObjects()
            #expect(member.value(forKey: "lower") as? String == "ada", "the save replaced the app's value")
        }
    }

    @Test func expressionsTheStoresCannotComputeAreRefusedWhenAStoreIsAdded() throws {
        for (owner, format, fragment) in [
            ("Member", "nothing", "no property 'nothing'"), ("Member", "random()", "random is not supported"),
            ("Team", "members", "must be aggregated"), ("Team", "members.@count.name", "nothing may follow @count"),
            ("Member", "team", "to-one relationship"), ("Member", "free.name", "has no inverse"),
        ] {
            let model = Self.model()
            let member = try #require(model.entitiesByName["Member"])
            let team = try #require(model.entitiesByName["Team"])
            member.properties = member.properties + [TestStack.relationship("free", to: team, toMany: false)]
            let entity = try #require(model.entitiesByName[owner])
            entity.properties = entity.properties + [Self.derived("bad", .stringAttributeType, format)]
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            for type in Self.storeTypes {
                let error = try #require(throws: NSError.self) {
                    try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: nil, options: nil)
                }
                #expect(error.code == NSPersistentStoreIncompatibleSchemaError)
                #expect(error.localizedDescription.contains("\(owner).bad"), "\(error.localizedDescription)")
                #expect(error.localizedDescription.contains(fragment), "\(format): \(error.localizedDescription)")
            }
        }
    }

    /// Random inserts, moves, salary and name changes and deletions over several saves,
    /// and batch inserts, updates and deletes between them; after each round every derived
    /// value in the store equals a recomputation from the stored sources.
    @Test(arguments: storeTypes) func derivedValuesEqualARecomputationAfterRandomChanges(type: String) throws {
        var random = SeededRandom(environmentOr: 0xD3_12_7E)
        let (coordinator, directory) = try Self.coordinator(type)
        defer { try? FileManager.default.removeItem(at: directory) }
        let context = TestStack.context(coordinator)
        try context.performAndWait {
            var teams: [NSManagedObject] = []
            var members: [NSManagedObject] = []
            for round in 0..<12 {
                for _ in 0..<random.int(in: 1...8) {
                    switch random.int(in: 0...9) {
                    case 0, 1:
                        let team = NSEntityDescription.insertNewObject(forEntityName: "Team", into: context)
                        team.setValue("T\(random.int(in: 0...99))", forKey: "name")
                        teams.append(team)
                    case 2, 3, 4:
                        let member = NSEntityDescription.insertNewObject(forEntityName: "Member", into: context)
                        member.setValue(random.chance(0.2) ? nil : "Mé\(random.int(in: 0...99))", forKey: "name")
                        member.setValue(Double(random.int(in: 0...100)), forKey: "salary")
                        if !teams.isEmpty, random.chance(0.8) { member.setValue(random.pick(teams), forKey: "team") }
                        members.append(member)
                    case 5 where !members.isEmpty:
                        random.pick(members).setValue(teams.isEmpty ? nil : random.pick(teams), forKey: "team")
                    case 6 where !members.isEmpty:
                        random.pick(members).setValue(Double(random.int(in: 0...100)), forKey: "salary")
                    case 7 where !teams.isEmpty:
                        random.pick(teams).setValue("R\(round)", forKey: "name")
                    case 8 where !members.isEmpty:
                        let index = random.int(in: 0...members.count - 1)
                        context.delete(members.remove(at: index))
                    case 9 where !teams.isEmpty:
                        let index = random.int(in: 0...teams.count - 1)
                        context.delete(teams.remove(at: index))
                    default: break
                    }
                }
                try context.save()
                if random.chance(0.6) {
                    // Batch requests change sources and destinations behind the context's back.
                    try Self.randomBatchRequests(context, round: round, &random)
                    context.reset()
                    teams = try Self.fetch("Team", context)
                    members = try Self.fetch("Member", context)
                }
                let reader = TestStack.context(coordinator)
                try reader.performAndWait {
                    for team in try Self.fetch("Team", reader) {
                        let mine = (team.value(forKey: "members") as? Set<NSManagedObject>) ?? []
                        let salaries = mine.map { ($0.value(forKey: "salary") as? Double) ?? 0 }
                        #expect(team.value(forKey: "headcount") as? Int64 == Int64(mine.count), "\(random.replayHint)")
                        #expect(
                            team.value(forKey: "payroll") as? Double == salaries.reduce(0, +), "\(random.replayHint)")
                        #expect(team.value(forKey: "top") as? Double == salaries.max(), "\(random.replayHint)")
                        #expect(
                            team.value(forKey: "key") as? String
                                == (team.value(forKey: "name") as? String)?.uppercased())
                    }
                    for member in try Self.fetch("Member", reader) {
                        let name = member.value(forKey: "name") as? String
                        #expect(member.value(forKey: "lower") as? String == name?.lowercased(), "\(random.replayHint)")
                        let teamName =
                            (member.value(forKey: "team") as? NSManagedObject)?.value(forKey: "name") as? String
                        #expect(member.value(forKey: "teamName") as? String == teamName, "\(random.replayHint)")
                    }
                }
            }
        }
    }

    /// One to three random batch requests: members inserted (no team: batch inserts set
    /// no relationships), salaries and names updated, members or teams deleted.
    static func randomBatchRequests(_ context: NSManagedObjectContext, round: Int, _ random: inout SeededRandom)
        throws
    {
        for _ in 0..<random.int(in: 1...3) {
            let bound = Double(random.int(in: 0...100))
            switch random.int(in: 0...5) {
            case 0:
                let objects: [[String: Any]] = (0..<random.int(in: 1...4)).map { index in
                    ["name": "Bä\(round)-\(index)", "salary": Double(random.int(in: 0...100))]
                }
                try context.execute(NSBatchInsertRequest(entityName: "Member", objects: objects))
            case 1:
                let update = NSBatchUpdateRequest(entityName: "Member")
                update.predicate = OpenCoreData.NSPredicate(format: "salary < %@", argumentArray: [bound])
                update.propertiesToUpdate = ["salary": Double(random.int(in: 0...100))]
                try context.execute(update)
            case 2:
                let update = NSBatchUpdateRequest(entityName: "Member")
                update.predicate = OpenCoreData.NSPredicate(format: "salary > %@", argumentArray: [bound])
                update.propertiesToUpdate = ["name": "Ü\(round)"]
                try context.execute(update)
            case 3:
                let update = NSBatchUpdateRequest(entityName: "Team")
                update.predicate = OpenCoreData.NSPredicate(format: "name BEGINSWITH 'T'")
                update.propertiesToUpdate = ["name": "B\(round)"]
                try context.execute(update)
            case 4:
                let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Member")
                request.predicate = OpenCoreData.NSPredicate(format: "salary > %@", argumentArray: [bound])
                try context.execute(NSBatchDeleteRequest(fetchRequest: request))
            default:
                let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Team")
                request.predicate = OpenCoreData.NSPredicate(
                    format: "name ENDSWITH %@", argumentArray: [String(round % 10)])
                try context.execute(NSBatchDeleteRequest(fetchRequest: request))
            }
        }
    }
}
