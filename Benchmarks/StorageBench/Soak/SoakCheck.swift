// The soak's final check, on a fresh coordinator once every writer has stopped: the
// ledger's claims (L1-L5, SoakLedger.swift), the store's invariants and verify().
//
//   R1  every object a relationship names exists (no dangling to-one or to-many entry)
//   R2  both sides of every relationship agree: an item's owner lists it (once, and no
//       other owner does), an owner's tags list it back, its favorite's favoredBy does
//   U1  keys and names under a uniqueness constraint are unique
//   V1  verify() on the store is clean
import Foundation
import OpenCoreData

/// What the store held at the end.
struct SoakCensus: Sendable {
    var counters = 0
    var owners = 0
    var items = 0
    var tags = 0
}

enum SoakCheck {
    /// Checks the store at `url` against `ledger`, recording violations in it; `names`
    /// maps a key space to its writer, for messages.
    static func run(url: URL, durability: String, ledger: SoakLedger, names: [Int64: String]) throws -> SoakCensus {
        let coordinator = try SoakModel.coordinator(url: url, durability: durability)
        defer { for store in coordinator.persistentStores { try? coordinator.remove(store) } }
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        var census = SoakCensus()
        try context.performAndWait {
            let graph = try Graph(context: context, names: names)
            census = graph.census
            for violation in graph.violations() { ledger.record(violation) }
            checkLedger(ledger, graph)
        }
        if let store = coordinator.persistentStores.first as? PageFileStore {
            for problem in try store.verify().problems {
                ledger.record(SoakViolation(kind: .verify, message: problem))
            }
        }
        return census
    }

    private static func checkLedger(_ ledger: SoakLedger, _ graph: Graph) {
        // A killed child whose last save was never settled: the store's counter says.
        for (writer, state) in ledger.writers where state.pending != nil {
            ledger.resume(writer, storeCounter: graph.counters[writer] ?? 0)
        }
        for (writer, state) in ledger.writers.sorted(by: { $0.key < $1.key }) {
            func lost(_ message: String) {
                ledger.record(SoakViolation(kind: .lostSave, message: "\(writer): \(message)"))
            }
            let stored = graph.counters[writer] ?? 0
            if stored < state.acknowledgedCounter {
                lost("counter \(stored) in the store, \(state.acknowledgedCounter) acknowledged")
            }
            for key in state.owners.sorted() where graph.ownerKeys[key] == nil {
                lost("Owner \(graph.describe(key)) inserted by an acknowledged save is missing")
            }
            for key in state.items.sorted() where graph.itemKeys[key] == nil {
                lost("Item \(graph.describe(key)) inserted by an acknowledged save is missing")
            }
            for (key, owner) in state.itemsDeleted.sorted(by: { $0.key < $1.key }) {
                guard let item = graph.itemKeys[key] else { continue }
                let how = owner.map { "deleted with its Owner \(graph.describe($0)) (cascade)" } ?? "deleted"
                ledger.record(
                    SoakViolation(
                        kind: .deletedBack,
                        message: "\(writer): Item \(graph.describe(key)), \(how) by an acknowledged save, exists "
                            + "(its owner now: \(item.owner.map { graph.name($0) } ?? "none"))"))
            }
            for (key, value) in state.itemValues.sorted(by: { $0.key < $1.key }) {
                guard let item = graph.itemKeys[key], item.value < value else { continue }
                ledger.record(
                    SoakViolation(
                        kind: .valueBehind,
                        message: "\(writer): Item \(graph.describe(key)) has value \(item.value), "
                            + "acknowledged \(value)"))
            }
        }
    }

    /// Every object of the store, read once, with its relationships as object IDs.
    struct Graph {
        let names: [Int64: String]
        var counters: [String: Int64] = [:]
        var ownerKeys: [Int64: SoakOwner] = [:]
        var itemKeys: [Int64: SoakItem] = [:]
        var census = SoakCensus()
        private var owners: [SoakOwner] = []
        private var items: [SoakItem] = []
        private var tags: [SoakTag] = []
        private var duplicates: [SoakViolation] = []
        private var ownerIDs: Set<NSManagedObjectID> = []
        private var itemIDs: Set<NSManagedObjectID> = []
        private var tagIDs: Set<NSManagedObjectID> = []

