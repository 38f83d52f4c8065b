// The userInfo dictionaries of the context's notifications, filled into prebuilt
// templates. Building `[AnyHashable: Any]` hashes every key through AnyHashable's boxed
// String: ~2,000 instructions a key, paid by every save (DidSave, ObjectsDidChange) even
// when nobody observes, and Foundation cannot tell us whether anybody does. A copy of a
// template keeps its buckets, so its values are set by index without hashing a key.
import Foundation

/// A userInfo dictionary with fixed keys whose values are set by position.
struct NotificationUserInfo: @unchecked Sendable {
    // Immutable after init; the placeholder values are empty sets. Shared by every context.
    private let template: [AnyHashable: Any]
    private let indices: [Dictionary<AnyHashable, Any>.Index]

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
