// The save's shortcuts read from the entity layout: stored values built per slot from the
// layout's store forms, the registry re-keyed in place, and delete validation over the
// layout's deny slots only. Each must give what the general path gives.
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

@Suite struct SaveFastPathTests {
    /// Item (every attribute type, a transient attribute, a to-one `owner`, a to-many
    /// `tags`, a transient to-one `scratch`) and Owner; SubItem inherits Item's slots.
    static func makeModel() -> NSManagedObjectModel {
        let item = NSEntityDescription()
        item.name = "Item"
        let subItem = NSEntityDescription()
        subItem.name = "SubItem"
        let owner = NSEntityDescription()
        owner.name = "Owner"
        let transient = TestStack.attribute("memo", .stringAttributeType)
        transient.isTransient = true
        let toOne = TestStack.relationship("owner", to: owner, toMany: false)
        let toMany = TestStack.relationship("tags", to: owner, toMany: true)
        let scratch = TestStack.relationship("scratch", to: owner, toMany: false)
        scratch.isTransient = true
        let items = TestStack.relationship("items", to: item, toMany: true)
        TestStack.pair(toOne, items)
        item.properties = [
            TestStack.attribute("name", .stringAttributeType), TestStack.attribute("small", .integer16AttributeType),
            TestStack.attribute("medium", .integer32AttributeType),
            TestStack.attribute("large", .integer64AttributeType),
            TestStack.attribute("ratio", .doubleAttributeType), TestStack.attribute("flag", .booleanAttributeType),
            TestStack.attribute("when", .dateAttributeType), TestStack.attribute("blob", .binaryDataAttributeType),
            TestStack.attribute("uuid", .UUIDAttributeType), transient, toOne, toMany, scratch,
        ]
        subItem.properties = [TestStack.attribute("extra", .stringAttributeType)]
        item.subentities = [subItem]
        owner.properties = [TestStack.attribute("name", .stringAttributeType), items]
        let model = NSManagedObjectModel()
        model.entities = [item, subItem, owner]
        return model
    }

    @Test func storeFormsFollowThePropertiesAndInheritance() throws {
        let model = Self.makeModel()
        let layout = try #require(model.entitiesByName["SubItem"]).layout
        let forms = layout.storeFormBySlot.map { form -> String in
            switch form {
            case .attribute(let type): "attribute \(type.rawValue)"
            case .toOne: "toOne"
            case .toMany: "toMany"
            case .none: "none"
            }
        }
        let expected =
            [
                NSAttributeType.stringAttributeType, .integer16AttributeType, .integer32AttributeType,
                .integer64AttributeType, .doubleAttributeType, .booleanAttributeType, .dateAttributeType,
                .binaryDataAttributeType, .UUIDAttributeType,
            ].map { "attribute \($0.rawValue)" } + [
                "none", "toOne", "toMany", "toOne", "attribute \(NSAttributeType.stringAttributeType.rawValue)",
            ]
        #expect(forms == expected)
        #expect(layout.denySlots.isEmpty)
    }

