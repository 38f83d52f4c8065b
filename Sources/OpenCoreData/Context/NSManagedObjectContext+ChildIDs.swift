// A child context's inserted objects keep their temporary IDs when the child saves; the
// parent's save then gives the parent's copies permanent IDs, or by an upsert an
// existing row's ID. The child adopts those IDs for its own objects. Otherwise a fetch
// or a fault in the child that reaches the row by its permanent ID registers a second
// object for it, and the first one, which merges never refresh (they name the permanent
// ID), keeps an out-of-date list: the soak's chain deleted an owner through such a list
// and lost an item it had moved to another owner. (Core Data leaves the child's IDs
// temporary; README, "Porting from Core Data".)
import Foundation

/// A permanent ID a parent's save gave an object its children know by a temporary ID.
struct PermanentIDAdoption: Sendable {
    let temporary: NSManagedObjectID
    let permanent: NSManagedObjectID
    /// Whether `permanent` is an existing row's (an upsert): the child's object holds only
    /// its own values, the row keeps the stored ones the policy chose.
    let upserted: Bool
}

extension NSManagedObjectContext {
    /// Tells the children the IDs this context assigned since it last did, each child on
    /// its own queue: soon by a block, at the latest at its next fetch, save or merge.
    func passPermanentIDsToChildren() {
        guard !permanentIDsToPass.isEmpty else { return }
        let adoptions = permanentIDsToPass
        permanentIDsToPass = []
        for child in childContexts {
            child.deliveredPermanentIDs.withLock { $0 += adoptions }
            child.perform { child.adoptDeliveredPermanentIDs() }
        }
    }

    /// Gives this context's objects the permanent IDs its parent assigned to their rows.
    /// An object already registered under such an ID (fetched after the parent's save, or
    /// the stored row an upsert went into) leaves the registry, as the object an upsert
    /// supersedes in a context saving to the store does; upserted objects read their rows
    /// again.
    func adoptDeliveredPermanentIDs() {
        guard parent != nil else { return }
        let adoptions = deliveredPermanentIDs.withLock { delivered in
            defer { delivered = [] }
            return delivered
        }
        guard !adoptions.isEmpty else { return }
        var stale: [NSManagedObject] = []
        let forChildren = tracksPermanentIDsForChildren()
        for adoption in adoptions {
            guard let object = registry[adoption.temporary] else { continue }
            if let registered = registry[adoption.permanent], registered !== object { stale.append(registered) }
            reassign(object, to: adoption.permanent, forChildren: forChildren, upserted: adoption.upserted)
            if adoption.upserted { stale.append(object) }
        }
        refreshAfterUpserts(stale, keepingChanges: true)
        passPermanentIDsToChildren()
    }

    /// The permanent ID an object this child knew by `temporary` took, when nothing is
    /// registered under `temporary` any more (an ID the app kept from before).
    func adoptedPermanentID(for temporary: NSManagedObjectID) -> NSManagedObjectID? {
        guard let parent, registry[temporary] == nil else { return nil }
        return parent.performAndWait { parent.permanentIDsForChildren[temporary] }
    }
}
