// A save whose relationship values name an object with a temporary ID that the save does
// not insert fails with NSManagedObjectValidationError (1550), "Dangling reference to an
// invalid object.", writing nothing, on every store; before, the stores wrote a reference
// to a row that never exists (the default store's verify() then reported a to-one naming
// a missing row, the in-memory and binary stores kept the temporary ID). An object the
// save inserts is named by its permanent ID even when its entity has no relationships.
import Foundation
import Testing

@testable import OpenCoreData

enum DanglingFixtures {
    /// Folder 1-n Note (nullify both ways); Note.pinned (to-one) and Note.related (to-many)
    /// to Folder and Note.label to Label, all without an inverse; Label has no relationships.
    static let model: NSManagedObjectModel = {
        let folder = NSEntityDescription()
        folder.name = "Folder"
        let note = NSEntityDescription()
        note.name = "Note"
        let label = NSEntityDescription()
        label.name = "Label"
        let notes = TestStack.relationship("notes", to: note, toMany: true)
        let noteFolder = TestStack.relationship("folder", to: folder, toMany: false)
        TestStack.pair(notes, noteFolder)
        let pinned = TestStack.relationship("pinned", to: folder, toMany: false)
        let related = TestStack.relationship("related", to: folder, toMany: true)
        let noteLabel = TestStack.relationship("label", to: label, toMany: false)
        folder.properties = [TestStack.attribute("name", .stringAttributeType), notes]
        note.properties = [
            TestStack.attribute("title", .stringAttributeType), noteFolder, pinned, related, noteLabel,
        ]
        label.properties = [TestStack.attribute("name", .stringAttributeType)]
        let model = NSManagedObjectModel()
        model.entities = [folder, note, label]
        return model
    }()
}

@Suite struct DanglingReferenceTests {
    /// How the note comes to name a folder no row of the save is.
    enum Dangling: String, CaseIterable, Sendable {
        /// A fault of another context's unsaved folder, from `object(with:)`, as `folder`
        case foreignFaultToOne
        /// The same fault as `pinned` (no inverse)
        case foreignFaultNoInverse
        /// The same fault in `related` (to-many, no inverse)
        case foreignFaultToMany
        /// A folder made with `init(entity:insertInto: nil)`, as `pinned`
        case noContext
        /// A folder inserted, set as `pinned`, then deleted before the save
        case deletedBeforeSave
        /// A folder inserted, added to `related`, then deleted before the save
        case deletedBeforeSaveToMany
        /// A stored note updated to name another context's unsaved folder as `pinned`
        case storedNoteUpdated
    }

    private static let keys: [Dangling: String] = [
        .foreignFaultToOne: "folder", .foreignFaultNoInverse: "pinned", .foreignFaultToMany: "related",
        .noContext: "pinned", .deletedBeforeSave: "pinned", .deletedBeforeSaveToMany: "related",
        .storedNoteUpdated: "pinned",
    ]

