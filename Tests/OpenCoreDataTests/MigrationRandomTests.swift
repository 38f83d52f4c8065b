// Generated migrations: random models with random data, changed by random steps
// lightweight migration can infer (renames, added and removed entities and properties,
// optionality, cardinality, ordering), migrate with every value accounted for — each one
// checked against what a plain model of the data says it must be; random steps it cannot
// infer (a type change, an attribute becoming a relationship) fail and leave the store's
// files byte for byte as they were. A failing case prints its seed (replay with
// OCD_SEED).
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

/// A model as plain values, with stable identities the oracle follows through renames.
struct ModelSpec {
    struct Attribute {
        let id: Int
        var name: String
        var renamedFrom: String?
        var type: NSAttributeType
        var optional: Bool
        var defaultValue: Any?
    }

    struct Relationship {
        let id: Int
        var name: String
        var renamedFrom: String?
        var toMany: Bool
        var ordered: Bool
        var optional = true
        let destination: Int
        var inverse: Int?
    }

    struct Entity {
        let id: Int
        var name: String
        var renamedFrom: String?
        var attributes: [Attribute]
        var relationships: [Relationship]
    }

    var entities: [Entity]
    var nextID = 1000

    mutating func newID() -> Int {
        nextID += 1
        return nextID
    }

    func entity(_ id: Int) -> Entity? { entities.first { $0.id == id } }

    /// The model these values describe.
    func model() -> NSManagedObjectModel {
        var descriptions: [Int: NSEntityDescription] = [:]
        var relationships: [Int: NSRelationshipDescription] = [:]
        for entity in entities {
            let description = NSEntityDescription()
            description.name = entity.name
            description.renamingIdentifier = entity.renamedFrom
            description.properties = entity.attributes.map { spec in
                let attribute = TestStack.attribute(
                    spec.name, spec.type, optional: spec.optional, defaultValue: spec.defaultValue)
                attribute.renamingIdentifier = spec.renamedFrom
                return attribute
            }
            descriptions[entity.id] = description
        }
        for entity in entities {
            for spec in entity.relationships {
                guard let destination = descriptions[spec.destination] else { continue }
                let relationship = TestStack.relationship(
                    spec.name, to: destination, toMany: spec.toMany, ordered: spec.ordered)
                relationship.renamingIdentifier = spec.renamedFrom
                relationship.isOptional = spec.optional
                relationships[spec.id] = relationship
                descriptions[entity.id]?.properties.append(relationship)
            }
        }
        for entity in entities {
            for spec in entity.relationships {
                if let inverse = spec.inverse { relationships[spec.id]?.inverseRelationship = relationships[inverse] }
            }
        }
        let model = NSManagedObjectModel()
        model.entities = entities.compactMap { descriptions[$0.id] }
        return model
    }
}

/// Random models, data and changes, and the oracle of the migrated values.
struct MigrationGenerator {
    var random: SeededRandom
    static let types: [NSAttributeType] = [
        .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .doubleAttributeType,
        .floatAttributeType, .booleanAttributeType, .stringAttributeType, .decimalAttributeType, .dateAttributeType,
        .binaryDataAttributeType, .UUIDAttributeType, .URIAttributeType,
    ]

    mutating func value(_ type: NSAttributeType) -> Any {
        let n = random.int(in: -1_000...1_000)
        switch type {
        case .integer16AttributeType: return Int16(n)
        case .integer32AttributeType: return Int32(n * 1_000)
        case .integer64AttributeType: return Int64(n) * 1_000_000_007
        case .doubleAttributeType: return Double(n) / 7
        case .floatAttributeType: return Float(n) / 4
        case .booleanAttributeType: return n % 2 == 0
        case .stringAttributeType: return "s\(n)" + String(repeating: "é", count: random.int(in: 0...3))
        case .decimalAttributeType: return Decimal(n) / 100
        case .dateAttributeType: return Date(timeIntervalSinceReferenceDate: Double(n) * 3_600.5)
        case .binaryDataAttributeType:
            return Data((0..<random.int(in: 0...5)).map { UInt8(truncatingIfNeeded: $0 + n) })
        case .UUIDAttributeType: return UUID(uuidString: String(format: "E621E1F8-C36C-495A-93FC-%012X", n + 5_000))!
        default: return URL(string: "https://example.com/\(n)")!
        }
    }

