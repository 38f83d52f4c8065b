import OpenCoreData
import Testing

/// Each bad input named in the README's "Porting from Core Data" section: a thrown
/// error where the API can throw; the non-throwing Core Data forms document a
/// precondition instead (not exercised here: a precondition stops the process).
@Suite struct BadInputTests {
    @Test func unknownKeysThrowFromTheThrowingForms() throws {
        let context = try TestStack.freshContext()
        let employee = TEmployee(context: context)
        #expect(throws: KeyValueCodingError.unknownKey("shoeSize", in: "Employee")) {
            try employee.readValue(forKey: "shoeSize")
        }
        #expect(throws: KeyValueCodingError.unknownKey("shoeSize", in: "Employee")) {
            try employee.writeValue(44, forKey: "shoeSize")
        }
        #expect(throws: KeyValueCodingError.unknownKey("nope", in: "Company")) {
            try employee.readValue(forKeyPath: "company.nope")
        }
        employee.company = TCompany(context: context)
        #expect(throws: KeyValueCodingError.unknownKey("nope", in: "Company")) {
            try employee.readValue(forKeyPath: "company.nope")
        }
        let description = String(describing: KeyValueCodingError.unknownKey("shoeSize", in: "Employee"))
        #expect(description.contains("shoeSize") && description.contains("Employee"))
    }

    @Test func wrongValueTypesThrowFromWriteValue() throws {
        let context = try TestStack.freshContext()
        let employee = TEmployee(context: context)
        let cases: [(String, Any)] = [
            ("age", "forty"), ("age", 1 << 40), ("age", 2.5), ("salary", "lots"), ("name", 42),
            ("company", "Acme"), ("projects", 3), ("company", TProject(context: context)),
        ]
        for (key, value) in cases {
            #expect("\(key) = \(value)") {
                try employee.writeValue(value, forKey: key)
            } throws: { error in
                let error = error as NSError
                return error.code == NSManagedObjectValidationError
                    && error.userInfo[NSValidationKeyErrorKey] as? String == key
                    && error.localizedDescription.contains(key)
            }
        }
        try employee.writeValue(41, forKey: "age")
        try employee.writeValue(NSNumber(value: 3.5), forKey: "salary")
        #expect(employee.age == 41 && employee.salary == 3.5)
        #expect(employee.changedValues()["company"] == nil)
    }

    @Test func objectsOfAnotherContextAreRefused() throws {
        let coordinator = try TestStack.coordinator()
        let one = TestStack.context(coordinator)
        let other = TestStack.context(coordinator)
        let employee = TEmployee(context: one)
        let company = TCompany(context: other)
        #expect {
            try employee.writeValue(company, forKey: "company")
        } throws: { error in
            (error as NSError).code == NSManagedObjectValidationError
                && (error as NSError).localizedDescription.contains("different contexts")
        }
        #expect {
            try company.writeValue(Set([employee]), forKey: "employees")
        } throws: { ($0 as NSError).code == NSManagedObjectValidationError }
        #expect(employee.company == nil && company.employees.isEmpty)
    }

    @Test func unknownEntityNamesThrowOnFetchAndCount() throws {
        let context = try TestStack.freshContext()
        for body in [
            { _ = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Nobody")) },
            { _ = try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Nobody")) },
            { _ = try context.fetch(NSFetchRequest<NSManagedObject>()) },
        ] as [() throws -> Void] {
            #expect(throws: NSError.self) { try body() }
        }
    }

    @Test func nonTransformableValuesInATransformableAttributeFailTheSave() throws {
        let entity = NSEntityDescription()
        entity.name = "Blob"
        entity.properties = [TestStack.attribute("payload", .transformableAttributeType)]
        let model = NSManagedObjectModel()
        model.entities = [entity]
        let context = TestStack.context(try TestStack.coordinator(model: model))
        let blob = NSManagedObject(entity: entity, insertInto: context)
        blob.setValue(Data([1, 2]), forKey: "payload")
        try context.save()
        blob.setValue(NSObject(), forKey: "payload")
        #expect { try context.save() } throws: { ($0 as NSError).code == NSManagedObjectValidationError }
    }
}
