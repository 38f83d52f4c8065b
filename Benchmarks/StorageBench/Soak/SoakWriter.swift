// One writer of the soak: a context (or a parent/child chain) that saves again and again,
// each save bumping its counter and doing one to three random operations:
//
//   own data     insert an owner with items and tags, add, update, move, reorder and
//                delete items, delete an owner (its items cascade), upsert an own owner
//   shared data  link or unlink a tag and any writer's owner (many-to-many), set an
//                owner's favorite tag (to-one), edit its note, count a tag's hits,
//                delete a tag, upsert a tag by name (uniqueness constraint)
//
// What a save that returned wrote of the writer's own data goes to the ledger
// (SoakLedger.swift). A failed save is rolled back and the objects refreshed.
import Foundation
import OpenCoreData
import Synchronization
import TestSupport

/// A merge policy of the soak, by kind; the raw value is its command-line name.
enum SoakPolicy: String, CaseIterable, Sendable {
    case error
    case storeTrump = "store-trump"
    case objectTrump = "object-trump"
    case overwrite
    case rollback

    /// "store trump", for reports.
    var title: String { rawValue.replacingOccurrences(of: "-", with: " ") }

    var type: NSMergePolicyType {
        switch self {
        case .error: .errorMergePolicyType
        case .storeTrump: .mergeByPropertyStoreTrumpMergePolicyType
        case .objectTrump: .mergeByPropertyObjectTrumpMergePolicyType
        case .overwrite: .overwriteMergePolicyType
        case .rollback: .rollbackMergePolicyType
        }
    }

    /// The built-in singleton, or a subclass counting the conflicts it resolves.
    func policy(counting counts: ConflictCounts?) -> NSMergePolicy {
        if let counts { return CountingMergePolicy(merge: type, counts: counts) }
        switch self {
        case .error: return NSErrorMergePolicy
        case .storeTrump: return NSMergeByPropertyStoreTrumpMergePolicy
        case .objectTrump: return NSMergeByPropertyObjectTrumpMergePolicy
        case .overwrite: return NSOverwriteMergePolicy
        case .rollback: return NSRollbackMergePolicy
        }
    }
}

/// Conflicts a counting policy was handed.
final class ConflictCounts: Sendable {
    private let counts = Mutex<(optimistic: Int, constraint: Int)>((0, 0))

    func add(optimistic: Int = 0, constraint: Int = 0) {
        counts.withLock {
            $0.optimistic += optimistic
            $0.constraint += constraint
        }
    }

    var optimistic: Int { counts.withLock { $0.optimistic } }
    var constraint: Int { counts.withLock { $0.constraint } }
}

/// A built-in policy that counts what it resolves (a subclass: conflicts of every kind
/// reach it, as they reach an app's own policy).
final class CountingMergePolicy: NSMergePolicy, @unchecked Sendable {
    let counts: ConflictCounts

    init(merge type: NSMergePolicyType, counts: ConflictCounts) {
        self.counts = counts
        super.init(merge: type)
    }

    override func resolve(optimisticLockingConflicts list: [NSMergeConflict]) throws {
        counts.add(optimistic: list.count)
        try super.resolve(optimisticLockingConflicts: list)
    }

    override func resolve(constraintConflicts list: [NSConstraintConflict]) throws {
        counts.add(constraint: list.count)
        try super.resolve(constraintConflicts: list)
    }
}

/// What a writer did.
struct WriterStatistics: Codable, Sendable {
    var saves = 0
    /// Failed saves by error, e.g. "133020 optimistic locking".
    var failures: [String: Int] = [:]
    var operations = 0
    /// Objects probed after reset() and how many were still alive.
    var resetProbes = 0
    var aliveAfterReset = 0
    var resets = 0
    var optimisticConflicts = 0
    var constraintConflicts = 0
    /// Objects registered in the writer's contexts after its last save.
    var registered = 0

    var failed: Int { failures.values.reduce(0, +) }
}

/// An object held weakly, to see whether anything else keeps it alive.
struct WeakObject {
    weak var object: NSManagedObject?
}

final class SoakWriter: @unchecked Sendable {
    let name: String
    /// The writer's key space: keys are `number << 40 | serial`.
    let number: Int64
    let policy: SoakPolicy
    /// Where changes are made (the child of a chain).
    let context: NSManagedObjectContext
    /// The chain's parent, whose save reaches the store; nil for a plain context.
    let parent: NSManagedObjectContext?
    /// The key spaces of every writer, to pick others' owners from.
    let writerNumbers: [Int64]
    let counts: ConflictCounts?
    private var random: SeededRandom
    /// Touched only by the writer's thread; `snapshot` is what other threads read.
    private var statistics = WriterStatistics()
    private let published = Mutex(WriterStatistics())