    mutating func attribute(_ spec: inout ModelSpec, name: String) -> ModelSpec.Attribute {
        let type = Self.types[random.int(in: 0...(Self.types.count - 1))]
        let optional = random.chance(0.7)
        return ModelSpec.Attribute(
            id: spec.newID(), name: name, type: type, optional: optional,
            defaultValue: optional && random.chance(0.5) ? nil : value(type))
    }

    /// Two to four entities, each with a `uid` and a few attributes, and a few
    /// relationships with inverses.
    mutating func model() -> ModelSpec {
        var spec = ModelSpec(entities: [])
        for index in 0..<random.int(in: 2...4) {
            var entity = ModelSpec.Entity(id: index, name: "E\(index)", attributes: [], relationships: [])
            entity.attributes.append(
                ModelSpec.Attribute(id: spec.newID(), name: "uid", type: .stringAttributeType, optional: false))
            for number in 0..<random.int(in: 1...4) { entity.attributes.append(attribute(&spec, name: "a\(number)")) }
            spec.entities.append(entity)
        }
        for number in 0..<random.int(in: 1...3) {
            let from = random.int(in: 0...(spec.entities.count - 1))
            let to = random.int(in: 0...(spec.entities.count - 1))
            let (forward, backward) = (spec.newID(), spec.newID())
            let toMany = random.chance(0.5)
            let inverseToMany = random.chance(0.5)
            spec.entities[from].relationships.append(
                ModelSpec.Relationship(
                    id: forward, name: "r\(number)", toMany: toMany, ordered: toMany && random.chance(0.4),
                    destination: to, inverse: backward))
            spec.entities[to].relationships.append(
                ModelSpec.Relationship(
                    id: backward, name: "q\(number)", toMany: inverseToMany,
                    ordered: inverseToMany && random.chance(0.4), destination: from, inverse: forward))
        }
        return spec
    }

    /// Objects with random values and relationships; returns nothing (the store is the data).
    mutating func fill(_ context: NSManagedObjectContext, _ spec: ModelSpec) throws {
        var objects: [Int: [NSManagedObject]] = [:]
        for entity in spec.entities {
            objects[entity.id] = (0..<random.int(in: 0...6)).map { index in
                let object = NSEntityDescription.insertNewObject(forEntityName: entity.name, into: context)
                object.setValue("\(entity.name)-\(index)", forKey: "uid")
                for attribute in entity.attributes where attribute.name != "uid" {
                    let isNil = attribute.optional && random.chance(0.3)
                    object.setValue(isNil ? nil : value(attribute.type), forKey: attribute.name)
                }
                return object
            }
        }
        for entity in spec.entities {
            for relationship in entity.relationships where relationship.id % 2 == 1 {
                let destinations = objects[relationship.destination] ?? []
                for object in objects[entity.id] ?? [] where !destinations.isEmpty {
                    if relationship.toMany {
                        let chosen = destinations.filter { _ in random.chance(0.4) }
                        if relationship.ordered {
                            object.mutableOrderedSetValue(forKey: relationship.name).addObjects(from: chosen.reversed())
                        } else {
                            object.mutableSetValue(forKey: relationship.name).addObjects(from: chosen)
                        }
                    } else if random.chance(0.7) {
                        object.setValue(
                            destinations[random.int(in: 0...(destinations.count - 1))], forKey: relationship.name)
                    }
                }
            }
        }
        try context.save()
    }

    // MARK: Changes

