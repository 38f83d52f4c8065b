// The registry's own table (ObjectKeyTable.swift) against the Dictionary keyed by
// `NSManagedObjectID.Key` it replaced: the same objects found, stored, replaced and
// removed under keys that differ in one field only (entity, store, temporary), through
// growth, removals that shift entries back, re-keying and emptying.
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

struct ObjectRegistryTableTests {
    /// Random stores, replacements, removals and registrations agree with a Dictionary
    /// model, key by key, including keys of equal number under another entity or store
    /// or temporary.
    @Test func registryAgreesWithADictionaryModel() throws {
        let coordinator = try TestStack.coordinator()
        let otherCoordinator = try TestStack.coordinator()
        let employee = try #require(TestStack.model.entitiesByName["Employee"])
        let company = try #require(TestStack.model.entitiesByName["Company"])
        let stores = try [coordinator, otherCoordinator].map { try #require($0.persistentStores.first) }
        var keys: [NSManagedObjectID.Key] = []
        for number in Int64(0)..<Int64(120) {
            for entity in [employee, company] {
                for store in stores {
                    keys.append(
                        .init(
                            entity: ObjectIdentifier(entity), store: ObjectIdentifier(store), key: number,
                            isTemporary: false))
                }
                keys.append(.init(entity: ObjectIdentifier(entity), store: nil, key: number, isTemporary: true))
            }
        }
        let pool = (0..<64).map { _ in NSManagedObject(entity: employee, insertInto: nil) }
        var random = SeededRandom(environmentOr: 1611)
        var registry = ObjectRegistry()
        var model: [NSManagedObjectID.Key: NSManagedObject] = [:]
        func agrees(_ step: Int) {
            #expect(registry.count == model.count, "seed \(random.seed) step \(step)")
            #expect(registry.isEmpty == model.isEmpty, "seed \(random.seed) step \(step)")
            for key in keys where registry[key] !== model[key] {
                Issue.record("seed \(random.seed) step \(step): \(key) differs")
                return
            }
            let listed = registry.values.map(ObjectIdentifier.init)
            #expect(listed.count == model.count, "seed \(random.seed) step \(step)")
            var expected: [ObjectIdentifier: Int] = [:]
            for object in model.values { expected[ObjectIdentifier(object), default: 0] += 1 }
            var found: [ObjectIdentifier: Int] = [:]
            for object in listed { found[object, default: 0] += 1 }
            #expect(found == expected, "seed \(random.seed) step \(step)")
        }
        for step in 0..<30_000 {
            let key = keys[Int(random.next() % UInt64(keys.count))]
            let object = pool[Int(random.next() % UInt64(pool.count))]
            // Removals outnumber stores in some stretches, so the tables empty and fill again.
            let removing = random.next() % 100 < (step / 3_000 % 2 == 0 ? 30 : 70)
            switch random.next() % 10 {
            case 0:
                let made = registry.object(for: key) { object }
                #expect(made === (model[key] ?? object), "seed \(random.seed) step \(step)")
                if model[key] == nil { model[key] = object }
            case 1 where step % 500 == 1:
                registry.reserveCapacity(registry.count + Int(random.next() % 300))
            case 2 where step % 4_000 == 2:
                registry.removeAll()
                model = [:]
            case 3 where step % 4_000 == 3:
                // Emptied object by object: each registered object handed over once.
                var visited: [ObjectIdentifier: Int] = [:]
                var taken = registry.takeAll()
                #expect(registry.isEmpty, "seed \(random.seed) step \(step)")
                taken.removeEach { visited[ObjectIdentifier($0), default: 0] += 1 }
                registry.reuse(taken)
                var expected: [ObjectIdentifier: Int] = [:]
                for object in model.values { expected[ObjectIdentifier(object), default: 0] += 1 }
                #expect(visited == expected, "seed \(random.seed) step \(step)")
                model = [:]
            default:
                registry[key] = removing ? nil : object
                model[key] = removing ? nil : object
            }
            if step % 211 == 0 { agrees(step) }
        }
        agrees(30_000)
    }

    /// Re-keying moves objects from temporary keys to permanent keys of the same number
    /// (which the tables keep apart), dropping the temporary table when it empties.
    @Test func rekeyToKeysOfTheSameNumberAgreesWithTheModel() throws {
        let coordinator = try TestStack.coordinator()
        let entity = try #require(TestStack.model.entitiesByName["Employee"])
        let store = try #require(coordinator.persistentStores.first)
        for keepsSome in [false, true] {
            var registry = ObjectRegistry()
            func key(_ number: Int, temporary: Bool) -> NSManagedObjectID.Key {
                .init(
                    entity: ObjectIdentifier(entity), store: temporary ? nil : ObjectIdentifier(store),
                    key: Int64(number), isTemporary: temporary)
            }
            let new = (0..<200).map { _ in NSManagedObject(entity: entity, insertInto: nil) }
            for (number, object) in new.enumerated() { registry[key(number, temporary: true)] = object }
            let moving = keepsSome ? Array(0..<150) : Array(new.indices)
            registry.rekey(moving.map { (key($0, temporary: true), key($0, temporary: false), new[$0]) })
            #expect(registry.count == new.count)
            for number in new.indices {
                let moved = moving.contains(number)
                #expect(registry[key(number, temporary: false)] === (moved ? new[number] : nil))
                #expect(registry[key(number, temporary: true)] === (moved ? nil : new[number]))
            }
        }
    }

    /// Taking the registry's objects and emptying them one by one hands every object over once, permanent and
    /// temporary, with the registry already empty while the objects are handed over (so a
    /// caller may register again meanwhile, and those registrations stay); a table kept
    /// for the next round finds, stores and removes afterwards as a fresh one does.
    @Test func takenObjectsAreHandedOverOnceAndLeaveAWorkingRegistry() throws {
        let coordinator = try TestStack.coordinator()
        let entity = try #require(TestStack.model.entitiesByName["Employee"])
        let store = try #require(coordinator.persistentStores.first)
        func key(_ number: Int, temporary: Bool = false) -> NSManagedObjectID.Key {
            .init(
                entity: ObjectIdentifier(entity), store: temporary ? nil : ObjectIdentifier(store),
                key: Int64(number), isTemporary: temporary)
        }
        for reregisters in [false, true] {
            var registry = ObjectRegistry()
            let stored = (0..<3_000).map { _ in NSManagedObject(entity: entity, insertInto: nil) }
            let inserted = (0..<40).map { _ in NSManagedObject(entity: entity, insertInto: nil) }
            for (number, object) in stored.enumerated() { registry[key(number)] = object }
            for (number, object) in inserted.enumerated() { registry[key(number, temporary: true)] = object }
            let capacity = registry.permanentCapacity
            weak var released: NSManagedObject?
            do {
                let transient = NSManagedObject(entity: entity, insertInto: nil)
                registry[key(9_999)] = transient
                released = transient
            }
            var visited: [ObjectIdentifier] = []
            let late = NSManagedObject(entity: entity, insertInto: nil)
            var sawEmpty = true
            var taken = registry.takeAll()
            taken.removeEach { object in
                visited.append(ObjectIdentifier(object))
                if !registry.isEmpty && !(reregisters && registry.count == 1) { sawEmpty = false }
                if reregisters && visited.count == 1 { registry[key(77_777)] = late }
            }
            registry.reuse(taken)
            #expect(sawEmpty)
            #expect(released == nil, "the registry's last reference goes with its entry")
            #expect(visited.count == stored.count + inserted.count + 1)
            #expect(Set(visited).count == visited.count)
            let all = Set((stored + inserted).map(ObjectIdentifier.init))
            #expect(all.isSubset(of: Set(visited)))
            if reregisters {
                #expect(registry.count == 1)
                #expect(registry[key(77_777)] === late)
                #expect(registry[key(0)] == nil)
            } else {
                #expect(registry.isEmpty)
                #expect(registry.permanentCapacity == capacity, "a table of a round this size is kept")
            }
            // The kept (or fresh) table works: every key absent, then stored, found and removed.
            for number in 0..<500 { #expect(registry[key(number)] == nil) }
            for number in 0..<500 { registry[key(number)] = stored[number] }
            for number in 0..<500 { #expect(registry[key(number)] === stored[number]) }
            for number in stride(from: 0, to: 500, by: 2) { registry[key(number)] = nil }
            for number in 0..<500 { #expect(registry[key(number)] === (number % 2 == 0 ? nil : stored[number])) }
        }
    }
}
