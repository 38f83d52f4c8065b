// Object IDs of references, made once per fetch.
//
// A row names its to-one destinations by entity and key, and the decoder makes an
// NSManagedObjectID for each: fetching 2,000 people of 100 companies made 2,000 company
// IDs, each an allocation that retains the entity and the store and is freed again with
// its object. While one fetch decodes its rows, the IDs it made are kept in a
// small direct-mapped table by entity and key, and a reference to an object named before
// gets the same ID. IDs are values: an interned ID is equal to, hashes like and reads
// like the one it replaces, so nothing but the allocation changes (PageFileInterned-
// ObjectIDsTests holds the decoded rows of both paths equal).
//
// The table lives as long as one fetch (it holds IDs, which hold the store: kept by the
// store, it would keep the store alive). A fetch of a few rows makes no table, and pays
// nothing for it: the fetch keeps a PageFileReferenceInterning on its stack, its codec
// copy points there (a plain pointer, no retain per copy), and the table is allocated at
// the first reference past a few, which are made as before.
import Foundation

/// The object IDs one fetch made for references, by entity and key (see the file comment).
final class PageFileInternedObjectIDs {
    /// Entries of the table: a power of two, so a slot is the top bits of a mixed word.
    private static let capacity = 256

    @exclusivity(unchecked) private var entries = [NSManagedObjectID?](repeating: nil, count: capacity)
    /// The to-one values naming an entry's ID, made on first use (see ``toOne(_:)``).
    @exclusivity(unchecked) private var toOnes = [UnresolvedRelationship?](repeating: nil, count: capacity)

    /// The entry of the object `key` of `entity`.
    @inline(__always)
    private static func slot(_ entity: NSEntityDescription, _ key: Int64) -> Int {
        var word = UInt64(bitPattern: key) &+ UInt64(UInt(bitPattern: ObjectIdentifier(entity)))
        word &*= 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: word >> 56)
    }

    /// The ID of the object `key` of `entity`: one made before in this fetch, else the one
    /// `make` makes, kept for the next reference.
    @inline(__always)
    func objectID(
        _ entity: NSEntityDescription, _ key: Int64, make: (NSEntityDescription, Int64) -> NSManagedObjectID
    ) -> NSManagedObjectID {
        let slot = Self.slot(entity, key)
        if let cached = entries[slot], cached.key == key, cached.entity === entity {
            return cached
        }
        let made = make(entity, key)
        entries[slot] = made
        return made
    }

    /// A stored to-one's value naming `destination`: one made before in this fetch for
    /// the same ID, else a new one kept for the next row. Rows naming one destination
    /// share it, as they share the ID: a value decoded from a store has no edits and is
    /// never edited in place (PendingToManyEdits.swift edits a value of its own), and
    /// resolving it replaces it in the one object's slot, so sharing it shares an
    /// immutable value, one allocation (and one free) per destination instead of per row.
    @inline(__always)
    func toOne(_ destination: NSManagedObjectID) -> UnresolvedRelationship {
        let slot = Self.slot(destination.entity, destination.key)
        if let cached = toOnes[slot], cached.destination === destination { return cached }
        let made = UnresolvedRelationship(destination: destination)
        toOnes[slot] = made
        return made
    }
}

/// One fetch's interning, kept on its stack: the references it made before the table is
/// worth its allocation, then the table (see the file comment).
struct PageFileReferenceInterning {
    /// References made before the table is worth its allocation.
    private static let referencesBeforeTable = 8

    private var referencesMade = 0
    private var table: PageFileInternedObjectIDs?

    /// The ID of the object `key` of `entity`, from the table once there is one.
    @inline(__always)
    mutating func objectID(
        _ entity: NSEntityDescription, _ key: Int64, make: (NSEntityDescription, Int64) -> NSManagedObjectID
    ) -> NSManagedObjectID {
        if let table { return table.objectID(entity, key, make: make) }
        referencesMade += 1
        guard referencesMade > Self.referencesBeforeTable else { return make(entity, key) }
        let made = PageFileInternedObjectIDs()
        table = made
        return made.objectID(entity, key, make: make)
    }

    /// A stored to-one's value naming `destination`, from the table once there is one.
    @inline(__always)
    func toOne(_ destination: NSManagedObjectID) -> UnresolvedRelationship {
        table?.toOne(destination) ?? UnresolvedRelationship(destination: destination)
    }
}
