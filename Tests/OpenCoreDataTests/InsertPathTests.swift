// The insert path's shortcuts give the answers of the paths they replace: a `@Managed`
// to-one set without a cast through `Any` (observed or not, on inserted and stored
// objects), validation read from typed slots, and a store's integrity pass that skips the
// links of a to-one whose inverse list it derives.
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

struct InsertPathTests {
    /// Under an undo manager (the context observed), the typed to-one setter reports each
    /// side's change: undo restores both sides, redo sets them again.
    @Test func managedToOneSetterIsUndoneOnBothSides() throws {
        let context = TestStack.context(try TestStack.coordinator())
        let first = TCompany(context: context)
        first.name = "First"
        let second = TCompany(context: context)
        second.name = "Second"
        let employee = TEmployee(context: context)
        employee.company = first
        try context.save()
        context.undoManager = UndoManager()
        employee.company = second
        #expect(first.employees.isEmpty)
        #expect(second.employees == [employee])
        context.processPendingChanges()
        context.undo()
        #expect(employee.company === first)
        #expect(first.employees == [employee])
        #expect(second.employees.isEmpty)
        context.redo()
        #expect(employee.company === second)
        #expect(second.employees == [employee])
        employee.company = nil
        #expect(second.employees.isEmpty)
        #expect(employee.changedValues().keys.contains("company"))
    }

    /// A subclass's inherited to-one and a to-one of another relationship (one-to-one) set
    /// through `@Managed` keep their inverses; a stored object's set is a change of both.
    @Test func managedToOneSetterKeepsInversesOfSubclassesAndOneToOne() throws {
        let coordinator = try TestStack.coordinator()
        let context = TestStack.context(coordinator)
        let company = TCompany(context: context)
        company.name = "Acme"
        let manager = TManager(context: context)
        manager.company = company
        manager.ledCompany = company
        #expect(company.employees == [manager])
        #expect(company.ceo === manager)
        try context.save()
        let other = TManager(context: context)
        other.ledCompany = company
        #expect(company.ceo === other)
        #expect(manager.ledCompany == nil)
        #expect(manager.isUpdated)
        #expect(company.isUpdated)
        try context.save()
        let reader = TestStack.context(coordinator)
        let stored = try #require(try reader.fetch(TestStack.request("Company", TCompany.self)).first)
        #expect(stored.ceo?.objectID == other.objectID)
        #expect(stored.employees.map(\.objectID) == [manager.objectID])
    }

    /// Validation read from the typed slots still finds a value of the wrong type and
    /// passes what is valid: an attribute of its own type, a to-one naming an object, a
    /// loaded to-many of any size. (Required to-ones and counts: ValidationTests.)
    @Test func validationFromTypedSlotsFindsWhatTheGeneralPathFinds() throws {
        let context = TestStack.context(try TestStack.coordinator())
        let employee = TEmployee(context: context)
        employee.name = "Ada"
        employee.setValue("not a number", forKey: "age")
        #expect(throws: (any Error).self) { try employee.validateForInsert() }
        employee.age = 3
        try employee.validateForInsert()
        let company = TCompany(context: context)
        company.name = "Acme"
        employee.company = company
        try employee.validateForInsert()
        try company.validateForInsert()
        employee.setValue(nil, forKey: "name")
        try employee.validateForInsert()
    }
}

/// The one-to-many whose list the default store derives from the to-ones, across stores.
struct InsertPathIntegrityTests {
    typealias Fixtures = LinkedFixtures

    /// Items inserted with their group, and moved between groups in a later save: both
    /// sides agree and no row names another that is gone.
    @Test(arguments: LinkedFixtures.storeTypes)
    func toOnesInsertedAndMovedAgreeWithTheirLists(storeType: String) throws {
        let coordinator = try Fixtures.coordinator(storeType)
        let writer = Fixtures.context(coordinator)
        let groups = ["a", "b"].map { Fixtures.insert("Group", $0, into: writer) }
        let items = (0..<6).map { Fixtures.insert("Item", "i\($0)", into: writer) }
        for (index, item) in items.enumerated() { item.setValue(groups[index % 2], forKey: "group") }
        try writer.save()
        for item in items.prefix(2) { item.setValue(groups[1], forKey: "group") }
        try writer.save()
        let reader = Fixtures.context(coordinator)
        let a = try #require(try Fixtures.fetch("Group", "a", in: reader))
        let b = try #require(try Fixtures.fetch("Group", "b", in: reader))
        #expect(Fixtures.names(a.value(forKey: "items")) == ["i2", "i4"])
        #expect(Fixtures.names(b.value(forKey: "items")) == ["i0", "i1", "i3", "i5"])
        #expect(try Fixtures.problems(coordinator) == [])
    }

