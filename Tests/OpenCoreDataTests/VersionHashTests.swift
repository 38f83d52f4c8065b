// Version identity: entity and property version hashes from the inputs Core Data
// documents, the model's versionChecksum, the golden bytes SPEC.md pins, and stores
// written with the first form of the hashes still opening.
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

@Suite struct VersionHashTests {
    private func hex(_ data: Data?) -> String { (data ?? Data()).map { String(format: "%02x", $0) }.joined() }

    /// The Library fixture built in code, as a Core Data user writes it.
    static func libraryInCode() -> NSManagedObjectModel {
        func attribute(_ name: String, _ type: NSAttributeType, optional: Bool, _ defaultValue: Any? = nil)
            -> NSAttributeDescription
        {
            TestStack.attribute(name, type, optional: optional, defaultValue: defaultValue)
        }
        let publication = NSEntityDescription()
        publication.name = "Publication"
        publication.isAbstract = true
        publication.properties = [
            attribute("published", .dateAttributeType, optional: true),
            attribute("title", .stringAttributeType, optional: false),
        ]
        let author = NSEntityDescription()
        author.name = "Author"
        let book = NSEntityDescription()
        book.name = "Book"
        let books = TestStack.relationship("books", to: book, toMany: true, rule: .cascadeDeleteRule, ordered: true)
        let bookAuthor = TestStack.relationship("author", to: author, toMany: false)
        TestStack.pair(books, bookAuthor)
        let longBooks = NSFetchedPropertyDescription()
        longBooks.name = "longBooks"
        longBooks.fetchRequest = NSFetchRequest(entityName: "Book")
        author.properties = [
            attribute("born", .dateAttributeType, optional: true),
            attribute("name", .stringAttributeType, optional: false),
            attribute("rating", .doubleAttributeType, optional: false, 0.0), books, longBooks,
        ]
        book.properties = [
            attribute("isbn", .stringAttributeType, optional: false),
            attribute("pages", .integer32AttributeType, optional: false, Int32(100)),
            attribute("price", .decimalAttributeType, optional: true), bookAuthor,
        ]
        let magazine = NSEntityDescription()
        magazine.name = "Magazine"
        magazine.properties = [attribute("issue", .integer16AttributeType, optional: false, Int16(1))]
        publication.subentities = [book, magazine]
        let model = NSManagedObjectModel()
        model.entities = [author, book, magazine, publication]
        return model
    }

