import OpenCoreData
import Testing

@Suite struct ModelTests {
    @Test func entitiesResolveTheirClassesAndInheritProperties() throws {
        let model = TestStack.model
        _ = try TestStack.coordinator()
        let manager = try #require(model.entitiesByName["Manager"])
        let employee = try #require(model.entitiesByName["Employee"])
        #expect(manager.superentity === employee)
        #expect(manager.isKindOf(entity: employee))
        #expect(!employee.isKindOf(entity: manager))
        #expect(Set(manager.attributesByName.keys) == ["name", "age", "salary", "level"])
        #expect(Set(manager.relationshipsByName.keys) == ["company", "projects", "ledCompany"])
        #expect(NSClassFromString(manager.managedObjectClassName) == TManager.self)
        #expect(TManager.entity().name == "Manager" && TCompany.entity().name == "Company")
        #expect(employee.relationshipsByName["company"]?.isToMany == false)
        #expect(employee.relationshipsByName["projects"]?.isToMany == true)
    }

    @Test func versionHashesAreStableAndTrackChanges() {
        let first = TestStack.makeModel().entityVersionHashesByName
        let second = TestStack.makeModel().entityVersionHashesByName
        #expect(first == second)
        #expect(first["Company"]?.count == 32)
        let changed = TestStack.makeModel()
        changed.entitiesByName["Company"]?.properties.append(TestStack.attribute("motto", .stringAttributeType))
        #expect(changed.entityVersionHashesByName["Company"] != first["Company"])
        #expect(changed.entityVersionHashesByName["Task"] == first["Task"])
    }

    @Test func storeMetadataMatchesItsModel() throws {
        let coordinator = try TestStack.coordinator()
        let store = try #require(coordinator.persistentStores.first)
        let metadata = coordinator.metadata(for: store)
        #expect(metadata[NSStoreTypeKey] as? String == NSInMemoryStoreType)
        #expect(TestStack.model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        let other = TestStack.makeModel()
        other.entitiesByName["Task"]?.properties.append(TestStack.attribute("done", .booleanAttributeType))
        #expect(!other.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
    }

    @Test func everyAttributeTypeRoundTripsThroughTheStore() throws {
        let types: [(NSAttributeType, Any)] = [
            (.integer16AttributeType, Int16(-7)), (.integer32AttributeType, Int32(1 << 20)),
            (.integer64AttributeType, Int64.max), (.decimalAttributeType, Decimal(string: "12.345")!),
            (.doubleAttributeType, 2.5), (.floatAttributeType, Float(1.25)), (.stringAttributeType, "Zoë 🚀"),
            (.booleanAttributeType, true), (.dateAttributeType, Date(timeIntervalSince1970: 1_000_000_000.5)),
            (.binaryDataAttributeType, Data([0, 1, 2, 255])), (.UUIDAttributeType, UUID()),
            (.URIAttributeType, URL(string: "https://example.com/a?b=c")!),
        ]
        let entity = NSEntityDescription()
        entity.name = "Everything"
        entity.properties = types.enumerated().map { TestStack.attribute("a\($0.offset)", $0.element.0) }
        let model = NSManagedObjectModel()
        model.entities = [entity]
        let coordinator = try TestStack.coordinator(model: model)
        let writer = TestStack.context(coordinator)
        let object = NSManagedObject(entity: entity, insertInto: writer)
        for (index, (_, value)) in types.enumerated() { object.setValue(value, forKey: "a\(index)") }
        try writer.save()
        let reader = TestStack.context(coordinator)
        let fetched = try #require(try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Everything")).first)
        #expect(fetched !== object)
        for (index, (_, value)) in types.enumerated() {
            let read = fetched.value(forKey: "a\(index)")
            #expect(String(describing: read ?? "nil") == String(describing: value), "attribute a\(index)")
            #expect(type(of: read!) == type(of: value), "attribute a\(index) type")
        }
    }

    @Test func unknownStoreTypeIsAClearError() throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestStack.makeModel())
        for type in ["NoSuchStore"] {
            #expect {
                try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: nil, options: nil)
            } throws: { ($0 as NSError).code == NSPersistentStoreInvalidTypeError }
        }
        // The default store exists and needs a file URL.
        #expect {
            try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: nil, options: nil)
        } throws: { ($0 as NSError).code == NSPersistentStoreOpenError }
        let container = NSPersistentContainer(name: "Nothing", managedObjectModel: TestStack.makeModel())
        container.persistentStoreDescriptions[0].type = "NoSuchStore"
        var loadError: Error?
        container.loadPersistentStores { _, error in loadError = error }
        #expect((loadError as NSError?)?.code == NSPersistentStoreInvalidTypeError)
    }
}
