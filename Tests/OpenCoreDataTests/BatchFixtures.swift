// The model and stacks the batch request tests share: an entity with every kind of
// attribute a batch touches (required, defaulted, unique, indexed, a large binary value
// kept apart) and relationships of every shape around it, with each delete rule, on each
// of the three stores.
import Foundation
import OpenCoreData
import StorageEngine
import TestSupport
import Testing

enum BatchFixtures {
    /// The store types every batch test runs on.
    static let storeTypes = [NSInMemoryStoreType, NSBinaryStoreType, NSSQLiteStoreType]

    static func attribute(
        _ name: String, _ type: NSAttributeType, optional: Bool = true, defaultValue: Any? = nil, indexed: Bool = false
    ) -> NSAttributeDescription {
        TestStack.attribute(name, type, optional: optional, defaultValue: defaultValue, indexed: indexed)
    }

    static func relationship(
        _ name: String, to destination: NSEntityDescription, toMany: Bool, rule: NSDeleteRule = .nullifyDeleteRule,
        optional: Bool = true, ordered: Bool = false
    ) -> NSRelationshipDescription {
        TestStack.relationship(name, to: destination, toMany: toMany, rule: rule, optional: optional, ordered: ordered)
    }

    static func pair(_ a: NSRelationshipDescription, _ b: NSRelationshipDescription) { TestStack.pair(a, b) }

    /// Item: name (required), code (unique), count (indexed, default 0), score, flag
    /// (default true), note, payload (external binary, its value kept in history on
    /// deletion), created. Box 1-n Item (cascade / nullify), Tag n-n Item, Item n-1 Group
    /// whose members are mandatory, Holder n-1 Item through a mandatory to-one, Item 1-n
    /// ordered Step (cascade), Special a sub-entity of Item.
    static func makeModel() -> NSManagedObjectModel {
        func entity(_ name: String) -> NSEntityDescription {
            let entity = NSEntityDescription()
            entity.name = name
            return entity
        }
        let item = entity("Item")
        let special = entity("Special")
        let box = entity("Box")
        let tag = entity("Tag")
        let group = entity("Group")
        let holder = entity("Holder")
        let step = entity("Step")

        let boxItems = relationship("items", to: item, toMany: true, rule: .cascadeDeleteRule)
        let itemBox = relationship("box", to: box, toMany: false)
        pair(boxItems, itemBox)
        let itemTags = relationship("tags", to: tag, toMany: true)
        let tagItems = relationship("items", to: item, toMany: true, rule: .denyDeleteRule)
        pair(itemTags, tagItems)
        let groupMembers = relationship("members", to: item, toMany: true, optional: false)
        let itemGroup = relationship("group", to: group, toMany: false)
        pair(groupMembers, itemGroup)
        let holderPin = relationship("pin", to: item, toMany: false, optional: false)
        let itemHolders = relationship("holders", to: holder, toMany: true)
        pair(holderPin, itemHolders)
        let itemSteps = relationship("steps", to: step, toMany: true, rule: .cascadeDeleteRule, ordered: true)
        let stepItem = relationship("item", to: item, toMany: false)
        pair(itemSteps, stepItem)

        let payload = attribute("payload", .binaryDataAttributeType)
        payload.allowsExternalBinaryDataStorage = true
        let code = attribute("code", .stringAttributeType)
        code.preservesValueInHistoryOnDeletion = true
        item.properties = [
            attribute("name", .stringAttributeType, optional: false),
            code,
            attribute("count", .integer32AttributeType, optional: false, defaultValue: 0, indexed: true),
            attribute("score", .doubleAttributeType),
            attribute("flag", .booleanAttributeType, optional: false, defaultValue: true),
            attribute("note", .stringAttributeType),
            payload,
            attribute("created", .dateAttributeType),
            itemBox, itemTags, itemGroup, itemHolders, itemSteps,
        ]
        item.uniquenessConstraints = [["code"]]
        special.properties = [attribute("level", .integer16AttributeType, optional: false, defaultValue: 1)]
        item.subentities = [special]
        box.properties = [attribute("label", .stringAttributeType), boxItems]
        tag.properties = [attribute("word", .stringAttributeType), tagItems]
        group.properties = [attribute("title", .stringAttributeType), groupMembers]
        holder.properties = [attribute("title", .stringAttributeType), holderPin]
        step.properties = [attribute("title", .stringAttributeType), stepItem]
        let model = NSManagedObjectModel()
        model.entities = [item, special, box, tag, group, holder, step]
        return model
    }

