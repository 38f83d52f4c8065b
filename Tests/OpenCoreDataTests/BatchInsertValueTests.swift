// The values a batch insert takes for each attribute type, on every store: a value of the
// attribute's own Swift type (the row builder's type-identity path), the Foundation and
// numeric forms Core Data also accepts (NSNumber, Int for Int16, NSString, NSDate, ...),
// NSNull and nil, and values of a wrong type (an error naming the key, nothing written).
// Also the default store's shortest row path (entities without unique indexes or blobs,
// PageFileWriter+BatchInsert.swift): defaults, index entries and to-manys kept outside
// the row read back as a saved object's do.
import Foundation
import OpenCoreData
import Testing

@Suite struct BatchInsertValueTests {
    /// Value: one optional attribute of each type, a required `name` and a defaulted
    /// `rank` (indexed); no unique index and no blob, so the default store takes its
    /// shortest row path.
    static let model: NSManagedObjectModel = {
        let value = NSEntityDescription()
        value.name = "Value"
        func attribute(_ name: String, _ type: NSAttributeType) -> NSAttributeDescription {
            TestStack.attribute(name, type)
        }
        value.properties = [
            TestStack.attribute("name", .stringAttributeType, optional: false),
            TestStack.attribute("rank", .integer16AttributeType, optional: false, defaultValue: 3, indexed: true),
            attribute("i16", .integer16AttributeType), attribute("i32", .integer32AttributeType),
            attribute("i64", .integer64AttributeType), attribute("dbl", .doubleAttributeType),
            attribute("flt", .floatAttributeType), attribute("dec", .decimalAttributeType),
            attribute("flag", .booleanAttributeType), attribute("text", .stringAttributeType),
            attribute("when", .dateAttributeType), attribute("bytes", .binaryDataAttributeType),
            attribute("uuid", .UUIDAttributeType), attribute("link", .URIAttributeType),
        ]
        let model = NSManagedObjectModel()
        model.entities = [value]
        return model
    }()

    static func context(_ storeType: String) throws -> NSManagedObjectContext {
        BatchFixtures.context(try BatchFixtures.coordinator(storeType, model: model))
    }

    static let when = Date(timeIntervalSinceReferenceDate: 123_456.75)
    static let uuid = UUID(uuidString: "6BA7B810-9DAD-11D1-80B4-00C04FD430C8") ?? UUID()
    static let link = URL(string: "https://example.com/a?b=c") ?? URL(fileURLWithPath: "/")
    static let decimal = Decimal(string: "3.14159", locale: Locale(identifier: "en_US_POSIX")) ?? 0

    /// (key, value given, value read back): every form an attribute accepts.
    static var accepted: [(key: String, given: Any, expected: AnyHashable?)] {
        [
            ("i16", Int16(-7), Int16(-7)), ("i16", 7, Int16(7)), ("i16", NSNumber(value: 300), Int16(300)),
            ("i16", Int64(12), Int16(12)), ("i32", Int32(-70_000), Int32(-70_000)), ("i32", 70_000, Int32(70_000)),
            ("i32", NSNumber(value: Int32.min), Int32.min), ("i64", Int64.max, Int64.max), ("i64", 5, Int64(5)),
            ("i64", NSNumber(value: Int64.min), Int64.min), ("i64", Int32(9), Int64(9)),
            ("dbl", 2.5, 2.5), ("dbl", 2, 2.0), ("dbl", Float(1.5), 1.5), ("dbl", NSNumber(value: 0.25), 0.25),
            ("flt", Float(1.25), Float(1.25)), ("flt", 0.5, Float(0.5)),
            ("flt", NSNumber(value: Float(2.5)), Float(2.5)),
            ("dec", decimal, decimal), ("dec", 2, Decimal(2)),
            ("flag", true, true), ("flag", false, false), ("flag", 1, true), ("flag", 0, false),
            ("flag", NSNumber(value: true), true), ("flag", NSNumber(value: 0), false),
            ("text", "plain", "plain"),
            ("text", "a string of more than fifteen bytes, é", "a string of more than fifteen bytes, é"),
            ("text", NSString(string: "bridged"), "bridged"), ("text", "", ""),
            ("when", when, when),
            ("when", NSDate(timeIntervalSinceReferenceDate: 5), Date(timeIntervalSinceReferenceDate: 5)),
            ("bytes", Data([1, 2, 3]), Data([1, 2, 3])),
            ("bytes", NSData(bytes: [9, 8] as [UInt8], length: 2), Data([9, 8])),
            ("uuid", uuid, uuid), ("uuid", NSUUID(uuidString: uuid.uuidString) as Any, uuid),
            ("link", link, link),
            ("link", NSURL(string: "https://example.org") as Any, URL(string: "https://example.org")),
            ("text", NSNull(), nil), ("i16", NSNull(), nil), ("when", Optional<Date>.none as Any, nil),
            ("rank", 9, Int16(9)), ("rank", NSNumber(value: 11), Int16(11)),
        ]
    }

