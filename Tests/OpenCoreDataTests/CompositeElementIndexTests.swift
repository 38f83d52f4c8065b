// Fetch indexes and uniqueness constraints on composite elements (`spot.geo.lat`), on
// every store: the default store keeps real index entries for them (kept by inserts,
// updates, deletes and batch requests, checked by verify(), used by the planner for
// comparisons, ranges and sorts), and every store enforces element constraints with
// 133021 and the merge policies' upserts.
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

@Suite struct CompositeElementIndexTests {
    static let storeTypes = TestStack.storeTypes

    /// The composite model of ``CompositeAttributeTests`` with the indexes `byLat`
    /// (`spot.geo.lat`) and `byRankCity` (`spot.rank`, `spot.city`) on Place.
    static func indexedModel() throws -> NSManagedObjectModel {
        let model = CompositeAttributeTests.model()
        let place = try #require(model.entitiesByName["Place"])
        let spot = try #require(place.properties.last as? NSCompositeAttributeDescription)
        let geo = try #require(spot.elements.last as? NSCompositeAttributeDescription)
        place.indexes = [
            NSFetchIndexDescription(
                name: "byLat",
                elements: [NSFetchIndexElementDescription(property: geo.elements[0], collationType: .binary)]
            ),
            NSFetchIndexDescription(
                name: "byRankCity",
                elements: [
                    NSFetchIndexElementDescription(property: spot.elements[2], collationType: .binary),
                    NSFetchIndexElementDescription(property: spot.elements[0], collationType: .binary),
                ]),
        ]
        return model
    }

    static func spot(city: String?, rank: Int32, lat: Double) -> [String: Any] {
        var spot: [String: Any] = ["rank": rank, "geo": ["lat": lat, "long": 5.0]]
        spot["city"] = city
        return spot
    }

    static func names(_ context: NSManagedObjectContext, _ format: String, sort: String? = nil, limit: Int = 0)
        throws -> [String]
    {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Place")
        request.predicate = OpenCoreData.NSPredicate(format: format)
        request.sortDescriptors =
            (sort.map { [NSSortDescriptor(key: $0, ascending: true)] } ?? [])
            + [NSSortDescriptor(key: "name", ascending: true)]
        request.fetchLimit = limit
        return try context.fetch(request).compactMap { $0.value(forKey: "name") as? String }
    }