        init(context: NSManagedObjectContext, names: [Int64: String]) throws {
            self.names = names
            func all<Object: NSManagedObject>(_ entity: String, _ type: Object.Type) throws -> [Object] {
                let request = NSFetchRequest<Object>(entityName: entity)
                request.returnsObjectsAsFaults = false
                return try context.fetch(request)
            }
            for counter in try all("Counter", SoakCounter.self) {
                let writer = counter.writer ?? "?"
                if counters[writer] != nil { duplicate("Counter writer \(writer)") }
                counters[writer] = counter.value
            }
            owners = try all("Owner", SoakOwner.self)
            items = try all("Item", SoakItem.self)
            tags = try all("Tag", SoakTag.self)
            for owner in owners {
                if ownerKeys[owner.key] != nil { duplicate("Owner key \(describe(owner.key))") }
                ownerKeys[owner.key] = owner
            }
            for item in items {
                if itemKeys[item.key] != nil { duplicate("Item key \(describe(item.key))") }
                itemKeys[item.key] = item
            }
            ownerIDs = Set(owners.map(\.objectID))
            itemIDs = Set(items.map(\.objectID))
            tagIDs = Set(tags.map(\.objectID))
            var tagNames: Set<String> = []
            for tag in tags where !tagNames.insert(tag.name ?? "").inserted {
                duplicate("Tag name \(tag.name ?? "nil")")
            }
            census = SoakCensus(counters: counters.count, owners: owners.count, items: items.count, tags: tags.count)
        }

        private mutating func duplicate(_ what: String) {
            duplicates.append(SoakViolation(kind: .uniqueness, message: "\(what) appears more than once"))
        }

        /// "c3:1234" for a key: its writer and serial.
        func describe(_ key: Int64) -> String { "\(names[key >> 40] ?? "?\(key >> 40)"):\(key & (1 << 40 - 1))" }

        private func members(_ object: NSManagedObject, _ key: String) -> [NSManagedObject] {
            switch object.value(forKey: key) {
            case let set as NSOrderedSet: set.array.compactMap { $0 as? NSManagedObject }
            case let set as NSSet: set.allObjects.compactMap { $0 as? NSManagedObject }
            case let set as Set<NSManagedObject>: Array(set)
            case let object as NSManagedObject: [object]
            default: []
            }
        }

        /// "Owner c3:1234", "Tag tag-07", or for an object whose row is gone, its entity
        /// and the last part of its object ID's URI ("Tag p42").
        func name(_ object: NSManagedObject) -> String {
            switch object {
            case let owner as SoakOwner where ownerIDs.contains(owner.objectID): "Owner \(describe(owner.key))"
            case let item as SoakItem where itemIDs.contains(item.objectID): "Item \(describe(item.key))"
            case let tag as SoakTag where tagIDs.contains(tag.objectID): "Tag \(tag.name ?? "nil")"
            default:
                "\(object.objectID.entity.name ?? "?") \(object.objectID.uriRepresentation().lastPathComponent) (missing)"
            }
        }

        /// R1, R2 and U1.
        func violations() -> [SoakViolation] {
            var found = duplicates
            func check(_ object: NSManagedObject, _ key: String, existing: Set<NSManagedObjectID>, inverse: String) {
                let listed = members(object, key)
                if Set(listed.map(\.objectID)).count != listed.count {
                    found.append(
                        SoakViolation(kind: .relationship, message: "\(name(object)).\(key) lists an object twice"))
                }
                for destination in listed {
                    guard existing.contains(destination.objectID) else {
                        found.append(
                            SoakViolation(
                                kind: .dangling,
                                message: "\(name(object)).\(key) names \(name(destination))"))
                        continue
                    }
                    if !members(destination, inverse).contains(where: { $0.objectID == object.objectID }) {
                        found.append(
                            SoakViolation(
                                kind: .relationship,
                                message: "\(name(object)).\(key) names \(name(destination)), "
                                    + "whose \(inverse) does not name it back"))
                    }
                }
            }
            for owner in owners {
                check(owner, "items", existing: itemIDs, inverse: "owner")
                check(owner, "tags", existing: tagIDs, inverse: "owners")
                check(owner, "favorite", existing: tagIDs, inverse: "favoredBy")
            }
            for item in items { check(item, "owner", existing: ownerIDs, inverse: "items") }
            for tag in tags {
                check(tag, "owners", existing: ownerIDs, inverse: "tags")
                check(tag, "favoredBy", existing: ownerIDs, inverse: "favorite")
            }
            return found
        }
    }
}
