// A save's map from the temporary IDs of the objects it inserts to their permanent IDs.
//
// Every relationship value of every saved object is looked up in it, so it is keyed by
// the ID's plain-value key (one hash of one word, fields compared inline) rather than by
// the ID object, whose equality goes through `isEqual(_:)` with an `Any` copied per probe:
// a lookup cost ~1,800 instructions on a map of 10,000 new objects. A permanent ID is
// never a key, so its lookup answers without probing.
//
// A save's map of its new objects is filled on the first lookup of a temporary ID: new
// objects that name only stored ones (`person.company = company`, the company saved
// before) look up no temporary ID, and filling the table cost ~350 instructions an object.
import Foundation

/// Temporary object IDs to the permanent IDs a save gives them.
struct TemporaryIDMapping: ExpressibleByDictionaryLiteral {
    /// The first ID set, held inline: a save of one new object (an app saving after each
    /// insert) builds no table.
    private var first: (key: NSManagedObjectID.Key, permanent: NSManagedObjectID)?
    /// The other IDs.
    private var permanentByKey: [NSManagedObjectID.Key: NSManagedObjectID] = [:]
    /// A save's new objects and their IDs, put in a table on the first lookup.
    private var unfilled: UnfilledTable?

    init() {}

    /// The map from the temporary IDs of `objects` to `permanentIDs` (paired in order; the
    /// last pair wins for an ID given twice), filled on the first lookup of a temporary ID:
    /// the objects must keep their temporary IDs until then (a save gives them the
    /// permanent ones once its rows are written, after every lookup).
    init(objects: __shared [NSManagedObject], permanentIDs: __shared [NSManagedObjectID]) {
        assert(objects.count == permanentIDs.count, "a temporary ID mapping of unpaired objects and IDs")
        if objects.count == 1 {
            // Held inline without the setter's probe of the (empty) table: a hash per save.
            first = (objects[0].objectID.registryKey, permanentIDs[0])
        } else if objects.count > 1 {
            unfilled = UnfilledTable(objects: objects, permanentIDs: permanentIDs)
        }
    }

    init(dictionaryLiteral elements: (NSManagedObjectID, NSManagedObjectID)...) {
        for (temporary, permanent) in elements { self[temporary] = permanent }
    }

    var isEmpty: Bool { first == nil && permanentByKey.isEmpty && unfilled == nil }

    /// Room for `count` IDs; a save of one or two objects lets the table grow instead
    /// (reserving runs the unspecialized generic, ~2k instructions).
    mutating func reserveCapacity(_ count: Int) { if count > 2 { permanentByKey.reserveCapacity(count) } }

    /// The permanent ID of the temporary `id`; nil for an ID the save does not insert.
    subscript(id: NSManagedObjectID) -> NSManagedObjectID? {
        get {
            guard id.isTemporaryID else { return nil }
            let key = id.registryKey
            if let first, first.key == key { return first.permanent }
            if let unfilled { return unfilled.permanentID(for: key) }
            return permanentByKey.isEmpty ? nil : permanentByKey[key]
        }
        set {
            if let unfilled {
                permanentByKey = unfilled.filled
                self.unfilled = nil
            }
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

/// The new objects of a save and their permanent IDs, put in a table when first looked up
/// in (a class: copies of the mapping share the one table).
private final class UnfilledTable {
    private let objects: [NSManagedObject]
    private let permanentIDs: [NSManagedObjectID]
    private var table: [NSManagedObjectID.Key: NSManagedObjectID]?

    init(objects: __shared [NSManagedObject], permanentIDs: __shared [NSManagedObjectID]) {
        self.objects = objects
        self.permanentIDs = permanentIDs
    }

    /// The table, filled now if it is not yet.
    var filled: [NSManagedObjectID.Key: NSManagedObjectID] {
        if let table { return table }
        var built: [NSManagedObjectID.Key: NSManagedObjectID] = [:]
        built.reserveCapacity(objects.count)
        for (object, permanentID) in zip(objects, permanentIDs) {
            let temporary = object.objectID
            assert(temporary.isTemporaryID, "OpenCoreData: a save's ID map filled after its objects got their IDs")
            built[temporary.registryKey] = permanentID
        }
        table = built
        return built
    }

    func permanentID(for key: NSManagedObjectID.Key) -> NSManagedObjectID? { filled[key] }
}
