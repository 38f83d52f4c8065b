// An entity: the description of one kind of managed object.
import Foundation

/// The description of one kind of managed object: its name, class, properties,
/// place in the entity inheritance tree, constraints and indexes.
///
/// ```swift
/// let person = NSEntityDescription()
/// person.name = "Person"
/// person.managedObjectClassName = NSStringFromClass(Person.self)
/// person.properties = [firstName, age]
/// ```
open class NSEntityDescription: NSObject, @unchecked Sendable {
    /// The entity's name, unique within its model.
    open var name: String? {
        willSet { assertEditable("name") }
    }
    /// The name of the class of its objects, as `NSStringFromClass` gives it
    /// (`"Module.Person"`); `"NSManagedObject"` for untyped objects.
    open var managedObjectClassName: String! = "NSManagedObject" {
        willSet { assertEditable("managedObjectClassName") }
    }
    /// Whether the entity has no objects of its own, only through sub-entities.
    open var isAbstract: Bool = false {
        willSet { assertEditable("isAbstract") }
    }
    /// The entity's own properties (not the inherited ones).
    open var properties: [NSPropertyDescription] = [] {
        willSet { assertEditable("properties") }
        didSet { for property in properties { property.entity = self } }
    }
    /// The entity's sub-entities; setting them makes this entity their superentity.
    open var subentities: [NSEntityDescription] = [] {
        willSet { assertEditable("subentities") }
        didSet { for entity in subentities { entity.superentity = self } }
    }
    /// The entity this one inherits properties from.
    open internal(set) var superentity: NSEntityDescription? {
        get { superentityHandle?.target }
        set { superentityHandle = newValue?.referenceHandle }
    }
    private var superentityHandle: WeakHandle<NSEntityDescription>?
    /// Groups of property names (strings) whose values must be unique among the entity's objects.
    open var uniquenessConstraints: [[Any]] = [] {
        willSet { assertEditable("uniquenessConstraints") }
    }
    /// The entity's indexes.
    open var indexes: [NSFetchIndexDescription] = [] {
        willSet { assertEditable("indexes") }
        didSet { for index in indexes { index.entity = self } }
    }
    /// The entity's name in the previous model version, for migration.
    open var renamingIdentifier: String? {
        willSet { assertEditable("renamingIdentifier") }
    }
    /// Extra text mixed into the version hash to force a new version.
    open var versionHashModifier: String? {
        willSet { assertEditable("versionHashModifier") }
    }
    /// Your own information about the entity.
    open var userInfo: [AnyHashable: Any]? {
        willSet { assertEditable("userInfo") }
    }
    /// The model this entity belongs to.
    open internal(set) var managedObjectModel: NSManagedObjectModel? {
        get { modelHandle?.target }
        set { modelHandle = newValue?.referenceHandle }
    }
    private var modelHandle: WeakHandle<NSManagedObjectModel>?
    /// What the entity's back references hold instead of `weak` (WeakHandle.swift).
    let referenceHandle = WeakHandle<NSEntityDescription>()

    /// Frozen layout; set once when the model freezes, read-only afterwards.
    private var frozenLayout: EntityLayout?

    /// Creates an unnamed entity.
    public override init() {
        super.init()
        referenceHandle.attach(self)
    }

    deinit {
        referenceHandle.clear()
    }

    // MARK: Properties, inherited ones included

    /// Every property, inherited ones first, by name.
    open var propertiesByName: [String: NSPropertyDescription] { layout.propertiesByName }

    /// Every attribute, inherited ones included, by name.
    open var attributesByName: [String: NSAttributeDescription] {
        var result: [String: NSAttributeDescription] = [:]
        for property in layout.properties {
            if let attribute = property as? NSAttributeDescription { result[attribute.name] = attribute }
        }
        return result
    }

    /// Every relationship, inherited ones included, by name.
    open var relationshipsByName: [String: NSRelationshipDescription] {
        var result: [String: NSRelationshipDescription] = [:]
        for property in layout.properties {
            if let relationship = property as? NSRelationshipDescription { result[relationship.name] = relationship }
        }
        return result
    }

