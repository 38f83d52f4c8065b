// Models read from files in use: every store type holds the Library fixture's objects
// through the classes it names; derived and composite attributes, which no store
// computes or holds yet, make adding a store a clear error; models found by name.
import Foundation
import Testing

@testable import OpenCoreData

@Suite struct ModelFileStoreTests {
    static let storeTypes = [NSInMemoryStoreType, NSSQLiteStoreType, NSBinaryStoreType]

    @Test(arguments: storeTypes) func aModelFromAFileWorksInEveryStore(_ type: String) throws {
        let directory = try ModelFixtures.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let model = try ModelFixtures.read(ModelFixtures.library)
        let url = type == NSInMemoryStoreType ? nil : directory.appendingPathComponent("Library.store")
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: url, options: nil)
        let context = TestStack.context(coordinator)
        try context.performAndWait {
            let author = LibraryAuthor(context: context)
            author.name = "Frank Herbert"
            #expect(author.rating == 0, "the file's default")
            let dune = LibraryBook(context: context)
            dune.title = "Dune"
            dune.isbn = "1"
            #expect(dune.pages == 100 && dune.price == Decimal(string: "9.99"), "the file's defaults")
            let messiah = LibraryBook(context: context)
            messiah.title = "Dune Messiah"
            messiah.isbn = "2"
            messiah.pages = 256
            let books = author.mutableOrderedSetValue(forKey: "books")
            books.add(messiah)
            books.add(dune)
            #expect(dune.author === author, "the inverse from the file")
            let magazine = NSEntityDescription.insertNewObject(forEntityName: "Magazine", into: context)
            magazine.setValue("Analog", forKey: "title")
            try context.save()

            let duplicate = LibraryBook(context: context)
            duplicate.title = "Copy"
            duplicate.isbn = "1"
            #expect { try context.save() } throws: { ($0 as NSError).code == NSManagedObjectConstraintMergeError }
            context.delete(duplicate)
        }
        let reader = TestStack.context(coordinator)
        try reader.performAndWait {
            let authors = try reader.fetch(NSFetchRequest<LibraryAuthor>(entityName: "Author"))
            #expect(authors.count == 1)
            #expect(authors.first?.books.array.compactMap { ($0 as? LibraryBook)?.title } == ["Dune Messiah", "Dune"])
            let publications = try reader.fetch(NSFetchRequest<LibraryPublication>(entityName: "Publication"))
            #expect(Set(publications.compactMap(\.title)) == ["Dune", "Dune Messiah", "Analog"])
            let template = try #require(
                model.fetchRequestFromTemplate(
                    withName: "BooksByAuthor", substitutionVariables: ["AUTHOR": "Frank Herbert"]))
            #expect(try reader.count(for: template) == 2)
            // $FETCH_SOURCE is the author: its books of more than 300 pages (none yet).
            let author = try #require(authors.first)
            #expect((author.value(forKey: "longBooks") as? [NSManagedObject])?.isEmpty == true)
            let children = NSEntityDescription.insertNewObject(forEntityName: "Book", into: reader)
            children.setValue("Children of Dune", forKey: "title")
            children.setValue("3", forKey: "isbn")
            children.setValue(444, forKey: "pages")
            children.setValue(author, forKey: "author")
            try reader.save()
            #expect((author.value(forKey: "longBooks") as? [NSManagedObject])?.isEmpty == true, "kept until a refresh")
            reader.refresh(author, mergeChanges: false)
            let long = author.value(forKey: "longBooks") as? [NSManagedObject]
            #expect(long?.compactMap { $0.value(forKey: "title") as? String } == ["Children of Dune"])
        }
    }

    /// A model file of Person (name) with one derived attribute of the given XML attributes.
    static func personModel(derived: String, in directory: URL) throws -> NSManagedObjectModel {
        let url = try ModelFixtures.writeModel(
            ModelFixtures.model(
                """
                <entity name="Person" representedClassName="Person" syncable="YES">
                    <attribute name="name" optional="YES" attributeType="String"/>
                    <attribute \(derived) optional="YES" derived="YES"/>
                </entity>
                """), in: directory)
        return try NSManagedObjectModel(validatingContentsOf: url)
    }

    @Test(arguments: storeTypes) func aDerivedAttributeFromAModelFileIsComputedOnSave(_ type: String) throws {
        let directory = try ModelFixtures.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let model = try Self.personModel(
            derived: #"name="searchName" attributeType="String" derivationExpression="lowercase:(name)""#, in: directory
        )
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let storeURL = type == NSInMemoryStoreType ? nil : directory.appendingPathComponent("Derived.store")
        try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: storeURL, options: nil)
        let context = TestStack.context(coordinator)
        try context.performAndWait {
            let person = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
            person.setValue("Ada LOVELACE", forKey: "name")
            try context.save()
            context.refresh(person, mergeChanges: false)
            #expect(person.value(forKey: "searchName") as? String == "ada lovelace")
        }
    }

    @Test(arguments: storeTypes) func aDerivedAttributeTheStoresCannotComputeMakesAddingAStoreAClearError(
        _ type: String
    ) throws {
        let directory = try ModelFixtures.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let model = try Self.personModel(
            derived: #"name="luck" attributeType="Double" derivationExpression="random()""#, in: directory)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let storeURL = type == NSInMemoryStoreType ? nil : directory.appendingPathComponent("Derived.store")
        let error = try #require(throws: NSError.self) {
            try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: storeURL, options: nil)
        }
        #expect(error.code == NSPersistentStoreIncompatibleSchemaError)
        #expect(error.localizedDescription.contains("Person.luck has the expression 'random()'"))
        #expect(coordinator.persistentStores.isEmpty)
        if let storeURL { #expect(!FileManager.default.fileExists(atPath: storeURL.path), "no file is created") }
    }

    @Test func aModelFilesBoundsAndPatternsFailWithCoreDatasCodes() throws {
        let directory = try ModelFixtures.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = try ModelFixtures.writeModel(
            ModelFixtures.model(
                """
                <entity name="Form" representedClassName="Form" syncable="YES">
                    <attribute name="count" optional="YES" attributeType="Integer 16" minValueString="1" maxValueString="10" usesScalarValueType="YES"/>
                    <attribute name="price" optional="YES" attributeType="Double" minValueString="0.5" maxValueString="9.5" usesScalarValueType="YES"/>
                    <attribute name="code" optional="YES" attributeType="String" minValueString="2" maxValueString="4" regularExpressionString="[a-z]+"/>
                    <attribute name="when" optional="YES" attributeType="Date" minDateTimeInterval="0" maxDateTimeInterval="1000" usesScalarValueType="NO"/>
                </entity>
                """), in: directory)
        let model = try NSManagedObjectModel(validatingContentsOf: url)
        let context = TestStack.context(try TestStack.coordinator(model: model))
        try context.performAndWait {
            for (key, value, code) in [
                ("count", Int16(0), NSValidationNumberTooSmallError),
                ("count", Int16(11), NSValidationNumberTooLargeError),
                ("price", 0.25, NSValidationNumberTooSmallError), ("price", 10.0, NSValidationNumberTooLargeError),
                ("code", "a", NSValidationStringTooShortError), ("code", "abcde", NSValidationStringTooLongError),
                ("code", "AB", NSValidationStringPatternMatchingError),
                ("when", Date(timeIntervalSinceReferenceDate: -1), NSValidationDateTooSoonError),
                ("when", Date(timeIntervalSinceReferenceDate: 1001), NSValidationDateTooLateError),
            ] as [(String, Any, Int)] {
                let form = NSEntityDescription.insertNewObject(forEntityName: "Form", into: context)
                form.setValue(value, forKey: key)
                let error = try #require(throws: NSError.self) { try context.save() }
                #expect(error.code == code, "\(key) = \(value): \(error)")
                #expect(error.userInfo[NSValidationKeyErrorKey] as? String == key)
                context.rollback()
            }
            let form = NSEntityDescription.insertNewObject(forEntityName: "Form", into: context)
            form.setValue(Int16(5), forKey: "count")
            form.setValue("abc", forKey: "code")
            try context.save()
        }
    }

    @Test func aCompositeElementOfAForbiddenTypeMakesAddingAStoreAClearError() throws {
        for (element, fragment) in [
            (TestStack.attribute("link", .objectIDAttributeType), "'link' of a type composite elements cannot have"),
            (TestStack.attribute("any", .undefinedAttributeType), "'any' of a type composite elements cannot have"),
            (
                {
                    let photo = TestStack.attribute("photo", .binaryDataAttributeType)
                    photo.allowsExternalBinaryDataStorage = true
                    return photo
                }(), "binary data in external storage"
            ),
        ] {
            let place = NSCompositeAttributeDescription()
            place.name = "place"
            place.elements = [TestStack.attribute("city", .stringAttributeType), element]
            let entity = NSEntityDescription()
            entity.name = "Visit"
            entity.properties = [place]
            let model = NSManagedObjectModel()
            model.entities = [entity]
            let container = NSPersistentContainer(name: "Visits", managedObjectModel: model)
            container.persistentStoreDescriptions = [NSPersistentStoreDescription()]
            container.persistentStoreDescriptions[0].type = NSInMemoryStoreType
            var reported: Error?
            container.loadPersistentStores { _, error in reported = error }
            #expect((reported as NSError?)?.code == NSPersistentStoreIncompatibleSchemaError)
            let message = (reported as NSError?)?.localizedDescription ?? ""
            #expect(message.contains("composite attribute Visit.place") && message.contains(fragment), "\(message)")
        }
    }

    @Test func aContainerFindsItsModelInTheMainBundle() throws {
        let name = "ModelFileLookup\(UUID().uuidString.prefix(8))"
        let resources = try #require(Bundle.main.resourceURL)
        let copy = resources.appendingPathComponent("\(name).xcdatamodel")
        try FileManager.default.copyItem(at: ModelFixtures.library, to: copy)
        defer { try? FileManager.default.removeItem(at: copy) }
        let container = NSPersistentContainer(name: name)
        #expect(Set(container.managedObjectModel.entitiesByName.keys) == ["Author", "Book", "Magazine", "Publication"])
        #expect(container.managedObjectModel.versionIdentifiers == ["7"])
        container.persistentStoreDescriptions[0].type = NSInMemoryStoreType
        var reported: Error?
        container.loadPersistentStores { _, error in reported = error }
        #expect(reported == nil && container.persistentStoreCoordinator.persistentStores.count == 1)
    }

    @Test func aContainerWithoutModelReportsWhereItLooked() throws {
        let container = NSPersistentContainer(name: "NoSuchModelAnywhere")
        #expect(container.managedObjectModel.entities.isEmpty)
        var reports: [Error?] = []
        container.loadPersistentStores { _, error in reports.append(error) }
        let error = try #require(reports.first as? NSError)
        #expect(reports.count == 1 && error.code == NSFileReadNoSuchFileError)
        #expect(error.localizedDescription.contains("found no readable model named NoSuchModelAnywhere"))
        #expect(error.localizedDescription.contains(FileManager.default.currentDirectoryPath))
        #expect(error.localizedDescription.contains("NoSuchModelAnywhere.xcdatamodeld"))
        #expect(container.persistentStoreCoordinator.persistentStores.isEmpty)
    }

    @Test func lookupOrderAndUnreadableCandidates() throws {
        let directory = try ModelFixtures.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(
            ModelFileLocator.candidateNames(for: "App") == [
                "App.momd", "App.mom", "App.xcdatamodeld", "App.xcdatamodel",
            ])
        let places = ModelFileLocator.searchDirectories()
        #expect(places.first?.path == (Bundle.main.resourceURL ?? Bundle.main.bundleURL).path)
        #expect(
            places.last?.standardizedFileURL.path
                == URL(fileURLWithPath: FileManager.default.currentDirectoryPath).standardizedFileURL.path)
    }

    @Test func mergedModelsFromBundles() throws {
        let directory = try ModelFixtures.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.copyItem(
            at: ModelFixtures.library, to: directory.appendingPathComponent("Library.xcdatamodel"))
        try ModelFixtures.writeModel(
            ModelFixtures.model(
                #"<entity name="Note"><relationship name="book" maxCount="1" destinationEntity="Book"/></entity>"#,
                identifier: "notes"), named: "Notes", in: directory)
        let bundle = try #require(Bundle(path: directory.path))
        let merged = try #require(NSManagedObjectModel.mergedModel(from: [bundle]))
        #expect(Set(merged.entitiesByName.keys) == ["Author", "Book", "Magazine", "Publication", "Note"])
        #expect(
            merged.entitiesByName["Note"]?.relationshipsByName["book"]?.destinationEntity
                === merged.entitiesByName["Book"])
        #expect(merged.versionIdentifiers == ["7", "notes"])
        #expect(merged.configurations == ["Catalog"] && merged.fetchRequestTemplate(forName: "BooksByAuthor") != nil)

        try ModelFixtures.writeModel(ModelFixtures.model(#"<entity name="Author"/>"#), named: "Clash", in: directory)
        #expect(NSManagedObjectModel.mergedModel(from: [bundle]) == nil, "two models define Author")
        let empty = try #require(Bundle(path: try ModelFixtures.scratchDirectory().path))
        #expect(NSManagedObjectModel.mergedModel(from: [empty]) == nil)
    }

    @Test func theVersionAStoreWasSavedWith() throws {
        let directory = try ModelFixtures.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.copyItem(
            at: ModelFixtures.everything, to: directory.appendingPathComponent("Everything.xcdatamodeld"))
        let bundle = try #require(Bundle(path: directory.path))
        let first = try NSManagedObjectModel(
            validatingContentsOf: ModelFixtures.everything.appendingPathComponent("Everything.xcdatamodel"))
        let metadata: [String: Any] = [NSStoreModelVersionHashesKey: first.entityVersionHashesByName]
        let found = try #require(NSManagedObjectModel.mergedModel(from: [bundle], forStoreMetadata: metadata))
        #expect(found.versionIdentifiers == ["1"] && found.versionChecksum == first.versionChecksum)
        let unknown: [String: Any] = [NSStoreModelVersionHashesKey: ["Sample": Data([1])]]
        #expect(NSManagedObjectModel.mergedModel(from: [bundle], forStoreMetadata: unknown) == nil)
    }
}