    /// Applies random steps lightweight migration infers to `spec`; `data` tells which
    /// to-many relationships hold at most one object per source (those may become to-one).
    mutating func inferableChanges(_ spec: ModelSpec, data: MigrationOracle.Snapshot) -> ModelSpec {
        var next = spec
        for _ in 0..<random.int(in: 1...5) {
            guard !next.entities.isEmpty else { break }
            let e = random.int(in: 0...(next.entities.count - 1))
            switch random.int(in: 0...9) {
            case 0:
                next.entities[e].renamedFrom = next.entities[e].renamedFrom ?? next.entities[e].name
                next.entities[e].name += "x"
            case 1:
                let a = random.int(in: 0...(next.entities[e].attributes.count - 1))
                guard next.entities[e].attributes[a].name != "uid" else { continue }
                next.entities[e].attributes[a].renamedFrom =
                    next.entities[e].attributes[a].renamedFrom ?? next.entities[e].attributes[a].name
                next.entities[e].attributes[a].name += "x"
            case 2:
                var added = attribute(&next, name: "n\(next.newID())")
                if !added.optional, added.defaultValue == nil { added.optional = true }
                next.entities[e].attributes.append(added)
            case 3:
                let a = random.int(in: 0...(next.entities[e].attributes.count - 1))
                guard next.entities[e].attributes[a].name != "uid" else { continue }
                next.entities[e].attributes.remove(at: a)
            case 4:
                let a = random.int(in: 0...(next.entities[e].attributes.count - 1))
                guard next.entities[e].attributes[a].name != "uid" else { continue }
                if next.entities[e].attributes[a].optional {
                    next.entities[e].attributes[a].optional = false
                    let type = next.entities[e].attributes[a].type
                    next.entities[e].attributes[a].defaultValue = value(type)
                } else {
                    next.entities[e].attributes[a].optional = true
                }
            case 5, 6:
                guard !next.entities[e].relationships.isEmpty else { continue }
                let r = random.int(in: 0...(next.entities[e].relationships.count - 1))
                var relationship = next.entities[e].relationships[r]
                if relationship.toMany, random.chance(0.5) {
                    relationship.ordered.toggle()
                } else if relationship.toMany {
                    guard data.maximumCount(of: relationship.id) <= 1 else { continue }
                    relationship.toMany = false
                    relationship.ordered = false
                } else {
                    relationship.toMany = true
                }
                next.entities[e].relationships[r] = relationship
            case 7:
                guard !next.entities[e].relationships.isEmpty else { continue }
                let r = random.int(in: 0...(next.entities[e].relationships.count - 1))
                next.entities[e].relationships[r].renamedFrom =
                    next.entities[e].relationships[r].renamedFrom ?? next.entities[e].relationships[r].name
                next.entities[e].relationships[r].name += "x"
            case 8:
                next.entities.append(
                    ModelSpec.Entity(
                        id: next.newID(), name: "New\(next.newID())",
                        attributes: [
                            ModelSpec.Attribute(
                                id: next.newID(), name: "uid", type: .stringAttributeType, optional: false)
                        ],
                        relationships: []))
            default:
                // Removing an entity removes the relationships to it, and their inverses.
                let removed = next.entities[e].id
                next.entities.remove(at: e)
                for index in next.entities.indices {
                    next.entities[index].relationships.removeAll { $0.destination == removed }
                }
            }
        }
        // A relationship whose inverse is gone has none.
        let ids = Set(next.entities.flatMap { $0.relationships.map(\.id) })
        for index in next.entities.indices {
            for r in next.entities[index].relationships.indices
            where next.entities[index].relationships[r].inverse.map({ !ids.contains($0) }) ?? false {
                next.entities[index].relationships[r].inverse = nil
            }
        }
        return next
    }