    /// The writer's statistics as of its last save or reset.
    var snapshot: WriterStatistics { published.withLock { $0 } }

    /// The acknowledged counter.
    private(set) var counter: Int64 = 0
    /// The writer's owners and, in order, their items, as its acknowledged saves left them.
    private var owners: [Int64: [Int64]] = [:]

    /// Called just before a save reaches the store (children print their intent).
    var willSave: (SoakEffects) -> Void = { _ in }
    /// Called when a save returned.
    var didSave: (SoakEffects) -> Void = { _ in }
    /// The per-save trace (SOAK_TRACE), if asked for.
    private let trace: SoakTrace?

    /// A writer on `context` (saving through `parent` when given), resuming from what the
    /// store holds of its data.
    init(
        name: String, number: Int64, policy: SoakPolicy, context: NSManagedObjectContext,
        parent: NSManagedObjectContext? = nil, writerNumbers: [Int64], countsConflicts: Bool, seed: UInt64
    ) throws {
        self.name = name
        self.number = number
        self.policy = policy
        self.context = context
        self.parent = parent
        self.writerNumbers = writerNumbers
        counts = countsConflicts ? ConflictCounts() : nil
        random = SeededRandom(seed: seed)
        trace = SoakTrace(writer: name, policy: policy)
        trace?.observe(parent ?? context)
        (parent ?? context).performAndWait { (parent ?? context).mergePolicy = policy.policy(counting: counts) }
        try context.performAndWait {
            counter =
                try SoakModel.fetch("Counter", where: "writer", is: name as NSString, in: context, as: SoakCounter.self)
                .first?.value ?? 0
            let request = NSFetchRequest<SoakOwner>(entityName: "Owner")
            request.predicate = NSPredicate(format: "writer == %@", name)
            for owner in try context.fetch(request) {
                owners[owner.key] = (owner.items?.array as? [SoakItem])?.map(\.key) ?? []
            }
            context.reset()
        }
    }

    // MARK: Saving

    /// One save with one to three operations (`operations`, when given: a test's script);
    /// true when it returned.
    @discardableResult
    func step(operations: [Operation]? = nil) -> Bool {
        var save = PlannedSave(counter: counter + 1, owners: owners, policy: policy)
        var performed: [Operation] = []
        do {
            try context.performAndWait {
                let counterObject = try counterObject()
                counterObject.value = save.effects.counter
                for operation in operations ?? (0..<random.int(in: 1...3)).map({ _ in randomOperation() }) {
                    try perform(operation, &save)
                    performed.append(operation)
                    statistics.operations += 1
                }
                if parent == nil { willSave(save.effects) }
                try context.save()
            }
            if let parent {
                willSave(save.effects)
                try parent.performAndWait { try parent.save() }
            }
        } catch {
            statistics.failures[Self.describe(error), default: 0] += 1
            trace?.note("fail \(save.effects.counter) \(Self.describe(error))")
            for context in [context, parent].compactMap(\.self) {
                context.performAndWait {
                    context.rollback()
                    context.refreshAllObjects()
                }
            }
            if parent != nil { context.performAndWait { context.reset() } }
            collectConflictCounts()
            return false
        }
        if policy == .rollback {
            // A failed read-back leaves the deletes unclaimed (deletesMayBeUndone).
            try? context.performAndWait { try settleRollback(&save) }
        }
        if let trace {
            // What the writer believes of the owners the save changed: key, then items in order.
            let changed = save.owners.filter { owners[$0.key] != $0.value }.map { [$0.key] + $0.value }
            trace.note(
                "ack " + SoakChild.json(save.effects) + " operations \(performed) owners "
                    + SoakChild.json(changed.sorted { $0[0] < $1[0] }))
        }
        counter = save.effects.counter
        owners = save.owners
        statistics.saves += 1
        collectConflictCounts()
        didSave(save.effects)
        return true
    }

    private func collectConflictCounts() {
        statistics.registered = [context, parent].compactMap(\.self).reduce(0) { total, context in
            total + context.performAndWait { context.registeredObjects.count }
        }
        if let counts {
            statistics.optimisticConflicts = counts.optimistic
            statistics.constraintConflicts = counts.constraint
        }
        let statistics = statistics
        published.withLock { $0 = statistics }
    }

