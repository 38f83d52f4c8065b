// A row read by key: what a store evaluates predicates against.
import Foundation

/// A read-only view of a stored row by property name, for evaluating predicates and
/// key paths in a store.
///
/// Attributes read as their Swift values, a to-one relationship as the destination's
/// view (or nil), a to-many relationship as an array of views. A view is equal to
/// another view or to a managed object with the same object ID, so a predicate
/// comparing a relationship with an object argument works on rows.
public final class StoreRowView: NSObject, KeyValueSlotReadable, PredicateIdentifiable, @unchecked Sendable {
    /// The row's object ID.
    public let objectID: NSManagedObjectID
    private let values: [StoreValue]
    private let layout: EntityLayout
    private let resolve: (NSManagedObjectID) throws -> StoreRow?
    private let resolveToMany: (NSRelationshipDescription, NSManagedObjectID) throws -> [NSManagedObjectID]

    /// A view of `row`; `resolve` finds the rows its relationships point to and
    /// `resolveToMany` the destinations of an `.unresolved` to-many slot.
    public init(
        row: StoreRow, resolve: @escaping (NSManagedObjectID) throws -> StoreRow?,
        resolveToMany: @escaping (NSRelationshipDescription, NSManagedObjectID) throws -> [NSManagedObjectID]
    ) {
        self.objectID = row.objectID
        self.values = row.values
        self.layout = row.objectID.entity.layout
        self.resolve = resolve
        self.resolveToMany = resolveToMany
        super.init()
    }

    /// The value of the property `key`.
    ///
    /// - Throws: `KeyValueCodingError.unknownKey` when the entity has no property `key`.
    public func readValue(forKey key: String) throws -> Any? {
        guard let slot = layout.slotsByName[key], slot < values.count else {
            throw KeyValueCodingError.unknownKey(key, in: objectID.entity.name ?? "entity")
        }
        return try value(atSlot: slot)
    }

    /// The row's entity layout: predicates compiled for it read this row by slot.
    public var keyValueSchema: any KeyValueSchema { layout }

    /// The value in `slot` (relationships as views); nil when it cannot be read.
    public func readValue(atSlot slot: Int) -> Any? {
        (try? value(atSlot: slot)) ?? nil
    }

    /// Rows compare in predicates by object ID, like the objects they store.
    public var predicateIdentity: AnyHashable { objectID }

    private func value(atSlot slot: Int) throws -> Any? {
        guard slot < values.count else { return nil }
        let value = values[slot]
        if let attribute = layout.attributeBySlot[slot] { return attribute.attributeValue(value) }
        guard let relationship = layout.relationshipBySlot[slot] else { return nil }
        switch value {
        case .objectID(let destination):
            return try view(of: destination)
        case .objectIDs(let destinations):
            return try destinations.compactMap { try view(of: $0) }
        case .unresolved:
            return try resolveToMany(relationship, objectID).compactMap { try view(of: $0) }
        default:
            return relationship.isToMany ? [StoreRowView]() : nil
        }
    }

    private func view(of objectID: NSManagedObjectID) throws -> StoreRowView? {
        try resolve(objectID).map { StoreRowView(row: $0, resolve: resolve, resolveToMany: resolveToMany) }
    }

    public override func isEqual(_ object: Any?) -> Bool {
        switch object {
        case let view as StoreRowView: return view.objectID == objectID
        case let managed as NSManagedObject: return managed.objectID == objectID
        case let id as NSManagedObjectID: return id == objectID
        default: return false
        }
    }

    public override var hash: Int { objectID.hash }
}