    /// A change lightweight migration cannot infer: an attribute's type, or an attribute
    /// becoming a relationship.
    mutating func uninferableChange(_ spec: ModelSpec) -> ModelSpec {
        var next = spec
        let e = random.int(in: 0...(next.entities.count - 1))
        let candidates = next.entities[e].attributes.indices.filter { next.entities[e].attributes[$0].name != "uid" }
        guard let a = candidates.randomElement(using: &random) else {
            next.entities[e].attributes[0].type = .integer64AttributeType
            return next
        }
        if random.chance(0.8) || next.entities.count < 2 {
            let old = next.entities[e].attributes[a].type
            var type = old
            while type == old { type = Self.types[random.int(in: 0...(Self.types.count - 1))] }
            next.entities[e].attributes[a].type = type
            next.entities[e].attributes[a].defaultValue = nil
            next.entities[e].attributes[a].optional = true
        } else {
            let name = next.entities[e].attributes[a].name
            next.entities[e].attributes.remove(at: a)
            next.entities[e].relationships.append(
                ModelSpec.Relationship(
                    id: next.newID(), name: name, toMany: false, ordered: false,
                    destination: next.entities[(e + 1) % next.entities.count].id, inverse: nil))
        }
        return next
    }
}

/// The data of a store as plain values keyed by identity, and what a migration must make of it.
enum MigrationOracle {
    /// Entity id → uid → property id → value text (attributes) or destination uids.
    struct Snapshot: Equatable {
        var values: [Int: [String: [Int: String]]] = [:]
        var links: [Int: [String: [Int: [String]]]] = [:]

        /// The most destinations any object holds in the relationship `id`.
        func maximumCount(of id: Int) -> Int {
            links.values.flatMap { $0.values }.compactMap { $0[id]?.count }.max() ?? 0
        }
    }

    static func text(_ value: Any?) -> String {
        switch value {
        case nil: return "nil"
        case let date as Date: return "date \(date.timeIntervalSinceReferenceDate.bitPattern)"
        case let data as Data: return "data \(data.map { String($0) }.joined(separator: ","))"
        case let number as Double: return "double \(number.bitPattern)"
        case let number as Float: return "float \(number.bitPattern)"
        case let decimal as Decimal: return "decimal \(decimal)"
        case let decimal as NSDecimalNumber: return "decimal \(decimal.decimalValue)"
        default: return "\(type(of: value!)) \(value!)"
        }
    }

    /// The store's data read with `spec`'s model.
    static func read(_ context: NSManagedObjectContext, _ spec: ModelSpec) throws -> Snapshot {
        var snapshot = Snapshot()
        for entity in spec.entities {
            let request = NSFetchRequest<NSManagedObject>(entityName: entity.name)
            for object in try context.fetch(request) {
                let uid = object.value(forKey: "uid") as? String ?? "?"
                for attribute in entity.attributes {
                    snapshot.values[entity.id, default: [:]][uid, default: [:]][attribute.id] =
                        text(object.value(forKey: attribute.name))
                }
                for relationship in entity.relationships {
                    let value = object.value(forKey: relationship.name)
                    var uids: [String]
                    switch value {
                    case let ordered as NSOrderedSet:
                        uids = ordered.array.compactMap { ($0 as? NSManagedObject)?.value(forKey: "uid") as? String }
                    case let set as Set<NSManagedObject>:
                        uids = set.compactMap { $0.value(forKey: "uid") as? String }.sorted()
                    case let object as NSManagedObject: uids = [object.value(forKey: "uid") as? String ?? "?"]
                    default: uids = []
                    }
                    if !relationship.ordered { uids.sort() }
                    snapshot.links[entity.id, default: [:]][uid, default: [:]][relationship.id] = uids
                }
            }
        }
        return snapshot
    }

