// Objects the default store loads through the slot form (StoreRowSlots.swift) against the
// general path, object by object: fetched objects (scans, encoded predicates, index
// ranges, sorted windows, top rows), faults fired one by one, batches of a batched fetch
// and of a traversed to-many. Each loaded object's values must be those the general
// conversion makes of the same row read by the general path.
import Foundation
import Testing

@testable import OpenCoreData

@Suite struct PageFileRowSlotLoadTests {
    static let transformerName = "PageFileRowSlotLoadTests.PassThrough"

    /// Item: an attribute of every stored type (`big` kept in the blob tree when large),
    /// parent / children (to-one, inverse to-many), tags (ordered many-to-many, kept outside
    /// the row); Special, a sub-entity of Item; Tag.
    static let model: NSManagedObjectModel = {
        ValueTransformer.setValueTransformer(PassThroughTransformer(), forName: NSValueTransformerName(transformerName))
        let (item, special, tag) = (NSEntityDescription(), NSEntityDescription(), NSEntityDescription())
        (item.name, special.name, tag.name) = ("Item", "Special", "Tag")
        let attribute = TestStack.attribute
        let transformable = attribute("xf", .transformableAttributeType, true, nil, false)
        transformable.valueTransformerName = transformerName
        let big = attribute("big", .binaryDataAttributeType, true, nil, false)
        big.allowsExternalBinaryDataStorage = true
        let parent = TestStack.relationship("parent", to: item, toMany: false)
        let children = TestStack.relationship("children", to: item, toMany: true)
        TestStack.pair(parent, children)
        let tags = TestStack.relationship("tags", to: tag, toMany: true, ordered: true)
        let items = TestStack.relationship("items", to: item, toMany: true)
        TestStack.pair(tags, items)
        item.properties = [
            attribute("i16", .integer16AttributeType, true, nil, false),
            attribute("i32", .integer32AttributeType, true, nil, false),
            attribute("i64", .integer64AttributeType, true, nil, true),
            attribute("dec", .decimalAttributeType, true, nil, false),
            attribute("dbl", .doubleAttributeType, true, nil, false),
            attribute("flt", .floatAttributeType, true, nil, false),
            attribute("str", .stringAttributeType, true, nil, false),
            attribute("flag", .booleanAttributeType, true, nil, false),
            attribute("when", .dateAttributeType, true, nil, false),
            attribute("bytes", .binaryDataAttributeType, true, nil, false),
            attribute("uid", .UUIDAttributeType, true, nil, false),
            attribute("link", .URIAttributeType, true, nil, false),
            transformable, big, parent, children, tags,
        ]
        special.properties = [attribute("extra", .stringAttributeType, true, nil, false)]
        item.subentities = [special]
        tag.properties = [attribute("label", .stringAttributeType, true, nil, false), items]
        let model = NSManagedObjectModel()
        model.entities = [item, special, tag]
        return model
    }()

    /// What item `index` holds: every fifth has no values but its number, every fifth holds
    /// only the slot form's types, some a parent, some values the slot form declines.
    static func fill(_ item: NSManagedObject, _ index: Int, parents: [NSManagedObject], tags: [NSManagedObject]) {
        item.setValue(Int64(index), forKey: "i64")
        if item.entity.name == "Special" { item.setValue("special \(index)", forKey: "extra") }
        guard index % 5 != 0 else { return }
        item.setValue(Int16(index - 20), forKey: "i16")
        item.setValue(Int32(index * 1_000_000), forKey: "i32")
        item.setValue(Double(index) / 3, forKey: "dbl")
        item.setValue(
            index % 2 == 0 ? "name \(index)" : String(repeating: "long name \(index) ", count: 8), forKey: "str")
        item.setValue(index % 3 == 0, forKey: "flag")
        item.setValue(Date(timeIntervalSinceReferenceDate: Double(index) * 1.5), forKey: "when")
        item.setValue(Data((0..<UInt8(index % 9)).map { $0 }), forKey: "bytes")
        item.setValue(UUID(), forKey: "uid")
        if index % 5 >= 2 { item.setValue(parents[index % parents.count], forKey: "parent") }
        if index % 4 == 1 { item.mutableOrderedSetValue(forKey: "tags").addObjects(from: [tags[index % 3], tags[2]]) }
        switch index % 5 {
        case 3:
            item.setValue(Decimal(index) / 4, forKey: "dec")
            item.setValue(Float(index) / 8, forKey: "flt")
            item.setValue(URL(string: "https://example.com/\(index)"), forKey: "link")
            item.setValue(Data([1, 2, UInt8(index)]), forKey: "xf")
        case 4:
            item.setValue(Data(repeating: UInt8(index), count: index % 2 == 0 ? 10 : 70_000), forKey: "big")
        default: break
        }
    }