    /// "133020 optimistic locking" and the like: a failed save's error, short.
    static func describe(_ error: Error) -> String {
        let error = error as NSError
        switch (error.domain, error.code) {
        case (NSCocoaErrorDomain, 133020): return "133020 optimistic locking"
        case (NSCocoaErrorDomain, 133021): return "133021 uniqueness constraint"
        default:
            let text = error.localizedDescription
            return "\(error.code) " + (text.count > 90 ? String(text.prefix(90)) + "…" : text)
        }
    }

    /// Resets the writer's contexts and reports how many of the objects they held are
    /// still alive afterwards (nothing else holds them: only a reference cycle can).
    func resetAndProbe() {
        for context in [context, parent].compactMap(\.self) {
            let probes = context.performAndWait { () -> [WeakObject] in
                let probes = context.registeredObjects.prefix(400).map { WeakObject(object: $0) }
                context.reset()
                return probes
            }
            statistics.resets += 1
            statistics.resetProbes += probes.count
            statistics.aliveAfterReset += probes.count(where: { $0.object != nil })
        }
        collectConflictCounts()
    }

    // MARK: Operations

    /// A save being built: its effects and the writer's data as it will be once saved.
    struct PlannedSave {
        var effects: SoakEffects
        var owners: [Int64: [Int64]]
        var nextSerial: Int64 = 0
        var insertedOwners: [Int64: SoakOwner] = [:]
        /// Fresh objects under stored owners' keys (upserts), saved with this save.
        var upsertedOwners: [Int64: SoakOwner] = [:]

        init(counter: Int64, owners: [Int64: [Int64]], policy: SoakPolicy) {
            effects = SoakEffects(counter: counter)
            effects.deletesMayBeUndone = policy == .rollback
            self.owners = owners
        }
    }

    /// Under rollback a save returns with the changes of the objects in conflict discarded:
    /// a delete undone (the owner, its cascade with it), an update taken back. What the
    /// save left of the writer's data is read back (only the writer inserts, deletes and
    /// updates its owners' items, so nothing else moves them meanwhile), and the ledger
    /// claims only that.
    private func settleRollback(_ save: inout PlannedSave) throws {
        for key in save.effects.deletedOwners {
            guard let owner = try SoakModel.owner(key, in: context) else { continue }
            save.owners[key] = (owner.items?.array as? [SoakItem])?.map(\.key) ?? []
            save.effects.deletedOwners.removeAll { $0 == key }
        }
        save.effects.cascadedItems = try save.effects.cascadedItems.filter { pair in
            guard pair.count == 2 else { return false }
            return try SoakModel.item(pair[0], in: context) == nil
        }
        var deleted: [Int64] = []
        for key in save.effects.deletedItems {
            guard let item = try SoakModel.item(key, in: context) else {
                deleted.append(key)
                continue
            }
            if let owner = item.owner, owner.writer == name, save.owners[owner.key]?.contains(key) == false {
                save.owners[owner.key]?.append(key)
            }
        }
        save.effects.deletedItems = deleted
        save.effects.itemValues = try save.effects.itemValues.compactMap { pair in
            guard pair.count == 2, let item = try SoakModel.item(pair[0], in: context) else { return nil }
            return [pair[0], item.value]
        }
        save.effects.deletesMayBeUndone = false
    }

    enum Operation: CaseIterable {
        case insertOwner, addItem, updateItems, moveItem, reorderItems, deleteItem, deleteOwner, upsertOwner
        case linkTag, setFavorite, editNote, hitTag, deleteTag, upsertTag
    }

    private func randomOperation() -> Operation {
        let weighted: [(Operation, Int)] = [
            (.insertOwner, owners.count < 6 ? 6 : 2), (.addItem, 3), (.updateItems, 3), (.moveItem, 2),
            (.reorderItems, 2), (.deleteItem, 2), (.deleteOwner, owners.count > 16 ? 4 : 1), (.upsertOwner, 1),
            (.linkTag, 3), (.setFavorite, 2), (.editNote, 2), (.hitTag, 2), (.deleteTag, 1), (.upsertTag, 2),
        ]
        var pick = random.int(in: 0...(weighted.map(\.1).reduce(0, +) - 1))
        for (operation, weight) in weighted {
            if pick < weight { return operation }
            pick -= weight
        }
        return .insertOwner
    }

    private func newKey(_ save: inout PlannedSave) -> Int64 {
        precondition(save.nextSerial < 64, "a save makes at most 64 keys")
        defer { save.nextSerial += 1 }
        return number << 40 | save.effects.counter << 6 | save.nextSerial
    }