    /// (key, value given): values no conversion fits, each an error naming the key.
    static var refused: [(key: String, given: Any)] {
        [
            ("i16", 70_000), ("i16", "7"), ("i16", 2.5), ("i32", Int64.max), ("i64", "5"), ("dbl", "2.5"),
            ("flt", Date()), ("flag", 2), ("flag", "true"), ("text", 5), ("text", Data([1])), ("when", 12),
            ("when", "2024-01-01"), ("bytes", "bytes"), ("uuid", "6BA7B810-9DAD-11D1-80B4-00C04FD430C8"),
            ("link", "https://example.com"), ("dec", "3.1"),
        ]
    }

    @Test(arguments: BatchFixtures.storeTypes)
    func everyAcceptedFormReadsBackAsTheAttributesType(storeType: String) throws {
        let context = try Self.context(storeType)
        let forms = Self.accepted
        let rows: [[String: Any]] = forms.enumerated().map { index, accepted in
            ["name": "v\(index)", accepted.key: accepted.given]
        }
        let request = NSBatchInsertRequest(entityName: "Value", objects: rows)
        request.resultType = .objectIDs
        let ids = try #require((try context.execute(request) as? NSBatchInsertResult)?.result as? [NSManagedObjectID])
        #expect(ids.count == forms.count)
        for (index, accepted) in forms.enumerated() where index < ids.count {
            let object = try context.existingObject(with: ids[index])
            let read = object.value(forKey: accepted.key)
            let comment: Comment = "\(accepted.key) given \(type(of: accepted.given)) \(accepted.given)"
            #expect(object.value(forKey: "name") as? String == "v\(index)", comment)
            #expect((read as? AnyHashable) == accepted.expected, comment)
            if let expected = accepted.expected {
                #expect(read.map { type(of: $0) == type(of: expected.base) } == true, comment)
            }
            // Every other attribute took its default (rank) or stayed nil.
            if accepted.key != "rank" { #expect(object.value(forKey: "rank") as? Int16 == 3, comment) }
            if accepted.key != "i32" { #expect(object.value(forKey: "i32") == nil, comment) }
        }
        // The indexed default is found through the index on the default store.
        let request3 = NSFetchRequest<NSManagedObject>(entityName: "Value")
        request3.predicate = NSPredicate(format: "rank == 3")
        #expect(try context.count(for: request3) == forms.count - 2)
        let request9 = NSFetchRequest<NSManagedObject>(entityName: "Value")
        request9.predicate = NSPredicate(format: "rank >= 9")
        #expect(try context.count(for: request9) == 2)
        if let coordinator = context.persistentStoreCoordinator { try BatchFixtures.verify(coordinator) }
    }

    /// The same values through a dictionary handler (NSMutableDictionary: NSString keys,
    /// bridged values) read back as through dictionaries.
    @Test(arguments: BatchFixtures.storeTypes)
    func aDictionaryHandlerTakesTheSameForms(storeType: String) throws {
        let context = try Self.context(storeType)
        // A dictionary holds no nil: the Optional case is the dictionaries' alone.
        let forms = Self.accepted.filter { Mirror(reflecting: $0.given).displayStyle != .optional }
        var next = 0
        let request = NSBatchInsertRequest(entityName: "Value") { (dictionary: NSMutableDictionary) -> Bool in
            guard next < forms.count else { return true }
            let accepted = forms[next]
            dictionary["name"] = "h\(next)"
            dictionary[accepted.key] = accepted.given
            next += 1
            return false
        }
        request.resultType = .objectIDs
        let ids = try #require((try context.execute(request) as? NSBatchInsertResult)?.result as? [NSManagedObjectID])
        #expect(ids.count == forms.count)
        for (index, accepted) in forms.enumerated() where index < ids.count {
            let object = try context.existingObject(with: ids[index])
            let comment: Comment = "\(accepted.key) given \(type(of: accepted.given)) \(accepted.given)"
            #expect(object.value(forKey: "name") as? String == "h\(index)", comment)
            #expect((object.value(forKey: accepted.key) as? AnyHashable) == accepted.expected, comment)
        }
    }

    @Test(arguments: BatchFixtures.storeTypes)
    func aValueOfAWrongTypeIsAnErrorNamingTheKeyAndNothingIsWritten(storeType: String) throws {
        let context = try Self.context(storeType)
        try context.execute(NSBatchInsertRequest(entityName: "Value", objects: [["name": "seed"]]))
        for refused in Self.refused {
            let comment: Comment = "\(refused.key) given \(type(of: refused.given)) \(refused.given)"
            let rows: [[String: Any]] =
                (0..<50).map { ["name": "ok\($0)", "i32": $0] } + [
                    ["name": "bad", refused.key: refused.given]
                ]
            let error = #expect(throws: NSError.self, comment) {
                try context.execute(NSBatchInsertRequest(entityName: "Value", objects: rows))
            }
            #expect(error?.code == NSManagedObjectValidationError, comment)
            #expect(error?.userInfo[NSValidationKeyErrorKey] as? String == refused.key, comment)
            #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Value")) == 1, comment)
        }
        let missing = #expect(throws: NSError.self) {
            try context.execute(NSBatchInsertRequest(entityName: "Value", objects: [["name": "a"], ["i16": 1]]))
        }
        #expect(missing?.code == NSValidationMissingMandatoryPropertyError)
        #expect(missing?.userInfo[NSValidationKeyErrorKey] as? String == "name")
        let nonStringKey = #expect(throws: NSError.self) {
            let request = NSBatchInsertRequest(entityName: "Value") { (dictionary: NSMutableDictionary) -> Bool in
                dictionary["name"] = "x"
                dictionary[7 as NSNumber] = "seven"
                return false
            }
            try context.execute(request)
        }
        #expect(nonStringKey?.code == NSManagedObjectValidationError)
        #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Value")) == 1)
    }

    /// Boxes and tags (no unique index, no blob; to-manys kept outside the row) batch
    /// inserted, then linked to items by a save: the relationships, the store's integrity
    /// check and a reopened file see what a saved box and tag give.
    @Test(arguments: BatchFixtures.storeTypes)
    func rowsWithToManysKeptOutsideTheRowLinkLikeSavedOnes(storeType: String) throws {
        let coordinator = try BatchFixtures.coordinator(storeType)
        let context = BatchFixtures.context(coordinator)
        let boxes = NSBatchInsertRequest(entityName: "Box", objects: (0..<30).map { ["label": "box\($0)"] })
        boxes.resultType = .objectIDs
        let boxIDs = try #require((try context.execute(boxes) as? NSBatchInsertResult)?.result as? [NSManagedObjectID])
        let tags = NSBatchInsertRequest(entityName: "Tag", objects: (0..<10).map { ["word": "w\($0)"] })
        tags.resultType = .objectIDs
        let tagIDs = try #require((try context.execute(tags) as? NSBatchInsertResult)?.result as? [NSManagedObjectID])
        #expect(boxIDs.count == 30 && tagIDs.count == 10)

        let box = try context.existingObject(with: boxIDs[4])
        #expect(box.value(forKey: "label") as? String == "box4")
        #expect((box.value(forKey: "items") as? Set<NSManagedObject>)?.isEmpty == true)
        let tag = try context.existingObject(with: tagIDs[2])
        let first = BatchFixtures.item(context, "first")
        let second = BatchFixtures.item(context, "second")
        first.setValue(box, forKey: "box")
        second.setValue(box, forKey: "box")
        first.setValue(Set([tag]), forKey: "tags")
        try context.save()

        let reader = BatchFixtures.context(coordinator)
        let readBox = try reader.existingObject(with: boxIDs[4])
        let names = ((readBox.value(forKey: "items") as? Set<NSManagedObject>) ?? []).compactMap {
            $0.value(forKey: "name") as? String
        }
        #expect(names.sorted() == ["first", "second"])
        let readTag = try reader.existingObject(with: tagIDs[2])
        #expect(((readTag.value(forKey: "items") as? Set<NSManagedObject>) ?? []).count == 1)
        #expect(try BatchFixtures.fetch("Box", reader, "label == %@", "box29").count == 1)
        try BatchFixtures.verify(coordinator)
    }
}
