// The userInfo dictionaries of the context's notifications, filled into prebuilt
// templates. Building `[AnyHashable: Any]` hashes every key through AnyHashable's boxed
// String: ~2,000 instructions a key, paid by every save (DidSave, ObjectsDidChange) even
// when nobody observes, and Foundation cannot tell us whether anybody does. A copy of a
// template keeps its buckets, so its values are set by index without hashing a key.
import Foundation

/// A userInfo dictionary with fixed keys whose values are set by position.
struct NotificationUserInfo: @unchecked Sendable {
    // Immutable after init; the placeholder values are empty sets. Shared by every context.
    fileprivate let template: [AnyHashable: Any]
    fileprivate let indices: [Dictionary<AnyHashable, Any>.Index]

    /// A template with `keys`, each holding a placeholder until filled.
    init(keys: [String]) {
        var template: [AnyHashable: Any] = Dictionary(minimumCapacity: keys.count)
        for key in keys { template[AnyHashable(key)] = Set<NSManagedObject>() }
        self.template = template
        indices = keys.compactMap { template.index(forKey: AnyHashable($0)) }
    }

    /// The dictionary with the template's keys holding `values`, in the keys' order.
    func filled(_ values: [Any]) -> [AnyHashable: Any] {
        precondition(values.count == indices.count, "a notification's userInfo filled with the wrong number of values")
        var info = template
        // A copy has the template's indices; setting a value through one keeps them valid.
        for (index, value) in zip(indices, values) { info.values[index] = value }
        return info
    }

    /// DidSave's userInfo: the saved objects of each kind, and their IDs for merging.
    static let didSave = NotificationUserInfo(keys: [
        NSInsertedObjectsKey, NSUpdatedObjectsKey, NSDeletedObjectsKey, SavedChanges.userInfoKey,
    ])

    /// ObjectsDidChange's userInfo templates, by which of inserted, updated, deleted and
    /// refreshed (bits 0 to 3) have objects: a key only for a kind that has objects.
    static let objectsDidChange: [NotificationUserInfo] = (0..<16).map { mask in
        let keys = [NSInsertedObjectsKey, NSUpdatedObjectsKey, NSDeletedObjectsKey, NSRefreshedObjectsKey]
        return NotificationUserInfo(keys: keys.indices.filter { mask & (1 << $0) != 0 }.map { keys[$0] })
    }
}

/// A context's notification userInfo dictionaries and object sets, kept from one post to
/// the next and filled in place. A save of one object posts ObjectsDidChange and DidSave,
/// and building them new cost a dictionary and a set per kind each time (~1,000
/// instructions apiece): kept here, each is emptied once its notification is posted
/// (placeholders back in the dictionary, sets emptied keeping their storage), so the next
/// post fills the same storage. Value semantics make this exact: an observer that kept a
/// dictionary or a set holds a reference to its storage, and the next fill then copies it
/// instead of writing into it. Nothing stays referenced between posts but empty storage.
struct NotificationBuffers {
    /// Kinds of objects: their bit in an ObjectsDidChange mask and their spare set.
    enum Kind: Int {
        case inserted, updated, deleted, refreshed
    }

    /// A spare set with more room than this is let go rather than kept (a bulk save).
    static let retainedSetCapacity = 64

    private var didSave: [AnyHashable: Any]?
    private var objectsDidChange: [AnyHashable: Any]?
    /// The mask of the kinds `objectsDidChange` has keys for.
    private var objectsDidChangeMask = -1
    private var spareInserted = Set<NSManagedObject>()
    private var spareUpdated = Set<NSManagedObject>()
    private var spareDeleted = Set<NSManagedObject>()

    /// DidSave's userInfo as last filled (empty before the first fill).
    var didSaveInfo: [AnyHashable: Any] { didSave ?? [:] }
    /// ObjectsDidChange's userInfo as last filled (empty before the first fill).
    var objectsDidChangeInfo: [AnyHashable: Any] { objectsDidChange ?? [:] }

