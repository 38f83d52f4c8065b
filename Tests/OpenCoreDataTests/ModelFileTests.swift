// Reading Xcode model files: every element and attribute of Tests/ModelFixtures/
// Everything.xcdatamodeld lands in the description Core Data gives it.
import Foundation
import Testing

@testable import OpenCoreData

@Suite struct ModelFileTests {
    private func everything() throws -> NSManagedObjectModel {
        try ModelFixtures.read(ModelFixtures.everything)
    }

    @Test func aPackageLoadsTheVersionItsCurrentVersionFileNames() throws {
        let current = try #require(NSManagedObjectModel(contentsOf: ModelFixtures.everything))
        #expect(current.versionIdentifiers == ["two"])
        #expect(Set(current.entitiesByName.keys) == ["Asset", "Device", "Owner", "Vehicle"])
        let first = ModelFixtures.everything.appendingPathComponent("Everything.xcdatamodel")
        let old = try NSManagedObjectModel(validatingContentsOf: first)
        #expect(old.versionIdentifiers == ["1"] && Set(old.entitiesByName.keys) == ["Sample"])
        let contents = try NSManagedObjectModel(validatingContentsOf: first.appendingPathComponent("contents"))
        #expect(contents.entityVersionHashesByName == old.entityVersionHashesByName)
    }

    @Test func aPackageWithoutCurrentVersionFileUsesItsOnlyVersion() throws {
        let directory = try ModelFixtures.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let package = directory.appendingPathComponent("Solo.xcdatamodeld")
        try FileManager.default.createDirectory(at: package, withIntermediateDirectories: true)
        try ModelFixtures.writeModel(
            ModelFixtures.model(#"<entity name="A"><attribute name="x" attributeType="String"/></entity>"#),
            named: "Solo", in: package)
        #expect(try NSManagedObjectModel(validatingContentsOf: package).entitiesByName["A"] != nil)
        try ModelFixtures.writeModel(ModelFixtures.model(""), named: "Solo 2", in: package)
        #expect(throws: ModelFileError.self) { try NSManagedObjectModel(validatingContentsOf: package) }
    }

    @Test func entitiesKeepNamesClassesHierarchyAndSettings() throws {
        let model = try everything()
        let asset = try #require(model.entitiesByName["Asset"])
        let device = try #require(model.entitiesByName["Device"])
        let vehicle = try #require(model.entitiesByName["Vehicle"])
        let owner = try #require(model.entitiesByName["Owner"])
        #expect(model.entities.compactMap(\.name) == ["Asset", "Device", "Owner", "Vehicle"])
        #expect(asset.isAbstract && !device.isAbstract)
        #expect(asset.subentities == [device] && device.subentities == [vehicle])
        #expect(vehicle.superentity === device && device.superentity === asset && asset.superentity == nil)
        #expect(vehicle.isKindOf(entity: asset))
        #expect(asset.renamingIdentifier == "Thing" && asset.versionHashModifier == "v2")
        #expect(asset.userInfo?["kind"] as? String == "abstract root")
        #expect(owner.userInfo?["table"] as? String == "owners" && owner.userInfo?.count == 2)
        // "." is the product module; a plain name is kept when no such class exists.
        #expect(device.managedObjectClassName == "\(ModelFixtures.testModule).Device")
        #expect(asset.managedObjectClassName == "Asset")
        #expect(owner.managedObjectClassName == "OpenCoreDataTests.FixtureOwner")
        #expect(
            Set(vehicle.attributesByName.keys) == [
                "identifier", "label", "serial", "shortSerial", "location", "wheels",
            ])
    }