    /// Values of every attribute type, canonical or given as another type, nil, a
    /// transient value, and relationships to objects of the same save: the stored values
    /// equal the general path's slot by slot, and read back the same from a new context.
    @Test(arguments: TestStack.storeTypes)
    func storedValuesMatchTheGeneralPathAndReadBack(_ type: String) throws {
        let directory = try TestStack.scratchDirectory("save-fast-path")
        defer { try? FileManager.default.removeItem(at: directory) }
        let model = Self.makeModel()
        let coordinator = try TestStack.coordinator(type, model: model, in: directory)
        let context = TestStack.context(coordinator)
        let when = Date(timeIntervalSince1970: 1_000_000)
        let uuid = UUID()
        let owner = NSEntityDescription.insertNewObject(forEntityName: "Owner", into: context)
        owner.setValue("o", forKey: "name")
        var made: [NSManagedObject] = []
        for (index, entity) in ["Item", "SubItem", "Item"].enumerated() {
            let item = NSEntityDescription.insertNewObject(forEntityName: entity, into: context)
            item.setValue("item \(index)", forKey: "name")
            // Another type than the canonical one for some: converted on the general path.
            item.setValue(index == 0 ? Int16(7) as Any : NSNumber(value: 7), forKey: "small")
            item.setValue(index == 1 ? Int32(8) as Any : 8, forKey: "medium")
            item.setValue(index == 2 ? nil : Int64(9), forKey: "large")
            item.setValue(0.5, forKey: "ratio")
            item.setValue(true, forKey: "flag")
            item.setValue(when, forKey: "when")
            item.setValue(Data([1, 2, index == 1 ? 3 : 4]), forKey: "blob")
            item.setValue(uuid, forKey: "uuid")
            item.setValue("not stored", forKey: "memo")
            item.setValue(owner, forKey: "owner")
            item.setValue(Set([owner]), forKey: "tags")
            if entity == "SubItem" { item.setValue("sub", forKey: "extra") }
            made.append(item)
        }
        for item in made {
            let fast = try item.storeValues()
            let general = try item.values.indices.map { try item.storeValue(slot: $0, mapping: [:]) }
            #expect(fast == general)
            #expect(fast[item.layout.slotsByName["memo"]!] == .null)
        }
        try context.save()
        let names = Set(made.map { $0.objectID })
        #expect(names.allSatisfy { !$0.isTemporaryID })

        let fresh = TestStack.context(coordinator)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        let fetched = try fresh.fetch(request)
        #expect(fetched.count == 3)
        for (index, item) in fetched.enumerated() {
            #expect(item.value(forKey: "name") as? String == "item \(index)")
            #expect(item.value(forKey: "small") as? Int16 == 7)
            #expect(item.value(forKey: "medium") as? Int32 == 8)
            #expect(item.value(forKey: "large") as? Int64 == (index == 2 ? nil : 9))
            #expect(item.value(forKey: "ratio") as? Double == 0.5)
            #expect(item.value(forKey: "flag") as? Bool == true)
            #expect(item.value(forKey: "when") as? Date == when)
            #expect(item.value(forKey: "blob") as? Data == Data([1, 2, index == 1 ? 3 : 4]))
            #expect(item.value(forKey: "uuid") as? UUID == uuid)
            #expect(item.value(forKey: "memo") == nil)
            let storedOwner = item.value(forKey: "owner") as? NSManagedObject
            #expect(storedOwner?.objectID == owner.objectID)
            #expect((item.value(forKey: "tags") as? Set<NSManagedObject>)?.map(\.objectID) == [owner.objectID])
            #expect(item.entity.name == (index == 1 ? "SubItem" : "Item"))
            if index == 1 { #expect(item.value(forKey: "extra") as? String == "sub") }
        }
    }

    /// A save re-keys the registry in place: each object is found under its new permanent
    /// ID and no longer under its temporary one, uniqued with what a fetch returns; the
    /// second round saves while the first round's objects are registered.
    @Test func aSaveMovesEachObjectToItsPermanentID() throws {
        let context = try TestStack.freshContext()
        for round in 0..<2 {
            let objects = (0..<50).map { index -> NSManagedObject in
                let company = NSEntityDescription.insertNewObject(forEntityName: "Company", into: context)
                company.setValue("c\(round)-\(index)", forKey: "name")
                return company
            }
            let temporary = objects.map(\.objectID)
            #expect(temporary.allSatisfy { $0.isTemporaryID })
            try context.save()
            for (object, old) in zip(objects, temporary) {
                #expect(!object.objectID.isTemporaryID)
                #expect(context.registeredObject(for: object.objectID) === object)
                #expect(context.registeredObject(for: old) == nil)
                #expect(try context.existingObject(with: object.objectID) === object)
            }
            #expect(context.registeredObjects.count == 50 * (round + 1))
            let fetched = try context.fetch(TestStack.request("Company"))
            #expect(Set(fetched.map(ObjectIdentifier.init)).isSuperset(of: objects.map(ObjectIdentifier.init)))
        }
    }

    /// Deny rules are found through the layout, inherited ones too: each non-empty deny
    /// relationship is one error (several combined), deleted destinations do not count,
    /// and relationships with other rules are never checked.
    @Test func denyRulesFromTheLayoutGiveCoreDataErrors() throws {
        let holder = NSEntityDescription()
        holder.name = "Holder"
        let special = NSEntityDescription()
        special.name = "Special"
        let target = NSEntityDescription()
        target.name = "Target"
        let first = TestStack.relationship("first", to: target, toMany: true, rule: .denyDeleteRule)
        let loose = TestStack.relationship("loose", to: target, toMany: true, rule: .nullifyDeleteRule)
        let second = TestStack.relationship("second", to: target, toMany: false, rule: .denyDeleteRule)
        holder.properties = [TestStack.attribute("name", .stringAttributeType), first, loose]
        special.properties = [second]
        holder.subentities = [special]
        target.properties = [TestStack.attribute("name", .stringAttributeType)]
        let model = NSManagedObjectModel()
        model.entities = [holder, special, target]
        let context = TestStack.context(try TestStack.coordinator(model: model))
        #expect(special.layout.denySlots.map { special.layout.properties[$0].name } == ["first", "second"])
        #expect(target.layout.denySlots.isEmpty)

        let object = NSEntityDescription.insertNewObject(forEntityName: "Special", into: context)
        let targets = (0..<3).map { _ in NSEntityDescription.insertNewObject(forEntityName: "Target", into: context) }
        object.setValue(Set(targets[0..<2]), forKey: "first")
        object.setValue(Set([targets[2]]), forKey: "loose")
        object.setValue(targets[2], forKey: "second")
        try context.save()

        #expect {
            try object.validateForDelete()
        } throws: { error in
            let error = error as NSError
            let details = error.userInfo[NSDetailedErrorsKey] as? [NSError] ?? []
            return error.code == NSValidationMultipleErrorsError
                && details.map(\.code) == [
                    NSValidationRelationshipDeniedDeleteError, NSValidationRelationshipDeniedDeleteError,
                ]
                && details.compactMap { $0.userInfo[NSValidationKeyErrorKey] as? String } == ["first", "second"]
        }
        // The to-one emptied: one error, for `first`, naming what is left.
        object.setValue(nil, forKey: "second")
        #expect {
            try object.validateForDelete()
        } throws: { error in
            let error = error as NSError
            return error.code == NSValidationRelationshipDeniedDeleteError
                && error.userInfo[NSValidationKeyErrorKey] as? String == "first"
                && error.userInfo[NSValidationObjectErrorKey] as? NSManagedObject === object
        }
        // Deleted destinations do not hold the object back; `loose` (nullify) never does.
        for target in targets[0..<2] { context.delete(target) }
        try object.validateForDelete()
        context.delete(object)
        try context.save()
    }

    /// A slot that cannot be stored (a transformer that does not make data) fails the
    /// stored values after the slots before it were built, and those are let go of; the
    /// same object stores once the value is fixed.
    @Test func aSlotThatCannotBeStoredFailsTheStoredValues() throws {
        let notData = "SaveFastPathTests.notData"
        ValueTransformer.setValueTransformer(NotDataTransformer(), forName: NSValueTransformerName(notData))
        defer { ValueTransformer.setValueTransformer(nil, forName: NSValueTransformerName(notData)) }
        let entity = NSEntityDescription()
        entity.name = "Holder"
        let payload = TestStack.attribute("payload", .transformableAttributeType)
        payload.valueTransformerName = notData
        entity.properties = [
            TestStack.attribute("name", .stringAttributeType), payload,
            TestStack.attribute("after", .stringAttributeType),
        ]
        let model = NSManagedObjectModel()
        model.entities = [entity]
        let context = TestStack.context(try TestStack.coordinator(model: model))
        let object = NSEntityDescription.insertNewObject(forEntityName: "Holder", into: context)
        object.setValue("a name long enough to live in its own allocation", forKey: "name")
        object.setValue(["x"], forKey: "payload")
        object.setValue("after", forKey: "after")
        #expect(throws: (any Error).self) { try object.storeValues() }
        #expect(throws: (any Error).self) { try context.save() }
        object.setValue(nil, forKey: "payload")
        #expect(
            try object.storeValues() == [
                .string("a name long enough to live in its own allocation"), .null, .string("after"),
            ])
        try context.save()
    }
}