    /// A stale context links an item to a group another context deleted meanwhile: under
    /// every policy that saves, the stored item names no deleted row.
    @Test(arguments: LinkedFixtures.storeTypes)
    func aToOneLinkedToAGroupDeletedMeanwhileNamesNoMissingRow(storeType: String) throws {
        for policy in Fixtures.policies where policy != .errorMergePolicyType {
            let coordinator = try Fixtures.coordinator(storeType)
            let setup = Fixtures.context(coordinator)
            Fixtures.insert("Item", "x", into: setup)
            Fixtures.insert("Group", "g", into: setup)
            try setup.save()
            let stale = Fixtures.context(coordinator, policy)
            let item = try #require(try Fixtures.fetch("Item", "x", in: stale))
            let group = try #require(try Fixtures.fetch("Group", "g", in: stale))
            let deleter = Fixtures.context(coordinator)
            deleter.delete(try #require(try Fixtures.fetch("Group", "g", in: deleter)))
            try deleter.save()
            item.setValue(group, forKey: "group")
            _ = try? stale.save()
            #expect(try Fixtures.problems(coordinator) == [], "\(storeType), policy \(policy.rawValue)")
        }
    }

    /// `isEqual(_:)` read in place from an `Any?` typed `NSObject` or the object's own
    /// class agrees with identity, and every other form (another static type, another
    /// class, nil) takes the general path with the same answers.
    @Test func equalityOfObjectsAndIDsReadInPlaceAgreesWithIdentity() throws {
        let context = TestStack.context(try TestStack.coordinator())
        let first = TCompany(context: context)
        let second = TCompany(context: context)
        let asObject: NSObject = first
        let asManaged: NSManagedObject = first
        #expect(first.isEqual(asObject))
        #expect(first.isEqual(asManaged))
        #expect(first.isEqual(first as Any))
        #expect(!first.isEqual(second as NSObject))
        #expect(!first.isEqual(second as NSManagedObject))
        #expect(!first.isEqual(nil))
        #expect(!first.isEqual(NSObject()))
        #expect(!first.isEqual("a string"))
        #expect(Set<NSManagedObject>([first, second, first]).count == 2)
        let id = first.objectID
        try context.obtainPermanentIDs(for: [first])
        let permanent = first.objectID
        let again = try #require(
            context.persistentStoreCoordinator?.managedObjectID(forURIRepresentation: permanent.uriRepresentation()))
        #expect(again !== permanent)
        #expect(permanent.isEqual(again as NSObject))
        #expect(permanent.isEqual(again as Any))
        #expect(!permanent.isEqual(id as NSObject))
        #expect(!permanent.isEqual(first as NSObject))
        #expect(!permanent.isEqual(nil))
        #expect(Set<NSManagedObjectID>([permanent, again, id]).count == 2)
        #expect([permanent: 1][again] == 1)
    }

    /// The save's temporary-to-permanent map answers only for the temporary IDs it holds,
    /// and the integrity pass's set of written rows finds an ID by value.
    @Test func temporaryIDMappingAndObjectIDSetCompareByValue() throws {
        let context = TestStack.context(try TestStack.coordinator())
        let company = TCompany(context: context)
        let temporary = company.objectID
        try context.obtainPermanentIDs(for: [company])
        let permanent = company.objectID
        var mapping = TemporaryIDMapping()
        #expect(mapping.isEmpty)
        mapping[temporary] = permanent
        #expect(mapping[temporary] === permanent)
        #expect(mapping[permanent] == nil)
        let again = try #require(
            context.persistentStoreCoordinator?.managedObjectID(forURIRepresentation: permanent.uriRepresentation()))
        var written = ObjectIDSet(minimumCapacity: 1)
        #expect(written.isEmpty && !written.contains(permanent))
        written.insert(permanent)
        #expect(written.contains(again))
        #expect(!written.contains(temporary))
    }

    /// The map holds its first ID inline and the others in a table: set, replaced and
    /// removed in any order, it answers as a dictionary of the same IDs does.
    @Test func temporaryIDMappingAnswersAsADictionary() throws {
        let context = TestStack.context(try TestStack.coordinator())
        let companies = (0..<6).map { _ in TCompany(context: context) }
        let temporary = companies.map(\.objectID)
        try context.obtainPermanentIDs(for: companies)
        let permanent = companies.map(\.objectID)
        var random = SeededRandom(environmentOr: 0x5EED_1611)
        let hint = random.replayHint
        for _ in 0..<200 {
            var mapping = TemporaryIDMapping()
            var oracle: [Int: NSManagedObjectID] = [:]
            for _ in 0..<random.int(in: 1...12) {
                let position = random.int(in: 0...5)
                let value = random.chance(0.3) ? nil : permanent[random.int(in: 0...5)]
                mapping[temporary[position]] = value
                oracle[position] = value
                for probe in 0..<6 {
                    #expect(mapping[temporary[probe]] === oracle[probe], "\(hint)")
                    #expect(mapping[permanent[probe]] == nil, "\(hint)")
                }
                #expect(mapping.isEmpty == oracle.isEmpty, "\(hint)")
            }
        }
    }

    /// A save of many new objects re-keys the registry in one rebuild, a save of a few
    /// one object at a time: both leave every new object registered under its permanent
    /// ID only, keep the objects registered before, and tell a child the permanent IDs.
    @Test func registryRebuiltAtSaveMatchesOneByOneReKeying() throws {
        for count in [3, NSManagedObjectContext.registryRebuildMinimum * 2] {
            let coordinator = try TestStack.coordinator()
            let context = TestStack.context(coordinator)
            let stored = TCompany(context: context)
            stored.name = "Stored"
            try context.save()
            let child = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
            child.parent = context
            let employees = (0..<count).map { index in
                let employee = TEmployee(context: context)
                employee.name = "E\(index)"
                employee.company = stored
                return employee
            }
            let temporaryIDs = employees.map(\.objectID)
            // The child holds a new object: the save records the permanent IDs for it.
            _ = child.object(with: temporaryIDs[0])
            try context.save()
            #expect(context.registeredObjects.count == count + 1, "\(count)")
            #expect(context.registeredObject(for: stored.objectID) === stored)
            for (employee, temporary) in zip(employees, temporaryIDs) {
                #expect(!employee.objectID.isTemporaryID)
                #expect(context.registeredObject(for: employee.objectID) === employee)
                #expect(context.registeredObject(for: temporary) == nil)
            }
            for (employee, temporary) in zip(employees, temporaryIDs) {
                #expect(context.permanentIDsForChildren[temporary] === employee.objectID, "\(count)")
            }
            let reader = TestStack.context(coordinator)
            let company = try #require(try reader.fetch(TestStack.request("Company", TCompany.self)).first)
            #expect(company.employees.count == count)
        }
    }
}
