// Both sides of every relationship agree after every save, under every merge policy, in
// every store: a merge applies the context's changes to a to-many as a difference, and a
// store makes the other side of every link its save changed agree (the to-one deciding a
// one-to-many), removing links to rows that are gone.
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

/// Item (unique code) with Group 1-n, Shelf 1-n ordered, Tag n-n (unique names) and Badge 1-1; a shelf's
/// delete cascades to its books, every other delete rule is nullify.
enum LinkedFixtures {
    static let model: NSManagedObjectModel = {
        func entity(_ name: String) -> NSEntityDescription {
            let entity = NSEntityDescription()
            entity.name = name
            return entity
        }
        let item = entity("Item")
        let group = entity("Group")
        let shelf = entity("Shelf")
        let tag = entity("Tag")
        let badge = entity("Badge")
        func pair(
            _ from: NSEntityDescription, _ name: String, toMany: Bool, ordered: Bool = false, _ to: NSEntityDescription,
            _ inverseName: String, inverseToMany: Bool
        ) -> (NSRelationshipDescription, NSRelationshipDescription) {
            let forward = TestStack.relationship(name, to: to, toMany: toMany, ordered: ordered)
            let inverse = TestStack.relationship(inverseName, to: from, toMany: inverseToMany)
            TestStack.pair(forward, inverse)
            return (forward, inverse)
        }
        let (itemGroup, groupItems) = pair(item, "group", toMany: false, group, "items", inverseToMany: true)
        let (shelfBooks, bookShelf) = pair(
            shelf, "books", toMany: true, ordered: true, item, "shelf", inverseToMany: false)
        shelfBooks.deleteRule = .cascadeDeleteRule
        let (itemTags, tagItems) = pair(item, "tags", toMany: true, tag, "items", inverseToMany: true)
        let (itemBadge, badgeHolder) = pair(item, "badge", toMany: false, badge, "holder", inverseToMany: false)
        item.properties = [
            TestStack.attribute("code", .stringAttributeType), TestStack.attribute("note", .stringAttributeType),
            itemGroup, bookShelf, itemTags, itemBadge,
        ]
        item.uniquenessConstraints = [["code"]]
        group.properties = [TestStack.attribute("name", .stringAttributeType), groupItems]
        shelf.properties = [TestStack.attribute("name", .stringAttributeType), shelfBooks]
        tag.properties = [TestStack.attribute("name", .stringAttributeType), tagItems]
        // Upserts of the to-many side too: a fresh object under a stored name takes its row.
        for entity in [group, shelf, tag] { entity.uniquenessConstraints = [["name"]] }
        badge.properties = [TestStack.attribute("name", .stringAttributeType), badgeHolder]
        let model = NSManagedObjectModel()
        model.entities = [item, group, shelf, tag, badge]
        return model
    }()

    static let storeTypes = [NSInMemoryStoreType, NSSQLiteStoreType, NSBinaryStoreType]
    static let policies: [NSMergePolicyType] = [
        .errorMergePolicyType, .mergeByPropertyStoreTrumpMergePolicyType, .mergeByPropertyObjectTrumpMergePolicyType,
        .overwriteMergePolicyType, .rollbackMergePolicyType,
    ]

    static func coordinator(_ storeType: String) throws -> NSPersistentStoreCoordinator {
        try PageFileFixtures.coordinator(model, try PageFileFixtures.temporaryURL(), type: storeType)
    }

    static func context(
        _ coordinator: NSPersistentStoreCoordinator, _ policy: NSMergePolicyType = .errorMergePolicyType
    )
        -> NSManagedObjectContext
    {
        let context = PageFileFixtures.context(coordinator)
        context.mergePolicy = NSMergePolicy(merge: policy)
        return context
    }

    @discardableResult
    static func insert(_ entity: String, _ name: String, into context: NSManagedObjectContext) -> NSManagedObject {
        let object = NSEntityDescription.insertNewObject(forEntityName: entity, into: context)
        object.setValue(name, forKey: entity == "Item" ? "code" : "name")
        return object
    }

    static func fetch(_ entity: String, _ name: String, in context: NSManagedObjectContext) throws -> NSManagedObject? {
        let request = NSFetchRequest<NSManagedObject>(entityName: entity)
        request.predicate = NSPredicate(format: "%K == %@", entity == "Item" ? "code" : "name", name)
        return try context.fetch(request).first
    }