    /// One model per process, as Core Data recommends.
    static let model = makeModel()

    /// A coordinator of `model` with one store of `type` (a new file for the file stores),
    /// history on.
    static func coordinator(
        _ type: String, model: NSManagedObjectModel = model, url: URL? = nil, options extra: [AnyHashable: Any] = [:]
    ) throws -> NSPersistentStoreCoordinator {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        var options: [AnyHashable: Any] = [
            NSPersistentHistoryTrackingKey: true as NSNumber, PageFileStoreDurabilityOption: "off",
        ]
        options.merge(extra) { _, new in new }
        let location = type == NSInMemoryStoreType ? nil : try url ?? temporaryURL(type)
        try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: location, options: options)
        return coordinator
    }

    static func temporaryURL(_ type: String) throws -> URL {
        let directory = try TestScratch.directory("batch")
        return directory.appendingPathComponent(type == NSBinaryStoreType ? "Batch.binary" : "Batch.store")
    }

    static func context(_ coordinator: NSPersistentStoreCoordinator) -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    /// A context on a new store of `type`.
    static func freshContext(_ type: String) throws -> NSManagedObjectContext {
        context(try coordinator(type))
    }

    @discardableResult
    static func item(
        _ context: NSManagedObjectContext, _ name: String, code: String? = nil, count: Int32 = 0,
        entity: String = "Item"
    ) -> NSManagedObject {
        let item = NSEntityDescription.insertNewObject(forEntityName: entity, into: context)
        item.setValue(name, forKey: "name")
        item.setValue(code, forKey: "code")
        item.setValue(count, forKey: "count")
        return item
    }

    static func object(_ entity: String, _ context: NSManagedObjectContext, _ values: [String: Any]) -> NSManagedObject
    {
        let object = NSEntityDescription.insertNewObject(forEntityName: entity, into: context)
        for (key, value) in values { object.setValue(value, forKey: key) }
        return object
    }

    static func fetch(_ entity: String, _ context: NSManagedObjectContext, _ format: String? = nil, _ arguments: Any...)
        throws -> [NSManagedObject]
    {
        let request = NSFetchRequest<NSManagedObject>(entityName: entity)
        if let format { request.predicate = NSPredicate(format: format, argumentArray: arguments) }
        return try context.fetch(request)
    }

    /// Every stored object of the model as text, sorted: attributes by value and
    /// relationships by their destinations' keys, read through a fresh context. Two stores
    /// with the same text hold the same graph.
    static func snapshot(_ coordinator: NSPersistentStoreCoordinator) throws -> [String] {
        let reader = context(coordinator)
        var lines: [String] = []
        for entity in model.entities {
            let request = NSFetchRequest<NSManagedObject>(entityName: entity.name ?? "")
            request.includesSubentities = false
            for object in try reader.fetch(request) {
                var parts = ["\(entity.name ?? "")/\(key(object.objectID))"]
                for (name, property) in entity.propertiesByName.sorted(by: { $0.key < $1.key }) {
                    let value = object.value(forKey: name)
                    if let relationship = property as? NSRelationshipDescription {
                        let destinations: [NSManagedObject]
                        switch value {
                        case let set as Set<NSManagedObject>: destinations = Array(set)
                        case let ordered as NSOrderedSet:
                            destinations = ordered.array.compactMap { $0 as? NSManagedObject }
                        case let array as [NSManagedObject]: destinations = array
                        case let one as NSManagedObject: destinations = [one]
                        default: destinations = []
                        }
                        var keys = destinations.map { key($0.objectID) }
                        if !relationship.isOrdered { keys.sort() }
                        parts.append("\(name)=[\(keys.joined(separator: ","))]")
                    } else {
                        parts.append("\(name)=\(value.map { "\($0)" } ?? "nil")")
                    }
                }
                lines.append(parts.joined(separator: " "))
            }
        }
        return lines.sorted()
    }

    /// An object's ID without its store: entity and primary key.
    static func key(_ objectID: NSManagedObjectID) -> String {
        let path = objectID.uriRepresentation().path
        return path.split(separator: "/").suffix(2).joined(separator: "/")
    }

    /// Every change of every history transaction after `token`, as text ("insert Item/p3",
    /// "update Item/p4 count,flag", "delete Item/p5 code=..."), each transaction's sorted.
    static func history(_ context: NSManagedObjectContext, after token: NSPersistentHistoryToken?) throws
        -> [[String]]
    {
        let result = try context.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: token))
        let transactions = (result as? NSPersistentHistoryResult)?.result as? [NSPersistentHistoryTransaction] ?? []
        return transactions.map { transaction in
            (transaction.changes ?? []).map { change in
                let id = key(change.changedObjectID)
                switch change.changeType {
                case .insert: return "insert \(id)"
                case .update:
                    let names = (change.updatedProperties ?? []).map(\.name).sorted()
                    return "update \(id) \(names.joined(separator: ","))"
                case .delete:
                    let tombstone = (change.tombstone ?? [:]).map { "\($0.key)=\($0.value)" }.sorted()
                    return "delete \(id) \(tombstone.joined(separator: ","))"
                @unknown default: return "?"
                }
            }.sorted()
        }
    }

    /// The store of `coordinator`, checked when it is the default store.
    static func verify(_ coordinator: NSPersistentStoreCoordinator, _ comment: Comment? = nil) throws {
        guard let store = coordinator.persistentStores.first as? PageFileStore else { return }
        let report = try store.verify()
        #expect(report.isClean, "\(report.problems) \(comment?.rawValue ?? "")")
    }
}

