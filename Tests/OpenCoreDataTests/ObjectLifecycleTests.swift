// The lifecycle seam itself: every transition and property change of a context's
// objects reaches its observer once and in order, changes carry old and new values and
// can be reverted through the same path, and the transition table refuses what it must.
import Foundation
import Testing

@testable import OpenCoreData

/// Records what the lifecycle reports, as readable lines ("ada inserted",
/// "ada.company nil -> acme").
final class LifecycleLog: ObjectLifecycleObserver {
    private var names: [ObjectIdentifier: String] = [:]
    private(set) var lines: [String] = []
    private(set) var changes: [(object: NSManagedObject, slot: Int, old: Any?, new: Any?)] = []
    private(set) var batches: [ObjectChanges] = []

    func name(_ object: NSManagedObject, _ name: String) { names[ObjectIdentifier(object)] = name }

    /// The lines recorded since the last call.
    func take() -> [String] {
        defer { lines = [] }
        return lines
    }

    func object(_ object: NSManagedObject, didUndergo transition: ObjectTransition) {
        lines.append("\(describe(object)) \(transition)")
    }

    func object(_ object: NSManagedObject, didChangeSlot slot: Int, from oldValue: Any?, to newValue: Any?) {
        changes.append((object, slot, oldValue, newValue))
        let key = object.layout.properties[slot].name
        lines.append("\(describe(object)).\(key) \(describe(oldValue)) -> \(describe(newValue))")
    }

    func objectsDidChange(_ changes: ObjectChanges) { batches.append(changes) }

    private func describe(_ object: NSManagedObject) -> String {
        names[ObjectIdentifier(object)] ?? object.entity.name ?? "?"
    }

    private func describe(_ value: Any?) -> String {
        switch value {
        case .none: "nil"
        case let object as NSManagedObject: describe(object)
        case let set as Set<NSManagedObject>: "[" + set.map(describe).sorted().joined(separator: ", ") + "]"
        case let array as [NSManagedObject]: "[" + array.map(describe).joined(separator: ", ") + "]"
        case is UnresolvedRelationship: "unresolved"
        case .some(let value): "\(value)"
        }
    }
}

@Suite struct ObjectLifecycleTests {
    @Test func everyTransitionAndChangeIsReportedOnceInOrder() throws {
        let context = try TestStack.freshContext()
        let log = LifecycleLog()
        context.lifecycle.observer = log
        let acme = TCompany(context: context)
        log.name(acme, "acme")
        acme.name = "Acme"
        let ada = TEmployee(context: context)
        log.name(ada, "ada")
        ada.company = acme
        #expect(
            log.take() == [
                "Company inserted", "acme.name nil -> Acme", "Employee inserted", "ada.company nil -> acme",
                "acme.employees [] -> [ada]",
            ])
        context.processPendingChanges()
        #expect(log.batches.count == 1 && log.batches[0].inserted == [acme, ada] && log.batches[0].updated.isEmpty)

        try context.save()
        #expect(log.take() == ["acme saved", "ada saved"])

        acme.name = "Acme 2"
        context.delete(ada)
        #expect(log.take() == ["acme.name Acme -> Acme 2", "ada deleted"])
        context.processPendingChanges()
        // The nullify rule of ada's company empties the inverse.
        #expect(log.take() == ["acme.employees [ada] -> []"])
        #expect(log.batches.count == 2 && log.batches[1].updated == [acme] && log.batches[1].deleted == [ada])
        try context.save()
        #expect(log.take() == ["acme saved", "ada saved"])
        #expect(ada.lifecyclePhase == .detached && acme.lifecyclePhase == .clean)

        context.refresh(acme, mergeChanges: false)
        #expect(acme.lifecyclePhase == .fault)
        _ = acme.name
        #expect(log.take() == ["acme turnedIntoFault", "acme loaded"])

