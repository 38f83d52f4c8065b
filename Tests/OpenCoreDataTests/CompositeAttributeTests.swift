// Composite attributes on every store: dictionary values keyed by element name, nested
// composites, element key paths in predicates, sort descriptors and value(forKeyPath:),
// wrong element values refused at save, the stored bytes (SPEC.md §3.2 R1b), and a
// differential test: queries on composite elements equal the same queries on an entity
// holding the elements as plain attributes.
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

@Suite struct CompositeAttributeTests {
    static let storeTypes = TestStack.storeTypes

    /// Place (name, spot: composite of city, zip, rank, geo: composite of lat, long) and
    /// Flat (name, city, zip, rank, lat, long): the same values, flattened.
    static func model() -> NSManagedObjectModel {
        let geo = NSCompositeAttributeDescription()
        geo.name = "geo"
        geo.elements = [
            TestStack.attribute("lat", .doubleAttributeType), TestStack.attribute("long", .doubleAttributeType),
        ]
        let spot = NSCompositeAttributeDescription()
        spot.name = "spot"
        spot.elements = [
            TestStack.attribute("city", .stringAttributeType), TestStack.attribute("zip", .stringAttributeType),
            TestStack.attribute("rank", .integer32AttributeType), geo,
        ]
        let place = NSEntityDescription()
        place.name = "Place"
        place.properties = [TestStack.attribute("name", .stringAttributeType), spot]
        let flat = NSEntityDescription()
        flat.name = "Flat"
        flat.properties =
            ["name", "city", "zip"].map { TestStack.attribute($0, .stringAttributeType) } + [
                TestStack.attribute("rank", .integer32AttributeType), TestStack.attribute("lat", .doubleAttributeType),
                TestStack.attribute("long", .doubleAttributeType),
            ]
        let model = NSManagedObjectModel()
        model.entities = [place, flat]
        return model
    }

    static let sharedModel = model()

    static func coordinator(_ type: String) throws -> (NSPersistentStoreCoordinator, URL) {
        let directory = try TestStack.scratchDirectory("composite")
        return (try TestStack.coordinator(type, model: sharedModel, in: directory), directory)
    }

    static func names(
        _ entity: String, _ context: NSManagedObjectContext, _ format: String, _ arguments: [Any],
        sort: [(String, Bool)]
    ) throws -> [String] {
        let request = NSFetchRequest<NSManagedObject>(entityName: entity)
        request.predicate = OpenCoreData.NSPredicate(format: format, argumentArray: arguments)
        request.sortDescriptors =
            sort.map { NSSortDescriptor(key: $0.0, ascending: $0.1) } + [
                NSSortDescriptor(key: "name", ascending: true)
            ]
        return try context.fetch(request).compactMap { $0.value(forKey: "name") as? String }
    }

