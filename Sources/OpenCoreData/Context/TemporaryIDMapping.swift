// A save's map from the temporary IDs of the objects it inserts to their permanent IDs.
//
// Every relationship value of every saved object is looked up in it, so it is keyed by
// the ID's plain-value key (one hash of one word, fields compared inline) rather than by
// the ID object, whose equality goes through `isEqual(_:)` with an `Any` copied per probe:
// a lookup cost ~1,800 instructions on a map of 10,000 new objects. A permanent ID is
// never a key, so its lookup answers without probing.
import Foundation

/// Temporary object IDs to the permanent IDs a save gives them.
struct TemporaryIDMapping: ExpressibleByDictionaryLiteral {
    /// The first ID set, held inline: a save of one new object (an app saving after each
    /// insert) builds no table.
    private var first: (key: NSManagedObjectID.Key, permanent: NSManagedObjectID)?
    /// The other IDs.
    private var permanentByKey: [NSManagedObjectID.Key: NSManagedObjectID] = [:]

    init() {}

    init(dictionaryLiteral elements: (NSManagedObjectID, NSManagedObjectID)...) {
        for (temporary, permanent) in elements { self[temporary] = permanent }
    }

    var isEmpty: Bool { first == nil && permanentByKey.isEmpty }

    /// Room for `count` IDs; a save of one or two objects lets the table grow instead
    /// (reserving runs the unspecialized generic, ~2k instructions).
    mutating func reserveCapacity(_ count: Int) { if count > 2 { permanentByKey.reserveCapacity(count) } }

    /// The permanent ID of the temporary `id`; nil for an ID the save does not insert.
    subscript(id: NSManagedObjectID) -> NSManagedObjectID? {
        get {
            guard id.isTemporaryID else { return nil }
            let key = id.registryKey
            if let first, first.key == key { return first.permanent }
            return permanentByKey.isEmpty ? nil : permanentByKey[key]
        }
        set {
            let key = id.registryKey
            if let held = first, held.key == key {
                first = newValue.map { (key, $0) }
            } else if first == nil, permanentByKey[key] == nil {
                first = newValue.map { (key, $0) }
            } else {
                permanentByKey[key] = newValue
            }
        }
    }
}
