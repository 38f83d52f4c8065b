// The hooks of one entity mapping in a migration manager's migration, in Core Data's three
// phases: create the destination instances (each mapping), create their relationships
// (each mapping), validate (each mapping). Subclass it, override a phase, call super for
// the default work, and name the class in the mapping's entityMigrationPolicyClassName.
import Foundation

/// The `$manager` variable of a property mapping's value expression.
public let NSMigrationManagerKey = "manager"
/// The `$source` variable: the source instance.
public let NSMigrationSourceObjectKey = "source"
/// The `$destination` variable: the destination instance.
public let NSMigrationDestinationObjectKey = "destination"
/// The `$entityMapping` variable.
public let NSMigrationEntityMappingKey = "entityMapping"
/// The `$propertyMapping` variable.
public let NSMigrationPropertyMappingKey = "propertyMapping"
/// The `$entityPolicy` variable.
public let NSMigrationEntityPolicyKey = "entityPolicy"

/// Customizes how the instances of one entity mapping migrate.
///
/// ```swift
/// final class SplitNamePolicy: NSEntityMigrationPolicy {
///     override func createDestinationInstances(
///         forSource source: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
///     ) throws {
///         try super.createDestinationInstances(forSource: source, in: mapping, manager: manager)
///         guard let destination = manager.destinationInstances(
///             forEntityMappingName: mapping.name, sourceInstances: [source]).first else { return }
///         let parts = (source.value(forKey: "name") as? String ?? "").split(separator: " ", maxSplits: 1)
///         destination.setValue(parts.first.map(String.init), forKey: "firstName")
///     }
/// }
/// ```
open class NSEntityMigrationPolicy: NSObject {
    /// A policy (the migration manager makes one per entity mapping).
    public required override init() {
        super.init()
    }

    /// Called before the mapping's first phase.
    open func begin(_ mapping: NSEntityMapping, with manager: NSMigrationManager) throws {}

    /// Creates the destination instance of `sInstance`: a new object of the destination
    /// entity whose attributes take the values of the mapping's attribute mappings (a nil
    /// for a mandatory attribute with a default keeps the default), and associates the two.
    ///
    /// - Throws: `NSEntityMigrationPolicyError` (134170) when a value expression fails.
    open func createDestinationInstances(
        forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
    ) throws {
        guard let entityName = mapping.destinationEntityName, let context = manager.destinationContext else { return }
        let destination = NSEntityDescription.insertNewObject(forEntityName: entityName, into: context)
        for propertyMapping in mapping.attributeMappings ?? [] {
            guard let name = propertyMapping.name, let expression = propertyMapping.valueExpression else { continue }
            let value = try manager.evaluate(
                expression, source: sInstance, destination: destination, mapping: mapping,
                propertyMapping: propertyMapping, policy: self)
            // A nil for a mandatory attribute keeps its default, as lightweight migration does.
            if value == nil, let attribute = destination.entity.attributesByName[name], !attribute.isOptional,
                attribute.defaultValue != nil
            {
                continue
            }
            try manager.assign(value, to: name, of: destination, mapping: mapping)
        }
        manager.associate(sourceInstance: sInstance, withDestinationInstance: destination, for: mapping)
    }

    /// Called after the mapping created all its destination instances.
    open func endInstanceCreation(forMapping mapping: NSEntityMapping, manager: NSMigrationManager) throws {}

    /// Sets the relationships of `dInstance` from the mapping's relationship mappings,
    /// evaluated with `$source` the instance it was created from.
    ///
    /// - Throws: `NSEntityMigrationPolicyError` (134170) when a value expression fails.
    open func createRelationships(
        forDestination dInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
    ) throws {
        guard let name = mapping.name,
            let source = manager.sourceInstances(forEntityMappingName: name, destinationInstances: [dInstance]).first
        else { return }
        for propertyMapping in mapping.relationshipMappings ?? [] {
            guard let key = propertyMapping.name, let expression = propertyMapping.valueExpression else { continue }
            let value = try manager.evaluate(
                expression, source: source, destination: dInstance, mapping: mapping,
                propertyMapping: propertyMapping, policy: self)
            try manager.assign(value, to: key, of: dInstance, mapping: mapping)
        }
    }

    /// Called after the mapping created all its relationships.
    open func endRelationshipCreation(forMapping mapping: NSEntityMapping, manager: NSMigrationManager) throws {}

    /// Validates the mapping's destination instances your way (the manager validates them
    /// as any save does afterwards).
    open func performCustomValidation(forMapping mapping: NSEntityMapping, manager: NSMigrationManager) throws {}

    /// Called after the mapping's last phase.
    open func end(_ mapping: NSEntityMapping, manager: NSMigrationManager) throws {}
}