    /// A store of 60 items (some Special), 6 of them parents of others, and 3 tags.
    static func makeStore() throws -> (URL, NSPersistentStoreCoordinator) {
        let directory = try TestStack.scratchDirectory("row-slot-load")
        let coordinator = try TestStack.coordinator(NSSQLiteStoreType, model: model, in: directory)
        let context = TestStack.context(coordinator)
        let tags = (0..<3).map { index in
            let tag = NSEntityDescription.insertNewObject(forEntityName: "Tag", into: context)
            tag.setValue("tag \(index)", forKey: "label")
            return tag
        }
        var parents: [NSManagedObject] = []
        for index in 0..<60 {
            let item = NSEntityDescription.insertNewObject(
                forEntityName: index % 7 == 0 ? "Special" : "Item", into: context)
            fill(item, index, parents: parents.isEmpty ? [item] : parents, tags: tags)
            if index < 6 { parents.append(item) }
        }
        try context.save()
        return (directory, coordinator)
    }

    /// Expects `object` (loaded) to hold what the general path makes of its stored row: the
    /// row read alone (`batch` false) or as a batch of faults reads it (to-manys resolved).
    static func expectGeneral(_ object: NSManagedObject, batch: Bool = false, _ path: String) throws {
        #expect(!object.isFault, "\(path)")
        let store = try #require(object.objectID.persistentStore)
        let row = try #require(
            batch ? try store.rows(for: [object.objectID]).first ?? nil : try store.row(for: object.objectID))
        #expect(row.slots == nil, "the general path's row")
        let expected = object.objectValues(from: row.values).storage.map(PageFileRowSlotDecodeTests.describe)
        let loaded = object.values.storage.map(PageFileRowSlotDecodeTests.describe)
        #expect(loaded == expected, "\(path): \(object.entity.name ?? "?") \(object.value(forKey: "i64") ?? "?")")
        #expect(object.version == row.version)
    }

    static func request(_ format: String? = nil, sort: String? = nil, limit: Int = 0) -> NSFetchRequest<NSManagedObject>
    {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
        request.predicate = format.map { NSPredicate(format: $0) }
        request.sortDescriptors = sort.map { [NSSortDescriptor(key: $0, ascending: true)] }
        request.fetchLimit = limit
        request.returnsObjectsAsFaults = false
        return request
    }

    @Test func fetchedObjectsHoldWhatTheGeneralPathGives() throws {
        let (directory, coordinator) = try Self.makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let requests = [
            Self.request(), Self.request("str CONTAINS[c] 'NAME'"), Self.request("i64 BETWEEN {10, 40}"),
            Self.request("i64 > 3", sort: "i64", limit: 12), Self.request(sort: "str", limit: 9),
            Self.request("str CONTAINS 'long' OR flag == YES", sort: "i32"),
        ]
        for request in requests {
            let context = TestStack.context(coordinator)
            let objects = try context.fetch(request)
            #expect(!objects.isEmpty)
            for object in objects { try Self.expectGeneral(object, "fetch \(request.predicate as Any)") }
        }
    }

    @Test func theStoreAnswersAFetchOfObjectsInTheSlotFormWhereRowsTakeIt() throws {
        let (directory, coordinator) = try Self.makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try #require(coordinator.persistentStores.first)
        let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Item")
        let entity = try #require(Self.model.entitiesByName["Item"])
        let rows = try store.fetchRows(request, plan: StoreFetchPlan(request, entity: entity, mayStopEarly: false)).rows
        #expect(rows.count == 60)
        for row in rows {
            guard case .integer(let number) = row.storeValue(atSlot: 2) else {
                Issue.record("no i64 in \(row.objectID)")
                continue
            }
            // Declined: Decimal, Float, URI, transformable (every 5th from 3); a blob kept apart.
            let declines = number % 5 == 3 || (number % 5 == 4 && number % 2 == 1)
            #expect((row.slots == nil) == declines, "item \(number)")
            let general = try #require(try store.row(for: row.objectID))
            #expect(
                row.values.map(PageFileRowSlotDecodeTests.describe)
                    == general.values.map(PageFileRowSlotDecodeTests.describe))
        }
        // Rows for a dictionary or a prefetch keep the stored form.
        request.relationshipKeyPathsForPrefetching = ["parent"]
        let prefetching = try store.fetchRows(
            request, plan: StoreFetchPlan(request, entity: entity, mayStopEarly: false))
        #expect(prefetching.rows.allSatisfy { $0.slots == nil })
    }

    @Test func faultsAndBatchesHoldWhatTheGeneralPathGives() throws {
        let (directory, coordinator) = try Self.makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Faults carrying their fetched rows, fired one by one.
        var context = TestStack.context(coordinator)
        let faultRequest = Self.request()
        faultRequest.returnsObjectsAsFaults = true
        for object in try context.fetch(faultRequest) {
            #expect(object.isFault)
            _ = object.value(forKey: "i64")
            try Self.expectGeneral(object, "fault")
        }
        // Faults with no row of their own, fired one by one from the store.
        context = TestStack.context(coordinator)
        let ids = try context.fetch(faultRequest).map(\.objectID)
        context = TestStack.context(coordinator)
        for id in ids {
            let object = context.object(with: id)
            #expect(object.isFault)
            _ = object.value(forKey: "i64")
            try Self.expectGeneral(object, "fault by ID")
        }
        // A batched fetch: each batch loads in one store call, to-manys resolved.
        context = TestStack.context(coordinator)
        let batched = Self.request()
        batched.fetchBatchSize = 7
        for object in try context.fetch(batched) {
            _ = object.value(forKey: "i64")
            try Self.expectGeneral(object, batch: true, "batch")
        }
        // A traversed to-many: its members load as one batch, each one's parent the object itself.
        context = TestStack.context(coordinator)
        let parents = try context.fetch(Self.request("i64 < 6"))
        var members = 0
        for parent in parents {
            // The parents fetched above are loaded already (and their children resolved).
            let children = try #require(parent.value(forKey: "children") as? Set<NSManagedObject>)
                .filter(\.isFault)
            for child in children {
                _ = child.value(forKey: "i64")
                try Self.expectGeneral(child, batch: true, "member")
                #expect(child.value(forKey: "parent") as? NSManagedObject === parent)
                members += 1
            }
        }
        #expect(members > 20)
    }

    @Test func refetchedObjectsRefreshFromTheSlotForm() throws {
        let (directory, coordinator) = try Self.makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let reader = TestStack.context(coordinator)
        let before = try reader.fetch(Self.request("i64 == 11")).first
        let writer = TestStack.context(coordinator)
        let changed = try #require(try writer.fetch(Self.request("i64 == 11")).first)
        changed.setValue("renamed", forKey: "str")
        changed.setValue(Int16(-7), forKey: "i16")
        try writer.save()
        let request = Self.request("i64 == 11")
        request.shouldRefreshRefetchedObjects = true
        let after = try #require(try reader.fetch(request).first)
        #expect(after === before)
        #expect(after.value(forKey: "str") as? String == "renamed")
        #expect(after.value(forKey: "i16") as? Int16 == -7)
        try Self.expectGeneral(after, "refreshed")
    }
}