/// Two stores changed alike, one through batch requests and one through objects and
/// save(): the differential tests' sides, with the history each wrote since the last look.
struct BatchSides {
    let batchSide: NSPersistentStoreCoordinator
    let objectSide: NSPersistentStoreCoordinator
    private var tokens: (batch: NSPersistentHistoryToken?, objects: NSPersistentHistoryToken?)

    /// Both sides' stores, each seeded by `seed` through a context of its own.
    init(
        _ makeCoordinator: () throws -> NSPersistentStoreCoordinator, seed: (NSManagedObjectContext) throws -> Void
    ) throws {
        batchSide = try makeCoordinator()
        objectSide = try makeCoordinator()
        try seed(BatchFixtures.context(batchSide))
        try seed(BatchFixtures.context(objectSide))
        tokens = (
            batchSide.currentPersistentHistoryToken(fromStores: nil),
            objectSide.currentPersistentHistoryToken(fromStores: nil)
        )
    }

    /// Each side's history since the previous call (or the seeding), as BatchFixtures.history gives it.
    mutating func newHistory() throws -> (batch: [[String]], objects: [[String]]) {
        let history = (
            try BatchFixtures.history(BatchFixtures.context(batchSide), after: tokens.batch),
            try BatchFixtures.history(BatchFixtures.context(objectSide), after: tokens.objects)
        )
        tokens = (
            batchSide.currentPersistentHistoryToken(fromStores: nil),
            objectSide.currentPersistentHistoryToken(fromStores: nil)
        )
        return history
    }
}
