// A save's DidSave lists the inserted (deleted) objects in the very set its
// ObjectsDidChange posted when that set holds them all and no object joined or left the
// lists since (ObjectLifecycle+SaveNotifications.swift); otherwise it builds its own.
// Either way each notification lists exactly the objects of its kind.
import Foundation
import Testing

@testable import OpenCoreData

@Suite struct SaveNotificationSetsTests {
    /// More objects than the notification buffers keep storage for: the sets are shared.
    static let bulk = NotificationBuffers.retainedSetCapacity * 2

    private static func employees(_ count: Int, in context: NSManagedObjectContext, prefix: String = "E")
        -> [TEmployee]
    {
        (0..<count).map { index in
            let employee = TEmployee(context: context)
            employee.name = "\(prefix)\(index)"
            return employee
        }
    }

    @Test func aBulkInsertListsItsObjectsInBothNotifications() throws {
        let context = try TestStack.freshContext()
        let log = NotificationLog(
            [.NSManagedObjectContextObjectsDidChange, .NSManagedObjectContextDidSave], from: context)
        let first = Self.employees(Self.bulk, in: context)
        try context.save()
        let second = Self.employees(Self.bulk + 1, in: context, prefix: "F")
        try context.save()
        let notes = log.all
        let didSaves = notes.indices.filter { notes[$0].name == .NSManagedObjectContextDidSave }
        let changes = notes.indices.filter { notes[$0].name == .NSManagedObjectContextObjectsDidChange }
        try #require(didSaves.count == 2 && changes.count == 2)
        // Each kept its objects after the next save reused the buffers.
        #expect(log.objects(NSInsertedObjectsKey, in: didSaves[0]) == Set(first))
        #expect(log.objects(NSInsertedObjectsKey, in: changes[0]) == Set(first))
        #expect(log.objects(NSInsertedObjectsKey, in: didSaves[1]) == Set(second))
        #expect(log.objects(NSInsertedObjectsKey, in: changes[1]) == Set(second))
        #expect(log.objects(NSDeletedObjectsKey, in: didSaves[1]).isEmpty)
        #expect(!context.hasChanges)
    }

