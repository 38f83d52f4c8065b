// What lightweight migration does to a store, decided from the two models alone before
// any row is read (LightweightMigrationPlan+Inference.swift): which source entity each
// destination entity continues, and for each slot of each destination entity where its
// value comes from. The row transform (MigrationRowTransform.swift) applies it to rows;
// the inferred mapping model and the dry run describe it.
import Foundation

/// How the rows of a store of `source` become rows of `destination`.
struct LightweightMigrationPlan {
    /// Where one destination slot's value comes from.
    enum Slot {
        /// Never stored: null.
        case transient
        /// A new attribute: its default (a mandatory one without a default fails at the
        /// first row).
        case newAttribute(StoreValue)
        /// A kept attribute: the value of `source` (a slot of the source entity); a nil
        /// becomes `fill` (the default, when the attribute became mandatory).
        case attribute(source: Int, fill: StoreValue)
        /// A new relationship: empty, unless its inverse continues a source relationship,
        /// whose destinations then give this one's (`reversing`).
        case newRelationship(reversing: NSRelationshipDescription?)
        /// A kept relationship: the destinations of `relationship` (a source relationship
        /// in slot `source`), converted to this one's cardinality and order.
        case relationship(source: Int, relationship: NSRelationshipDescription)
    }

    /// One destination entity: the source entity it continues and its slots.
    struct EntityMapping {
        let destination: NSEntityDescription
        /// The source entity whose rows become this entity's rows, or nil for a new entity.
        let source: NSEntityDescription?
        /// One entry per slot of the destination entity's layout.
        let slots: [Slot]
    }

    let source: NSManagedObjectModel
    let destination: NSManagedObjectModel
    /// One mapping per destination entity, in the destination model's order.
    let entityMappings: [EntityMapping]
    /// The changes, in order, for dry runs and inferred mapping models.
    let changes: [MigrationChange]
    private let destinationBySource: [ObjectIdentifier: NSEntityDescription]
    private let mappingByDestination: [ObjectIdentifier: Int]

    init(
        source: NSManagedObjectModel, destination: NSManagedObjectModel, entityMappings: [EntityMapping],
        changes: [MigrationChange]
    ) {
        self.source = source
        self.destination = destination
        self.entityMappings = entityMappings
        self.changes = changes
        var bySource: [ObjectIdentifier: NSEntityDescription] = [:]
        var byDestination: [ObjectIdentifier: Int] = [:]
        for (index, mapping) in entityMappings.enumerated() {
            byDestination[ObjectIdentifier(mapping.destination)] = index
            if let from = mapping.source { bySource[ObjectIdentifier(from)] = mapping.destination }
        }
        destinationBySource = bySource
        mappingByDestination = byDestination
    }

    /// The destination entity continuing source entity `entity`, or nil when it is removed.
    func destinationEntity(continuing entity: NSEntityDescription) -> NSEntityDescription? {
        destinationBySource[ObjectIdentifier(entity)]
    }

    /// The mapping of destination entity `entity`.
    func mapping(of entity: NSEntityDescription) -> EntityMapping? {
        mappingByDestination[ObjectIdentifier(entity)].map { entityMappings[$0] }
    }

    /// Whether the plan changes nothing a row holds: every entity continues its namesake
    /// and every slot copies the same slot.
    var isIdentity: Bool {
        entityMappings.allSatisfy { mapping in
            guard let source = mapping.source, source.name == mapping.destination.name else { return false }
            return mapping.slots.enumerated().allSatisfy { slot, plan in
                switch plan {
                case .attribute(let from, _), .relationship(let from, _): return from == slot
                case .transient: return true
                case .newAttribute, .newRelationship: return false
                }
            }
        } && source.entities.allSatisfy { destinationEntity(continuing: $0) != nil }
    }
}

/// One change a migration makes, as a dry run reports it.
public struct MigrationChange: Sendable, Equatable, CustomStringConvertible {
    /// What kind of change.
    public enum Kind: String, Sendable {
        /// A new entity (no objects).
        case addEntity
        /// An entity whose objects are dropped.
        case removeEntity
        /// An entity continuing a source entity under another name.
        case renameEntity
        /// An entity whose superentity or abstractness changed.
        case changeHierarchy
        /// A new property: attributes take their default, relationships start empty (or
        /// from their inverse's values).
        case addProperty
        /// A property whose values are dropped.
        case removeProperty
        /// A property continuing a source property under another name.
        case renameProperty
        /// A property that became optional.
        case makeOptional
        /// A property that became mandatory (a nil takes the default, or fails).
        case makeMandatory
        /// A relationship that became to-one or to-many.
        case changeCardinality
        /// A relationship that became ordered or unordered.
        case changeOrdering
    }

    /// What kind of change.
    public let kind: Kind
    /// The destination entity (the source entity's name for a removed entity).
    public let entity: String
    /// The destination property (the source property's name for a removed property), if any.
    public let property: String?
    /// A sentence saying what happens to the values.
    public let description: String
}
