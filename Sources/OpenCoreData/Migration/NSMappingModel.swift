// A mapping model: how the objects of one model version become objects of another.
// Built in code, or inferred from the two models by the rules of lightweight migration
// (LightweightMigrationPlan), so an inferred mapping model and the migration a store
// runs when it opens agree on what is possible and on what happens to every value.
import Foundation

/// The entity mappings that migrate a store of a source model to a destination model.
///
/// ```swift
/// let mapping = try NSMappingModel.inferredMappingModel(forSourceModel: v2, destinationModel: v3)
/// mapping.entityMappings.first { $0.destinationEntityName == "Employee" }?
///     .entityMigrationPolicyClassName = NSStringFromClass(SplitNamePolicy.self)
/// let manager = NSMigrationManager(sourceModel: v2, destinationModel: v3)
/// try manager.migrateStore(
///     from: old, sourceType: NSSQLiteStoreType, options: nil, with: mapping,
///     toDestinationURL: new, destinationType: NSSQLiteStoreType, destinationOptions: nil)
/// ```
open class NSMappingModel: NSObject, @unchecked Sendable {
    /// The entity mappings, in the order the migration runs them.
    open var entityMappings: [NSEntityMapping]! = []

    /// The entity mappings by name.
    open var entityMappingsByName: [String: NSEntityMapping] {
        var result: [String: NSEntityMapping] = [:]
        for mapping in entityMappings ?? [] { if let name = mapping.name { result[name] = mapping } }
        return result
    }

    /// An empty mapping model.
    public override init() {
        super.init()
    }

    /// The mapping model from `source` to `destination` found in `bundles`.
    ///
    /// Compiled mapping models (`.cdm`) and Xcode's `.xcmappingmodel` files are not read
    /// here: this returns nil, as Core Data does when the bundles hold no mapping model for
    /// the pair. Build mapping models in code, or infer one with
    /// ``inferredMappingModel(forSourceModel:destinationModel:)``.
    public init?(
        from bundles: [Bundle]?, forSourceModel source: NSManagedObjectModel?,
        destinationModel destination: NSManagedObjectModel?
    ) {
        return nil
    }

    /// The mapping model in the file at `url`: nil, as compiled mapping models are not
    /// read here (see ``init(from:forSourceModel:destinationModel:)``).
    public init?(contentsOf url: URL?) {
        return nil
    }

    /// The mapping model lightweight migration infers from `source` to `destination`: a
    /// copy or transform mapping for every destination entity continuing a source entity
    /// (matched by name and renaming identifier), an add mapping for every new entity, a
    /// remove mapping for every removed one; attribute mappings `FUNCTION($source,
    /// "valueForKey:", "old name")`, relationship mappings through
    /// `destinationInstancesForEntityMappingNamed:sourceInstances:`.
    ///
    /// - Throws: `NSInferredMappingModelError` (134190) naming the entity and property of
    ///   a change lightweight migration cannot infer (an attribute's type, for one): the
    ///   change a store refuses to migrate with 134140.
    open class func inferredMappingModel(
        forSourceModel source: NSManagedObjectModel, destinationModel destination: NSManagedObjectModel
    ) throws -> NSMappingModel {
        let plan: LightweightMigrationPlan
        do {
            plan = try LightweightMigrationPlan(inferringFrom: source, to: destination)
        } catch let error as NSError {
            throw MigrationError.recoded(error, NSInferredMappingModelError)
        }
        let model = NSMappingModel()
        model.entityMappings = InferredMapping.entityMappings(of: plan)
        return model
    }
}

/// The entity mappings of an inferred mapping model.
enum InferredMapping {
    /// The name of the mapping from `source` to `destination`, as Core Data names them.
    static func name(from source: String?, to destination: String?) -> String {
        switch (source, destination) {
        case (let source?, let destination?): "\(source)To\(destination)"
        case (nil, let destination?): "AddTo\(destination)"
        case (let source?, nil): "\(source)ToRemove"
        default: "Mapping"
        }
    }

    static func entityMappings(of plan: LightweightMigrationPlan) -> [NSEntityMapping] {
        var mappings: [NSEntityMapping] = []
        for entityPlan in plan.entityMappings {
            let destination = entityPlan.destination
            let mapping = NSEntityMapping()
            mapping.name = name(from: entityPlan.source?.name, to: destination.name)
            mapping.destinationEntityName = destination.name
            mapping.destinationEntityVersionHash = destination.versionHash
            guard let source = entityPlan.source else {
                mapping.mappingType = .addEntityMappingType
                mappings.append(mapping)
                continue
            }
            mapping.sourceEntityName = source.name
            mapping.sourceEntityVersionHash = source.versionHash
            mapping.mappingType =
                source.versionHash == destination.versionHash && source.name == destination.name
                ? .copyEntityMappingType : .transformEntityMappingType
            mapping.sourceExpression = sourceExpression(for: source.name ?? "")
            var attributes: [NSPropertyMapping] = []
            var relationships: [NSPropertyMapping] = []
            let sourceProperties = source.layout.properties
            for (slot, property) in destination.layout.properties.enumerated() where !property.isTransient {
                let propertyMapping = NSPropertyMapping(name: property.name, valueExpression: nil)
                switch entityPlan.slots[slot] {
                case .attribute(let from, _):
                    propertyMapping.valueExpression = NSExpression(
                        forFunction: NSExpression(forVariable: "source"), selectorName: "valueForKey:",
                        arguments: [NSExpression(forConstantValue: sourceProperties[from].name)])
                case .relationship(let from, let old):
                    let target = old.destinationEntity.map { old in
                        name(from: old.name, to: plan.destinationEntity(continuing: old)?.name)
                    }
                    propertyMapping.valueExpression = NSExpression(
                        forFunction: NSExpression(forVariable: "manager"),
                        selectorName: "destinationInstancesForEntityMappingNamed:sourceInstances:",
                        arguments: [
                            NSExpression(forConstantValue: target ?? ""),
                            NSExpression(
                                forFunction: NSExpression(forVariable: "source"), selectorName: "valueForKey:",
                                arguments: [NSExpression(forConstantValue: sourceProperties[from].name)]),
                        ])
                default:
                    break
                }
                if property is NSRelationshipDescription {
                    relationships.append(propertyMapping)
                } else {
                    attributes.append(propertyMapping)
                }
            }
            mapping.attributeMappings = attributes
            mapping.relationshipMappings = relationships
            mappings.append(mapping)
        }
        for entity in plan.source.entities where plan.destinationEntity(continuing: entity) == nil {
            let mapping = NSEntityMapping()
            mapping.name = name(from: entity.name, to: nil)
            mapping.mappingType = .removeEntityMappingType
            mapping.sourceEntityName = entity.name
            mapping.sourceEntityVersionHash = entity.versionHash
            mappings.append(mapping)
        }
        return mappings
    }

    /// Core Data's source expression: every instance of `entity`.
    static func sourceExpression(for entity: String) -> NSExpression {
        NSExpression(
            forFunction: NSExpression(forVariable: "manager"),
            selectorName: "fetchRequestForSourceEntityNamed:predicateString:",
            arguments: [NSExpression(forConstantValue: entity), NSExpression(forConstantValue: "TRUEPREDICATE")])
    }
}