    @Test func attributesOfEveryType() throws {
        let owner = try #require(try everything().entitiesByName["Owner"])
        let a = owner.attributesByName
        let types: [String: NSAttributeType] = [
            "active": .booleanAttributeType, "avatar": .binaryDataAttributeType, "balance": .decimalAttributeType,
            "birthday": .dateAttributeType, "cache": .stringAttributeType, "height": .floatAttributeType,
            "homepage": .URIAttributeType, "level": .integer16AttributeType, "name": .stringAttributeType,
            "points": .integer64AttributeType, "preferences": .transformableAttributeType,
            "reference": .objectIDAttributeType, "score": .doubleAttributeType, "seats": .integer32AttributeType,
            "token": .UUIDAttributeType, "anything": .undefinedAttributeType,
        ]
        #expect(Set(a.keys) == Set(types.keys))
        for (name, type) in types { #expect(a[name]?.attributeType == type, "\(name)") }
        #expect(a["active"]?.defaultValue as? Bool == true)
        #expect(a["balance"]?.defaultValue as? Decimal == Decimal(string: "12.75"))
        #expect(a["birthday"]?.defaultValue as? Date == Date(timeIntervalSinceReferenceDate: 0))
        #expect(a["height"]?.defaultValue as? Float == 1.75)
        #expect(a["homepage"]?.defaultValue as? URL == URL(string: "https://example.com/home"))
        #expect(a["level"]?.defaultValue as? Int16 == 3)
        #expect(a["name"]?.defaultValue as? String == "Anonymous")
        #expect(a["points"]?.defaultValue as? Int64 == -9_000_000_000)
        #expect(a["score"]?.defaultValue as? Double == 0.5)
        #expect(a["seats"]?.defaultValue as? Int32 == 4)
        #expect(a["token"]?.defaultValue as? UUID == UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
        #expect(a["avatar"]?.defaultValue == nil && a["avatar"]?.allowsExternalBinaryDataStorage == true)
        #expect(a["name"]?.isOptional == false && a["level"]?.isOptional == false && a["score"]?.isOptional == true)
        #expect(a["cache"]?.isTransient == true && a["name"]?.isTransient == false)
        #expect(a["preferences"]?.valueTransformerName == "NSSecureUnarchiveFromData")
        #expect(a["preferences"]?.attributeValueClassName == "[String: String]")
        #expect(a["seats"]?.preservesValueInHistoryOnDeletion == true)
    }

    @Test func boundsAndPatternsBecomeValidationPredicates() throws {
        let model = try everything()
        let owner = try #require(model.entitiesByName["Owner"]).attributesByName
        func passes(_ attribute: NSAttributeDescription?, _ value: Any) -> [Bool] {
            (attribute?.validationPredicates ?? []).map { $0.evaluate(with: value) }
        }
        #expect(owner["level"]?.validationPredicates.count == 2)
        #expect(
            passes(owner["level"], Int16(1)) == [true, true] && passes(owner["level"], Int16(11)) == [true, false])
        #expect(passes(owner["level"], Int16(0)) == [false, true])
        #expect(passes(owner["balance"], Decimal(string: "-100.6")!) == [false, true])
        #expect(passes(owner["height"], Float(3.6)) == [true, false])
        let early = Date(timeIntervalSinceReferenceDate: -978_307_201)
        #expect(passes(owner["birthday"], early) == [false, true])
        #expect(passes(owner["birthday"], Date(timeIntervalSinceReferenceDate: 5)) == [true, true])
        let label = try #require(model.entitiesByName["Asset"]).attributesByName["label"]
        #expect(label?.validationPredicates.count == 3 && label?.validationWarnings.count == 3)
        #expect(passes(label, "Big box") == [true, true, true])
        #expect(passes(label, "B") == [false, true, true])
        #expect(passes(label, "Box 9") == [true, true, false])
        #expect(passes(label, String(repeating: "a", count: 41)) == [true, false, true])
        #expect(label?.isIndexedBySpotlight == true)
        #expect(owner["name"]?.validationPredicates.isEmpty == true)
    }