    @Test func defaultsValidationAndNamesOfClassesDoNotChangeTheHashTypesDo() throws {
        let base = Self.libraryInCode()
        func changed(_ change: (NSManagedObjectModel) -> Void) -> NSManagedObjectModel {
            let model = Self.libraryInCode()
            change(model)
            return model
        }
        func book(_ model: NSManagedObjectModel) -> NSEntityDescription { model.entitiesByName["Book"]! }
        let same: [(String, NSManagedObjectModel)] = [
            ("default", changed { book($0).attributesByName["pages"]?.defaultValue = Int32(7) }),
            (
                "validation",
                changed {
                    book($0).attributesByName["pages"]?.setValidationPredicates(
                        [NSPredicate(format: "SELF > 0")], withValidationWarnings: ["positive"])
                }
            ),
            ("indexed", changed { book($0).attributesByName["isbn"]?.isIndexed = true }),
            ("user info", changed { book($0).userInfo = ["a": "b"] }),
            ("class name", changed { book($0).managedObjectClassName = "Other.Book" }),
            ("renaming identifier", changed { book($0).attributesByName["isbn"]?.renamingIdentifier = "code" }),
            ("transformer", changed { book($0).attributesByName["isbn"]?.valueTransformerName = "T" }),
            ("delete rule", changed { book($0).relationshipsByName["author"]?.deleteRule = .denyDeleteRule }),
            ("uniqueness", changed { book($0).uniquenessConstraints = [["isbn"]] }),
            ("external storage", changed { book($0).attributesByName["isbn"]?.allowsExternalBinaryDataStorage = true }),
        ]
        for (what, model) in same {
            #expect(model.entityVersionHashesByName == base.entityVersionHashesByName, "\(what)")
            #expect(model.versionChecksum == base.versionChecksum, "\(what)")
        }
        let different: [(String, NSManagedObjectModel)] = [
            ("type", changed { book($0).attributesByName["pages"]?.attributeType = .integer64AttributeType }),
            ("optional", changed { book($0).attributesByName["isbn"]?.isOptional = true }),
            ("transient", changed { book($0).attributesByName["isbn"]?.isTransient = true }),
            ("property modifier", changed { book($0).attributesByName["isbn"]?.versionHashModifier = "2" }),
            ("entity modifier", changed { book($0).versionHashModifier = "2" }),
            ("abstract", changed { book($0).isAbstract = true }),
            ("ordered", changed { $0.entitiesByName["Author"]?.relationshipsByName["books"]?.isOrdered = false }),
            ("max count", changed { $0.entitiesByName["Author"]?.relationshipsByName["books"]?.maxCount = 9 }),
            ("min count", changed { $0.entitiesByName["Author"]?.relationshipsByName["books"]?.minCount = 1 }),
            (
                "property added",
                changed { book($0).properties.append(TestStack.attribute("scratch", .stringAttributeType)) }
            ),
        ]
        for (what, model) in different {
            #expect(
                model.entityVersionHashesByName["Book"] != base.entityVersionHashesByName["Book"]
                    || model.entityVersionHashesByName["Author"] != base.entityVersionHashesByName["Author"], "\(what)")
            #expect(model.versionChecksum != base.versionChecksum, "\(what)")
        }
        let transient = changed {
            let scratch = TestStack.attribute("scratch", .stringAttributeType)
            scratch.isTransient = true
            book($0).properties.append(scratch)
        }
        #expect(transient.entityVersionHashesByName["Book"] != base.entityVersionHashesByName["Book"])
        // A sub-entity's hash holds its superentity's: a property added above changes both.
        let inherited = changed {
            $0.entitiesByName["Publication"]?.properties.append(TestStack.attribute("isFree", .booleanAttributeType))
        }
        #expect(inherited.entityVersionHashesByName["Book"] != base.entityVersionHashesByName["Book"])
        #expect(inherited.entityVersionHashesByName["Magazine"] != base.entityVersionHashesByName["Magazine"])
        #expect(inherited.entityVersionHashesByName["Author"] == base.entityVersionHashesByName["Author"])
        let derived = NSDerivedAttributeDescription()
        derived.name = "isbn"
        derived.attributeType = .stringAttributeType
        derived.isOptional = false
        #expect(derived.versionHash != TestStack.attribute("isbn", .stringAttributeType, optional: false).versionHash)
    }

    /// SPEC.md §3.10: these bytes are what stores record.
    @Test func goldenBytes() throws {
        let title = TestStack.attribute("title", .stringAttributeType, optional: false)
        #expect(hex(title.versionHash) == "7d0a6b0b038a1c38529f9df076ea8ccdfb87036f9cd580f05830c4cb7560c670")
        let model = TestStack.makeModel()
        let hashes = model.entityVersionHashesByName
        #expect(hex(hashes["Task"]) == "224807442768ce2d7f934c5b2e8274c6fc0424cff830dd6d19da54e5618dc766")
        #expect(hex(hashes["Manager"]) == "fc39abd552db7c655de38f6603375c6a0e9b0e4a8d7fc150effd712b33708cae")
        #expect(model.versionChecksum == "+QOYg93DFroyvDhLtJ49PQMj4AKvfVyOJMaKiigZhR4=")
        let components = ["attribute", "title", "0", "0", "0", "", "700"]
        #expect(title.versionHash == VersionHash.digest(components))
    }

    /// The hashes stores recorded before this version (SPEC.md §3.10 V5).
    static let firstFormHashes: [String: String] = [
        "Company": "41543c40f77b623fc2e242857c30c3058bda18cfeaaf700934e83e56ca5f8ca1",
        "Employee": "08c750ec1b1d27f1b3a7fa56174673ae0a78bc79343b38453d6333c24156ef41",
        "Manager": "6888ab433e652250334e48fa7ffaac4b0a3dff0e0388005de587bcef3b57a742",
        "Project": "378cf3a4e3a752a7e21d71a249e456f5f5ae35123bd520ba585dad1097d94412",
        "Task": "d3fbbc81e75ba8cbd8b125883dc86a0e99d83be3b82610ab068988421d6155ca",
    ]

    @Test func storesWrittenWithTheFirstFormOfTheHashesStillOpen() throws {
        let model = TestStack.makeModel()
        let firstForm = VersionHash.firstFormHashes(of: model)
        #expect(firstForm.mapValues { hex($0) } == Self.firstFormHashes)
        #expect(firstForm != model.entityVersionHashesByName)
        #expect(
            model.isConfiguration(withName: nil, compatibleWithStoreMetadata: [NSStoreModelVersionHashesKey: firstForm])
        )
        let other = TestStack.makeModel()
        other.entitiesByName["Task"]?.properties.append(TestStack.attribute("done", .booleanAttributeType))
        #expect(
            !other.isConfiguration(
                withName: nil, compatibleWithStoreMetadata: [NSStoreModelVersionHashesKey: firstForm]))

        // A default store whose metadata holds first-form hashes opens without migrating.
        let directory = try TestScratch.directory("hashes")
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("Old.store")
        do {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestStack.makeModel())
            let store = try coordinator.addPersistentStore(
                ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
            var metadata = coordinator.metadata(for: store)
            metadata[NSStoreModelVersionHashesKey] = firstForm
            coordinator.setMetadata(metadata, for: store)
            let context = TestStack.context(coordinator)
            let task = NSEntityDescription.insertNewObject(forEntityName: "Task", into: context)
            task.setValue("kept", forKey: "title")
            try context.save()
            try coordinator.remove(store)
        }
        let stored = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: NSSQLiteStoreType, at: url, options: nil)
        #expect(
            (stored[NSStoreModelVersionHashesKey] as? [String: Data])?.mapValues { hex($0) } == Self.firstFormHashes)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestStack.makeModel())
        let store = try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
        let context = TestStack.context(coordinator)
        let titles = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Task"))
            .map { $0.value(forKey: "title") as? String }
        #expect(titles == ["kept"])
        try coordinator.remove(store)
        let changedCoordinator = NSPersistentStoreCoordinator(managedObjectModel: other)
        #expect {
            try changedCoordinator.addPersistentStore(
                ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
        } throws: { ($0 as NSError).code == NSPersistentStoreIncompatibleVersionHashError }
    }
}
