// The context reuses its notifications' userInfo dictionaries and sets from one post to
// the next (NotificationBuffers, NotificationUserInfo.swift): every notification must
// still carry exactly its own objects, whether its observer reads it in the callback
// (storage reused in place), keeps it (storage copied on the next fill) or saves again
// from inside it; and nothing may keep the saved objects alive afterwards.
import Foundation
import OpenCoreData
import Testing

@Suite struct NotificationBufferTests {
    /// The objects under `key`, by identity, sorted (comparable across notifications).
    static func identities(_ info: [AnyHashable: Any]?, _ key: String) -> [ObjectIdentifier]? {
        guard let objects = info?[key] else { return nil }
        guard let set = objects as? Set<NSManagedObject> else { return [] }
        return set.map(ObjectIdentifier.init).sorted()
    }

    static func ids(_ objects: NSManagedObject...) -> [ObjectIdentifier] {
        objects.map(ObjectIdentifier.init).sorted()
    }

    /// Saves of one new employee each (its company updated), one with a delete: read in
    /// the callback (reused in place) and kept (copied), each notification lists its own
    /// save's objects, and the kept ones still do after the later saves.
    @Test func everyNotificationCarriesItsOwnObjectsReadNowOrKept() throws {
        let context = try TestStack.freshContext()
        let company = TCompany(context: context)
        company.name = "Acme"
        try context.save()
        let keys = [NSInsertedObjectsKey, NSUpdatedObjectsKey, NSDeletedObjectsKey]
        final class Seen: @unchecked Sendable {
            var didSave: [[[ObjectIdentifier]?]] = []
            var didChange: [[[ObjectIdentifier]?]] = []
        }
        let seen = Seen()
        let kept = NotificationLog(
            [.NSManagedObjectContextDidSave, .NSManagedObjectContextObjectsDidChange], from: context)
        let observers = [
            NotificationCenter.default.addObserver(
                forName: .NSManagedObjectContextDidSave, object: context, queue: nil
            ) { note in seen.didSave.append(keys.map { Self.identities(note.userInfo, $0) }) },
            NotificationCenter.default.addObserver(
                forName: .NSManagedObjectContextObjectsDidChange, object: context, queue: nil
            ) { note in seen.didChange.append(keys.map { Self.identities(note.userInfo, $0) }) },
        ]
        defer { for observer in observers { NotificationCenter.default.removeObserver(observer) } }
        var employees: [TEmployee] = []
        var expectedSaves: [[[ObjectIdentifier]?]] = []
        for index in 0..<6 {
            if index == 3 {
                let gone = employees.removeFirst()
                context.delete(gone)
                try context.save()
                // The deleted employee left the company's list: the company is updated too.
                expectedSaves.append([nil, Self.ids(company), Self.ids(gone)])
                continue
            }
            let employee = TEmployee(context: context)
            employee.name = "E\(index)"
            employee.company = company
            employees.append(employee)
            try context.save()
            expectedSaves.append([Self.ids(employee), Self.ids(company), nil])
        }
        // DidSave has every key, an empty kind holding an empty set.
        let expectedDidSave = expectedSaves.map { $0.map { $0 ?? [] } }
        #expect(seen.didSave == expectedDidSave)
        #expect(seen.didChange == expectedSaves)
        let notes = kept.all
        let keptDidSave = notes.filter { $0.name == .NSManagedObjectContextDidSave }
        let keptDidChange = notes.filter { $0.name == .NSManagedObjectContextObjectsDidChange }
        #expect(keptDidSave.map { note in keys.map { Self.identities(note.userInfo, $0) } } == expectedDidSave)
        #expect(keptDidChange.map { note in keys.map { Self.identities(note.userInfo, $0) } } == expectedSaves)
    }

    /// An observer of DidSave that saves again from inside it: the nested save's
    /// notification lists its object, and the outer one, read after the nested save
    /// returned, still lists the outer save's.
    @Test func aSaveInsideADidSaveObserverLeavesTheOuterNotificationIntact() throws {
        let context = try TestStack.freshContext()
        let outer = TEmployee(context: context)
        outer.name = "Outer"
        final class State: @unchecked Sendable {
            var nested: TEmployee?
            var outerAfterNested: [ObjectIdentifier]?
            var nestedInserted: [ObjectIdentifier]?
            var depth = 0
        }
        let state = State()
        let observer = NotificationCenter.default.addObserver(
            forName: .NSManagedObjectContextDidSave, object: context, queue: nil
        ) { note in
            state.depth += 1
            defer { state.depth -= 1 }
            if state.depth == 1, state.nested == nil {
                let nested = TEmployee(context: context)
                nested.name = "Nested"
                state.nested = nested
                try? context.save()
                state.outerAfterNested = Self.identities(note.userInfo, NSInsertedObjectsKey)
            } else {
                state.nestedInserted = Self.identities(note.userInfo, NSInsertedObjectsKey)
            }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        try context.save()
        let nested = try #require(state.nested)
        #expect(state.outerAfterNested == Self.ids(outer))
        #expect(state.nestedInserted == Self.ids(nested))
        #expect(!context.hasChanges && !nested.objectID.isTemporaryID)
    }

    /// After a save and a reset, the saved objects are not held by the buffers: released
    /// once the caller lets go.
    @Test func theBuffersKeepNoSavedObjectAlive() throws {
        let context = try TestStack.freshContext()
        weak var company: TCompany?
        weak var employee: TEmployee?
        try {
            let newCompany = TCompany(context: context)
            newCompany.name = "Acme"
            let newEmployee = TEmployee(context: context)
            newEmployee.name = "Ada"
            newEmployee.company = newCompany
            try context.save()
            newEmployee.name = "Changed"
            try context.save()
            context.delete(newEmployee)
            try context.save()
            company = newCompany
            employee = newEmployee
        }()
        context.reset()
        #expect(company == nil)
        #expect(employee == nil)
    }
}
