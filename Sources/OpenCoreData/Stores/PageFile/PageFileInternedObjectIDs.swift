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
// The rows naming one destination share its stored to-one value (an UnresolvedRelationship
// naming the ID) the same way: one allocation per destination instead of one per row. A
// reference to its slot's declared destination (no entity name, the common form) finds
// that value by the row's layout, the slot and the key alone: reading the destination
// entity (a weak reference), the ID table and the value table cost ~700 instructions per
// fetched person of `object-contains-scan`, where its company had been named before.
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
    /// The stored to-one values naming the IDs of `entries`, by the same slot: made on the
    /// first to-one reference.
    @exclusivity(unchecked) private var toOnes: [UnresolvedRelationship?] = []
    /// The stored to-one values of references to a slot's declared destination, by the
    /// row's layout, the slot and the key (see ``declaredToOne(layout:slot:key:)``); made
    /// on the first such reference.
    @exclusivity(unchecked) private var declared: UnsafeMutablePointer<DeclaredToOne>?

    /// One entry of `declared`: a layout is compared by identity only, which is sound for
    /// the table's life, one fetch, during which the fetched entities keep their layouts.
    private struct DeclaredToOne {
        var layout: ObjectIdentifier?
        var slot = 0
        var key: Int64 = 0
        var value: UnresolvedRelationship?
    }

    deinit {
        guard let declared else { return }
        declared.deinitialize(count: Self.capacity)
        declared.deallocate()
    }

    @inline(__always)
    private static func slot(_ layout: EntityLayout, _ slot: Int, _ key: Int64) -> Int {
        var word = UInt64(bitPattern: key) &+ UInt64(UInt(bitPattern: ObjectIdentifier(layout))) &+ UInt64(slot)
        word &*= 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: word >> 56)
    }

    /// The stored to-one value that slot `slot` of a row of `layout` holds when it names the
    /// object `key` of the slot's declared destination, when a row of this fetch named it
    /// before: no entity, ID or table of IDs is read for it.
    @inline(__always)
    func declaredToOne(layout: EntityLayout, slot: Int, key: Int64) -> UnresolvedRelationship? {
        guard let declared else { return nil }
        let entry = declared + Self.slot(layout, slot, key)
        guard entry.pointee.key == key, entry.pointee.slot == slot, entry.pointee.layout == ObjectIdentifier(layout)
        else { return nil }
        return entry.pointee.value
    }

    /// Keeps `value`, the stored to-one value of slot `slot` of a row of `layout` naming the
    /// object `key` of the slot's declared destination, for the next row naming it.
    func rememberDeclaredToOne(_ value: UnresolvedRelationship, layout: EntityLayout, slot: Int, key: Int64) {
        let table: UnsafeMutablePointer<DeclaredToOne>
        if let declared {
            table = declared
        } else {
            table = UnsafeMutablePointer<DeclaredToOne>.allocate(capacity: Self.capacity)
            table.initialize(repeating: DeclaredToOne(), count: Self.capacity)
            declared = table
        }
        table[Self.slot(layout, slot, key)] = DeclaredToOne(
            layout: ObjectIdentifier(layout), slot: slot, key: key, value: value)
    }

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

    /// The stored to-one value naming `id` (an ID this table gave): the one made before in
    /// this fetch, else a new one, kept for the next row naming `id`.
    @inline(__always)
    func toOne(naming id: NSManagedObjectID) -> UnresolvedRelationship {
        let slot = Self.slot(id.entity, id.key)
        if toOnes.isEmpty {
            toOnes = [UnresolvedRelationship?](repeating: nil, count: Self.capacity)
        } else if let cached = toOnes[slot], cached.destination === id {
            return cached
        }
        let made = UnresolvedRelationship(destination: id)
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

    /// The stored to-one value naming `id`: shared by the rows naming it once there is a table.
    @inline(__always)
    func toOne(naming id: NSManagedObjectID) -> UnresolvedRelationship {
        table?.toOne(naming: id) ?? UnresolvedRelationship(destination: id)
    }

    /// The stored to-one value a row of `layout` holds in slot `slot` naming the object `key`
    /// of the slot's declared destination, when a row of this fetch named it before (once
    /// there is a table).
    @inline(__always)
    func declaredToOne(layout: EntityLayout, slot: Int, key: Int64) -> UnresolvedRelationship? {
        table?.declaredToOne(layout: layout, slot: slot, key: key)
    }

    /// Keeps `value` as ``declaredToOne(layout:slot:key:)``'s answer, once there is a table.
    @inline(__always)
    func rememberDeclaredToOne(_ value: UnresolvedRelationship, layout: EntityLayout, slot: Int, key: Int64) {
        table?.rememberDeclaredToOne(value, layout: layout, slot: slot, key: key)
    }
}
