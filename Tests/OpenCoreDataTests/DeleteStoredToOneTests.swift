// Deleting objects fetched from a store, whose to-one still holds the destination's ID:
// the delete rules find the destination by one registry probe instead of resolving the
// slot (NSManagedObjectContext+Changes.swift). Each scenario runs twice, once with every
// deleted object's to-one read first (the general path: the slot holds the object) and
// once without, and both must leave the same context state and the same stored rows, in
// every store.
import Foundation
import Testing

@testable import OpenCoreData

@Suite struct DeleteStoredToOneTests {
    /// Source n-1 Target through `link` (the given rule), its inverse `back` a to-many.
    static func model(rule: NSDeleteRule) -> NSManagedObjectModel {
        let source = NSEntityDescription()
        source.name = "Source"
        let target = NSEntityDescription()
        target.name = "Target"
        let link = TestStack.relationship("link", to: target, toMany: false, rule: rule)
        let back = TestStack.relationship("back", to: source, toMany: true, rule: .nullifyDeleteRule)
        TestStack.pair(link, back)
        source.properties = [TestStack.attribute("name", .stringAttributeType), link]
        target.properties = [TestStack.attribute("name", .stringAttributeType), back]
        let model = NSManagedObjectModel()
        model.entities = [source, target]
        return model
    }

    /// How the targets stand in the deleting context before the delete.
    enum TargetState: CaseIterable, Sendable {
        /// Not registered at all.
        case unregistered
        /// Registered as faults.
        case faults
        /// Registered with `back` read.
        case loaded
    }

    /// What a scenario leaves: the context's change sets by name, each target's `back`
    /// after the delete rules ran, whether the save succeeded, and the stored rows after.
    struct Outcome: Equatable {
        var updated: [String] = []
        var deleted: [String] = []
        var backs: [String: [String]] = [:]
        var saveErrorCode: Int?
        var storedSources: [String: String] = [:]
        var storedBacks: [String: [String]] = [:]
    }

    static func names(_ objects: some Sequence<NSManagedObject>) -> [String] {
        objects.map { ($0.entity.name ?? "?") + "." + ($0.value(forKey: "name") as? String ?? "?") }.sorted()
    }

    static func backNames(_ target: NSManagedObject) -> [String] {
        ((target.value(forKey: "back") as? Set<NSManagedObject>) ?? []).map {
            $0.value(forKey: "name") as? String ?? "?"
        }
        .sorted()
    }

    /// Four of eight sources (spread over three targets) deleted in a context that fetched
    /// them; `readsLinksFirst` reads each deleted source's `link` before the delete.
    static func run(
        _ type: String, rule: NSDeleteRule, targets state: TargetState, readsLinksFirst: Bool
    ) throws -> Outcome {
        let directory = try TestStack.scratchDirectory("delete-stored-to-one")
        defer { try? FileManager.default.removeItem(at: directory) }
        let coordinator = try TestStack.coordinator(type, model: model(rule: rule), in: directory)
        let writer = TestStack.context(coordinator)
        let targets = (0..<3).map { index in
            let target = NSEntityDescription.insertNewObject(forEntityName: "Target", into: writer)
            target.setValue("T\(index)", forKey: "name")
            return target
        }
        for index in 0..<8 {
            let source = NSEntityDescription.insertNewObject(forEntityName: "Source", into: writer)
            source.setValue("S\(index)", forKey: "name")
            source.setValue(targets[index % 3], forKey: "link")
        }
        try writer.save()

        let context = TestStack.context(coordinator)
        var registered: [NSManagedObject] = []
        if state != .unregistered {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Target")
            request.returnsObjectsAsFaults = true
            registered = try context.fetch(request)
            if state == .loaded { for target in registered { _ = backNames(target) } }
        }
        let request = NSFetchRequest<NSManagedObject>(entityName: "Source")
        request.predicate = OpenCoreData.NSPredicate(format: "name IN %@", ["S0", "S1", "S2", "S3"])
        let doomed = try context.fetch(request)
        #expect(doomed.count == 4)
        if readsLinksFirst { for source in doomed { _ = source.value(forKey: "link") } }
        for source in doomed { context.delete(source) }
        context.processPendingChanges()

        var outcome = Outcome()
        outcome.updated = names(context.updatedObjects)
        outcome.deleted = names(context.deletedObjects)
        let targetsNow = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Target"))
        for target in targetsNow where !target.isDeleted {
            outcome.backs[target.value(forKey: "name") as? String ?? "?"] = backNames(target)
        }
        do {
            try context.save()
        } catch let error as NSError {
            outcome.saveErrorCode = error.code
        }
        _ = registered

        let reader = TestStack.context(coordinator)
        for source in try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Source")) {
            let link = source.value(forKey: "link") as? NSManagedObject
            outcome.storedSources[source.value(forKey: "name") as? String ?? "?"] =
                link?.value(forKey: "name") as? String ?? "nil"
        }
        for target in try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Target")) {
            outcome.storedBacks[target.value(forKey: "name") as? String ?? "?"] = backNames(target)
        }
        return outcome
    }

    @Test(arguments: TestStack.storeTypes, [NSDeleteRule.nullifyDeleteRule, .cascadeDeleteRule, .denyDeleteRule])
    func theRulesLeaveWhatResolvingTheToOneFirstLeaves(_ type: String, _ rule: NSDeleteRule) throws {
        for state in TargetState.allCases {
            let fast = try Self.run(type, rule: rule, targets: state, readsLinksFirst: false)
            let general = try Self.run(type, rule: rule, targets: state, readsLinksFirst: true)
            #expect(fast == general, "\(type) \(rule) \(state)")
            switch rule {
            case .nullifyDeleteRule:
                // Every target lost the deleted sources, in the context and in the store.
                let kept = ["T0": ["S6"], "T1": ["S4", "S7"], "T2": ["S5"]]
                #expect(fast.backs == kept, "\(type) \(state)")
                #expect(fast.storedBacks == kept, "\(type) \(state)")
                #expect(fast.updated == ["Target.T0", "Target.T1", "Target.T2"], "\(type) \(state)")
                #expect(fast.storedSources == ["S4": "T1", "S5": "T2", "S6": "T0", "S7": "T1"], "\(type) \(state)")
                #expect(fast.saveErrorCode == nil)
            case .cascadeDeleteRule:
                // The targets of the deleted sources went too; the other sources name none.
                #expect(fast.deleted.filter { $0.hasPrefix("Target") } == ["Target.T0", "Target.T1", "Target.T2"])
                #expect(fast.storedBacks.isEmpty, "\(type) \(state)")
                #expect(fast.storedSources == ["S4": "nil", "S5": "nil", "S6": "nil", "S7": "nil"], "\(type) \(state)")
            default:
                // Deny: the save fails (four denied deletions, so several errors) and nothing changes in the store.
                #expect(fast.saveErrorCode == NSValidationMultipleErrorsError, "\(type) \(state)")
                #expect(fast.storedSources.count == 8, "\(type) \(state)")
            }
        }
    }
}
