// Batch requests given what they cannot apply: unknown keys, relationships, values of the
// wrong type, missing required values, expressions that fail, bad predicates, unknown
// entities. Each is a thrown error naming the problem, and nothing is written: the store
// holds the same graph and history as before, even when the bad row or row comes last.
import Foundation
import OpenCoreData
import Testing

@Suite struct BatchHostileInputTests {
    /// Runs `request` on a store holding a few items and expects it to throw `code` (and
    /// name `key`), leaving the store and its history as they were.
    static func expectRefused(
        _ storeType: String, code: Int, key: String? = nil, _ comment: Comment,
        _ request: (NSManagedObjectContext) -> NSPersistentStoreRequest
    ) throws {
        let coordinator = try BatchFixtures.coordinator(storeType)
        let context = BatchFixtures.context(coordinator)
        for index in 0..<5 { BatchFixtures.item(context, "I\(index)", code: "c\(index)", count: Int32(index)) }
        try context.save()
        let before = try BatchFixtures.snapshot(coordinator)
        let token = coordinator.currentPersistentHistoryToken(fromStores: nil)
        let error = #expect(throws: NSError.self, comment) { try context.execute(request(context)) }
        #expect(error?.code == code, "\(comment): \(error.map { "\($0)" } ?? "no error")")
        if let key { #expect(error?.userInfo[NSValidationKeyErrorKey] as? String == key, comment) }
        let description = error?.localizedDescription ?? ""
        #expect(!description.isEmpty, comment)
        #expect(try BatchFixtures.snapshot(coordinator) == before, comment)
        #expect(coordinator.currentPersistentHistoryToken(fromStores: nil) == token, comment)
        try BatchFixtures.verify(coordinator, comment)
    }

    /// 300 good rows, then `bad`: the good ones must not be written either.
    static func goodRowsThen(_ bad: [String: Any]) -> [[String: Any]] {
        (0..<300).map { ["name": "ok\($0)", "count": $0] } + [bad]
    }

    @Test(arguments: BatchFixtures.storeTypes)
    func badInsertsWriteNothing(storeType: String) throws {
        let cases: [(code: Int, key: String?, rows: [[String: Any]], comment: Comment)] = [
            (
                NSManagedObjectValidationError, "colour", Self.goodRowsThen(["name": "x", "colour": "red"]),
                "unknown key"
            ),
            (NSManagedObjectValidationError, "box", Self.goodRowsThen(["name": "x", "box": "b"]), "relationship"),
            (
                NSManagedObjectValidationError, "count", Self.goodRowsThen(["name": "x", "count": "seven"]),
                "string for an integer"
            ),
            (
                NSManagedObjectValidationError, "count", Self.goodRowsThen(["name": "x", "count": Int64.max]),
                "overflow"
            ),
            (
                NSManagedObjectValidationError, "created", Self.goodRowsThen(["name": "x", "created": 12]),
                "number for a date"
            ),
            (
                NSManagedObjectValidationError, "payload", Self.goodRowsThen(["name": "x", "payload": "bytes"]),
                "string for data"
            ),
            (NSValidationMissingMandatoryPropertyError, "name", Self.goodRowsThen(["count": 1]), "required left out"),
            (
                NSValidationMissingMandatoryPropertyError, "name", Self.goodRowsThen(["name": NSNull()]),
                "required as NSNull"
            ),
            (
                NSValidationMissingMandatoryPropertyError, "flag", Self.goodRowsThen(["name": "x", "flag": NSNull()]),
                "defaulted set to null"
            ),
        ]
        for hostile in cases {
            try Self.expectRefused(storeType, code: hostile.code, key: hostile.key, hostile.comment) { _ in
                NSBatchInsertRequest(entityName: "Item", objects: hostile.rows)
            }
        }
        try Self.expectRefused(storeType, code: NSCoreDataError, "unknown entity") { _ in
            NSBatchInsertRequest(entityName: "Nothing", objects: [["name": "x"]])
        }
        var calls = 0
        try Self.expectRefused(storeType, code: NSManagedObjectValidationError, key: "count", "handler, bad late") {
            _ in
            NSBatchInsertRequest(entityName: "Item") { (dictionary: NSMutableDictionary) -> Bool in
                calls += 1
                dictionary["name"] = "h\(calls)"
                dictionary["count"] = calls < 5_000 ? calls as NSNumber : "late" as NSString
                return false
            }
        }
        try Self.expectRefused(
            storeType, code: NSManagedObjectValidationError, key: "box", "object handler sets a relationship"
        ) {
            context in
            let box = BatchFixtures.object("Box", context, [:])
            return NSBatchInsertRequest(entityName: "Item") { (object: NSManagedObject) -> Bool in
                object.setValue("x", forKey: "name")
                object.setValue(box, forKey: "box")
                return false
            }
        }
    }

    @Test(arguments: BatchFixtures.storeTypes)
    func badUpdatesWriteNothing(storeType: String) throws {
        let cases: [(code: Int, key: String?, properties: [AnyHashable: Any], comment: Comment)] = [
            (NSManagedObjectValidationError, "colour", ["note": "n", "colour": "red"], "unknown key"),
            (NSManagedObjectValidationError, "box", ["box": NSExpression(forConstantValue: nil)], "relationship"),
            (NSManagedObjectValidationError, "count", ["note": "n", "count": "seven"], "string for an integer"),
            (NSValidationMissingMandatoryPropertyError, "name", ["name": NSNull()], "nil for a required attribute"),
            (
                NSManagedObjectValidationError, "count", ["count": NSExpression(format: "count * 1000000000000")],
                "overflow"
            ),
            (
                NSManagedObjectValidationError, "count", ["note": "n", "count": NSExpression(format: "name")],
                "string result"
            ),
            (
                NSManagedObjectValidationError, "note", ["note": NSExpression(format: "colour + 1")],
                "unknown key in expression"
            ),
            (NSManagedObjectValidationError, "score", ["score": NSExpression(format: "name + 1")], "expression fails"),
            (NSManagedObjectValidationError, "note", ["note": NSExpression(format: "((")], "malformed expression"),
            (NSManagedObjectValidationError, nil, [:], "nothing to update"),
        ]
        for hostile in cases {
            try Self.expectRefused(storeType, code: hostile.code, key: hostile.key, hostile.comment) { _ in
                let update = NSBatchUpdateRequest(entityName: "Item")
                update.propertiesToUpdate = hostile.properties
                return update
            }
        }
        // The failing value comes from the last row only: the others are not written.
        try Self.expectRefused(storeType, code: NSManagedObjectValidationError, key: "count", "last row overflows") {
            _ in
            let update = NSBatchUpdateRequest(entityName: "Item")
            update.propertiesToUpdate = ["count": NSExpression(format: "count * 600000000"), "note": "touched"]
            return update
        }
        try Self.expectRefused(storeType, code: NSCoreDataError, "unknown entity") { _ in
            let update = NSBatchUpdateRequest(entityName: "Nothing")
            update.propertiesToUpdate = ["note": "n"]
            return update
        }
        for format in ["colour == 1", "count > 1 AND box.nothing == 2"] {
            let error = #expect(throws: (any Error).self) {
                let context = try BatchFixtures.freshContext(storeType)
                let update = NSBatchUpdateRequest(entityName: "Item")
                update.predicate = NSPredicate(format: format)
                update.propertiesToUpdate = ["note": "n"]
                try context.execute(update)
            }
            #expect(error != nil, "a predicate naming an unknown key: \(format)")
        }
    }

    @Test(arguments: BatchFixtures.storeTypes)
    func badDeletesWriteNothing(storeType: String) throws {
        try Self.expectRefused(storeType, code: NSCoreDataError, "unknown entity") { _ in
            NSBatchDeleteRequest(fetchRequest: NSFetchRequest<NSFetchRequestResult>(entityName: "Nothing"))
        }
        let error = #expect(throws: (any Error).self) {
            let context = try BatchFixtures.freshContext(storeType)
            BatchFixtures.item(context, "x")
            try context.save()
            let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Item")
            request.predicate = NSPredicate(format: "colour == 1")
            try context.execute(NSBatchDeleteRequest(fetchRequest: request))
        }
        #expect(error != nil)
        let sorted = #expect(throws: (any Error).self) {
            let context = try BatchFixtures.freshContext(storeType)
            BatchFixtures.item(context, "x")
            try context.save()
            let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Item")
            request.sortDescriptors = [NSSortDescriptor(key: "colour", ascending: true)]
            try context.execute(NSBatchDeleteRequest(fetchRequest: request))
        }
        #expect(sorted != nil, "a sort key the entity lacks")
    }
}
