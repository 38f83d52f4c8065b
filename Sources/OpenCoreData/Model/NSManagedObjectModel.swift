// The model: the entities a coordinator's stores hold.
import Foundation

/// A set of entities: the schema of a persistent store.
///
/// Build it in code or read it from an Xcode model file
/// (``init(contentsOf:)``), then hand it to a coordinator or container. Once a
/// coordinator uses it, it is immutable (a change stops the program with a message,
/// where Core Data raises) and safe to share between threads.
///
/// ```swift
/// let model = NSManagedObjectModel()
/// model.entities = [person, company]
/// let container = NSPersistentContainer(name: "App", managedObjectModel: model)
/// ```
open class NSManagedObjectModel: NSObject, @unchecked Sendable {
    private let freezeLock = NSLock()
    private var frozen = false
    private var classToEntity: [ObjectIdentifier: NSEntityDescription] = [:]
    private var frozenEntitiesByName: [String: NSEntityDescription]?
    /// What the entities' `managedObjectModel` holds instead of `weak` (WeakHandle.swift).
    let referenceHandle = WeakHandle<NSManagedObjectModel>()

    /// The model's entities, sub-entities included.
    open var entities: [NSEntityDescription] = [] {
        willSet { assertEditable() }
        didSet { for entity in entities { entity.managedObjectModel = self } }
    }
    /// Version identifiers of your choosing (informational); a model file's
    /// `userDefinedModelVersionIdentifier`.
    open var versionIdentifiers: Set<AnyHashable> = [] {
        willSet { assertEditable() }
    }
    /// The named configurations and their entities (ModelConfigurations.swift).
    var configurationEntities: [String: [NSEntityDescription]] = [:]
    /// The fetch request templates by name (ModelFetchRequestTemplates.swift).
    var fetchRequestTemplates: [String: NSFetchRequest<NSFetchRequestResult>] = [:]

    /// Creates an empty model.
    public override init() {
        super.init()
        referenceHandle.attach(self)
    }

    deinit {
        referenceHandle.clear()
    }

    /// The entities by name.
    open var entitiesByName: [String: NSEntityDescription] {
        if let frozenEntitiesByName { return frozenEntitiesByName }
        var result: [String: NSEntityDescription] = [:]
        for entity in entities { if let name = entity.name { result[name] = entity } }
        return result
    }

    /// Each entity's version hash by entity name: a store records these to detect model changes.
    open var entityVersionHashesByName: [String: Data] {
        var result: [String: Data] = [:]
        for entity in entities { if let name = entity.name { result[name] = entity.versionHash } }
        return result
    }

    /// A digest of every entity's version hash, as Base64 text: equal for two models
    /// whose stores are interchangeable, different otherwise. Staged migration names
    /// model versions by it.
    open var versionChecksum: String {
        VersionHash.checksum(of: entityVersionHashesByName)
    }

    /// Whether a store whose metadata is `metadata` holds data of this model.
    ///
    /// Compares the entity version hashes under `NSStoreModelVersionHashesKey` with the
    /// model's, for every entity: stores hold the rows of every entity, whatever their
    /// configuration. Hashes a store recorded before OpenCoreData followed Core Data's
    /// version-hash inputs are recognized too (SPEC.md §3.10, V5).
    open func isConfiguration(withName configuration: String?, compatibleWithStoreMetadata metadata: [String: Any])
        -> Bool
    {
        guard let hashes = metadata[NSStoreModelVersionHashesKey] as? [String: Data] else { return false }
        return hashes == entityVersionHashesByName || hashes == VersionHash.firstFormHashes(of: self)
    }

    // MARK: Freezing

    /// Whether a coordinator uses the model.
    var isFrozen: Bool {
        freezeLock.lock()
        defer { freezeLock.unlock() }
        return frozen
    }

    /// Makes the model immutable and computes every entity's layout; idempotent.
    func freeze() {
        freezeLock.lock()
        defer { freezeLock.unlock() }
        if frozen { return }
        var byName: [String: NSEntityDescription] = [:]
        var byClass: [ObjectIdentifier: NSEntityDescription] = [:]
        for entity in entities {
            entity.freezeLayout()
            if let name = entity.name { byName[name] = entity }
            let type = entity.layout.objectClass
            if type != NSManagedObject.self, byClass[ObjectIdentifier(type)] == nil {
                byClass[ObjectIdentifier(type)] = entity
            }
        }
        frozenEntitiesByName = byName
        classToEntity = byClass
        NSRelationshipDescription.noteDerivedDependencies(of: self)
        frozen = true
        ClassEntityRegistry.register(byClass)
    }

    /// The entity whose objects are of class `type`, found through `managedObjectClassName`.
    func entity(for type: NSManagedObject.Type) -> NSEntityDescription? {
        if isFrozen { return classToEntity[ObjectIdentifier(type)] }
        let name = NSStringFromClass(type)
        return entities.first { $0.managedObjectClassName == name }
    }

    func assertEditable() {
        if isFrozen {
            preconditionFailure(
                "OpenCoreData: cannot change a managed object model in use by a persistent store coordinator")
        }
    }
}

/// Which entity each managed object class has, across the frozen models of the process:
/// what `NSManagedObject.entity()` answers from (Core Data looks in its models too).
enum ClassEntityRegistry {
    private struct WeakEntity {
        let handle: WeakHandle<NSEntityDescription>
        var entity: NSEntityDescription? { handle.target }
    }

    private static let lock = NSLock()
    nonisolated(unsafe) private static var entities: [ObjectIdentifier: [WeakEntity]] = [:]

    static func register(_ byClass: [ObjectIdentifier: NSEntityDescription]) {
        lock.lock()
        defer { lock.unlock() }
        for (type, entity) in byClass {
            var list = entities[type, default: []].filter { $0.entity != nil }
            list.append(WeakEntity(handle: entity.referenceHandle))
            entities[type] = list
        }
    }

    /// The live entities whose class is `type`.
    static func entities(for type: AnyClass) -> [NSEntityDescription] {
        lock.lock()
        defer { lock.unlock() }
        return entities[ObjectIdentifier(type)]?.compactMap(\.entity) ?? []
    }
}
