// The soak's model: every relationship kind Core Data has, on entities whose keys say
// who wrote them.
//
//   Counter  writer (unique), value               one per writer, only that writer saves it
//   Owner    key (unique), writer, note
//            items    ordered one-to-many -> Item.owner    cascade
//            tags     many-to-many        <-> Tag.owners    nullify
//            favorite to-one              -> Tag.favoredBy  nullify (inverse to-many)
//   Item     key (indexed), value, owner (to-one)
//   Tag      name (unique), hits; owners, favoredBy
//
// Keys are (writer number << 40) | serial, so no two writers ever insert the same key and
// a writer never reuses one. Tags are shared: every writer upserts, links and deletes them.
import Foundation
import OpenCoreData

final class SoakCounter: NSManagedObject {
    @Managed var writer: String?
    @Managed var value: Int64
}

final class SoakOwner: NSManagedObject {
    @Managed var key: Int64
    @Managed var writer: String?
    @Managed var note: String?
    @Managed var items: NSOrderedSet?
    @Managed var tags: Set<SoakTag>
    @Managed var favorite: SoakTag?
}

final class SoakItem: NSManagedObject {
    @Managed var key: Int64
    @Managed var value: Int64
    @Managed var owner: SoakOwner?
}

final class SoakTag: NSManagedObject {
    @Managed var name: String?
    @Managed var hits: Int64
    @Managed var owners: Set<SoakOwner>
    @Managed var favoredBy: Set<SoakOwner>
}

enum SoakModel {
    /// How many tag names the writers share.
    static let tagCount = 24

    static func tagName(_ index: Int) -> String { String(format: "tag-%02d", index) }

    static let model: NSManagedObjectModel = {
        func attribute(_ name: String, _ type: NSAttributeType, indexed: Bool = false) -> NSAttributeDescription {
            ModelDescriptions.attribute(
                name, type, indexed: indexed, defaultValue: type == .integer64AttributeType ? Int64(0) : nil)
        }
        func relationship(_ name: String, to destination: NSEntityDescription, toMany: Bool, rule: NSDeleteRule)
            -> NSRelationshipDescription
        { ModelDescriptions.relationship(name, to: destination, toMany: toMany, rule: rule) }
        let entity = ModelDescriptions.entity
        let counter = entity("Counter", SoakCounter.self)
        let owner = entity("Owner", SoakOwner.self)
        let item = entity("Item", SoakItem.self)
        let tag = entity("Tag", SoakTag.self)

        let items = relationship("items", to: item, toMany: true, rule: .cascadeDeleteRule)
        items.isOrdered = true
        let itemOwner = relationship("owner", to: owner, toMany: false, rule: .nullifyDeleteRule)
        let tags = relationship("tags", to: tag, toMany: true, rule: .nullifyDeleteRule)
        let tagOwners = relationship("owners", to: owner, toMany: true, rule: .nullifyDeleteRule)
        let favorite = relationship("favorite", to: tag, toMany: false, rule: .nullifyDeleteRule)
        let favoredBy = relationship("favoredBy", to: owner, toMany: true, rule: .nullifyDeleteRule)
        for (one, other) in [(items, itemOwner), (tags, tagOwners), (favorite, favoredBy)] {
            ModelDescriptions.pair(one, other)
        }

        counter.properties = [attribute("writer", .stringAttributeType), attribute("value", .integer64AttributeType)]
        counter.uniquenessConstraints = [["writer"]]
        owner.properties = [
            attribute("key", .integer64AttributeType), attribute("writer", .stringAttributeType),
            attribute("note", .stringAttributeType), items, tags, favorite,
        ]
        owner.uniquenessConstraints = [["key"]]
        item.properties = [
            attribute("key", .integer64AttributeType, indexed: true), attribute("value", .integer64AttributeType),
            itemOwner,
        ]
        tag.properties = [
            attribute("name", .stringAttributeType), attribute("hits", .integer64AttributeType), tagOwners, favoredBy,
        ]
        tag.uniquenessConstraints = [["name"]]
        let model = NSManagedObjectModel()
        model.entities = [counter, owner, item, tag]
        return model
    }()

    /// A coordinator on the soak's store at `url`, shared with other processes.
    static func coordinator(url: URL, durability: String) throws -> NSPersistentStoreCoordinator {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: url,
            options: [
                PageFileStoreMultiProcessOption: true as NSNumber, PageFileStoreDurabilityOption: durability,
                NSPersistentStoreTimeoutOption: 30 as NSNumber,
            ])
        return coordinator
    }

    /// The objects of `entity` whose `key` (or other attribute) equals `value`.
    static func fetch<Object: NSManagedObject>(
        _ entity: String, where attribute: String, is value: Any, in context: NSManagedObjectContext,
        as type: Object.Type
    ) throws -> [Object] {
        let request = NSFetchRequest<Object>(entityName: entity)
        request.predicate = NSPredicate(format: "%K == %@", attribute, value as? NSObject ?? "\(value)" as NSString)
        return try context.fetch(request)
    }

    /// The owner with `key`, if it exists.
    static func owner(_ key: Int64, in context: NSManagedObjectContext) throws -> SoakOwner? {
        try fetch("Owner", where: "key", is: NSNumber(value: key), in: context, as: SoakOwner.self).first
    }

    /// The item with `key`, if it exists.
    static func item(_ key: Int64, in context: NSManagedObjectContext) throws -> SoakItem? {
        try fetch("Item", where: "key", is: NSNumber(value: key), in: context, as: SoakItem.self).first
    }

    /// The tag named `name`, if it exists.
    static func tag(_ name: String, in context: NSManagedObjectContext) throws -> SoakTag? {
        try fetch("Tag", where: "name", is: name as NSString, in: context, as: SoakTag.self).first
    }
}
