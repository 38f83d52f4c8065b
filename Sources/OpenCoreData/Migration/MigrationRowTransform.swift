// Applying a lightweight migration plan to rows: one source row in, its destination row
// out, every value accounted for. A value is copied, takes its default (new, or nil in a
// now mandatory property), or the row fails the migration with an error naming the
// entity and the property — a value is never dropped or replaced silently. Stores call it
// row by row (the default store streams its rows; the binary store has them in memory).
import Foundation

/// Turns rows of a plan's source model into rows of its destination model.
final class MigrationRowTransform {
    let plan: LightweightMigrationPlan
    /// Makes the destination store's object ID of a destination entity and primary key
    /// (keys do not change in a migration).
    private let makeID: (NSEntityDescription, Int64) -> NSManagedObjectID
    /// For each source relationship a new relationship is filled from: its destinations'
    /// keys, each with the source objects pointing at it.
    private var reversed: [ObjectIdentifier: [Int64: [NSManagedObjectID]]] = [:]

    init(plan: LightweightMigrationPlan, makeID: @escaping (NSEntityDescription, Int64) -> NSManagedObjectID) {
        self.plan = plan
        self.makeID = makeID
        for relationship in reversedRelationships { reversed[ObjectIdentifier(relationship)] = [:] }
    }

    /// The source relationships whose destinations, reversed, fill new relationships:
    /// call ``noteReversed(_:owner:destinations:)`` for every source object holding them
    /// before transforming rows.
    var reversedRelationships: [NSRelationshipDescription] {
        var seen: Set<ObjectIdentifier> = []
        var result: [NSRelationshipDescription] = []
        for mapping in plan.entityMappings where mapping.source != nil {
            for slot in mapping.slots {
                guard case .newRelationship(let reversing?) = slot, seen.insert(ObjectIdentifier(reversing)).inserted
                else { continue }
                result.append(reversing)
            }
        }
        return result
    }

    /// Records that the source object `owner` holds `destinations` in the reversed
    /// source relationship `relationship`.
    func noteReversed(
        _ relationship: NSRelationshipDescription, owner: NSManagedObjectID, destinations: [NSManagedObjectID]
    ) {
        for destination in destinations {
            reversed[ObjectIdentifier(relationship), default: [:]][destination.key, default: []].append(owner)
        }
    }

    /// The destination row of the source `row`, or nil when its entity is removed.
    ///
    /// `toMany` gives the source destinations of a to-many the row leaves `.unresolved`
    /// (the default store's to-manys live outside the row). Values kept in a blob tree
    /// must be resolved in `row` already.
    ///
    /// - Throws: `NSMigrationError` (134110) naming the entity and property of a value the
    ///   destination cannot hold: a nil in a mandatory property without a default, several
    ///   destinations in a now to-one relationship, an object of an entity the relationship
    ///   no longer accepts, or a row of an entity that became abstract.
    func destinationRow(
        of row: StoreRow, toMany: (NSRelationshipDescription, NSManagedObjectID) throws -> [NSManagedObjectID]
    ) throws -> StoreRow? {
        guard let entity = plan.destinationEntity(continuing: row.objectID.entity) else { return nil }
        let name = entity.name ?? ""
        guard !entity.isAbstract else { throw MigrationError.abstractRows(name) }
        guard let mapping = plan.mapping(of: entity) else { return nil }
        let properties = entity.layout.properties
        var values: [StoreValue] = []
        values.reserveCapacity(mapping.slots.count)
        for (slot, plan) in mapping.slots.enumerated() {
            let property = properties[slot]
            switch plan {
            case .transient:
                values.append(.null)
            case .newAttribute(let value):
                if value == .null, !property.isOptional {
                    throw MigrationError.invalidValue(
                        "Validation error missing attribute values on mandatory destination attribute (a new "
                            + "attribute without a default value)", entity: name, property: property.name,
                        isRelationship: false)
                }
                values.append(value)
            case .attribute(let source, let fill):
                var value = source < row.values.count ? row.values[source] : .null
                if value == .null { value = fill }
                if value == .null, !property.isOptional {
                    throw MigrationError.invalidValue(
                        "Validation error missing attribute values on mandatory destination attribute",
                        entity: name, property: property.name, isRelationship: false)
                }
                values.append(value)
            case .newRelationship(let reversing):
                guard let relationship = property as? NSRelationshipDescription else {
                    values.append(.null)
                    continue
                }
                let owners = reversing.flatMap { reversed[ObjectIdentifier($0)]?[row.objectID.key] } ?? []
                values.append(
                    try converted(
                        owners.sorted { $0.key < $1.key }, to: relationship, entity: name, emptyIsMissing: true))
            case .relationship(let source, let old):
                guard let relationship = property as? NSRelationshipDescription else {
                    values.append(.null)
                    continue
                }
                let stored = source < row.values.count ? row.values[source] : .null
                var destinations: [NSManagedObjectID]
                switch stored {
                case .objectID(let id): destinations = [id]
                case .objectIDs(let ids): destinations = ids
                case .unresolved: destinations = try toMany(old, row.objectID)
                default: destinations = []
                }
                if !old.isOrdered, relationship.isOrdered { destinations.sort { $0.key < $1.key } }
                values.append(try converted(destinations, to: relationship, entity: name, emptyIsMissing: true))
            }
        }
        return StoreRow(objectID: makeID(entity, row.objectID.key), version: row.version, values: values)
    }

    /// `destinations` (source object IDs) as the value of the destination `relationship`.
    private func converted(
        _ destinations: [NSManagedObjectID], to relationship: NSRelationshipDescription, entity: String,
        emptyIsMissing: Bool
    ) throws -> StoreValue {
        var mapped: [NSManagedObjectID] = []
        mapped.reserveCapacity(destinations.count)
        for id in destinations {
            // An object of a removed entity is gone, and so is the reference to it.
            guard let target = plan.destinationEntity(continuing: id.entity) else { continue }
            if let accepted = relationship.destinationEntity, !target.isKindOf(entity: accepted) {
                throw MigrationError.invalidValue(
                    "an object refers to an object of \(target.name ?? ""), which the relationship (to "
                        + "\(accepted.name ?? "")) no longer accepts", entity: entity, property: relationship.name,
                    isRelationship: true)
            }
            mapped.append(makeID(target, id.key))
        }
        if relationship.isToMany { return .objectIDs(mapped) }
        guard mapped.count <= 1 else {
            throw MigrationError.invalidValue(
                "an object holds \(mapped.count) destinations and the relationship is now to-one",
                entity: entity, property: relationship.name, isRelationship: true)
        }
        if mapped.isEmpty, emptyIsMissing, !relationship.isOptional {
            throw MigrationError.invalidValue(
                "Validation error missing relationship values on mandatory destination relationship",
                entity: entity, property: relationship.name, isRelationship: true)
        }
        return mapped.first.map(StoreValue.objectID) ?? .null
    }
}
