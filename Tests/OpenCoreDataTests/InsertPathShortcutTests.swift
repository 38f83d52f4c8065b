// More of the insert path's shortcuts against the general paths they stand for: the
// context's object sets kept in join order, the registry re-keyed at a save with its
// temporary table dropped whole, and a `@Managed` to-one's destination checked on the
// layout's entity identity.
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

struct InsertPathShortcutTests {
    /// Random inserts and removes on an ObjectSet agree with a plain model (a list in
    /// join order): membership, count, and iteration in the order objects joined, through
    /// holes and their compaction.
    @Test func objectSetKeepsJoinOrderAndAgreesWithAModel() throws {
        let entity = try #require(TestStack.model.entitiesByName["Employee"])
        let pool = (0..<300).map { _ in NSManagedObject(entity: entity, insertInto: nil) }
        var random = SeededRandom(environmentOr: 1115)
        var set = ObjectSet()
        var model: [NSManagedObject] = []
        for step in 0..<20_000 {
            let object = pool[Int(random.next() % UInt64(pool.count))]
            // Removes outnumber inserts in some stretches, so the set empties and compacts.
            let removing = random.next() % 100 < (step / 2_000 % 2 == 0 ? 40 : 65)
            if removing {
                set.remove(object)
                model.removeAll { $0 === object }
            } else {
                set.insert(object)
                if !model.contains(where: { $0 === object }) { model.append(object) }
            }
            #expect(set.contains(object) == model.contains { $0 === object }, "seed \(random.seed) step \(step)")
            #expect(set.count == model.count, "seed \(random.seed) step \(step)")
            if step % 97 == 0 {
                #expect(
                    Array(set).map(ObjectIdentifier.init) == model.map(ObjectIdentifier.init), "seed \(random.seed)")
            }
        }
        #expect(Array(set).map(ObjectIdentifier.init) == model.map(ObjectIdentifier.init), "seed \(random.seed)")
        #expect(set.asSet == Set(model))
        #expect(set.isEmpty == model.isEmpty)
    }

    /// Emptying an ObjectSet (the context's sets at every save) keeps a small table and
    /// lets a large one go; either way nothing stays a member, and the set refilled in any
    /// order agrees with a plain model again (membership, count, join order).
    @Test func objectSetRemoveAllKeepsOnlyASmallTableAndStaysExact() throws {
        let entity = try #require(TestStack.model.entitiesByName["Employee"])
        let pool = (0..<200).map { _ in NSManagedObject(entity: entity, insertInto: nil) }
        var random = SeededRandom(environmentOr: 1125)
        for (count, keeps) in [(1, true), (40, true), (48, true), (49, false), (200, false)] {
            var set = ObjectSet(pool.prefix(count))
            let tableSize = set.tableSize
            #expect((tableSize <= ObjectSet.retainedTableLimit) == keeps, "\(count) objects")
            set.removeAll()
            #expect(set.isEmpty && set.count == 0, "\(count) objects")
            #expect(Array(set).isEmpty && set.asSet.isEmpty, "\(count) objects")
            #expect(pool.allSatisfy { !set.contains($0) }, "\(count) objects")
            #expect(set.tableSize == (keeps ? tableSize : 0), "\(count) objects")
            var model: [NSManagedObject] = []
            for step in 0..<500 {
                let object = pool[Int(random.next() % UInt64(pool.count))]
                if random.next() % 100 < 30 {
                    set.remove(object)
                    model.removeAll { $0 === object }
                } else {
                    set.insert(object)
                    if !model.contains(where: { $0 === object }) { model.append(object) }
                }
                #expect(set.contains(object) == model.contains { $0 === object }, "seed \(random.seed) step \(step)")
                if step % 50 == 0 {
                    set.removeAll()
                    model.removeAll()
                }
            }
            #expect(set.count == model.count, "seed \(random.seed)")
            #expect(Array(set).map(ObjectIdentifier.init) == model.map(ObjectIdentifier.init), "seed \(random.seed)")
        }
    }

    /// Re-keying moves each object from its temporary key to its permanent one: when the
    /// moved objects are every temporary entry the table goes whole, otherwise the others
    /// stay; permanent entries stay either way.
    @Test func registryRekeyDropsTemporariesWholeOrKeepsTheOthers() throws {
        let coordinator = try TestStack.coordinator()
        let context = TestStack.context(coordinator)
        let entity = try #require(TestStack.model.entitiesByName["Employee"])
        let store = try #require(coordinator.persistentStores.first)
        for keepsSome in [false, true] {
            var registry = ObjectRegistry()
            let stored = NSManagedObject(entity: entity, insertInto: nil)
            let storedID = NSManagedObjectID(entity: entity, store: store, key: 1)
            registry[storedID] = stored
            let new = (0..<10).map { _ in NSManagedObject(entity: entity, insertInto: nil) }
            let temporaryIDs = new.map { _ in NSManagedObjectID.temporary(for: entity) }
            for (object, id) in zip(new, temporaryIDs) { registry[id] = object }
            let moving = keepsSome ? Array(new.indices.prefix(6)) : Array(new.indices)
            let permanentIDs = moving.map { NSManagedObjectID(entity: entity, store: store, key: Int64(100 + $0)) }
            registry.rekey(
                zip(moving, permanentIDs).map { (temporaryIDs[$0].registryKey, $1.registryKey, new[$0]) })
            #expect(registry.count == 1 + new.count)
            #expect(registry[storedID] === stored)
            for (index, permanent) in zip(moving, permanentIDs) {
                #expect(registry[permanent] === new[index])
                #expect(registry[temporaryIDs[index]] == nil)
            }
            for index in new.indices where !moving.contains(index) {
                #expect(registry[temporaryIDs[index]] === new[index])
            }
            #expect(Set(registry.values.map(ObjectIdentifier.init)) == Set((new + [stored]).map(ObjectIdentifier.init)))
        }
        _ = context
    }

    /// Emptying the registry (a context's `reset()`) keeps a table at least a quarter full
    /// for the next round of similar size, and drops a sparse one (a round of one object
    /// after a large one) and one over the retained limit; every entry goes either way.
    @Test func registryRemoveAllKeepsOnlyAFilledTableOfModestSize() throws {
        let coordinator = try TestStack.coordinator()
        let entity = try #require(TestStack.model.entitiesByName["Employee"])
        let store = try #require(coordinator.persistentStores.first)
        func filled(_ count: Int, reserving: Int) -> (ObjectRegistry, [NSManagedObjectID]) {
            var registry = ObjectRegistry()
            registry.reserveCapacity(reserving)
            let ids = (0..<count).map { NSManagedObjectID(entity: entity, store: store, key: Int64($0 + 1)) }
            for id in ids { registry[id] = NSManagedObject(entity: entity, insertInto: nil) }
            return (registry, ids)
        }
        for (count, reserving, keeps) in [
            (1_000, 1_000, true), (1, 20_000, false), (70_000, 70_000, true), (300_000, 300_000, false),
        ] {
            var (registry, ids) = filled(count, reserving: reserving)
            let capacity = registry.permanentCapacity
            registry.removeAll()
            #expect(registry.isEmpty && registry.count == 0)
            #expect(ids.allSatisfy { registry[$0] == nil })
            #expect((registry.permanentCapacity == capacity) == keeps, "\(count) in a table for \(reserving)")
            registry[ids[0]] = NSManagedObject(entity: entity, insertInto: nil)
            #expect(registry.count == 1)
        }
    }

    /// The destination check on the layout's identity answers as the general check: the
    /// destination entity and a sub-entity pass, another entity and another context's
    /// object fail, with the same error code.
    @Test func destinationCheckBySlotAgreesWithTheGeneralCheck() throws {
        let coordinator = try TestStack.coordinator()
        let context = TestStack.context(coordinator)
        let other = TestStack.context(coordinator)
        let company = TCompany(context: context)
        let employee = TEmployee(context: context)
        let manager = TManager(context: context)
        let project = TProject(context: context)
        let elsewhere = TCompany(context: other)
        func outcome(_ check: () throws -> Void) -> Int? {
            do {
                try check()
                return nil
            } catch {
                return (error as NSError).code
            }
        }
        let cases: [(source: NSManagedObject, key: String, destination: NSManagedObject, fails: Bool)] = [
            (employee, "company", company, false),
            (employee, "company", project, true),
            (employee, "company", elsewhere, true),
            (project, "members", employee, false),
            (project, "members", manager, false),
            (project, "members", company, true),
            (company, "ceo", manager, false),
        ]
        for item in cases {
            let slot = try #require(item.source.layout.slotsByName[item.key])
            let relationship = try #require(item.source.layout.relationshipBySlot[slot])
            let general = outcome { try item.source.checkDestination(item.destination, relationship) }
            let bySlot = outcome { try item.source.checkDestination(item.destination, slot: slot, relationship) }
            #expect(general == bySlot, "\(item.key)")
            #expect((general != nil) == item.fails, "\(item.key)")
        }
    }
}