    /// An object inserted and one let go by a WillSave observer, after the first
    /// ObjectsDidChange: the same count, other objects. DidSave lists what was saved.
    @Test func objectsChangedAfterTheFirstNoticeAreListedAsSaved() throws {
        let context = try TestStack.freshContext()
        let inserted = Self.employees(Self.bulk, in: context)
        let log = NotificationLog([.NSManagedObjectContextDidSave], from: context)
        nonisolated(unsafe) var late: TEmployee?
        nonisolated(unsafe) let leaving = inserted[0]
        let observer = NotificationCenter.default.addObserver(
            forName: .NSManagedObjectContextWillSave, object: context, queue: nil
        ) { _ in
            guard late == nil else { return }
            context.delete(leaving)
            let employee = TEmployee(context: context)
            employee.name = "Late"
            late = employee
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        try context.save()
        let lateEmployee = try #require(late)
        var expected = Set<NSManagedObject>(inserted.dropFirst().map { $0 as NSManagedObject })
        expected.insert(lateEmployee)
        #expect(log.objects(NSInsertedObjectsKey, in: 0) == expected)
        #expect(inserted[0].managedObjectContext == nil)
        #expect(!lateEmployee.objectID.isTemporaryID)
    }

    @Test func aBulkDeleteListsItsObjectsInBothNotifications() throws {
        let context = try TestStack.freshContext()
        let employees = Self.employees(Self.bulk + 3, in: context)
        try context.save()
        let log = NotificationLog(
            [.NSManagedObjectContextObjectsDidChange, .NSManagedObjectContextDidSave], from: context)
        for employee in employees { context.delete(employee) }
        try context.save()
        let notes = log.all
        let didSave = try #require(notes.lastIndex { $0.name == .NSManagedObjectContextDidSave })
        let change = try #require(notes.firstIndex { $0.name == .NSManagedObjectContextObjectsDidChange })
        #expect(log.objects(NSDeletedObjectsKey, in: didSave) == Set(employees))
        #expect(log.objects(NSDeletedObjectsKey, in: change) == Set(employees))
        #expect(log.objects(NSInsertedObjectsKey, in: didSave).isEmpty)
    }

    /// A WillSave observer deleting one more object: DidSave lists it with the others.
    @Test func aDeleteAfterTheFirstNoticeIsListedAsSaved() throws {
        let context = try TestStack.freshContext()
        let employees = Self.employees(Self.bulk + 1, in: context)
        try context.save()
        let deletedFirst = Array(employees.dropLast())
        let log = NotificationLog([.NSManagedObjectContextDidSave], from: context)
        for employee in deletedFirst { context.delete(employee) }
        nonisolated(unsafe) var done = false
        nonisolated(unsafe) let last = employees[employees.count - 1]
        let observer = NotificationCenter.default.addObserver(
            forName: .NSManagedObjectContextWillSave, object: context, queue: nil
        ) { _ in
            guard !done else { return }
            done = true
            context.delete(last)
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        try context.save()
        #expect(log.objects(NSDeletedObjectsKey, in: 0) == Set(employees))
    }

    /// Pending changes processed before the save: its ObjectsDidChange has nothing to
    /// list, and DidSave builds its own set of every inserted object.
    @Test func changesProcessedBeforeTheSaveAreListed() throws {
        let context = try TestStack.freshContext()
        let log = NotificationLog([.NSManagedObjectContextDidSave], from: context)
        let first = Self.employees(Self.bulk, in: context)
        context.processPendingChanges()
        let second = Self.employees(3, in: context, prefix: "S")
        try context.save()
        #expect(log.objects(NSInsertedObjectsKey, in: 0) == Set(first + second))
    }

    /// A save's objects sorted into creation order whatever order they joined the set in:
    /// temporary IDs first by key, then permanent ones by key.
    @Test func objectsAreSavedInCreationOrder() throws {
        let context = try TestStack.freshContext()
        let stored = Self.employees(4, in: context, prefix: "P")
        try context.save()
        let fresh = Self.employees(5, in: context, prefix: "N")
        let joined: [NSManagedObject] = [
            fresh[3], stored[2], fresh[0], stored[0], fresh[4], fresh[1], stored[3], fresh[2],
        ]
        let expected: [NSManagedObject] = [
            fresh[0], fresh[1], fresh[2], fresh[3], fresh[4], stored[0], stored[2], stored[3],
        ]
        #expect(ObjectSet(joined).inCreationOrder().map(ObjectIdentifier.init) == expected.map(ObjectIdentifier.init))
        let inOrder = ObjectSet(expected)
        #expect(inOrder.inCreationOrder().map(ObjectIdentifier.init) == expected.map(ObjectIdentifier.init))
        #expect(ObjectSet([fresh[1]]).inCreationOrder().map(ObjectIdentifier.init) == [ObjectIdentifier(fresh[1])])
        #expect(ObjectSet().inCreationOrder().isEmpty)
    }

    /// A save's map, filled on its first lookup, answers as the map set pair by pair does;
    /// set afterwards, it keeps the pairs it was made with.
    @Test func aLazilyFilledMappingAnswersAsOneSetPairByPair() throws {
        let context = TestStack.context(try TestStack.coordinator())
        let targets = (0..<4).map { _ in TCompany(context: context) }
        try context.obtainPermanentIDs(for: targets)
        let permanent = targets.map(\.objectID)
        for count in 0...3 {
            let objects = (0..<count).map { _ in TCompany(context: context) as NSManagedObject }
            let other = TCompany(context: context)
            var lazy = TemporaryIDMapping(objects: objects, permanentIDs: Array(permanent.prefix(count)))
            var eager = TemporaryIDMapping()
            for (object, id) in zip(objects, permanent) { eager[object.objectID] = id }
            #expect(lazy.isEmpty == eager.isEmpty)
            for object in objects + [other] {
                #expect(lazy[object.objectID] === eager[object.objectID])
            }
            for id in permanent { #expect(lazy[id] == nil) }
            lazy[other.objectID] = permanent[3]
            #expect(lazy[other.objectID] === permanent[3])
            for (object, id) in zip(objects, permanent) { #expect(lazy[object.objectID] === id) }
        }
    }

    /// New objects naming each other and stored ones: every reference is saved by its
    /// permanent ID (the map is filled once one names a new object).
    @Test func newObjectsNamingNewAndStoredObjectsSaveTheirPermanentIDs() throws {
        let coordinator = try TestStack.coordinator()
        let context = TestStack.context(coordinator)
        let stored = TCompany(context: context)
        stored.name = "Stored"
        try context.save()
        let fresh = TCompany(context: context)
        fresh.name = "Fresh"
        let employees = Self.employees(Self.bulk, in: context)
        for (index, employee) in employees.enumerated() { employee.company = index.isMultiple(of: 2) ? stored : fresh }
        try context.save()
        let reader = TestStack.context(coordinator)
        let request = TestStack.request("Employee", TEmployee.self)
        let read = try reader.fetch(request)
        #expect(read.count == employees.count)
        for employee in read {
            let index = try #require(Int(employee.name?.dropFirst() ?? ""))
            #expect(employee.company?.name == (index.isMultiple(of: 2) ? "Stored" : "Fresh"))
        }
        let freshRead = try #require(reader.existingObject(with: fresh.objectID) as? TCompany)
        #expect(freshRead.employees.count == employees.count / 2)
    }

    /// The kept sets: the ObjectsDidChange set of every inserted object is kept while
    /// the lists stay; a small one is not kept, nor any once an object joins or leaves.
    @Test func theSetsAreKeptOnlyWhileTheyHoldEveryObject() throws {
        let context = try TestStack.freshContext()
        let lifecycle = context.lifecycle
        let stored = Self.employees(Self.bulk, in: context, prefix: "S")
        try context.save()
        lifecycle.beginKeepingPostedChangeSets()
        let inserted = Self.employees(Self.bulk, in: context)
        for employee in stored { context.delete(employee) }
        context.processPendingChanges()
        var kept = lifecycle.takePostedChangeSets()
        #expect(kept.inserted == Set(inserted.map { $0 as NSManagedObject }))
        #expect(kept.deleted == Set(stored.map { $0 as NSManagedObject }))
        #expect(!lifecycle.postedChangeSets.isKeeping && lifecycle.postedChangeSets.inserted == nil)

        lifecycle.beginKeepingPostedChangeSets()
        _ = Self.employees(Self.bulk, in: context, prefix: "T")
        context.processPendingChanges()
        kept = lifecycle.takePostedChangeSets()
        #expect(kept.inserted == nil, "the notice holds only the new objects, not all inserted ones")

        lifecycle.beginKeepingPostedChangeSets()
        context.rollback()
        let again = Self.employees(Self.bulk, in: context, prefix: "U")
        context.processPendingChanges()
        _ = TEmployee(context: context)
        let changed = lifecycle.takePostedChangeSets()
        #expect(changed.inserted == nil && changed.deleted == nil, "an object joined since")
        #expect(!again.isEmpty)

        lifecycle.beginKeepingPostedChangeSets()
        context.rollback()
        _ = Self.employees(3, in: context, prefix: "V")
        context.processPendingChanges()
        kept = lifecycle.takePostedChangeSets()
        #expect(kept.inserted == nil, "a small set is built again instead")
    }
}