        let doomed = TCompany(context: context)
        log.name(doomed, "doomed")
        context.delete(doomed)
        context.insert(doomed)
        context.delete(doomed)
        context.processPendingChanges()
        #expect(
            log.take() == [
                "Company inserted", "doomed deleted", "doomed undeleted", "doomed deleted", "doomed discarded",
            ])

        acme.name = "Rolled back"
        let temporary = TCompany(context: context)
        log.name(temporary, "temporary")
        context.rollback()
        #expect(
            log.take() == [
                "acme.name Acme 2 -> Rolled back", "Company inserted", "temporary rolledBack", "acme rolledBack",
            ])
        #expect(acme.name == "Acme 2")
        context.reset()
        #expect(log.take() == ["acme forgotten"])
    }

    @Test func mergesReportRefreshedAndInvalidatedObjects() throws {
        let scenario = try SavedElsewhere()
        let (main, acme, ada) = (scenario.main, scenario.company, scenario.ada)
        let log = LifecycleLog()
        log.name(acme, "acme")
        log.name(ada, "ada")
        main.lifecycle.observer = log
        main.mergeChanges(fromContextDidSave: try scenario.renameCompanyAndDeleteAda())
        #expect(log.take() == ["acme turnedIntoFault", "ada invalidated"])
        #expect(log.batches.count == 1 && log.batches[0].refreshed == [acme] && log.batches[0].deleted == [ada])

        acme.name = "Mine"
        #expect(log.take() == ["acme loaded", "acme.name Renamed -> Mine"])
        main.mergeChanges(fromContextDidSave: try scenario.save { _ in try scenario.theirs(acme).name = "Theirs" })
        #expect(log.take() == ["acme refreshed"], "unsaved changes are kept: the stored values are merged in")
        #expect(acme.name == "Mine")
    }

    @Test func revertingChangesInReverseThroughTheSamePathRestoresBothSides() throws {
        let context = try TestStack.freshContext()
        let acme = TCompany(context: context)
        acme.name = "Acme"
        let globex = TCompany(context: context)
        globex.name = "Globex"
        let ada = TEmployee(context: context)
        ada.name = "Ada"
        ada.company = acme
        try context.save()
        let log = LifecycleLog()
        context.lifecycle.observer = log

        ada.company = globex
        ada.name = "Ada L."
        #expect(log.changes.count == 4, "ada.company, both inverses, ada.name")
        #expect(acme.employees.isEmpty && globex.employees == [ada])

        for change in log.changes.reversed() {
            ObjectLifecycle.change(change.object, slot: change.slot, to: change.old)
        }
        #expect(ada.company === acme && ada.name == "Ada")
        #expect(acme.employees == [ada] && globex.employees.isEmpty)
        #expect(log.changes.count == 8, "each revert is itself reported (what redo replays)")
    }

    @Test func anInsertedObjectRecordsNothingUntilObserved() throws {
        let context = try TestStack.freshContext()
        let acme = TCompany(context: context)
        acme.name = "Acme"
        #expect(acme.dirtySlots.isEmpty && context.updated.isEmpty, "an inserted object is saved whole")
        #expect(!acme.state.isObserved)

        let log = LifecycleLog()
        log.name(acme, "acme")
        context.lifecycle.observer = log
        #expect(acme.state.isObserved, "installing an observer marks the registered objects")
        acme.name = "Acme 2"
        #expect(log.take() == ["acme.name Acme -> Acme 2"])
        #expect(acme.dirtySlots.isEmpty && context.updated.isEmpty && acme.isInserted)

        context.lifecycle.observer = nil
        #expect(!acme.state.isObserved)
        acme.name = "Acme 3"
        #expect(log.take().isEmpty)
    }

    @Test func objectsRegisteredAfterTheObserverAreObserved() throws {
        let (context, company) = try ChangeNotificationTests.savedAcme()
        context.reset()
        let log = LifecycleLog()
        context.lifecycle.observer = log
        let fault = try #require(context.object(with: company.objectID) as? TCompany)
        log.name(fault, "acme")
        fault.name = "Renamed"
        let fresh = TCompany(context: context)
        log.name(fresh, "fresh")
        fresh.name = "Fresh"
        #expect(
            log.take() == ["acme loaded", "acme.name Acme -> Renamed", "Company inserted", "fresh.name nil -> Fresh"])
    }

    @Test func phasesFollowTheFlags() throws {
        let context = try TestStack.freshContext()
        let detached = TCompany(
            entity: try #require(context.persistentStoreCoordinator?.managedObjectModel.entitiesByName["Company"]),
            insertInto: nil)
        #expect(detached.lifecyclePhase == .detached && detached.isFault)
        context.insert(detached)
        #expect(detached.lifecyclePhase == .inserted)
        detached.name = "Acme"
        context.delete(detached)
        #expect(detached.lifecyclePhase == .insertedDeleted)
        context.insert(detached)
        try context.save()
        #expect(detached.lifecyclePhase == .clean)
        detached.name = "Changed"
        #expect(detached.lifecyclePhase == .updated)
        context.delete(detached)
        #expect(detached.lifecyclePhase == .deleted)
        context.refresh(detached, mergeChanges: false)
        #expect(detached.lifecyclePhase == .deletedFault)
        context.rollback()
        #expect(detached.lifecyclePhase == .fault)
    }

    @Test func theTransitionTableRefusesWhatCannotHappen() {
        // Loading needs a fault; saving needs a change; only an inserted and deleted object is discarded.
        #expect(!ObjectTransition.loaded.isLegal(from: .clean) && !ObjectTransition.loaded.isLegal(from: .inserted))
        #expect(!ObjectTransition.saved.isLegal(from: .clean) && !ObjectTransition.saved.isLegal(from: .fault))
        #expect(ObjectTransition.discarded.legalPhases == [.insertedDeleted])
        #expect(!ObjectTransition.deleted.isLegal(from: .deleted) && !ObjectTransition.deleted.isLegal(from: .detached))
        #expect(!ObjectTransition.undeleted.isLegal(from: .clean))
        #expect(
            !ObjectTransition.refreshed.isLegal(from: .inserted) && !ObjectTransition.refreshed.isLegal(from: .fault))
        #expect(
            !ObjectTransition.inserted.isLegal(from: .inserted) && !ObjectTransition.inserted.isLegal(from: .deleted))
        for transition in ObjectTransition.allCases {
            #expect(!transition.legalPhases.isEmpty, "\(transition) can happen")
            #expect(transition.legalPhases.count < ObjectPhase.allCases.count, "\(transition) is refused somewhere")
        }
    }

    #if DEBUG
        @Test func anIllegalTransitionStopsADebugBuild() async {
            await #expect(processExitsWith: .failure) {
                let context = try TestStack.freshContext()
                let company = TCompany(context: context)
                // Loading values into an inserted object (not a fault) is not a transition.
                context.lifecycle.load(company, values: company.layout.objectValues(fromStored: []), version: 1)
            }
        }
    #endif

    /// A reset leaves every object it forgets a fault holding nothing, whatever it held:
    /// loaded with unsaved changes, loaded clean, or a fault with its fetched row pending.
    @Test func resetLeavesEveryObjectAForgottenFaultHoldingNothing() throws {
        let directory = try TestStack.scratchDirectory("reset-forgets")
        defer { try? FileManager.default.removeItem(at: directory) }
        let coordinator = try TestStack.coordinator(NSSQLiteStoreType, model: TestStack.model, in: directory)
        let writer = TestStack.context(coordinator)
        let acme = TCompany(context: writer)
        acme.name = "Acme"
        for index in 0..<4 {
            let employee = TEmployee(context: writer)
            employee.name = "employee \(index)"
            employee.company = acme
        }
        try writer.save()

        let context = TestStack.context(coordinator)
        let faults = try context.fetch(TestStack.request("Employee", TEmployee.self))
        #expect(faults.count == 4 && faults.allSatisfy { $0.isFault && $0.pendingFault != nil })
        let company = try #require(try context.fetch(TestStack.request("Company", TCompany.self)).first)
        #expect(company.name == "Acme")
        let changed = try #require(faults.first)
        changed.age = 40
        #expect(!changed.dirtySlots.isEmpty && context.hasChanges)

        context.reset()
        #expect(!context.hasChanges)
        for object in faults + [company] {
            #expect(object.managedObjectContext == nil)
            #expect(object.values.isEmpty && object.committed == nil && object.dirtySlots.isEmpty)
            #expect(object.pendingFault == nil)
            #expect(object.state.isForgotten && !object.state.isInserted && !object.state.isListedUpdated)
        }
        // Fetched again, the same rows read their stored values: the unsaved change is gone.
        let again = try context.fetch(TestStack.request("Employee", TEmployee.self))
        #expect(again.count == 4 && again.allSatisfy { $0.age == 0 && $0.company?.name == "Acme" })
    }
}
