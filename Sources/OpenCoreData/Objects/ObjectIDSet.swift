// A set of object IDs keyed by their plain-value key (NSManagedObjectID.Key): a save's
// integrity pass holds every row it wrote in one and asks it once per link. A
// Set<NSManagedObjectID> compares IDs through `isEqual(_:)`, copying an `Any` per probe,
// which cost about a thousand instructions per inserted object to build and ask.
import Foundation

/// Object IDs, compared by entity, store, key and temporariness (as `isEqual(_:)` does
/// for IDs of one model).
struct ObjectIDSet {
    private var keys: Set<NSManagedObjectID.Key>

    init(minimumCapacity: Int = 0) {
        keys = Set(minimumCapacity: minimumCapacity)
    }

    init(_ ids: some Sequence<NSManagedObjectID>) {
        keys = Set(ids.lazy.map(\.registryKey))
    }

    var isEmpty: Bool { keys.isEmpty }

    func contains(_ id: NSManagedObjectID) -> Bool { keys.contains(id.registryKey) }

    /// Adds `id`; whether it was not in the set yet.
    @discardableResult
    mutating func insert(_ id: NSManagedObjectID) -> Bool { keys.insert(id.registryKey).inserted }
}