    /// `objects` as a set in the spare storage of `kind` (`refreshed` has none: a new set).
    mutating func set(_ kind: Kind, _ objects: some Sequence<NSManagedObject>) -> Set<NSManagedObject> {
        func fill(_ spare: inout Set<NSManagedObject>) -> Set<NSManagedObject> {
            if !spare.isEmpty { spare.removeAll(keepingCapacity: true) }
            // Room for all first: a bulk save's set would otherwise grow by doubling.
            spare.reserveCapacity(objects.underestimatedCount)
            for object in objects { spare.insert(object) }
            return spare
        }
        switch kind {
        case .inserted: return fill(&spareInserted)
        case .updated: return fill(&spareUpdated)
        case .deleted: return fill(&spareDeleted)
        case .refreshed: return Set(objects)
        }
    }

    /// Fills DidSave's userInfo: the saved objects of each kind (in the spare sets, or
    /// `insertedSet` and `deletedSet` when given: sets of the same objects) and their IDs.
    mutating func fillDidSave(
        inserted: [NSManagedObject], updated: [NSManagedObject], deleted: [NSManagedObject], changes: SavedChanges,
        insertedSet: Set<NSManagedObject>? = nil, deletedSet: Set<NSManagedObject>? = nil
    ) {
        let form = NotificationUserInfo.didSave
        var info = didSave ?? form.emptied
        didSave = nil
        // An empty kind is the empty set (no storage): a save mostly inserts or updates.
        form.set(inserted.isEmpty ? [] : insertedSet ?? set(.inserted, inserted), at: 0, in: &info)
        form.set(updated.isEmpty ? [] : set(.updated, updated), at: 1, in: &info)
        form.set(deleted.isEmpty ? [] : deletedSet ?? set(.deleted, deleted), at: 2, in: &info)
        form.set(changes, at: 3, in: &info)
        didSave = info
    }

    /// Fills ObjectsDidChange's userInfo from `changes`: a key only for a kind that has objects.
    mutating func fillObjectsDidChange(_ changes: ObjectChanges) {
        var mask = 0
        if !changes.inserted.isEmpty { mask |= 1 << Kind.inserted.rawValue }
        if !changes.updated.isEmpty { mask |= 1 << Kind.updated.rawValue }
        if !changes.deleted.isEmpty { mask |= 1 << Kind.deleted.rawValue }
        if !changes.refreshed.isEmpty { mask |= 1 << Kind.refreshed.rawValue }
        let form = NotificationUserInfo.objectsDidChange[mask]
        var info = mask == objectsDidChangeMask ? objectsDidChange ?? form.emptied : form.emptied
        objectsDidChange = nil
        // The template's keys are the kinds present, in kind order.
        var position = 0
        func add(_ objects: Set<NSManagedObject>) {
            guard !objects.isEmpty else { return }
            form.set(objects, at: position, in: &info)
            position += 1
        }
        add(changes.inserted)
        add(changes.updated)
        add(changes.deleted)
        add(changes.refreshed)
        objectsDidChange = info
        objectsDidChangeMask = mask
    }

    /// After DidSave is posted: its dictionary and the spare sets hold nothing again.
    mutating func emptyDidSave() {
        if var info = didSave {
            didSave = nil
            NotificationUserInfo.didSave.empty(&info)
            didSave = info
        }
        emptySpares()
    }

    /// After ObjectsDidChange is posted: its dictionary and the spare sets hold nothing again.
    mutating func emptyObjectsDidChange() {
        if var info = objectsDidChange, objectsDidChangeMask >= 0 {
            objectsDidChange = nil
            NotificationUserInfo.objectsDidChange[objectsDidChangeMask].empty(&info)
            objectsDidChange = info
        }
        emptySpares()
    }

    private mutating func emptySpares() {
        func empty(_ spare: inout Set<NSManagedObject>) {
            if spare.capacity > Self.retainedSetCapacity {
                spare = []
            } else if !spare.isEmpty {
                spare.removeAll(keepingCapacity: true)
            }
        }
        empty(&spareInserted)
        empty(&spareUpdated)
        empty(&spareDeleted)
    }
}

extension NotificationUserInfo {
    /// A copy of the template: every key holding its placeholder.
    var emptied: [AnyHashable: Any] { template }

    /// Sets the value of the key at `position` of `info`, a dictionary of this template.
    func set(_ value: Any, at position: Int, in info: inout [AnyHashable: Any]) {
        info.values[indices[position]] = value
    }

    /// Puts the placeholders back into `info`, a dictionary of this template.
    func empty(_ info: inout [AnyHashable: Any]) {
        for index in indices { info.values[index] = Set<NSManagedObject>() }
    }
}