    @Test(arguments: TestStack.storeTypes, Dangling.allCases)
    func aSaveNamingAnObjectItDoesNotInsertFailsWith1550(_ storeType: String, _ dangling: Dangling) throws {
        let directory = try TestStack.scratchDirectory("dangling")
        defer { try? FileManager.default.removeItem(at: directory) }
        let coordinator = try TestStack.coordinator(storeType, model: DanglingFixtures.model, in: directory)
        let context = TestStack.context(coordinator)
        let other = TestStack.context(coordinator)
        try context.performAndWait {
            let stored = NSEntityDescription.insertNewObject(forEntityName: "Note", into: context)
            stored.setValue("stored", forKey: "title")
            try context.save()
            let note: NSManagedObject
            if dangling == .storedNoteUpdated {
                note = stored
            } else {
                note = NSEntityDescription.insertNewObject(forEntityName: "Note", into: context)
                note.setValue("new", forKey: "title")
            }
            let foreign = other.performAndWait {
                NSEntityDescription.insertNewObject(forEntityName: "Folder", into: other).objectID
            }
            switch dangling {
            case .foreignFaultToOne: note.setValue(context.object(with: foreign), forKey: "folder")
            case .foreignFaultNoInverse, .storedNoteUpdated:
                note.setValue(context.object(with: foreign), forKey: "pinned")
            case .foreignFaultToMany: note.mutableSetValue(forKey: "related").add(context.object(with: foreign))
            case .noContext:
                let entity = try #require(DanglingFixtures.model.entitiesByName["Folder"])
                note.setValue(NSManagedObject(entity: entity, insertInto: nil), forKey: "pinned")
            case .deletedBeforeSave, .deletedBeforeSaveToMany:
                let folder = NSEntityDescription.insertNewObject(forEntityName: "Folder", into: context)
                if dangling == .deletedBeforeSave {
                    note.setValue(folder, forKey: "pinned")
                } else {
                    note.mutableSetValue(forKey: "related").add(folder)
                }
                context.delete(folder)
            }
            let error = try #require(throws: NSError.self) { try context.save() }
            #expect(error.domain == NSCocoaErrorDomain)
            #expect(error.code == NSManagedObjectValidationError)
            #expect(error.localizedDescription.hasPrefix("Dangling reference to an invalid object"))
            #expect(error.userInfo[NSValidationKeyErrorKey] as? String == Self.keys[dangling])
            #expect((error.userInfo[NSValidationObjectErrorKey] as? NSManagedObject) === note)
        }
        // Nothing written: the stored note alone, naming no folder.
        let check = TestStack.context(coordinator)
        try check.performAndWait {
            let notes = try check.fetch(NSFetchRequest<NSManagedObject>(entityName: "Note"))
            #expect(notes.map { $0.value(forKey: "title") as? String } == ["stored"])
            #expect(notes.first?.value(forKey: "pinned") == nil)
            #expect(try check.count(for: NSFetchRequest<NSManagedObject>(entityName: "Folder")) == 0)
        }
        if let store = coordinator.persistentStores.first as? PageFileStore {
            #expect(try store.verify().problems.isEmpty)
        }
    }

    /// The controls: a folder inserted and deleted before the save through an inverse with
    /// a nullify rule leaves nothing to name, and a new object of an entity without
    /// relationships named by a stored object's relationship is saved under its permanent ID.
    @Test(arguments: TestStack.storeTypes)
    func objectsTheSaveInsertsOrNullifiesAreNotDangling(_ storeType: String) throws {
        let directory = try TestStack.scratchDirectory("dangling")
        defer { try? FileManager.default.removeItem(at: directory) }
        let coordinator = try TestStack.coordinator(storeType, model: DanglingFixtures.model, in: directory)
        let context = TestStack.context(coordinator)
        try context.performAndWait {
            let note = NSEntityDescription.insertNewObject(forEntityName: "Note", into: context)
            let folder = NSEntityDescription.insertNewObject(forEntityName: "Folder", into: context)
            note.setValue(folder, forKey: "folder")
            context.delete(folder)
            try context.save()
            let label = NSEntityDescription.insertNewObject(forEntityName: "Label", into: context)
            label.setValue("red", forKey: "name")
            note.setValue(label, forKey: "label")
            try context.save()
        }
        let check = TestStack.context(coordinator)
        try check.performAndWait {
            let note = try #require(try check.fetch(NSFetchRequest<NSManagedObject>(entityName: "Note")).first)
            #expect(note.value(forKey: "folder") == nil)
            let label = try #require(note.value(forKey: "label") as? NSManagedObject)
            #expect(!label.objectID.isTemporaryID)
            #expect(label.value(forKey: "name") as? String == "red")
        }
        if let store = coordinator.persistentStores.first as? PageFileStore {
            #expect(try store.verify().problems.isEmpty)
        }
    }
}