    private func counterObject() throws -> SoakCounter {
        if let counter = try SoakModel.fetch(
            "Counter", where: "writer", is: name as NSString, in: context, as: SoakCounter.self
        ).first {
            return counter
        }
        let counter = SoakCounter(context: context)
        counter.writer = name
        return counter
    }

    /// The writer's owner `key`: the object this save inserted, else the stored one. Not a
    /// fetch's first result: once the save upserts the key, a fetch (which includes pending
    /// changes, as Core Data's does) finds the upsert's fresh object too, in no defined order.
    private func ownOwner(_ key: Int64, _ save: PlannedSave) throws -> SoakOwner? {
        if let owner = save.insertedOwners[key] { return owner }
        return try SoakModel.fetch("Owner", where: "key", is: NSNumber(value: key), in: context, as: SoakOwner.self)
            .first { $0 !== save.upsertedOwners[key] }
    }

    private func randomOwnOwner(_ save: PlannedSave, withItems: Bool = false) -> Int64? {
        let keys = save.owners.filter { !withItems || !$0.value.isEmpty }.keys.sorted()
        return keys.isEmpty ? nil : random.pick(keys)
    }

    private func perform(_ operation: Operation, _ save: inout PlannedSave) throws {
        switch operation {
        case .insertOwner: try insertOwner(&save)
        case .addItem: try addItem(&save)
        case .updateItems: try updateItems(&save)
        case .moveItem: try moveItem(&save)
        case .reorderItems: try reorderItems(save)
        case .deleteItem: try deleteItem(&save)
        case .deleteOwner: try deleteOwner(&save)
        case .upsertOwner: try upsertOwner(&save)
        case .linkTag: try linkTag()
        case .setFavorite: try setFavorite()
        case .editNote: try editNote(save)
        case .hitTag: try hitTag()
        case .deleteTag: try deleteTag()
        case .upsertTag: try upsertTag(save)
        }
    }

    private func newItem(_ save: inout PlannedSave) -> SoakItem {
        let item = SoakItem(context: context)
        item.key = newKey(&save)
        item.value = save.effects.counter
        save.effects.insertedItems.append(item.key)
        save.effects.itemValues.append([item.key, item.value])
        return item
    }

    private func insertOwner(_ save: inout PlannedSave) throws {
        let owner = SoakOwner(context: context)
        owner.key = newKey(&save)
        owner.writer = name
        owner.note = "\(name) #\(save.effects.counter)"
        let items = owner.mutableOrderedSetValue(forKey: "items")
        var keys: [Int64] = []
        for _ in 0..<random.int(in: 0...3) {
            let item = newItem(&save)
            items.add(item)
            keys.append(item.key)
        }
        for _ in 0..<random.int(in: 0...2) { owner.mutableSetValue(forKey: "tags").add(try tag()) }
        if random.chance(0.5) { owner.favorite = try tag() }
        save.owners[owner.key] = keys
        save.insertedOwners[owner.key] = owner
        save.effects.insertedOwners.append(owner.key)
    }

    private func addItem(_ save: inout PlannedSave) throws {
        guard let key = randomOwnOwner(save), let owner = try ownOwner(key, save) else { return }
        let item = newItem(&save)
        let items = owner.mutableOrderedSetValue(forKey: "items")
        let index = random.int(in: 0...items.count)
        items.insert(item, at: index)
        save.owners[key, default: []].insert(item.key, at: min(index, save.owners[key, default: []].count))
    }

    private func updateItems(_ save: inout PlannedSave) throws {
        let keys = save.owners.values.flatMap(\.self).sorted()
        guard !keys.isEmpty else { return }
        for _ in 0..<random.int(in: 1...3) {
            let key = random.pick(keys)
            guard let item = try SoakModel.item(key, in: context) else { continue }
            item.value = save.effects.counter
            save.effects.itemValues.append([key, item.value])
        }
    }

    private func moveItem(_ save: inout PlannedSave) throws {
        guard save.owners.count >= 2, let from = randomOwnOwner(save, withItems: true),
            let itemKey = save.owners[from].map({ random.pick($0) })
        else { return }
        let targets = save.owners.keys.filter { $0 != from }.sorted()
        let to = random.pick(targets)
        guard let item = try SoakModel.item(itemKey, in: context), let target = try ownOwner(to, save) else { return }
        if random.chance(0.5) {
            item.owner = target
            save.owners[to, default: []].append(itemKey)
        } else {
            let items = target.mutableOrderedSetValue(forKey: "items")
            items.insert(item, at: 0)
            save.owners[to, default: []].insert(itemKey, at: 0)
        }
        save.owners[from]?.removeAll { $0 == itemKey }
    }

