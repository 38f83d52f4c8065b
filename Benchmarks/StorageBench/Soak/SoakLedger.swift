// The ledger of acknowledged saves: what each writer's saves that returned wrote, kept
// for the check at the end. A writer owns its counter, the owners it inserts (others may
// change them but only it deletes them) and their items (only it touches them), so what
// its acknowledged saves did to those must all be in the store at the end:
//
//   L1  the writer's counter is at least its last acknowledged value
//   L2  an owner whose insert was acknowledged exists, unless its writer tried to delete it
//   L3  an item whose insert was acknowledged exists, unless a delete of it was tried
//   L4  an item whose delete was acknowledged does not exist (no deleted object back)
//   L5  an item's value is at least the value of its last acknowledged update
//
// A child process's save in flight when it was killed is pending: it may or may not have
// been written. The counter its next instance reads from the store says which (counters
// go up by one a save), and the pending save is then applied or dropped.
import Foundation
import Synchronization

/// What one save writes of the writer's own data.
struct SoakEffects: Codable, Sendable {
    /// The writer's counter after the save.
    var counter: Int64
    var insertedOwners: [Int64] = []
    /// Owners the save deletes (rollback may keep one another save changed).
    var deletedOwners: [Int64] = []
    var insertedItems: [Int64] = []
    /// Items the save deletes.
    var deletedItems: [Int64] = []
    /// Items the save's owner deletes cascade to, as (item key, owner key) pairs.
    var cascadedItems: [[Int64]] = []
    /// (item key, value) pairs the save writes.
    var itemValues: [[Int64]] = []
    /// Whether the save's deletes may have been undone: under rollback, until the writer
    /// read back what the save left; the ledger then only stops claiming the objects.
    var deletesMayBeUndone = false

    init(counter: Int64) { self.counter = counter }
}

/// One writer's acknowledged state.
struct WriterLedger: Sendable {
    var acknowledgedCounter: Int64 = 0
    var owners: Set<Int64> = []
    /// Owners whose delete was tried: no longer claimed either way.
    var ownersReleased: Set<Int64> = []
    var items: Set<Int64> = []
    /// Deleted items, with the owner whose delete cascaded to them (nil: deleted directly).
    var itemsDeleted: [Int64: Int64?] = [:]
    var itemValues: [Int64: Int64] = [:]
    /// A child's save in flight when it was killed.
    var pending: SoakEffects?

    mutating func apply(_ effects: SoakEffects) {
        acknowledgedCounter = max(acknowledgedCounter, effects.counter)
        owners.formUnion(effects.insertedOwners)
        for key in effects.deletedOwners {
            owners.remove(key)
            ownersReleased.insert(key)
        }
        items.formUnion(effects.insertedItems)
        for (key, owner) in effects.deletedItems.map({ ($0, Int64?.none) })
            + effects.cascadedItems.filter({ $0.count == 2 }).map({ ($0[0], Optional($0[1])) })
        {
            items.remove(key)
            if !effects.deletesMayBeUndone { itemsDeleted[key] = owner }
            itemValues[key] = nil
        }
        for pair in effects.itemValues where pair.count == 2 && items.contains(pair[0]) {
            itemValues[pair[0]] = max(itemValues[pair[0]] ?? .min, pair[1])
        }
    }
}

/// Something the soak found wrong, by kind.
struct SoakViolation: Sendable {
    enum Kind: String, Sendable, CaseIterable {
        case lostSave = "acknowledged save lost"
        case deletedBack = "deleted object back"
        case valueBehind = "value behind its acknowledged update"
        case relationship = "relationship sides disagree"
        case dangling = "reference to a missing object"
        case uniqueness = "uniqueness constraint broken"
        case verify = "verify() problem"
        case leak = "objects alive after reset()"
        case process = "child process"
    }

    let kind: Kind
    let message: String
}

/// Every writer's ledger and every violation found, shared by the soak's threads.
final class SoakLedger: Sendable {
    private let state = Mutex<(writers: [String: WriterLedger], violations: [SoakViolation])>(([:], []))

    /// Records a save that returned.
    func acknowledge(_ writer: String, _ effects: SoakEffects) {
        state.withLock { $0.writers[writer, default: WriterLedger()].apply(effects) }
    }

    /// Records a child's save that started; `acknowledge` or `resume` settles it.
    func begin(_ writer: String, _ effects: SoakEffects) {
        state.withLock { $0.writers[writer, default: WriterLedger()].pending = effects }
    }

    /// A child's save that returned: the pending save it began, as the child found it
    /// done (`effects`: under rollback, what it read back).
    func acknowledgePending(_ writer: String, _ effects: SoakEffects) {
        state.withLock { state in
            guard let pending = state.writers[writer]?.pending, pending.counter == effects.counter else {
                state.violations.append(
                    SoakViolation(
                        kind: .process, message: "\(writer) acknowledged save \(effects.counter) it never began"))
                return
            }
            state.writers[writer]?.pending = nil
            state.writers[writer]?.apply(effects)
        }
    }

    /// Settles a killed writer's pending save by the counter found in the store
    /// (`storeCounter`): written if the counter reached it, dropped if not.
    func resume(_ writer: String, storeCounter: Int64) {
        state.withLock { state in
            var ledger = state.writers[writer, default: WriterLedger()]
            if storeCounter < ledger.acknowledgedCounter {
                state.violations.append(
                    SoakViolation(
                        kind: .lostSave,
                        message: "\(writer) restarted at counter \(storeCounter), behind its acknowledged "
                            + "\(ledger.acknowledgedCounter)"))
            }
            if let pending = ledger.pending {
                ledger.pending = nil
                if storeCounter >= pending.counter { ledger.apply(pending) }
            }
            if storeCounter > ledger.acknowledgedCounter {
                state.violations.append(
                    SoakViolation(
                        kind: .process,
                        message: "\(writer) restarted at counter \(storeCounter), beyond any save it began"))
            }
            state.writers[writer] = ledger
        }
    }

    func record(_ violation: SoakViolation) {
        state.withLock { $0.violations.append(violation) }
    }

    var writers: [String: WriterLedger] { state.withLock { $0.writers } }
    var violations: [SoakViolation] { state.withLock { $0.violations } }
}
