// Transient attributes: kept in memory, tracked as changes (rollback restores them),
// never written to any store.
import Foundation
import Testing

@testable import OpenCoreData

@Suite struct TransientAttributeTests {
    @Test(arguments: TestStack.storeTypes)
    func transientValuesStayInMemoryAndRollBack(type: String) throws {
        let entity = NSEntityDescription()
        entity.name = "Draft"
        let scratch = TestStack.attribute("scratch", .stringAttributeType)
        scratch.isTransient = true
        entity.properties = [TestStack.attribute("title", .stringAttributeType), scratch]
        let model = NSManagedObjectModel()
        model.entities = [entity]
        let directory = try TestStack.scratchDirectory("transient")
        defer { try? FileManager.default.removeItem(at: directory) }
        let coordinator = try TestStack.coordinator(type, model: model, in: directory)
        let context = TestStack.context(coordinator)
        let id = try context.performAndWait {
            let draft = NSEntityDescription.insertNewObject(forEntityName: "Draft", into: context)
            draft.setValue("T", forKey: "title")
            draft.setValue("kept in memory", forKey: "scratch")
            try context.save()
            #expect(draft.value(forKey: "scratch") as? String == "kept in memory", "a save keeps it in the object")
            draft.setValue("changed", forKey: "scratch")
            #expect(draft.changedValues()["scratch"] as? String == "changed", "a change of a transient is a change")
            context.rollback()
            #expect(draft.value(forKey: "scratch") as? String == "kept in memory", "rollback restores it")
            return draft.objectID
        }
        let row = try #require(try coordinator.rows(for: [id]).first ?? nil)
        let slot = try #require(entity.layout.slotsByName["scratch"])
        #expect(row.values[slot] == .null, "the store holds nothing for it")
        let reader = TestStack.context(coordinator)
        try reader.performAndWait {
            let draft = try reader.existingObject(with: id)
            #expect(draft.value(forKey: "title") as? String == "T" && draft.value(forKey: "scratch") == nil)
        }
    }

    @Test(arguments: TestStack.storeTypes)
    func transientChangesAreUndoable(type: String) throws {
        let entity = NSEntityDescription()
        entity.name = "Draft"
        let scratch = TestStack.attribute("scratch", .stringAttributeType)
        scratch.isTransient = true
        entity.properties = [TestStack.attribute("title", .stringAttributeType), scratch]
        let model = NSManagedObjectModel()
        model.entities = [entity]
        let directory = try TestStack.scratchDirectory("transient-undo")
        defer { try? FileManager.default.removeItem(at: directory) }
        let context = TestStack.context(try TestStack.coordinator(type, model: model, in: directory))
        let values = try context.performAndWait { () throws -> [String?] in
            context.undoManager = UndoManager()
            context.undoManager?.groupsByEvent = false
            let draft = NSEntityDescription.insertNewObject(forEntityName: "Draft", into: context)
            draft.setValue("first", forKey: "scratch")
            try context.save()
            context.undoManager?.removeAllActions()
            context.undoManager?.beginUndoGrouping()
            draft.setValue("second", forKey: "scratch")
            context.processPendingChanges()
            context.undoManager?.endUndoGrouping()
            context.undo()
            let undone = draft.value(forKey: "scratch") as? String
            context.redo()
            return [undone, draft.value(forKey: "scratch") as? String]
        }
        #expect(values == ["first", "second"], "undo restores a transient value, redo brings the change back")
    }
}
