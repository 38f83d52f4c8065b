// Object IDs: the identity of a managed object across contexts and stores.
import Foundation
import Synchronization

/// The identity of a managed object: its entity, its store and its key in the store.
///
/// A new object has a temporary ID until its context saves (or calls
/// `obtainPermanentIDs(for:)`). IDs are values: two IDs of the same object are equal,
/// hash alike and may be passed between threads and contexts freely.
public final class NSManagedObjectID: NSObject, @unchecked Sendable {
    /// The entity of the object.
    public let entity: NSEntityDescription
    /// The store holding the object; nil while the ID is temporary.
    public let persistentStore: NSPersistentStore?
    /// The key within the store (permanent) or within the process (temporary).
    let key: Int64
    /// Whether the ID is temporary.
    public let isTemporaryID: Bool

    private static let temporaryCounter = Atomic<Int64>(0)
    /// Distinguishes temporary IDs of this process in URIs.
    private static let processToken = UUID().uuidString

    init(entity: NSEntityDescription, store: NSPersistentStore, key: Int64) {
        self.entity = entity
        self.persistentStore = store
        self.key = key
        self.isTemporaryID = false
        super.init()
    }

    private init(temporaryFor entity: NSEntityDescription, key: Int64) {
        self.entity = entity
        self.persistentStore = nil
        self.key = key
        self.isTemporaryID = true
        super.init()
    }

    /// A fresh temporary ID for a new object of `entity`.
    static func temporary(for entity: NSEntityDescription) -> NSManagedObjectID {
        let key = temporaryCounter.wrappingAdd(1, ordering: .relaxed).newValue
        return NSManagedObjectID(temporaryFor: entity, key: key)
    }

    /// A plain value identifying the ID, for fast dictionary keys inside the library.
    struct Key: Hashable {
        let entity: ObjectIdentifier
        let store: ObjectIdentifier?
        let key: Int64
        let isTemporary: Bool

        /// The fields mixed into one word, hashed once instead of four times on every
        /// registry insert and lookup (equal keys still compare every field).
        func hash(into hasher: inout Hasher) {
            var word = UInt64(bitPattern: isTemporary ? ~key : key)
            word &+= UInt64(UInt(bitPattern: entity)) &* 0x9E37_79B9_7F4A_7C15
            if let store { word ^= UInt64(UInt(bitPattern: store)) &* 0xC2B2_AE3D_27D4_EB4F }
            hasher.combine(word)
        }
    }

    /// This ID as a plain value key.
    var registryKey: Key {
        Key(
            entity: ObjectIdentifier(entity), store: persistentStore.map { ObjectIdentifier($0) }, key: key,
            isTemporary: isTemporaryID)
    }

    /// The primary key of a permanent ID in its store.
    public var storeKey: Int64? { isTemporaryID ? nil : key }

    /// A URL naming the object: `x-coredata://STORE-UUID/Entity/pKEY` for a permanent
    /// ID, `x-coredata:///Entity/tTOKEN-KEY` for a temporary one. The coordinator maps
    /// it back with `managedObjectID(forURIRepresentation:)`.
    public func uriRepresentation() -> URL {
        let entityName = entity.name ?? ""
        let text: String
        if isTemporaryID {
            text = "x-coredata:///\(entityName)/t\(NSManagedObjectID.processToken)-\(key)"
        } else {
            text = "x-coredata://\(persistentStore?.identifier ?? "")/\(entityName)/p\(key)"
        }
        return URL(string: text) ?? URL(fileURLWithPath: "/")
    }

    public override func isEqual(_ object: Any?) -> Bool {
        if let address = objectAddress(in: object, typedAs: NSObject.self)
            ?? objectAddress(in: object, typedAs: NSManagedObjectID.self)
        {
            // Typed `NSObject` (how sets and dictionaries pass it): an ID only when its class is.
            let other = Unmanaged<AnyObject>.fromOpaque(address).takeUnretainedValue()
            guard type(of: other) == NSManagedObjectID.self else { return false }
            return equals(unsafeDowncast(other, to: NSManagedObjectID.self))
        }
        guard let object, let other = openedObjectID(object) ?? (object as? NSManagedObjectID) else { return false }
        return equals(other)
    }

    private func equals(_ other: NSManagedObjectID) -> Bool {
        if other === self { return true }
        return other.key == key && other.isTemporaryID == isTemporaryID
            && other.persistentStore === persistentStore
            && (other.entity === entity || other.entity.name == entity.name)
    }

    public override var hash: Int {
        // Mixed, not hashed: sets and dictionaries hash this number again with their seed.
        Int(truncatingIfNeeded: UInt64(bitPattern: key) &* 0x9E37_79B9_7F4A_7C15) ^ (isTemporaryID ? 1 : 0)
    }

    public override var description: String {
        "<NSManagedObjectID \(uriRepresentation().absoluteString)>"
    }
}

/// `value` as an object ID when it holds one as an `NSObject` or an `NSManagedObjectID`
/// (how sets and dictionaries of IDs pass it to `isEqual(_:)`), without a dynamic cast:
/// the cast cost hundreds of instructions on every probe of a set or dictionary of IDs.
/// Nil when it is typed otherwise (the caller casts then).
@inline(__always)
func openedObjectID(_ value: Any) -> NSManagedObjectID? {
    _openExistential(value, do: objectIDOfOpened)
}

/// A free function: this toolchain's compiler crashes on `_openExistential` with a closure.
private func objectIDOfOpened<Value>(_ value: Value) -> NSManagedObjectID? {
    // Each reinterpretation follows a check that `Value` is exactly that class type.
    guard Value.self == NSManagedObjectID.self || Value.self == NSObject.self else { return nil }
    let object = unsafeBitCast(value, to: AnyObject.self)
    return type(of: object) == NSManagedObjectID.self ? unsafeDowncast(object, to: NSManagedObjectID.self) : nil
}