    @Test func theIndexesHaveTreesOfElementFieldsInTheCatalog() throws {
        let model = try Self.indexedModel()
        let directory = try TestStack.scratchDirectory("element-index")
        defer { try? FileManager.default.removeItem(at: directory) }
        let coordinator = try TestStack.coordinator(NSSQLiteStoreType, model: model, in: directory)
        let store = try #require(coordinator.persistentStores.first as? PageFileStore)
        let place = try #require(model.entitiesByName["Place"])
        let indexes = try store.info(for: place).indexes
        // Slot 1 is `spot`: the fields are element paths inside it (SPEC.md §3.1 catalog).
        #expect(indexes.map(\.treeName) == ["index.Place.byLat", "index.Place.byRankCity"])
        #expect(indexes.map { $0.fields.map(\.recordText) } == [["1.geo.lat"], ["1.rank", "1.city"]])
        let record = String(decoding: store.catalog.record, as: UTF8.self)
        #expect(record.contains("index.Place.byLat\tindex\t1.geo.lat"), "\(record)")
        #expect(record.contains("index.Place.byRankCity\tindex\t1.rank,1.city"), "\(record)")
        // Golden bytes: the key of spot ["city": "Oslo", "rank": 3, "geo": ["lat": 2.5]] for
        // byRankCity in row 7: number 3, string "Oslo", primary key 7 (SPEC.md §3.4 K1, K2).
        let stored = try #require(place.attributesByName["spot"]).storeValue(
            ["city": "Oslo", "rank": 3, "geo": ["lat": 2.5]] as [String: Any])
        let key = try #require(indexes[1].key(for: [.string("x"), stored], primaryKey: 7))
        #expect(key == [0x10, 0xC1, 0x04, 0x30] + Array("Oslo".utf8) + [0, 0, 0x81, 7, 0x81])
        // A missing element keys as nil.
        let noCity = try #require(indexes[1].key(for: [.null, .null], primaryKey: 7))
        #expect(noCity == [0x00, 0x00, 0x81, 7, 0x81])
        #expect(StoreKeyField(recordText: "1.geo.lat") == StoreKeyField(slot: 1, elementPath: ["geo", "lat"]))
        for damaged in ["-1.geo", "x.geo", "1..lat", "1."] {
            #expect(StoreKeyField(recordText: Substring(damaged)) == nil, "\(damaged)")
        }
    }

    /// Random inserts, updates, deletes and batch requests; after each round the indexed
    /// queries (ranges, points, sorts with a limit) equal the same queries on the flattened
    /// twin entity, the default store plans them on the element indexes, and verify() is clean.
    @Test(arguments: storeTypes) func elementIndexesFollowEveryChange(type: String) throws {
        var random = SeededRandom(environmentOr: 0xE1E_1D)
        let model = try Self.indexedModel()
        let directory = try TestStack.scratchDirectory("element-index")
        defer { try? FileManager.default.removeItem(at: directory) }
        let coordinator = try TestStack.coordinator(type, model: model, in: directory)
        let context = TestStack.context(coordinator)
        let cities = ["Oslo", "Bergen", "Tromsø"]
        var next = 0
        func insert(_ count: Int) {
            for _ in 0..<count {
                let city = random.chance(0.1) ? nil : random.pick(cities)
                let rank = Int32(random.int(in: 0...9))
                let lat = Double(random.int(in: 580...700)) / 10
                let place = NSEntityDescription.insertNewObject(forEntityName: "Place", into: context)
                let flat = NSEntityDescription.insertNewObject(forEntityName: "Flat", into: context)
                place.setValue("P\(next)", forKey: "name")
                place.setValue(Self.spot(city: city, rank: rank, lat: lat), forKey: "spot")
                flat.setValue("P\(next)", forKey: "name")
                flat.setValue(city, forKey: "city")
                flat.setValue(rank, forKey: "rank")
                flat.setValue(lat, forKey: "lat")
                next += 1
            }
        }
        func check(_ round: Int) throws {
            let reader = TestStack.context(coordinator)
            try reader.performAndWait {
                for (format, flatFormat, sort, flatSort, limit) in [
                    ("spot.geo.lat > 64.5", "lat > 64.5", nil, nil, 0),
                    ("spot.geo.lat BETWEEN {60, 62}", "lat BETWEEN {60, 62}", nil, nil, 0),
                    ("spot.rank == 3 AND spot.city == 'Oslo'", "rank == 3 AND city == 'Oslo'", nil, nil, 0),
                    ("spot.rank >= 7", "rank >= 7", "spot.rank", "rank", 0),
                    ("TRUEPREDICATE", "TRUEPREDICATE", "spot.geo.lat", "lat", 5),
                ] as [(String, String, String?, String?, Int)] {
                    let request = NSFetchRequest<NSManagedObject>(entityName: "Flat")
                    request.predicate = OpenCoreData.NSPredicate(format: flatFormat)
                    request.sortDescriptors =
                        (flatSort.map { [NSSortDescriptor(key: $0, ascending: true)] } ?? [])
                        + [NSSortDescriptor(key: "name", ascending: true)]
                    request.fetchLimit = limit
                    let expected = try reader.fetch(request).compactMap { $0.value(forKey: "name") as? String }
                    let found = try Self.names(reader, format, sort: sort, limit: limit)
                    #expect(found == expected, "round \(round): \(format) \(random.replayHint)")
                }
            }
            guard let store = coordinator.persistentStores.first as? PageFileStore else { return }
            let report = try store.verify()
            #expect(report.isClean, "round \(round): \(report.problems)")
            for (format, index) in [
                ("spot.geo.lat > 64.5", "index.Place.byLat"),
                ("spot.rank == 3 AND spot.city == 'Oslo'", "index.Place.byRankCity"),
            ] {
                let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Place")
                request.entity = model.entitiesByName["Place"]
                request.predicate = OpenCoreData.NSPredicate(format: format)
                let plan = store.describePlan(for: request)
                #expect(plan.contains("index \(index)"), "\(format): \(plan)")
            }
        }
        try context.performAndWait {
            insert(40)
            try context.save()
            try check(0)
            for round in 1...4 {
                let places = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Place"))
                let flats = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Flat"))
                let flatByName = Dictionary(
                    flats.map { ($0.value(forKey: "name") as? String ?? "", $0) }, uniquingKeysWith: { a, _ in a })
                for place in places where random.chance(0.3) {
                    guard let name = place.value(forKey: "name") as? String, let flat = flatByName[name] else {
                        continue
                    }
                    if random.chance(0.3) {
                        context.delete(place)
                        context.delete(flat)
                        continue
                    }
                    let city = random.chance(0.2) ? nil : random.pick(cities)
                    let rank = Int32(random.int(in: 0...9))
                    let lat = Double(random.int(in: 580...700)) / 10
                    place.setValue(Self.spot(city: city, rank: rank, lat: lat), forKey: "spot")
                    flat.setValue(city, forKey: "city")
                    flat.setValue(rank, forKey: "rank")
                    flat.setValue(lat, forKey: "lat")
                }
                insert(random.int(in: 0...8))
                try context.save()
                try check(round)
                // Batch requests on both entities alike.
                let rank = random.int(in: 0...9)
                let delete = NSBatchDeleteRequest(fetchRequest: NSFetchRequest(entityName: "Place"))
                delete.fetchRequest.predicate = OpenCoreData.NSPredicate(format: "spot.rank == %d", rank)
                let flatDelete = NSBatchDeleteRequest(fetchRequest: NSFetchRequest(entityName: "Flat"))
                flatDelete.fetchRequest.predicate = OpenCoreData.NSPredicate(format: "rank == %d", rank)
                try context.execute(delete)
                try context.execute(flatDelete)
                let moved = Double(random.int(in: 580...700)) / 10
                let update = NSBatchUpdateRequest(entityName: "Place")
                update.predicate = OpenCoreData.NSPredicate(format: "name ENDSWITH '1'")
                update.propertiesToUpdate = ["spot": Self.spot(city: "Oslo", rank: 3, lat: moved)]
                let flatUpdate = NSBatchUpdateRequest(entityName: "Flat")
                flatUpdate.predicate = OpenCoreData.NSPredicate(format: "name ENDSWITH '1'")
                flatUpdate.propertiesToUpdate = ["city": "Oslo", "rank": 3, "lat": moved]
                try context.execute(update)
                try context.execute(flatUpdate)
                let lat = Double(random.int(in: 580...700)) / 10
                let name = "B\(round)"
                let batchInsert = NSBatchInsertRequest(
                    entityName: "Place",
                    objects: [["name": name, "spot": Self.spot(city: "Bergen", rank: 3, lat: lat)]])
                let flatInsert = NSBatchInsertRequest(
                    entityName: "Flat", objects: [["name": name, "city": "Bergen", "rank": 3, "lat": lat]])
                try context.execute(batchInsert)
                try context.execute(flatInsert)
                context.reset()
                try check(round)
            }
        }
    }

    /// The planner takes the element index for a range and the sort walk stops early: the
    /// level-2 plan names the index and examines fewer entries than there are rows.
    @Test func theDefaultStorePlansOnTheElementIndexNotAScan() throws {
        let model = try Self.indexedModel()
        let directory = try TestStack.scratchDirectory("element-index")
        defer { try? FileManager.default.removeItem(at: directory) }
        let coordinator = try TestStack.coordinator(NSSQLiteStoreType, model: model, in: directory)
        let context = TestStack.context(coordinator)
        try context.performAndWait {
            for index in 0..<100 {
                let place = NSEntityDescription.insertNewObject(forEntityName: "Place", into: context)
                place.setValue("P\(index)", forKey: "name")
                place.setValue(Self.spot(city: "Oslo", rank: Int32(index % 10), lat: Double(index)), forKey: "spot")
            }
            try context.save()
        }
        let store = try #require(coordinator.persistentStores.first as? PageFileStore)
        let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Place")
        request.entity = model.entitiesByName["Place"]
        request.predicate = OpenCoreData.NSPredicate(format: "spot.geo.lat >= 95")
        #expect(
            store.describePlan(for: request).hasSuffix(
                "index index.Place.byLat, 1 key ranges (5 entries examined, exact: no row evaluated)"),
            "\(store.describePlan(for: request))")
        request.predicate = OpenCoreData.NSPredicate(format: "spot.rank == 4 AND spot.city BEGINSWITH 'O'")
        #expect(store.describePlan(for: request).contains("index index.Place.byRankCity, 1 key ranges (10 entries"))
        // An exact count reads only the index.
        request.predicate = OpenCoreData.NSPredicate(format: "spot.geo.lat < 10")
        let reader = TestStack.context(coordinator)
        try reader.performAndWait { () throws -> Void in
            #expect(try reader.count(for: request) == 10)
            #expect(try Self.names(reader, "spot.geo.lat < 3") == ["P0", "P1", "P2"])
            let top = NSFetchRequest<NSManagedObject>(entityName: "Place")
            top.sortDescriptors = [NSSortDescriptor(key: "spot.geo.lat", ascending: false)]
            top.fetchLimit = 3
            #expect(try reader.fetch(top).compactMap { $0.value(forKey: "name") as? String } == ["P99", "P98", "P97"])
        }
    }

    /// A model file names element indexes and constraints by key path; the model record a
    /// store keeps (SPEC.md §3.11) records them the same way and reads them back.
    @Test func modelFilesAndModelRecordsNameElementsByKeyPath() throws {
        let xml = ModelFixtures.model(
            """
            <entity name="Spot" syncable="YES">
                <attribute name="name" optional="YES" attributeType="String"/>
                <attribute name="location" optional="YES" attributeType="Composite" composite="Place"/>
                <fetchIndex name="byCity">
                    <fetchIndexElement property="location.city" type="Binary" order="ascending"/>
                </fetchIndex>
                <uniquenessConstraints>
                    <uniquenessConstraint><constraint value="location.floor"/></uniquenessConstraint>
                </uniquenessConstraints>
            </entity>
            <composite name="Place">
                <attribute name="city" optional="YES" attributeType="String"/>
                <attribute name="floor" optional="YES" attributeType="Integer 16" usesScalarValueType="YES"/>
            </composite>
            """)
        let directory = try TestStack.scratchDirectory("element-index")
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = try ModelFixtures.writeModel(xml, in: directory)
        let model = try NSManagedObjectModel(validatingContentsOf: url)
        let spot = try #require(model.entitiesByName["Spot"])
        let element = try #require(spot.indexes.first?.elements.first?.property)
        #expect(spot.keyPath(ofIndexed: element) == "location.city")
        let rebuilt = try ModelRecord.model(from: try ModelRecord.encode(model))
        let rebuiltSpot = try #require(rebuilt.entitiesByName["Spot"])
        let rebuiltElement = try #require(rebuiltSpot.indexes.first?.elements.first?.property)
        #expect(rebuiltSpot.keyPath(ofIndexed: rebuiltElement) == "location.city")
        #expect(rebuiltSpot.uniquenessConstraints as? [[String]] == [["location.floor"]])
        let coordinator = try TestStack.coordinator(NSSQLiteStoreType, model: model, in: directory)
        let store = try #require(coordinator.persistentStores.first as? PageFileStore)
        #expect(
            try store.info(for: spot).indexes.map(\.treeName) == ["unique.Spot.location.floor", "index.Spot.byCity"])
        let context = TestStack.context(coordinator)
        try context.performAndWait {
            for (name, floor) in [("A", 1), ("B", 1)] {
                let object = NSEntityDescription.insertNewObject(forEntityName: "Spot", into: context)
                object.setValue(name, forKey: "name")
                object.setValue(["city": "Oslo", "floor": floor], forKey: "location")
            }
            let error = try #require(throws: NSError.self) { try context.save() }
            #expect(error.code == NSManagedObjectConstraintMergeError)
        }
    }

    /// Indexes are not in the version hashes: a model adding one (here element indexes,
    /// which earlier builds skipped) opens an existing store without migration. The index
    /// is built from the rows on open, so plans on it see every row and verify() is clean.
    @Test func anIndexAddedToTheModelOfAnExistingStoreIsBuiltOnOpen() throws {
        let directory = try TestStack.scratchDirectory("element-index")
        defer { try? FileManager.default.removeItem(at: directory) }
        let plain = CompositeAttributeTests.model()
        do {
            let coordinator = try TestStack.coordinator(NSSQLiteStoreType, model: plain, in: directory)
            let context = TestStack.context(coordinator)
            try context.performAndWait {
                for index in 0..<20 {
                    let place = NSEntityDescription.insertNewObject(forEntityName: "Place", into: context)
                    place.setValue("P\(index)", forKey: "name")
                    place.setValue(Self.spot(city: "Oslo", rank: 1, lat: Double(index)), forKey: "spot")
                }
                try context.save()
            }
            for store in coordinator.persistentStores { try coordinator.remove(store) }
        }
        let model = try Self.indexedModel()
        let coordinator = try TestStack.coordinator(NSSQLiteStoreType, model: model, in: directory)
        let context = TestStack.context(coordinator)
        try context.performAndWait {
            let place = NSEntityDescription.insertNewObject(forEntityName: "Place", into: context)
            place.setValue("New", forKey: "name")
            place.setValue(Self.spot(city: "Oslo", rank: 1, lat: 30), forKey: "spot")
            try context.save()
            #expect(try Self.names(context, "spot.geo.lat >= 18") == ["New", "P18", "P19"])
        }
        let store = try #require(coordinator.persistentStores.first as? PageFileStore)
        let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Place")
        request.entity = model.entitiesByName["Place"]
        request.predicate = OpenCoreData.NSPredicate(format: "spot.geo.lat >= 18")
        #expect(store.describePlan(for: request).contains("index index.Place.byLat, 1 key ranges (3 entries"))
        let report = try store.verify()
        #expect(report.isClean, "\(report.problems)")
    }
}