    static func names(_ value: Any?) -> Set<String> {
        let objects: [NSManagedObject]
        switch value {
        case let set as Set<NSManagedObject>: objects = Array(set)
        case let ordered as NSOrderedSet: objects = ordered.array.compactMap { $0 as? NSManagedObject }
        default: objects = []
        }
        return Set(objects.map { $0.value(forKey: $0.entity.name == "Item" ? "code" : "name") as? String ?? "?" })
    }

    /// What is wrong with both sides of the store's relationships, and the default store's verify().
    static func problems(_ coordinator: NSPersistentStoreCoordinator) throws -> [String] {
        var problems: [String] = []
        for store in coordinator.persistentStores {
            problems += try RelationshipAudit.problems(in: store, model: model)
            if let store = store as? PageFileStore { problems += try store.verify().problems }
        }
        return problems
    }
}

@Suite struct RelationshipIntegrityTests {
    typealias Fixtures = LinkedFixtures

    /// Two contexts each add a different item to one tag; the second saves under a policy
    /// that keeps changes: the tag lists both, each item lists the tag.
    @Test(arguments: LinkedFixtures.storeTypes)
    func manyToManyAddsFromTwoContextsBothSurvive(storeType: String) throws {
        for policy in Fixtures.policies where policy != .errorMergePolicyType {
            let coordinator = try Fixtures.coordinator(storeType)
            let setup = Fixtures.context(coordinator)
            Fixtures.insert("Tag", "t", into: setup)
            for code in ["a", "b"] { Fixtures.insert("Item", code, into: setup) }
            try setup.save()
            let first = Fixtures.context(coordinator, policy)
            let second = Fixtures.context(coordinator, policy)
            let firstTag = try #require(try Fixtures.fetch("Tag", "t", in: first))
            let secondTag = try #require(try Fixtures.fetch("Tag", "t", in: second))
            #expect(Fixtures.names(firstTag.value(forKey: "items")).isEmpty)
            #expect(Fixtures.names(secondTag.value(forKey: "items")).isEmpty)
            firstTag.mutableSetValue(forKey: "items").add(try #require(try Fixtures.fetch("Item", "a", in: first)))
            secondTag.mutableSetValue(forKey: "items").add(try #require(try Fixtures.fetch("Item", "b", in: second)))
            try first.save()
            try second.save()
            let reader = Fixtures.context(coordinator)
            let tag = try #require(try Fixtures.fetch("Tag", "t", in: reader))
            #expect(
                Fixtures.names(tag.value(forKey: "items")) == ["a", "b"], "\(storeType), policy \(policy.rawValue)")
            for code in ["a", "b"] {
                let item = try #require(try Fixtures.fetch("Item", code, in: reader))
                #expect(Fixtures.names(item.value(forKey: "tags")) == ["t"], "\(storeType), policy \(policy.rawValue)")
            }
            #expect(try Fixtures.problems(coordinator) == [], "\(storeType), policy \(policy.rawValue)")
        }
    }

    /// A context adds an item to a tag whose other item another context deleted meanwhile:
    /// the merged list names no deleted row, and both sides agree.
    @Test(arguments: LinkedFixtures.storeTypes)
    func aMergeNamesNoRowDeletedMeanwhile(storeType: String) throws {
        for policy in Fixtures.policies where policy != .errorMergePolicyType {
            let coordinator = try Fixtures.coordinator(storeType)
            let setup = Fixtures.context(coordinator)
            let tag = Fixtures.insert("Tag", "t", into: setup)
            for code in ["kept", "doomed"] {
                tag.mutableSetValue(forKey: "items").add(Fixtures.insert("Item", code, into: setup))
            }
            Fixtures.insert("Item", "new", into: setup)
            try setup.save()
            let stale = Fixtures.context(coordinator, policy)
            let staleTag = try #require(try Fixtures.fetch("Tag", "t", in: stale))
            #expect(Fixtures.names(staleTag.value(forKey: "items")) == ["kept", "doomed"])
            let deleter = Fixtures.context(coordinator)
            deleter.delete(try #require(try Fixtures.fetch("Item", "doomed", in: deleter)))
            try deleter.save()
            staleTag.mutableSetValue(forKey: "items").add(try #require(try Fixtures.fetch("Item", "new", in: stale)))
            try stale.save()
            let reader = Fixtures.context(coordinator)
            let stored = try #require(try Fixtures.fetch("Tag", "t", in: reader))
            // Under rollback too: the new item's side of the link is saved, and the tag follows.
            #expect(
                Fixtures.names(stored.value(forKey: "items")) == ["kept", "new"],
                "\(storeType), policy \(policy.rawValue)")
            #expect(try Fixtures.problems(coordinator) == [], "\(storeType), policy \(policy.rawValue)")
        }
    }

    /// A context whose item took another row's ID by an upsert (its group nil there, the
    /// store's item in a group) deletes that group: the stored item names no deleted row.
    /// (Since the upserted object reads the row once the save is done, the context sees
    /// the group; `aStaleContextsDeleteLeavesNoToOneNamingTheRow` keeps the store's part.)
    @Test(arguments: LinkedFixtures.storeTypes)
    func anUpsertedObjectsStoredToOneLetsGoOfADeletedDestination(storeType: String) throws {
        let coordinator = try Fixtures.coordinator(storeType)
        let setup = Fixtures.context(coordinator)
        let item = Fixtures.insert("Item", "x", into: setup)
        let group = Fixtures.insert("Group", "g", into: setup)
        item.setValue(group, forKey: "group")
        try setup.save()
        let upserter = Fixtures.context(coordinator, .mergeByPropertyObjectTrumpMergePolicyType)
        let duplicate = Fixtures.insert("Item", "x", into: upserter)
        duplicate.setValue("upserted", forKey: "note")
        try upserter.save()
        #expect(duplicate.objectID == item.objectID, "the insert became an update of the stored item")
        #expect(
            (duplicate.value(forKey: "group") as? NSManagedObject)?.objectID == group.objectID,
            "the upserted object reads the stored group")
        upserter.delete(try #require(try Fixtures.fetch("Group", "g", in: upserter)))
        try upserter.save()
        let reader = Fixtures.context(coordinator)
        let stored = try #require(try Fixtures.fetch("Item", "x", in: reader))
        #expect(stored.value(forKey: "group") == nil)
        #expect(stored.value(forKey: "note") as? String == "upserted")
        #expect(try Fixtures.problems(coordinator) == [])
    }

    /// Under rollback the conflicting side of a one-to-many loses its change: the to-one
    /// decides, so the list follows it in every store.
    @Test(arguments: LinkedFixtures.storeTypes)
    func aRolledBackToOneDecidesTheList(storeType: String) throws {
        let coordinator = try Fixtures.coordinator(storeType)
        let setup = Fixtures.context(coordinator)
        let item = Fixtures.insert("Item", "x", into: setup)
        item.setValue(Fixtures.insert("Group", "g0", into: setup), forKey: "group")
        Fixtures.insert("Group", "g1", into: setup)
        Fixtures.insert("Group", "g2", into: setup)
        try setup.save()
        let stale = Fixtures.context(coordinator, .rollbackMergePolicyType)
        let staleItem = try #require(try Fixtures.fetch("Item", "x", in: stale))
        _ = try Fixtures.fetch("Group", "g0", in: stale)?.value(forKey: "items")
        let other = Fixtures.context(coordinator)
        try #require(try Fixtures.fetch("Item", "x", in: other)).setValue(
            try Fixtures.fetch("Group", "g2", in: other), forKey: "group")
        try other.save()
        staleItem.setValue(try Fixtures.fetch("Group", "g1", in: stale), forKey: "group")
        try stale.save()
        let reader = Fixtures.context(coordinator)
        let stored = try #require(try Fixtures.fetch("Item", "x", in: reader))
        #expect((stored.value(forKey: "group") as? NSManagedObject)?.value(forKey: "name") as? String == "g2")
        for name in ["g0", "g1", "g2"] {
            let group = try #require(try Fixtures.fetch("Group", name, in: reader))
            #expect(Fixtures.names(group.value(forKey: "items")) == (name == "g2" ? ["x"] : []), "\(name)")
        }
        #expect(try Fixtures.problems(coordinator) == [])
    }

    /// A context that read a group before another save put an item in it deletes the group
    /// (nullify): it never saw the item there, so only the store can let the item go of
    /// the deleted row.
    @Test(arguments: LinkedFixtures.storeTypes)
    func aStaleContextsDeleteLeavesNoToOneNamingTheRow(storeType: String) throws {
        let coordinator = try Fixtures.coordinator(storeType)
        let setup = Fixtures.context(coordinator)
        Fixtures.insert("Item", "x", into: setup)
        Fixtures.insert("Group", "g", into: setup)
        try setup.save()
        let stale = Fixtures.context(coordinator, .mergeByPropertyObjectTrumpMergePolicyType)
        let staleGroup = try #require(try Fixtures.fetch("Group", "g", in: stale))
        #expect(Fixtures.names(staleGroup.value(forKey: "items")) == [])
        let other = Fixtures.context(coordinator)
        try #require(try Fixtures.fetch("Item", "x", in: other)).setValue(
            try Fixtures.fetch("Group", "g", in: other), forKey: "group")
        try other.save()
        stale.delete(staleGroup)
        try stale.save()
        let reader = Fixtures.context(coordinator)
        let stored = try #require(try Fixtures.fetch("Item", "x", in: reader))
        #expect(stored.value(forKey: "group") == nil)
        #expect(try Fixtures.problems(coordinator) == [])
    }