    @Test func aBoundIsEnforcedWhenAnObjectIsSaved() throws {
        let model = try ModelFixtures.read(ModelFixtures.library)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            let book = NSEntityDescription.insertNewObject(forEntityName: "Book", into: context)
            book.setValue("Dune", forKey: "title")
            book.setValue("978-0441013593", forKey: "isbn")
            book.setValue(Int32(0), forKey: "pages")
            #expect(throws: (any Error).self) { try context.save() }
            book.setValue(Int32(412), forKey: "pages")
            try context.save()
        }
    }

    @Test func derivedAndCompositeAttributes() throws {
        let device = try #require(try everything().entitiesByName["Device"])
        let derived = try #require(device.attributesByName["shortSerial"] as? NSDerivedAttributeDescription)
        #expect(derived.attributeType == .stringAttributeType)
        #expect(derived.derivationExpression?.description == "lowercase:(serial)")
        #expect(device.attributesByName["serial"]?.renamingIdentifier == "serialNumber")
        #expect(device.attributesByName["serial"]?.isIndexed == true)
        let location = try #require(device.attributesByName["location"] as? NSCompositeAttributeDescription)
        #expect(location.elements.map(\.name) == ["city", "floor"])
        #expect(location.elements.map(\.attributeType) == [.stringAttributeType, .integer16AttributeType])
        #expect(location.elements.last?.defaultValue as? Int16 == 0)
    }

    @Test func relationshipsWithCountsRulesOrderAndInverses() throws {
        let model = try everything()
        let owner = try #require(model.entitiesByName["Owner"])
        let vehicle = try #require(model.entitiesByName["Vehicle"])
        let asset = try #require(model.entitiesByName["Asset"])
        let assets = try #require(owner.relationshipsByName["assets"])
        #expect(assets.isToMany && assets.minCount == 1 && assets.maxCount == 20 && !assets.isOrdered)
        #expect(assets.deleteRule == .cascadeDeleteRule && assets.destinationEntity === asset)
        #expect(assets.inverseRelationship === asset.relationshipsByName["owner"])
        #expect(asset.relationshipsByName["owner"]?.inverseRelationship === assets)
        let garage = try #require(owner.relationshipsByName["garage"])
        #expect(garage.isOrdered && garage.isToMany && garage.maxCount == 0 && garage.deleteRule == .denyDeleteRule)
        #expect(garage.inverseRelationship === vehicle.relationshipsByName["keepers"])
        #expect(garage.userInfo?["note"] as? String == "parking & storage")
        let mentor = try #require(owner.relationshipsByName["mentor"])
        #expect(!mentor.isToMany && mentor.deleteRule == .noActionDeleteRule && mentor.inverseRelationship == nil)
        #expect(vehicle.relationshipsByName["owner"]?.destinationEntity === owner)
        #expect(vehicle.attributesByName["wheels"]?.userInfo?["unit"] as? String == "count")
    }

    @Test func indexesAndUniquenessConstraints() throws {
        let device = try #require(try everything().entitiesByName["Device"])
        #expect(device.indexes.map(\.name) == ["bySerial", "byOwner"])
        let bySerial = device.indexes[0]
        #expect(bySerial.elements.map(\.propertyName) == ["serial", "label"])
        #expect(bySerial.elements.map(\.isAscending) == [true, false])
        #expect(bySerial.elements.allSatisfy { $0.collationType == .binary && $0.indexDescription === bySerial })
        #expect(bySerial.entity === device)
        #expect(device.indexes[1].elements.first?.property is NSRelationshipDescription)
        #expect(device.uniquenessConstraints as? [[String]] == [["serial"], ["identifier", "label"]])
    }

    @Test func configurationsTemplatesAndFetchedProperties() throws {
        let model = try everything()
        #expect(model.configurations == ["Garage", "Registry"])
        #expect(model.entities(forConfigurationName: "Garage")?.compactMap(\.name) == ["Vehicle", "Owner"])
        #expect(model.entities(forConfigurationName: "Registry")?.compactMap(\.name) == ["Owner"])
        #expect(model.entities(forConfigurationName: nil)?.count == 4)
        #expect(model.entities(forConfigurationName: "PF_DEFAULT_CONFIGURATION_NAME")?.count == 4)
        #expect(model.entities(forConfigurationName: "Nowhere") == nil)

        #expect(Set(model.fetchRequestTemplatesByName.keys) == ["OwnersNamed", "AllDevices"])
        let template = try #require(model.fetchRequestTemplate(forName: "OwnersNamed"))
        #expect(template.entity === model.entitiesByName["Owner"] && template.entityName == "Owner")
        #expect(template.fetchLimit == 25 && template.fetchBatchSize == 10)
        #expect(!template.includesSubentities && !template.returnsObjectsAsFaults && template.returnsDistinctResults)
        #expect(template.includesPendingChanges && template.includesPropertyValues)
        #expect(template.predicate?.description == "name == $NAME AND level >= $LEVEL")
        let request = try #require(
            model.fetchRequestFromTemplate(withName: "OwnersNamed", substitutionVariables: ["NAME": "Ada", "LEVEL": 2]))
        #expect(request !== template && request.predicate?.description == #"name == "Ada" AND level >= 2"#)
        #expect(request.fetchLimit == 25 && request.returnsDistinctResults && request.entity === template.entity)
        #expect(template.predicate?.description == "name == $NAME AND level >= $LEVEL")
        #expect(model.fetchRequestTemplate(forName: "AllDevices")?.predicate == nil)
        #expect(model.fetchRequestFromTemplate(withName: "Missing", substitutionVariables: [:]) == nil)

        let owner = try #require(model.entitiesByName["Owner"])
        let fetched = try #require(owner.propertiesByName["bigAssets"] as? NSFetchedPropertyDescription)
        #expect(fetched.isOptional && fetched.fetchRequest?.entity === model.entitiesByName["Asset"])
        #expect(fetched.fetchRequest?.predicate?.description == #"owner == $FETCH_SOURCE AND label BEGINSWITH "Big""#)
    }

    @Test func configurationsAndTemplatesCanBeSetInCode() throws {
        let model = try ModelFixtures.read(ModelFixtures.library)
        let author = try #require(model.entitiesByName["Author"])
        model.setEntities([author], forConfigurationName: "People")
        #expect(model.configurations == ["Catalog", "People"])
        let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Author")
        request.predicate = NSPredicate(format: "rating > $MINIMUM")
        model.setFetchRequestTemplate(request, forName: "Rated")
        #expect(model.fetchRequestTemplate(forName: "Rated") === request)
        #expect(
            model.fetchRequestFromTemplate(withName: "Rated", substitutionVariables: ["MINIMUM": 4])?.predicate?
                .description == "rating > 4")
        model.setFetchRequestTemplate(nil, forName: "Rated")
        #expect(model.fetchRequestTemplate(forName: "Rated") == nil)
    }

    @Test func aLeadingDotNamesTheMainExecutablesModule() {
        #expect(ModelClassName.moduleName(forExecutable: "Stage5") == "Stage5")
        #expect(ModelClassName.moduleName(forExecutable: "storage-bench") == "storage_bench")
        #expect(
            ModelClassName.moduleName(forExecutable: "OpenCoreDataPackageTests.xctest") == "OpenCoreDataPackageTests")
        #expect(ModelClassName.moduleName(forExecutable: "9lives") == "_9lives")
        #expect(ModelClassName.resolve(".Employee", module: "Stage5") == "Stage5.Employee")
        #expect(ModelClassName.resolve("Other.Employee", module: "Stage5") == "Other.Employee")
        #expect(ModelClassName.resolve(nil, module: "Stage5") == "NSManagedObject")
        #expect(ModelClassName.resolve("", module: "Stage5") == "NSManagedObject")
        // A bare name finds the class in the product module, as @objc(Name) does in Core Data.
        #expect(
            ModelClassName.resolve("LibraryBook", module: ModelFixtures.testModule)
                == "\(ModelFixtures.testModule).LibraryBook")
        #expect(ModelClassName.resolve("NoSuchClass", module: ModelFixtures.testModule) == "NoSuchClass")
        let model = NSManagedObjectModel(contentsOf: ModelFixtures.library)
        #expect(
            model?.entitiesByName["Book"]?.managedObjectClassName == "\(ModelClassName.productModuleName).LibraryBook")
    }

    @Test func aModelFromAFileAndTheSameModelInCodeAgree() throws {
        let file = try ModelFixtures.read(ModelFixtures.library)
        let code = VersionHashTests.libraryInCode()
        #expect(file.entityVersionHashesByName == code.entityVersionHashesByName)
        #expect(file.versionChecksum == code.versionChecksum)
        for (name, entity) in code.entitiesByName {
            for property in entity.properties {
                #expect(
                    file.entitiesByName[name]?.propertiesByName[property.name]?.versionHash == property.versionHash,
                    "\(name).\(property.name)")
            }
        }
    }

    @Test func checksumsOfEveryVersionOfAPackage() throws {
        let checksums = try NSManagedObjectModel.checksumsForVersionedModel(at: ModelFixtures.everything)
        let first = try NSManagedObjectModel(
            validatingContentsOf: ModelFixtures.everything.appendingPathComponent("Everything.xcdatamodel"))
        let current = try NSManagedObjectModel(validatingContentsOf: ModelFixtures.everything)
        #expect(checksums == ["Everything": first.versionChecksum, "Everything 2": current.versionChecksum])
        #expect(first.versionChecksum != current.versionChecksum)
        #expect(Data(base64Encoded: current.versionChecksum)?.count == 32)
        #expect(throws: ModelFileError.self) {
            try NSManagedObjectModel.checksumsForVersionedModel(
                at: ModelFixtures.directory.appendingPathComponent("None"))
        }
    }

    /// Shapes older Xcode versions wrote (seen in public model files of 2013-2015):
    /// platform versions on <model>, empty <userInfo/> everywhere, the legacy indexed flag
    /// on relationships, Boolean defaults written as 0, diagram elements of size 0.
    @Test func shapesOlderXcodeVersionsWrote() throws {
        let directory = try ModelFixtures.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = try ModelFixtures.writeModel(
            """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model name="" userDefinedModelVersionIdentifier="" type="com.apple.IDECoreDataModeler.DataModel" \
            documentVersion="1.0" lastSavedToolsVersion="3401" systemVersion="13A603" minimumToolsVersion="Xcode 4.3" \
            macOSVersion="Automatic" iOSVersion="Automatic" usedWithCloudKit="YES">
                <entity name="Blog" representedClassName="Blog">
                    <attribute name="visible" optional="YES" attributeType="Boolean" defaultValueString="0">
                        <userInfo/>
                    </attribute>
                    <relationship name="posts" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Post" \
            inverseName="blog" inverseEntity="Post" indexed="YES" syncable="YES">
                        <userInfo/>
                    </relationship>
                    <userInfo/>
                </entity>
                <entity name="Post" representedClassName="Post" syncable="YES">
                    <relationship name="blog" optional="YES" minCount="1" maxCount="1" deletionRule="Nullify" \
            destinationEntity="Blog" inverseName="posts" inverseEntity="Blog" indexed="YES" syncable="YES"/>
                </entity>
                <fetchRequest name="Visible" entity="Blog" predicateString="visible == 1"/>
                <elements>
                    <element name="Blog" positionX="0" positionY="0" width="0" height="0"/>
                    <element name="Post" positionX="0" positionY="0" width="0" height="0"/>
                </elements>
            </model>
            """, in: directory)
        let model = try NSManagedObjectModel(validatingContentsOf: url)
        let blog = try #require(model.entitiesByName["Blog"])
        #expect(model.versionIdentifiers.isEmpty)
        #expect(blog.attributesByName["visible"]?.defaultValue as? Bool == false)
        #expect(blog.userInfo?.isEmpty == true && blog.attributesByName["visible"]?.userInfo?.isEmpty == true)
        #expect(blog.relationshipsByName["posts"]?.isIndexed == true)
        let blogOfPost = model.entitiesByName["Post"]?.relationshipsByName["blog"]
        #expect(blogOfPost?.minCount == 1 && blogOfPost?.isToMany == false && blogOfPost?.isOptional == true)
        #expect(model.fetchRequestTemplate(forName: "Visible")?.entity === blog)
    }
}