    @Test(arguments: storeTypes) func valuesRoundTripAndElementsAreQueryable(type: String) throws {
        let (coordinator, directory) = try Self.coordinator(type)
        defer { try? FileManager.default.removeItem(at: directory) }
        let writer = TestStack.context(coordinator)
        try writer.performAndWait {
            for (name, city, zip, rank, lat) in [
                ("Ada", "Oslo", "0150", 3, 59.9), ("Bo", "Bergen", "5003", 1, 60.4), ("Cy", "Oslo", "0151", 2, 59.8),
            ] {
                let place = NSEntityDescription.insertNewObject(forEntityName: "Place", into: writer)
                place.setValue(name, forKey: "name")
                place.setValue(
                    ["city": city, "zip": zip, "rank": rank, "geo": ["lat": lat, "long": 10.7]] as [String: Any],
                    forKey: "spot")
            }
            let empty = NSEntityDescription.insertNewObject(forEntityName: "Place", into: writer)
            empty.setValue("Di", forKey: "name")
            try writer.save()
        }
        let reader = TestStack.context(coordinator)
        try reader.performAndWait {
            #expect(
                try Self.names("Place", reader, "spot.city == %@", ["Oslo"], sort: [("spot.zip", false)]) == [
                    "Cy", "Ada",
                ])
            #expect(try Self.names("Place", reader, "spot.geo.lat > 59.85", [], sort: []) == ["Ada", "Bo"])
            #expect(
                try Self.names("Place", reader, "spot.rank >= 2", [], sort: [("spot.rank", true)]) == ["Cy", "Ada"])
            #expect(try Self.names("Place", reader, "spot == nil", [], sort: []) == ["Di"])
            let request = NSFetchRequest<NSManagedObject>(entityName: "Place")
            request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            let places = try reader.fetch(request)
            let ada = try #require(places.first)
            let spot = try #require(ada.value(forKey: "spot") as? [String: Any])
            #expect(spot["city"] as? String == "Oslo" && spot["rank"] as? Int32 == 3)
            #expect((spot["geo"] as? [String: Any])?["lat"] as? Double == 59.9)
            #expect(ada.value(forKeyPath: "spot.zip") as? String == "0150")
            #expect(ada.value(forKeyPath: "spot.geo.long") as? Double == 10.7)
            #expect(places.last?.value(forKey: "spot") == nil)
            #expect(throws: KeyValueCodingError.self) { try ada.readValue(forKeyPath: "spot.country") }
        }
    }

    @Test(arguments: storeTypes) func valuesThatDoNotFitTheElementsFailTheSave(type: String) throws {
        let (coordinator, directory) = try Self.coordinator(type)
        defer { try? FileManager.default.removeItem(at: directory) }
        let context = TestStack.context(coordinator)
        try context.performAndWait {
            for (value, fragment) in [
                (["country": "NO"] as Any, "no element 'country'"), (["rank": "first"] as Any, "element 'rank'"),
                (["geo": ["lat": "north"]] as Any, "element 'lat'"),
                ("Oslo" as Any, "Place.spot holds a String; its type is [String: Any]"),
            ] {
                let place = NSEntityDescription.insertNewObject(forEntityName: "Place", into: context)
                place.setValue(value, forKey: "spot")
                let error = try #require(throws: NSError.self) { try context.save() }
                #expect(error.localizedDescription.contains(fragment), "\(error.localizedDescription)")
                context.rollback()
            }
        }
    }

    @Test func storedBytesAreTheElementsInOrder() throws {
        let spot = try #require(Self.sharedModel.entitiesByName["Place"]?.attributesByName["spot"])
        let stored = try spot.storeValue(["zip": "0150", "city": "Oslo", "rank": 3] as [String: Any])
        guard case .binary(let data) = stored else {
            Issue.record("not binary: \(stored)")
            return
        }
        // 3 elements; "city" tag 6 "Oslo"; "zip" tag 6 "0150"; "rank" tag 1 zigzag 3 (6).
        let expected: [UInt8] =
            [3, 4] + Array("city".utf8) + [6, 4] + Array("Oslo".utf8) + [3] + Array("zip".utf8) + [6, 4]
            + Array("0150".utf8) + [4] + Array("rank".utf8) + [1, 6]
        #expect(Array(data) == expected)
        let composite = try #require(spot as? NSCompositeAttributeDescription)
        for damaged in [
            Data([9]), Data([1, 3]) + Data("abc".utf8), data + Data([0]),
            Data([1, 4]) + Data("city".utf8) + Data([1, 2]),
            Data([2, 3]) + Data("zip".utf8) + Data([6, 1, 0x31, 3]) + Data("zip".utf8) + Data([6, 1, 0x32]),
        ] {
            #expect(throws: NSError.self) { try composite.compositeValue(from: damaged) }
        }
        // An element a later model removed is skipped.
        let removed = Data([2, 3]) + Data("zip".utf8) + Data([6, 1, 0x31, 3]) + Data("old".utf8) + Data([6, 1, 0x32])
        #expect(try composite.compositeValue(from: removed).keys.sorted() == ["zip"])
    }

    @Test(arguments: storeTypes) func aUniquenessConstraintOnACompositeHoldsOnTheWholeValue(type: String) throws {
        let model = Self.model()
        let place = try #require(model.entitiesByName["Place"])
        place.uniquenessConstraints = [["spot"]]
        let directory = try TestStack.scratchDirectory("composite")
        defer { try? FileManager.default.removeItem(at: directory) }
        let coordinator = try TestStack.coordinator(type, model: model, in: directory)
        let context = TestStack.context(coordinator)
        try context.performAndWait {
            for (name, city) in [("A", "Oslo"), ("B", "Bergen")] {
                let object = NSEntityDescription.insertNewObject(forEntityName: "Place", into: context)
                object.setValue(name, forKey: "name")
                object.setValue(["city": city, "rank": 1] as [String: Any], forKey: "spot")
            }
            try context.save()
            let clash = NSEntityDescription.insertNewObject(forEntityName: "Place", into: context)
            clash.setValue("C", forKey: "name")
            clash.setValue(["rank": 1, "city": "Oslo"] as [String: Any], forKey: "spot")
            let error = try #require(throws: NSError.self) { try context.save() }
            #expect(error.code == NSManagedObjectConstraintMergeError, "\(error)")
        }
    }

    @Test func aUniquenessConstraintOnAMissingCompositeElementIsRefused() throws {
        let model = Self.model()
        let place = try #require(model.entitiesByName["Place"])
        place.uniquenessConstraints = [["spot.country"]]
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let error = try #require(throws: NSError.self) {
            try coordinator.addPersistentStore(
                ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
        }
        #expect(error.code == NSPersistentStoreIncompatibleSchemaError)
        #expect(error.localizedDescription.contains("'spot.country'"), "\(error.localizedDescription)")
        #expect(error.localizedDescription.contains("city, zip, rank, geo"), "\(error.localizedDescription)")
    }

    /// Random places saved both as composites and flattened; random predicates and sorts
    /// over the elements return the same names from both entities.
    @Test(arguments: storeTypes) func compositeQueriesEqualTheSameQueriesOnFlattenedAttributes(type: String) throws {
        var random = SeededRandom(environmentOr: 0xC0_4D)
        let (coordinator, directory) = try Self.coordinator(type)
        defer { try? FileManager.default.removeItem(at: directory) }
        let context = TestStack.context(coordinator)
        let cities = ["Oslo", "Bergen", "Tromsø", "Ålesund"]
        try context.performAndWait {
            for index in 0..<60 {
                let city = random.chance(0.1) ? nil : random.pick(cities)
                let zip = random.chance(0.1) ? nil : String(random.int(in: 1000...1020))
                let rank = Int32(random.int(in: 0...9))
                let lat = Double(random.int(in: 580...700)) / 10
                let place = NSEntityDescription.insertNewObject(forEntityName: "Place", into: context)
                let flat = NSEntityDescription.insertNewObject(forEntityName: "Flat", into: context)
                var spot: [String: Any] = ["rank": rank, "geo": ["lat": lat, "long": 5.0]]
                spot["city"] = city
                spot["zip"] = zip
                place.setValue("P\(index)", forKey: "name")
                place.setValue(spot, forKey: "spot")
                for (key, value) in [("name", "P\(index)"), ("city", city), ("zip", zip)] as [(String, Any?)] {
                    flat.setValue(value, forKey: key)
                }
                flat.setValue(rank, forKey: "rank")
                flat.setValue(lat, forKey: "lat")
                flat.setValue(5.0, forKey: "long")
            }
            try context.save()
        }
        let reader = TestStack.context(coordinator)
        try reader.performAndWait {
            for _ in 0..<40 {
                let (format, arguments): (String, [Any]) =
                    switch random.int(in: 0...5) {
                    case 0: ("%K == %@", [random.pick(cities)])
                    case 1: ("%K > %@", [String(random.int(in: 1000...1020))])
                    case 2: ("%K BEGINSWITH[cd] %@", ["o"])
                    case 3: ("%K == nil", [])
                    case 4: ("%K >= %@", [random.int(in: 0...9)])
                    default: ("%K < %@", [Double(random.int(in: 580...700)) / 10])
                    }
                let key = ["city", "zip", "city", random.pick(["city", "zip"]), "rank", "lat"][
                    format.hasPrefix("%K == nil")
                        ? 3
                        : ["%K == %@", "%K > %@", "%K BEGINSWITH[cd] %@", "", "%K >= %@", "%K < %@"]
                            .firstIndex(of: format) ?? 0]
                let compositeKey = key == "lat" ? "spot.geo.lat" : "spot.\(key)"
                let sortKey = random.pick(["city", "zip", "rank", "lat"])
                let compositeSort = sortKey == "lat" ? "spot.geo.lat" : "spot.\(sortKey)"
                let ascending = random.chance(0.5)
                let composite = try Self.names(
                    "Place", reader, format, [compositeKey] + arguments, sort: [(compositeSort, ascending)])
                let flattened = try Self.names("Flat", reader, format, [key] + arguments, sort: [(sortKey, ascending)])
                #expect(composite == flattened, "\(format) \(key) sorted by \(sortKey): \(random.replayHint)")
            }
        }
    }
}