    /// What `old` (read with `from`) must read as with `to` after migrating.
    static func migrated(_ old: Snapshot, from: ModelSpec, to: ModelSpec) -> Snapshot {
        var result = Snapshot()
        for entity in to.entities {
            guard from.entity(entity.id) != nil, let objects = old.values[entity.id] else { continue }
            for (uid, values) in objects {
                for attribute in entity.attributes {
                    var value = values[attribute.id] ?? text(attribute.defaultValue)
                    if value == "nil", !attribute.optional { value = text(attribute.defaultValue) }
                    result.values[entity.id, default: [:]][uid, default: [:]][attribute.id] = value
                }
                for relationship in entity.relationships {
                    let kept = to.entity(relationship.destination) != nil
                    var uids = kept ? old.links[entity.id]?[uid]?[relationship.id] ?? [] : []
                    if !relationship.ordered { uids.sort() }
                    // Was unordered, now ordered: in primary-key order, which is not the uid's.
                    let wasOrdered =
                        from.entity(entity.id)?.relationships.first { $0.id == relationship.id }?.ordered ?? false
                    if relationship.ordered, !wasOrdered { uids.sort() }
                    result.links[entity.id, default: [:]][uid, default: [:]][relationship.id] = uids
                }
            }
        }
        return result
    }

    /// `snapshot` with the order of relationships that became ordered ignored.
    static func normalized(_ snapshot: Snapshot, from: ModelSpec, to: ModelSpec) -> Snapshot {
        var result = snapshot
        for entity in to.entities {
            for relationship in entity.relationships where relationship.ordered {
                let wasOrdered =
                    from.entity(entity.id)?.relationships.first { $0.id == relationship.id }?.ordered ?? false
                guard !wasOrdered, let objects = result.links[entity.id] else { continue }
                for uid in objects.keys { result.links[entity.id]?[uid]?[relationship.id]?.sort() }
            }
        }
        return result
    }
}

@Suite struct MigrationRandomTests {
    typealias F = MigrationFixtures

    @Test(arguments: F.stores)
    func randomInferableChangesKeepEveryValueAndOthersLeaveTheFilesAsTheyWere(type: String) throws {
        var generator = MigrationGenerator(
            random: SeededRandom(environmentOr: type == NSSQLiteStoreType ? 0x5EED_0001 : 0x5EED_0002))
        let directory = try ModelFixtures.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var migrated = 0
        for round in 0..<40 {
            let url = directory.appendingPathComponent("\(round).store")
            let source = generator.model()
            let hint = "round \(round), \(generator.random.replayHint)"
            try F.with(source.model(), url, type: type) { try generator.fill($0, source) }
            let before = try F.with(source.model(), url, type: type, options: [:]) {
                try MigrationOracle.read($0, source)
            }

            let refused = generator.uninferableChange(source)
            let files = try F.files(url)
            #expect("\(hint): an uninferable change fails") {
                _ = try F.open(refused.model(), url, type: type)
            } throws: { ($0 as NSError).code == NSMigrationMissingMappingModelError }
            #expect(try F.files(url) == files, "\(hint): the refused migration left the files as they were")

            // The inferred mapping model agrees with what opening the store does.
            #expect("\(hint): inferredMappingModel refuses it too") {
                _ = try NSMappingModel.inferredMappingModel(
                    forSourceModel: source.model(), destinationModel: refused.model())
            } throws: { ($0 as NSError).code == NSInferredMappingModelError }

            let destination = generator.inferableChanges(source, data: before)
            #expect(
                (try? NSMappingModel.inferredMappingModel(
                    forSourceModel: source.model(), destinationModel: destination.model())) != nil, "\(hint)")
            let expected = MigrationOracle.migrated(before, from: source, to: destination)
            do {
                let after = try F.with(destination.model(), url, type: type) {
                    try MigrationOracle.read($0, destination)
                }
                #expect(
                    MigrationOracle.normalized(after, from: source, to: destination)
                        == MigrationOracle.normalized(expected, from: source, to: destination), "\(hint)")
                migrated += 1
            } catch {
                Issue.record("\(hint): an inferable migration failed: \(error)")
            }
        }
        #expect(migrated == 40)
    }
}
