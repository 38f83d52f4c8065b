import OpenCoreData
import Testing

/// Rejects names shorter than three characters in validateForInsert.
final class Picky: NSManagedObject {
    @Managed var name: String?
    @Managed var count: Int64

    override func validateForInsert() throws {
        try super.validateForInsert()
        if let name, name.count < 3 {
            throw NSError(domain: "Picky", code: 7, userInfo: [NSLocalizedDescriptionKey: "name too short"])
        }
    }
}

@Suite struct ValidationTests {
    static func pickyModel() -> NSManagedObjectModel {
        let entity = NSEntityDescription()
        entity.name = "Picky"
        entity.managedObjectClassName = NSStringFromClass(Picky.self)
        let name = TestStack.attribute("name", .stringAttributeType, optional: false)
        let count = TestStack.attribute("count", .integer64AttributeType, optional: false, defaultValue: 0)
        count.setValidationPredicates(
            [
                NSPredicate(block: { value, _ in (value as? Int64 ?? 0) >= 0 })
            ], withValidationWarnings: ["count must not be negative"])
        let owner = NSEntityDescription()
        owner.name = "Owner"
        let items = TestStack.relationship("items", to: entity, toMany: true)
        items.minCount = 2
        items.maxCount = 3
        let single = TestStack.relationship("single", to: entity, toMany: false)
        single.isOptional = false
        owner.properties = [items, single]
        entity.properties = [name, count]
        let model = NSManagedObjectModel()
        model.entities = [entity, owner]
        return model
    }

    static let model = pickyModel()

    @Test func missingMandatoryValueIs1570WithObjectAndKey() throws {
        let context = TestStack.context(try TestStack.coordinator(model: Self.model))
        let picky = Picky(context: context)
        #expect {
            try context.save()
        } throws: { error in
            let error = error as NSError
            return error.domain == NSCocoaErrorDomain && error.code == NSValidationMissingMandatoryPropertyError
                && error.userInfo[NSValidationKeyErrorKey] as? String == "name"
                && error.userInfo[NSValidationObjectErrorKey] as? NSManagedObject === picky
                && error.localizedDescription.contains("name")
        }
        #expect(context.hasChanges, "a failed save keeps the changes")
        picky.name = "long enough"
        try context.save()
        #expect(!context.hasChanges)
    }

    @Test func severalErrorsAre1560WithDetailedErrors() throws {
        let context = TestStack.context(try TestStack.coordinator(model: Self.model))
        let first = Picky(context: context)
        first.count = -1
        let second = Picky(context: context)
        second.name = "ab"
        var caught: NSError?
        do { try context.save() } catch { caught = error as NSError }
        let error = try #require(caught)
        #expect(error.code == NSValidationMultipleErrorsError)
        let details = try #require(error.userInfo[NSDetailedErrorsKey] as? [Error]).map { $0 as NSError }
        #expect(details.count == 3)
        #expect(details.contains { $0.code == NSValidationMissingMandatoryPropertyError })
        #expect(
            details.contains {
                $0.code == NSManagedObjectValidationError && $0.userInfo[NSValidationKeyErrorKey] as? String == "count"
                    && $0.userInfo[NSValidationPredicateErrorKey] is NSPredicate
                    && $0.localizedDescription.contains("must not be negative")
            })
        #expect(details.contains { $0.domain == "Picky" && $0.code == 7 })
    }

    @Test func relationshipCountsAndRequiredToOne() throws {
        let context = TestStack.context(try TestStack.coordinator(model: Self.model))
        let owner = NSEntityDescription.insertNewObject(forEntityName: "Owner", into: context)
        let items = (0..<4).map { index -> Picky in
            let item = Picky(context: context)
            item.name = "item \(index)"
            return item
        }
        owner.setValue(Set([items[0]]), forKey: "items")
        func codes() -> Set<Int> {
            do {
                try context.save()
                return []
            } catch {
                let error = error as NSError
                let list = (error.userInfo[NSDetailedErrorsKey] as? [Error]) ?? [error]
                return Set(list.map { ($0 as NSError).code })
            }
        }
        #expect(codes() == [NSValidationRelationshipLacksMinimumCountError, NSValidationMissingMandatoryPropertyError])
        owner.setValue(Set(items), forKey: "items")
        owner.setValue(items[0], forKey: "single")
        #expect(codes() == [NSValidationRelationshipExceedsMaximumCountError])
        owner.setValue(Set(items.prefix(3)), forKey: "items")
        #expect(codes().isEmpty)
    }

    @Test func wrongValueTypeFailsValidationWith1550() throws {
        let context = try TestStack.freshContext()
        let employee = TEmployee(context: context)
        employee.setValue("not a number", forKey: "age")
        #expect {
            try context.save()
        } throws: { error in
            let error = error as NSError
            return error.code == NSManagedObjectValidationError
                && error.userInfo[NSValidationKeyErrorKey] as? String == "age"
                && error.userInfo[NSValidationValueErrorKey] as? String == "not a number"
        }
        employee.setValue(70_000, forKey: "age")  // does not fit Int16
        #expect(throws: NSError.self) { try context.save() }
        employee.setValue(42, forKey: "age")
        try context.save()
        #expect(employee.age == 42)
    }

    @Test func validateValueChecksAndCoerces() throws {
        let context = TestStack.context(try TestStack.coordinator(model: Self.model))
        let picky = Picky(context: context)
        var value: Any? = 5
        try picky.validateValue(&value, forKey: "count")
        #expect(value as? Int64 == 5)
        var negative: Any? = -5
        #expect(throws: NSError.self) { try picky.validateValue(&negative, forKey: "count") }
        var missing: Any? = nil
        #expect { try picky.validateValue(&missing, forKey: "name") } throws: {
            ($0 as NSError).code == NSValidationMissingMandatoryPropertyError
        }
        var anything: Any? = 1
        #expect(throws: KeyValueCodingError.unknownKey("nope", in: "Picky")) {
            try picky.validateValue(&anything, forKey: "nope")
        }
    }
}
