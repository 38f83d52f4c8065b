// The default store answers every fetch exactly as the in-memory store does: random
// graphs, random saves and deletes (every delete rule), random predicates on indexed
// and plain attributes, sorts and limits, reopening between steps, verify() clean.
import Foundation
import OpenCoreData
import TestSupport
import Testing

enum DifferentialModel {
    static func attribute(_ name: String, _ type: NSAttributeType, indexed: Bool = false) -> NSAttributeDescription {
        let attribute = NSAttributeDescription()
        attribute.name = name
        attribute.attributeType = type
        attribute.isOptional = true
        attribute.isIndexed = indexed
        return attribute
    }

    static func relationship(_ name: String, _ destination: NSEntityDescription, toMany: Bool, rule: NSDeleteRule)
        -> NSRelationshipDescription
    {
        let relationship = NSRelationshipDescription()
        relationship.name = name
        relationship.destinationEntity = destination
        relationship.maxCount = toMany ? 0 : 1
        relationship.deleteRule = rule
        return relationship
    }

    /// Node (Leaf a sub-entity), Group 1-n Node (cascade / nullify), Node n-n Node
    /// (links / linkedBy, nullify), Tag n-n Node (deny / nullify).
    static let model: NSManagedObjectModel = {
        let node = NSEntityDescription()
        node.name = "Node"
        let leaf = NSEntityDescription()
        leaf.name = "Leaf"
        let group = NSEntityDescription()
        group.name = "Group"
        let tag = NSEntityDescription()
        tag.name = "Tag"
        let score = attribute("score", .integer32AttributeType)
        let name = attribute("name", .stringAttributeType, indexed: true)
        node.properties = [
            attribute("uid", .integer64AttributeType), name, score,
            attribute("weight", .doubleAttributeType, indexed: true),
            attribute("born", .dateAttributeType, indexed: true), attribute("flag", .booleanAttributeType),
        ]
        node.indexes = [
            NSFetchIndexDescription(
                name: "byScoreName",
                elements: [
                    NSFetchIndexElementDescription(property: score, collationType: .binary),
                    NSFetchIndexElementDescription(property: name, collationType: .binary),
                ])
        ]
        leaf.properties = [attribute("depth", .integer16AttributeType, indexed: true)]
        node.subentities = [leaf]
        group.properties = [
            attribute("uid", .integer64AttributeType), attribute("title", .stringAttributeType, indexed: true),
        ]
        tag.properties = [attribute("uid", .integer64AttributeType), attribute("label", .stringAttributeType)]
        let nodes = relationship("nodes", node, toMany: true, rule: .cascadeDeleteRule)
        let groupOf = relationship("group", group, toMany: false, rule: .nullifyDeleteRule)
        pair(nodes, groupOf)
        let links = relationship("links", node, toMany: true, rule: .nullifyDeleteRule)
        let linkedBy = relationship("linkedBy", node, toMany: true, rule: .nullifyDeleteRule)
        pair(links, linkedBy)
        let tagged = relationship("tagged", node, toMany: true, rule: .denyDeleteRule)
        let tags = relationship("tags", tag, toMany: true, rule: .nullifyDeleteRule)
        pair(tagged, tags)
        node.properties += [groupOf, links, linkedBy, tags]
        group.properties.append(nodes)
        tag.properties.append(tagged)
        let model = NSManagedObjectModel()
        model.entities = [node, leaf, group, tag]
        return model
    }()

    static func pair(_ a: NSRelationshipDescription, _ b: NSRelationshipDescription) {
        a.inverseRelationship = b
        b.inverseRelationship = a
    }

    static let names = [
        "a", "ab", "abc", "b", "B", "é", "e\u{301}", "zz", "", "a\u{0}b", "Ärger", "🚀x", "abd", "AB", "xab\r\n",
        "b\r", "Ab\u{301}",
    ]
}

/// One store under test: a coordinator, a context and its objects by uid.
final class DifferentialSide {
    let type: String
    let url: URL
    var coordinator: NSPersistentStoreCoordinator
    var context: NSManagedObjectContext
    var objects: [Int64: NSManagedObject] = [:]

    init(type: String, url: URL) throws {
        self.type = type
        self.url = url
        coordinator = try PageFileFixtures.coordinator(DifferentialModel.model, url, type: type)
        context = PageFileFixtures.context(coordinator)
    }

