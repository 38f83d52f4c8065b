// Uniqueness constraints naming composite elements (`spot.city`, `name` + `spot.geo.lat`)
// on every store: a clash is 133021 with the element's key path and value, a nil element
// never clashes, and the trump policies upsert into the row holding the element's value.
import Foundation
import Testing

@testable import OpenCoreData

@Suite struct CompositeElementConstraintTests {
    static let storeTypes = TestStack.storeTypes

    static func coordinator(_ type: String, constraints: [[Any]], in directory: URL) throws
        -> NSPersistentStoreCoordinator
    {
        let model = CompositeAttributeTests.model()
        let place = try #require(model.entitiesByName["Place"])
        place.uniquenessConstraints = constraints
        return try TestStack.coordinator(type, model: model, in: directory)
    }

    static func place(_ context: NSManagedObjectContext, _ name: String, city: String?, lat: Double = 1)
        -> NSManagedObject
    {
        let place = NSEntityDescription.insertNewObject(forEntityName: "Place", into: context)
        place.setValue(name, forKey: "name")
        var spot: [String: Any] = ["rank": 1, "geo": ["lat": lat]]
        spot["city"] = city
        place.setValue(spot, forKey: "spot")
        return place
    }

    /// "name:city" of every stored place, sorted.
    static func stored(_ coordinator: NSPersistentStoreCoordinator) throws -> [String] {
        let reader = TestStack.context(coordinator)
        return try reader.performAndWait {
            try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Place")).map {
                "\($0.value(forKey: "name") as? String ?? "nil"):\($0.value(forKeyPath: "spot.city") as? String ?? "nil")"
            }.sorted()
        }
    }

    @Test(arguments: storeTypes) func aClashOnAnElementIsAConstraintConflict(type: String) throws {
        let directory = try TestStack.scratchDirectory("element-constraint")
        defer { try? FileManager.default.removeItem(at: directory) }
        let coordinator = try Self.coordinator(type, constraints: [["spot.city"]], in: directory)
        let context = TestStack.context(coordinator)
        try context.performAndWait {
            let oslo = Self.place(context, "A", city: "Oslo")
            _ = Self.place(context, "B", city: "Bergen")
            // Nil elements never clash (as nil attributes do not).
            _ = Self.place(context, "C", city: nil)
            _ = Self.place(context, "D", city: nil)
            try context.save()
            let clash = Self.place(context, "E", city: "Oslo", lat: 9)
            let error = try #require(throws: NSError.self) { try context.save() }
            #expect(error.code == NSManagedObjectConstraintMergeError, "\(error)")
            let conflicts = try #require(
                error.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSConstraintConflict])
            let conflict = try #require(conflicts.first)
            #expect(conflict.constraint == ["spot.city"])
            #expect(conflict.constraintValues["spot.city"] as? String == "Oslo")
            #expect(conflict.databaseObject?.objectID == oslo.objectID)
            #expect(conflict.conflictingObjects.first === clash)
            context.delete(clash)
            // An update moving onto another row's element value clashes too.
            let bergen = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Place")).first {
                $0.value(forKey: "name") as? String == "B"
            }
            bergen?.setValue(["city": "Oslo", "zip": "5003"] as [String: Any], forKey: "spot")
            let updateError = try #require(throws: NSError.self) { try context.save() }
            #expect(updateError.code == NSManagedObjectConstraintMergeError, "\(updateError)")
            context.rollback()
        }
        #expect(try Self.stored(coordinator) == ["A:Oslo", "B:Bergen", "C:nil", "D:nil"])
    }

    @Test(arguments: storeTypes) func theTrumpPoliciesUpsertOnTheElement(type: String) throws {
        let directory = try TestStack.scratchDirectory("element-constraint")
        defer { try? FileManager.default.removeItem(at: directory) }
        let coordinator = try Self.coordinator(type, constraints: [["spot.city"]], in: directory)
        let first = TestStack.context(coordinator)
        let original = try first.performAndWait {
            let place = Self.place(first, "A", city: "Oslo")
            try first.save()
            return place.objectID
        }
        // Object trump: the inserted values win; store trump: the stored ones stay.
        for (policy, name, lat) in [
            (NSMergeByPropertyObjectTrumpMergePolicy, "Z", 7.0), (NSMergeByPropertyStoreTrumpMergePolicy, "Y", 8.0),
        ] {
            let upsert = TestStack.context(coordinator)
            upsert.mergePolicy = policy
            try upsert.performAndWait {
                let inserted = Self.place(upsert, name, city: "Oslo", lat: lat)
                try upsert.save()
                #expect(inserted.objectID == original)
            }
            #expect(try Self.stored(coordinator) == ["Z:Oslo"])
        }
        let reader = TestStack.context(coordinator)
        try reader.performAndWait {
            let row = try reader.existingObject(with: original)
            #expect(row.value(forKeyPath: "spot.geo.lat") as? Double == 7)
        }
    }

    @Test(arguments: storeTypes) func aCompoundConstraintMixesAttributesAndNestedElements(type: String) throws {
        let directory = try TestStack.scratchDirectory("element-constraint")
        defer { try? FileManager.default.removeItem(at: directory) }
        let coordinator = try Self.coordinator(type, constraints: [["name", "spot.geo.lat"]], in: directory)
        let context = TestStack.context(coordinator)
        try context.performAndWait {
            _ = Self.place(context, "A", city: "Oslo", lat: 1)
            _ = Self.place(context, "A", city: "Bergen", lat: 2)
            _ = Self.place(context, "B", city: "Oslo", lat: 1)
            try context.save()
            _ = Self.place(context, "A", city: "Tromsø", lat: 2)
            let error = try #require(throws: NSError.self) { try context.save() }
            #expect(error.code == NSManagedObjectConstraintMergeError, "\(error)")
            let conflicts = error.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSConstraintConflict]
            #expect(conflicts?.first?.constraint == ["name", "spot.geo.lat"])
            #expect(conflicts?.first?.constraintValues["spot.geo.lat"] as? Double == 2)
        }
        #expect(try Self.stored(coordinator) == ["A:Bergen", "A:Oslo", "B:Oslo"])
    }
}
