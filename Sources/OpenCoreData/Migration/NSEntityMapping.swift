// The parts of a mapping model: how the instances of one source entity become instances
// of one destination entity, and how each destination property gets its value.
import Foundation

/// The kind of an entity mapping.
public enum NSEntityMappingType: UInt, Sendable {
    /// Not set.
    case undefinedEntityMappingType
    /// Only the entity migration policy creates instances.
    case customEntityMappingType
    /// A new destination entity: nothing to migrate.
    case addEntityMappingType
    /// A removed source entity: its instances are dropped.
    case removeEntityMappingType
    /// The destination entity is the source entity unchanged.
    case copyEntityMappingType
    /// Instances are copied and changed by the property mappings.
    case transformEntityMappingType
}

/// How one destination property gets its value: `valueExpression`, evaluated with the
/// variables `$source` (the source instance), `$manager` (the migration manager),
/// `$entityMapping`, `$propertyMapping` and `$destination`.
///
/// ```swift
/// let mapping = NSPropertyMapping()
/// mapping.name = "startDate"
/// mapping.valueExpression = NSExpression(format: "$source.hireDate")
/// ```
open class NSPropertyMapping: NSObject, @unchecked Sendable {
    /// The destination property's name.
    open var name: String?
    /// The value's expression; nil leaves the destination's default.
    open var valueExpression: NSExpression?
    /// Your own information.
    open var userInfo: [AnyHashable: Any]?

    /// An empty property mapping.
    public override init() {
        super.init()
    }

    /// A mapping of `name` to `valueExpression`.
    convenience init(name: String, valueExpression: NSExpression?) {
        self.init()
        self.name = name
        self.valueExpression = valueExpression
    }
}

/// How the instances of a source entity become instances of a destination entity.
///
/// A mapping model holds one per entity pair. Set `entityMigrationPolicyClassName` to the
/// name of an ``NSEntityMigrationPolicy`` subclass (`NSStringFromClass(MyPolicy.self)`)
/// to take part in the migration.
open class NSEntityMapping: NSObject, @unchecked Sendable {
    /// The mapping's name, unique in its mapping model (`"EmployeeToEmployee"`).
    open var name: String!
    /// The kind of mapping.
    open var mappingType: NSEntityMappingType = .undefinedEntityMappingType
    /// The source entity's name.
    open var sourceEntityName: String?
    /// The source entity's version hash.
    open var sourceEntityVersionHash: Data?
    /// The destination entity's name.
    open var destinationEntityName: String?
    /// The destination entity's version hash.
    open var destinationEntityVersionHash: Data?
    /// The mappings of the destination entity's attributes.
    open var attributeMappings: [NSPropertyMapping]?
    /// The mappings of the destination entity's relationships.
    open var relationshipMappings: [NSPropertyMapping]?
    /// The source instances to migrate. Core Data's form,
    /// `FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Entity", "TRUEPREDICATE"), $manager.sourceContext, NO)`,
    /// is recognized by its predicate string; nil migrates every instance of the source
    /// entity (its sub-entities have mappings of their own).
    open var sourceExpression: NSExpression?
    /// Your own information.
    open var userInfo: [AnyHashable: Any]?
    /// The name of the ``NSEntityMigrationPolicy`` subclass to use; nil uses the base class.
    open var entityMigrationPolicyClassName: String?

    /// An empty entity mapping.
    public override init() {
        super.init()
    }
}