    func reopen() throws {
        guard type != NSInMemoryStoreType else { return }
        try PageFileFixtures.close(coordinator)
        coordinator = try PageFileFixtures.coordinator(DifferentialModel.model, url, type: type)
        context = PageFileFixtures.context(coordinator)
        objects = [:]
        for entity in ["Node", "Group", "Tag"] {
            for object in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: entity)) {
                if let uid = object.value(forKey: "uid") as? Int64 { objects[uid] = object }
            }
        }
    }

    func uids(_ request: NSFetchRequest<NSManagedObject>) throws -> [Int64] {
        try context.fetch(request).compactMap { $0.value(forKey: "uid") as? Int64 }
    }
}

@Suite struct PageFileStoreDifferentialTests {
    @Test func defaultStoreAnswersLikeTheInMemoryStore() throws {
        var random = SeededRandom(environmentOr: 0x5EED_0005)
        let hint = random.replayHint
        let url = try PageFileFixtures.temporaryURL()
        let memory = try DifferentialSide(type: NSInMemoryStoreType, url: url)
        let disk = try DifferentialSide(type: NSSQLiteStoreType, url: url)
        let sides = [memory, disk]
        var nextUID: Int64 = 1
        var checked = 0
        for step in 0..<40 {
            // Changes, the same on both sides.
            let inserts = random.int(in: 0...12)
            for _ in 0..<inserts {
                let entity = random.pick(["Node", "Node", "Leaf", "Group", "Tag"])
                let values = randomValues(entity, &random)
                let uid = nextUID
                nextUID += 1
                for side in sides {
                    let object = NSEntityDescription.insertNewObject(forEntityName: entity, into: side.context)
                    object.setValue(uid, forKey: "uid")
                    for (key, value) in values { object.setValue(value, forKey: key) }
                    side.objects[uid] = object
                }
            }
            let uids = Array(memory.objects.keys).sorted()
            for _ in 0..<random.int(in: 0...8) where !uids.isEmpty {
                let uid = random.pick(uids)
                guard let entity = memory.objects[uid]?.entity.name else { continue }
                let action = random.int(in: 0...4)
                let values = randomValues(entity, &random)
                let other = random.pick(uids)
                for side in sides {
                    guard let object = side.objects[uid], let target = side.objects[other] else { continue }
                    switch action {
                    case 0: side.context.delete(object)
                    case 1: for (key, value) in values { object.setValue(value, forKey: key) }
                    default: link(object, target)
                    }
                }
            }
            var failures = 0
            for side in sides {
                do {
                    try side.context.save()
                } catch {
                    failures += 1
                    side.context.rollback()
                }
                side.objects = side.objects.filter { $0.value.managedObjectContext != nil && !$0.value.isDeleted }
            }
            #expect(failures == 0 || failures == 2, "saves must succeed or fail together (\(hint))")
            if random.chance(0.3) { try disk.reopen() }
            for _ in 0..<12 {
                let request = randomRequest(&random)
                let expected = try memory.uids(request)
                let actual = try disk.uids(request)
                if request.sortDescriptors == nil {
                    #expect(
                        expected.sorted() == actual.sorted(),
                        "step \(step) \(request.predicate?.predicateFormat ?? "all") (\(hint))")
                } else {
                    #expect(expected == actual, "step \(step) \(request.predicate?.predicateFormat ?? "all") (\(hint))")
                }
                #expect(try memory.context.count(for: request) == disk.context.count(for: request), "count (\(hint))")
                checked += 1
            }
        }
        let report = try #require(disk.coordinator.persistentStores.first as? PageFileStore).verify()
        #expect(report.isClean, "\(report.problems) (\(hint))")
        #expect(report.rowCount > 0)
        #expect(checked == 480)
    }

    private func link(_ object: NSManagedObject, _ target: NSManagedObject) {
        switch (object.entity.name, target.entity.name) {
        case ("Group", "Node"), ("Group", "Leaf"): target.setValue(object, forKey: "group")
        case ("Node", "Group"), ("Leaf", "Group"): object.setValue(target, forKey: "group")
        case ("Tag", "Node"), ("Tag", "Leaf"): object.mutableSetValue(forKey: "tagged").add(target)
        case ("Node", _), ("Leaf", _):
            if target.entity.name != "Tag" && target.entity.name != "Group" {
                object.mutableSetValue(forKey: "links").add(target)
            } else if target.entity.name == "Tag" {
                object.mutableSetValue(forKey: "tags").add(target)
            }
        default: break
        }
    }

    private func randomValues(_ entity: String, _ random: inout SeededRandom) -> [(String, Any?)] {
        func maybe(_ value: Any) -> Any? { random.chance(0.15) ? nil : value }
        switch entity {
        case "Group": return [("title", maybe(random.pick(DifferentialModel.names)))]
        case "Tag": return [("label", maybe(random.pick(DifferentialModel.names)))]
        default:
            var values: [(String, Any?)] = [
                ("name", maybe(random.pick(DifferentialModel.names))),
                ("score", maybe(Int32(random.int(in: -5...5)))),
                ("weight", maybe(Double(random.int(in: -20...20)) / 4)),
                ("born", maybe(Date(timeIntervalSinceReferenceDate: Double(random.int(in: 0...10)) * 1000))),
                ("flag", maybe(random.chance(0.5))),
            ]
            if entity == "Leaf" { values.append(("depth", maybe(Int16(random.int(in: 0...3))))) }
            return values.filter { _ in random.chance(0.7) }
        }
    }

    private func randomRequest(_ random: inout SeededRandom) -> NSFetchRequest<NSManagedObject> {
        let entity = random.pick(["Node", "Node", "Node", "Leaf", "Group"])
        let request = NSFetchRequest<NSManagedObject>(entityName: entity)
        request.includesSubentities = random.chance(0.8)
        let name = random.pick(DifferentialModel.names)
        let other = random.pick(DifferentialModel.names)
        let score = random.int(in: -6...6)
        let high = score + random.int(in: 0...4)
        let templates: [(String, [Any])]
        if entity == "Group" {
            templates = [
                ("title == %@", [name]), ("title BEGINSWITH %@", [name]), ("title < %@", [name]),
                ("ANY nodes.score > %d", [score]), ("title == nil", []), ("title IN %@", [[name, other]]),
            ]
        } else {
            var list: [(String, [Any])] = []
            list.append(("score == %d", [score]))
            list.append(("score < %d", [score]))
            list.append(("score <= %d", [score]))
            list.append(("score > %d", [score]))
            list.append(("score >= %d", [score]))
            list.append(("score BETWEEN {%d, %d}", [score, high]))
            list.append(("score IN %@", [[score, high]]))
            list.append(("name == %@", [name]))
            list.append(("name != %@", [name]))
            list.append(("name BEGINSWITH %@", [name]))
            list.append(("name BEGINSWITH[c] %@", [name]))
            list.append(("name < %@", [name]))
            list.append(("name >= %@", [name]))
            list.append(("name == nil", []))
            list.append(("name CONTAINS[c] %@", [name]))
            // The scan's string fast paths: ASCII and Unicode operands, every option.
            list.append(("name CONTAINS %@", [name]))
            list.append(("name CONTAINS[cd] %@", [name]))
            list.append(("name ENDSWITH[c] %@", [name]))
            list.append(("name ==[c] %@", [name]))
            list.append(("name !=[d] %@", [name]))
            list.append(("name CONTAINS[c] %@ AND NOT score > %d", [name, score]))
            list.append(("name BEGINSWITH[c] %@ OR group.title CONTAINS[c] %@", [name, other]))
            // An index range whose rows are checked on their encoded form: directly, and through a view.
            list.append(("score == %d AND name ENDSWITH[c] %@", [score, name]))
            list.append(("score == %d AND group.title != %@", [score, name]))
            list.append(("weight > %f", [Double(score) / 2]))
            list.append(("weight <= %d", [score]))
            list.append(("born < %@", [Date(timeIntervalSinceReferenceDate: Double(score) * 1000)]))
            list.append(("flag == YES", []))
            list.append(("flag == NO", []))
            list.append(("score > %d AND name BEGINSWITH %@", [score, name]))
            list.append(("score == %d AND name > %@", [score, name]))
            list.append(("score == %d AND name == %@", [score, name]))
            list.append(("group.title == %@", [name]))
            list.append(("ANY links.score > %d", [score]))
            list.append(("NOT (score < %d)", [score]))
            list.append(("score < %d OR name == %@", [score, name]))
            list.append(("score > %d AND score < %d", [score, high]))
            list.append(("%d < score", [score]))
            list.append(("score == 2.5", []))
            list.append(("score == %@", [name]))
            list.append(("tags.@count > 0", []))
            list.append(("uid > %d", [score * 10]))
            if entity == "Leaf" {
                list.append(("depth == %d", [high % 4]))
                list.append(("depth > %d AND score < %d", [1, score]))
            }
            templates = list
        }
        let (format, arguments) = random.pick(templates)
        if random.chance(0.9) { request.predicate = NSPredicate(format: format, argumentArray: arguments) }
        if random.chance(0.5) {
            let key = entity == "Group" ? "uid" : random.pick(["uid", "score", "weight", "born"])
            request.sortDescriptors = [
                NSSortDescriptor(key: key, ascending: random.chance(0.5)),
                NSSortDescriptor(key: "uid", ascending: true),
            ]
            if random.chance(0.7) { request.fetchLimit = random.int(in: 1...5) }
            if random.chance(0.3) { request.fetchOffset = random.int(in: 0...3) }
        }
        return request
    }
}