    /// An upsert of the to-many side: the inserted object takes the stored row, which keeps
    /// its books. Afterwards the object reads the row (it read its own empty list), and its
    /// delete cascades to the books (it cascaded to none, and the store let the books go of
    /// their deleted shelf: objects whose delete was acknowledged were back, as the soak
    /// found). An object registered for the row before the upsert reads it too, and the
    /// books that held it let go of it (their nullify wrote the deleted shelf back).
    @Test(arguments: LinkedFixtures.storeTypes)
    func anUpsertedObjectReadsTheRowItTookAndItsDeleteCascades(storeType: String) throws {
        let policies: [NSMergePolicyType] = [
            .mergeByPropertyStoreTrumpMergePolicyType, .mergeByPropertyObjectTrumpMergePolicyType,
            .overwriteMergePolicyType, .rollbackMergePolicyType,
        ]
        for policy in policies {
            let coordinator = try Fixtures.coordinator(storeType)
            let setup = Fixtures.context(coordinator)
            let shelf = Fixtures.insert("Shelf", "a", into: setup)
            for name in ["x", "y"] {
                shelf.mutableOrderedSetValue(forKey: "books").add(Fixtures.insert("Item", name, into: setup))
            }
            try setup.save()
            let context = Fixtures.context(coordinator, policy)
            let earlier = try #require(try Fixtures.fetch("Shelf", "a", in: context))
            #expect(Fixtures.names(earlier.value(forKey: "books")) == ["x", "y"])
            // The books hold the earlier object as their shelf.
            for book in try #require(earlier.value(forKey: "books") as? NSOrderedSet) {
                #expect((book as? NSManagedObject)?.value(forKey: "shelf") as? NSManagedObject === earlier)
            }
            let fresh = Fixtures.insert("Shelf", "a", into: context)
            try context.save()
            #expect(fresh.objectID == earlier.objectID, "\(storeType), \(policy)")
            #expect(Fixtures.names(fresh.value(forKey: "books")) == ["x", "y"], "\(storeType), \(policy)")
            #expect(Fixtures.names(earlier.value(forKey: "books")) == ["x", "y"], "\(storeType), \(policy)")
            context.delete(fresh)
            try context.save()
            let reader = Fixtures.context(coordinator)
            for name in ["x", "y"] {
                #expect(try Fixtures.fetch("Item", name, in: reader) == nil, "\(storeType), \(policy): \(name) back")
            }
            #expect(try Fixtures.fetch("Shelf", "a", in: reader) == nil, "\(storeType), \(policy): the shelf back")
            #expect(try Fixtures.problems(coordinator) == [], "\(storeType), \(policy)")
        }
    }

    /// verify() reports a to-one naming a row that is gone (a no-action delete leaves one).
    @Test func verifyReportsAToOneNamingAMissingRow() throws {
        let source = PageFileFixtures.makePeopleModel()
        source.entitiesByName["Team"]?.relationshipsByName["members"]?.deleteRule = .noActionDeleteRule
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = try PageFileFixtures.coordinator(source, url)
        let context = PageFileFixtures.context(coordinator)
        let team = NSEntityDescription.insertNewObject(forEntityName: "Team", into: context)
        team.setValue("T", forKey: "title")
        PageFileFixtures.person(context, "A", "B", 1, "a@x").setValue(team, forKey: "team")
        try context.save()
        let store = try #require(coordinator.persistentStores.first as? PageFileStore)
        #expect(try store.verify().isClean)
        context.delete(team)
        try context.save()
        let problems = try store.verify().problems
        #expect(problems.contains { $0.contains("rows.Person") && $0.contains("missing rows") }, "\(problems)")
        #expect(try RelationshipAudit.problems(in: store, model: source).count == 1)
    }
}