    /// The sub-entities by name.
    open var subentitiesByName: [String: NSEntityDescription] {
        Dictionary(
            subentities.compactMap { entity in entity.name.map { ($0, entity) } }, uniquingKeysWith: { a, _ in a })
    }

    /// This entity, then, when `includingSubentities`, every entity below it, depth first:
    /// the entities whose objects a fetch of this entity (or a relationship to it) can meet.
    func hierarchy(includingSubentities: Bool) -> [NSEntityDescription] {
        guard includingSubentities else { return [self] }
        var result: [NSEntityDescription] = [self]
        var index = 0
        while index < result.count {
            result.append(contentsOf: result[index].subentities)
            index += 1
        }
        return result
    }

    /// The relationships of this entity whose destination is `entity`.
    open func relationships(forDestination entity: NSEntityDescription) -> [NSRelationshipDescription] {
        layout.relationships.filter { $0.destinationEntity === entity }
    }

    /// Whether this entity is `entity` or inherits from it.
    open func isKindOf(entity: NSEntityDescription) -> Bool {
        var current: NSEntityDescription? = self
        while let candidate = current {
            if candidate === entity { return true }
            current = candidate.superentity
        }
        return false
    }

    /// The entity's version hash: it changes when anything that affects storage
    /// changes, and only then.
    ///
    /// Computed from the inputs Core Data documents: the name, the superentity's version
    /// hash, `isAbstract`, the ``versionHashModifier`` and the version hashes of the
    /// entity's own properties (transient ones included). The class name, indexes,
    /// constraints and user info are not part of it. The exact bytes are in SPEC.md
    /// (§3.10).
    open var versionHash: Data {
        var components = [
            "entity", name ?? "", VersionHash.flag(isAbstract), superentity?.versionHash.base64EncodedString() ?? "",
            versionHashModifier ?? "",
        ]
        for property in properties.sorted(by: { $0.name < $1.name }) {
            components.append(property.versionHash.base64EncodedString())
        }
        return VersionHash.digest(components)
    }

    // MARK: Class methods

    /// The entity named `entityName` in the model of `context`'s coordinator, or nil.
    open class func entity(forEntityName entityName: String, in context: NSManagedObjectContext) -> NSEntityDescription?
    {
        context.persistentStoreCoordinator?.managedObjectModel.entitiesByName[entityName]
    }

    /// Inserts a new object of the entity named `entityName` into `context`.
    ///
    /// - Precondition: the model has an entity named `entityName` (Core Data raises
    ///   here). To check a name that comes from user input, look it up first with
    ///   ``entity(forEntityName:in:)``.
    open class func insertNewObject(forEntityName entityName: String, into context: NSManagedObjectContext)
        -> NSManagedObject
    {
        guard let entity = entity(forEntityName: entityName, in: context) else {
            preconditionFailure(
                "OpenCoreData: insertNewObject(forEntityName:into:): the model has no entity named '\(entityName)'")
        }
        let type = entity.layout.objectClass
        return type.init(entity: entity, insertInto: context)
    }

    // MARK: Layout

    /// The slot layout of this entity's objects. Computed once when the model
    /// freezes; before that, computed on each call (models being built are small).
    var layout: EntityLayout {
        if let frozenLayout { return frozenLayout }
        return EntityLayout(entity: self)
    }

    /// The frozen layout, or nil before the model freezes (no schema then: keys are read by name).
    var frozenLayoutIfAny: EntityLayout? { frozenLayout }

    func freezeLayout() {
        frozenLayout = EntityLayout(entity: self)
    }

    func assertEditable(_ what: String) {
        if let model = managedObjectModel, model.isFrozen {
            preconditionFailure(
                "OpenCoreData: cannot change '\(what)' of entity '\(name ?? "?")': its model is in use by a "
                    + "persistent store coordinator and is immutable")
        }
    }
}