    private func reorderItems(_ save: PlannedSave) throws {
        guard let key = randomOwnOwner(save, withItems: true), let owner = try ownOwner(key, save) else { return }
        let items = owner.mutableOrderedSetValue(forKey: "items")
        guard items.count >= 2 else { return }
        let item = items.object(at: random.int(in: 0...(items.count - 1)))
        items.remove(item)
        items.insert(item, at: random.int(in: 0...items.count))
    }

    private func deleteItem(_ save: inout PlannedSave) throws {
        guard let ownerKey = randomOwnOwner(save, withItems: true), let itemKeys = save.owners[ownerKey] else { return }
        let key = random.pick(itemKeys)
        guard let item = try SoakModel.item(key, in: context) else { return }
        context.delete(item)
        save.owners[ownerKey]?.removeAll { $0 == key }
        save.effects.deletedItems.append(key)
    }

    private func deleteOwner(_ save: inout PlannedSave) throws {
        guard save.owners.count > 3, let key = randomOwnOwner(save), let owner = try ownOwner(key, save) else {
            return
        }
        context.delete(owner)
        // An upsert of the key in this save would write the owner back (without its items).
        if let upserted = save.upsertedOwners.removeValue(forKey: key) { context.delete(upserted) }
        save.effects.deletedOwners.append(key)
        save.effects.cascadedItems += (save.owners[key] ?? []).map { [$0, key] }
        save.owners[key] = nil
        save.insertedOwners[key] = nil
        save.effects.insertedOwners.removeAll { $0 == key }
    }

    /// A fresh object for an own owner's key: an upsert into the stored one.
    private func upsertOwner(_ save: inout PlannedSave) throws {
        guard policy != .error, let key = randomOwnOwner(save), save.insertedOwners[key] == nil,
            save.upsertedOwners[key] == nil
        else { return }
        let owner = SoakOwner(context: context)
        owner.key = key
        owner.writer = name
        owner.note = "\(name) upsert #\(save.effects.counter)"
        save.upsertedOwners[key] = owner
    }

    /// Some writer's owner, or nil when the chosen key space has none.
    private func anyOwner() throws -> SoakOwner? {
        let space = random.pick(writerNumbers)
        let request = NSFetchRequest<SoakOwner>(entityName: "Owner")
        request.predicate = NSPredicate(
            format: "key >= %lld AND key < %lld", space << 40, (space + 1) << 40)
        request.fetchOffset = random.int(in: 0...7)
        request.fetchLimit = 1
        return try context.fetch(request).first
    }

    /// A tag by a random name: fetched, or inserted (an upsert when another writer
    /// inserted it meanwhile; under the error policy, a constraint failure).
    private func tag(name: String? = nil) throws -> SoakTag {
        let name = name ?? SoakModel.tagName(random.int(in: 0...(SoakModel.tagCount - 1)))
        if policy == .error || random.chance(0.7), let tag = try SoakModel.tag(name, in: context) { return tag }
        let tag = SoakTag(context: context)
        tag.name = name
        return tag
    }

    private func linkTag() throws {
        guard let owner = try anyOwner() else { return }
        let tag = try tag()
        let tags = owner.mutableSetValue(forKey: "tags")
        if tags.contains(tag) { tags.remove(tag) } else { tags.add(tag) }
    }

    private func setFavorite() throws {
        guard let owner = try anyOwner() else { return }
        owner.favorite = random.chance(0.2) ? nil : try tag()
    }

    private func editNote(_ save: PlannedSave) throws {
        guard let owner = try anyOwner() else { return }
        owner.note = "\(name) edit #\(save.effects.counter)"
    }

    private func hitTag() throws {
        let name = SoakModel.tagName(random.int(in: 0...(SoakModel.tagCount - 1)))
        guard let tag = try SoakModel.tag(name, in: context) else { return }
        tag.hits += 1
    }

    private func deleteTag() throws {
        let name = SoakModel.tagName(random.int(in: 0...(SoakModel.tagCount - 1)))
        guard let tag = try SoakModel.tag(name, in: context) else { return }
        context.delete(tag)
    }

    /// A fresh tag object under a name that may exist: an upsert, linked to an own owner.
    private func upsertTag(_ save: PlannedSave) throws {
        guard policy != .error, let key = randomOwnOwner(save), let owner = try ownOwner(key, save) else { return }
        let tag = SoakTag(context: context)
        tag.name = SoakModel.tagName(random.int(in: 0...(SoakModel.tagCount - 1)))
        if random.chance(0.5) { owner.favorite = tag } else { owner.mutableSetValue(forKey: "tags").add(tag) }
    }
}
