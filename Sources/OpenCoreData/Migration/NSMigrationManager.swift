// The classic migration: a source stack and a destination stack, and a mapping model run
// in Core Data's three phases — every entity mapping creates its destination instances,
// then every one creates their relationships, then every one validates — with an
// NSEntityMigrationPolicy taking part in each. The destination is a new store; the source
// store is opened read-only and never changed. Objects live in two contexts for the whole
// migration, as in Core Data (a migration of millions of objects is the lightweight
// path's job, which streams).
import Foundation

/// Migrates a store of one model version into a new store of another with a mapping model.
///
/// ```swift
/// let manager = NSMigrationManager(sourceModel: v2, destinationModel: v3)
/// try manager.migrateStore(
///     from: storeURL, sourceType: NSSQLiteStoreType, options: nil, with: mapping,
///     toDestinationURL: newURL, destinationType: NSSQLiteStoreType, destinationOptions: nil)
/// ```
open class NSMigrationManager: NSObject, PredicateFunctionReceiver, @unchecked Sendable {
    /// The model of the source store.
    open private(set) var sourceModel: NSManagedObjectModel
    /// The model of the destination store.
    open private(set) var destinationModel: NSManagedObjectModel
    /// The mapping model of the migration running (or last run).
    open private(set) var mappingModel: NSMappingModel!
    /// The context of the source store's objects, during a migration.
    open private(set) var sourceContext: NSManagedObjectContext!
    /// The context of the destination store's objects, during a migration.
    open private(set) var destinationContext: NSManagedObjectContext!
    /// The entity mapping being migrated.
    open private(set) var currentEntityMapping: NSEntityMapping!
    /// How far the migration is, from 0 to 1.
    open private(set) var migrationProgress: Float = 0
    /// Your own information.
    open var userInfo: [AnyHashable: Any]?
    /// Whether a store type may supply its own manager (kept for Core Data's API; no store
    /// here does).
    open var usesStoreSpecificMigrationManager = true

    private var destinationsBySource: [String: [ObjectIdentifier: [NSManagedObject]]] = [:]
    private var sourcesByDestination: [String: [ObjectIdentifier: [NSManagedObject]]] = [:]
    /// Destination instances in creation order, by mapping name.
    private var created: [String: [NSManagedObject]] = [:]
    private var cancellation: Error?

    /// A manager migrating stores of `sourceModel` to `destinationModel`.
    public init(sourceModel: NSManagedObjectModel, destinationModel: NSManagedObjectModel) {
        self.sourceModel = sourceModel
        self.destinationModel = destinationModel
        super.init()
    }

    /// Forgets the associations and contexts of the last migration.
    open func reset() {
        destinationsBySource = [:]
        sourcesByDestination = [:]
        created = [:]
        sourceContext = nil
        destinationContext = nil
        currentEntityMapping = nil
        migrationProgress = 0
        cancellation = nil
    }

    /// Stops the migration running: it throws `error` at its next instance.
    open func cancelMigrationWithError(_ error: Error) {
        cancellation = error
    }

    // MARK: Migrating

    /// Migrates the store of `sourceType` at `sourceURL` into a new store of
    /// `destinationType` at `dURL` with `mappings` (nil: the inferred mapping model).
    ///
    /// The source store is opened read-only; the destination is created, filled and saved
    /// once at the end (a failure removes a destination store the migration created).
    ///
    /// - Throws: `NSMigrationManagerSourceStoreError` (134150) when the source store does not
    ///   open with the source model; `NSMigrationManagerDestinationStoreError` (134160)
    ///   when the destination store cannot be created; `NSEntityMigrationPolicyError`
    ///   (134170) when a value expression or a policy fails; `NSMigrationError` (134110)
    ///   wrapping a validation error of the migrated objects; the error given to
    ///   ``cancelMigrationWithError(_:)``.
    /// - Complexity: O(objects), all in memory.
    open func migrateStore(
        from sourceURL: URL, sourceType: String, options sOptions: [AnyHashable: Any]? = nil,
        with mappings: NSMappingModel?, toDestinationURL dURL: URL, destinationType dStoreType: String,
        destinationOptions dOptions: [AnyHashable: Any]? = nil
    ) throws {
        reset()
        OpenCoreDataDebugLog.log(
            1,
            "migrate \(sourceURL.path) (\(sourceType)) to \(dURL.path) (\(dStoreType)) with "
                + (mappings == nil ? "an inferred mapping model" : "a mapping model"))
        let mapping =
            try mappings
            ?? NSMappingModel.inferredMappingModel(forSourceModel: sourceModel, destinationModel: destinationModel)
        mappingModel = mapping
        var sourceOptions = sOptions ?? [:]
        sourceOptions[NSReadOnlyPersistentStoreOption] = true
        sourceOptions[NSMigratePersistentStoresAutomaticallyOption] = false
        let sourceCoordinator = try Self.coordinator(
            sourceModel, opening: sourceURL, ofType: sourceType, options: sourceOptions,
            failure: NSMigrationManagerSourceStoreError,
            "cannot open the source store \(sourceURL.path) with the source model: ")
        defer { for store in sourceCoordinator.persistentStores { try? sourceCoordinator.remove(store) } }
        let destinationExisted = FileManager.default.fileExists(atPath: dURL.path)
        let destinationCoordinator = try Self.coordinator(
            destinationModel, opening: dURL, ofType: dStoreType, options: dOptions,
            failure: NSMigrationManagerDestinationStoreError, "cannot create the destination store \(dURL.path): ")
        do {
            sourceContext = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            sourceContext.persistentStoreCoordinator = sourceCoordinator
            destinationContext = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            destinationContext.persistentStoreCoordinator = destinationCoordinator
            try run(mapping)
            for store in destinationCoordinator.persistentStores { try destinationCoordinator.remove(store) }
        } catch {
            for store in destinationCoordinator.persistentStores { try? destinationCoordinator.remove(store) }
            if !destinationExisted {
                try? NSPersistentStoreCoordinator(managedObjectModel: destinationModel).destroyPersistentStore(
                    at: dURL, ofType: dStoreType, options: nil)
            }
            throw error
        }
    }

    /// A coordinator of `model` with the store at `url` added.
    ///
    /// - Throws: `failure` (a migration manager error code) explained by `explanation`
    ///   followed by the underlying error's description, which it carries under
    ///   `NSUnderlyingErrorKey`.
    private static func coordinator(
        _ model: NSManagedObjectModel, opening url: URL, ofType type: String, options: [AnyHashable: Any]?,
        failure: Int, _ explanation: String
    ) throws -> NSPersistentStoreCoordinator {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        do {
            try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: url, options: options)
        } catch {
            throw CoreDataError.make(
                failure, explanation + (error as NSError).localizedDescription,
                userInfo: [NSUnderlyingErrorKey: error])
        }
        return coordinator
    }

    /// The three phases over every entity mapping, then the destination's save.
    private func run(_ mapping: NSMappingModel) throws {
        let mappings = (mapping.entityMappings ?? []).filter {
            $0.mappingType != .removeEntityMappingType && $0.mappingType != .addEntityMappingType
        }
        var policies: [ObjectIdentifier: NSEntityMigrationPolicy] = [:]
        var sources: [ObjectIdentifier: [NSManagedObject]] = [:]
        for entityMapping in mappings {
            policies[ObjectIdentifier(entityMapping)] = try policy(for: entityMapping)
            sources[ObjectIdentifier(entityMapping)] = try sourceInstances(of: entityMapping)
        }
        let total = Float(max(1, sources.values.reduce(0) { $0 + $1.count } * 2 + mappings.count))
        var done: Float = 0
        func step() throws {
            if let cancellation { throw cancellation }
            done += 1
            migrationProgress = min(1, done / total)
        }
        for entityMapping in mappings {
            guard let policy = policies[ObjectIdentifier(entityMapping)] else { continue }
            currentEntityMapping = entityMapping
            try policyStep(entityMapping) { try policy.begin(entityMapping, with: self) }
            for source in sources[ObjectIdentifier(entityMapping)] ?? [] {
                try step()
                try policyStep(entityMapping) {
                    try policy.createDestinationInstances(forSource: source, in: entityMapping, manager: self)
                }
            }
            try policyStep(entityMapping) { try policy.endInstanceCreation(forMapping: entityMapping, manager: self) }
        }
        for entityMapping in mappings {
            guard let policy = policies[ObjectIdentifier(entityMapping)], let name = entityMapping.name else {
                continue
            }
            currentEntityMapping = entityMapping
            for destination in created[name] ?? [] {
                try step()
                try policyStep(entityMapping) {
                    try policy.createRelationships(forDestination: destination, in: entityMapping, manager: self)
                }
            }
            try policyStep(entityMapping) {
                try policy.endRelationshipCreation(forMapping: entityMapping, manager: self)
            }
        }
        for entityMapping in mappings {
            guard let policy = policies[ObjectIdentifier(entityMapping)] else { continue }
            currentEntityMapping = entityMapping
            try step()
            try policyStep(entityMapping) {
                try policy.performCustomValidation(forMapping: entityMapping, manager: self)
            }
        }
        do {
            try destinationContext.save()
        } catch {
            throw CoreDataError.make(
                NSMigrationError,
                "the migrated objects do not validate: " + (error as NSError).localizedDescription,
                userInfo: [NSUnderlyingErrorKey: error])
        }
        for entityMapping in mappings {
            guard let policy = policies[ObjectIdentifier(entityMapping)] else { continue }
            currentEntityMapping = entityMapping
            try policyStep(entityMapping) { try policy.end(entityMapping, manager: self) }
        }
        migrationProgress = 1
    }

    /// Runs one policy hook; an error that is not already a Cocoa error becomes 134170.
    private func policyStep(_ mapping: NSEntityMapping, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as NSError where error.domain == NSCocoaErrorDomain {
            throw error
        } catch {
            throw CoreDataError.make(
                NSEntityMigrationPolicyError,
                "the migration policy of \(mapping.name ?? "?") failed: \(error)",
                userInfo: [NSUnderlyingErrorKey: error])
        }
    }

    private func policy(for mapping: NSEntityMapping) throws -> NSEntityMigrationPolicy {
        guard let name = mapping.entityMigrationPolicyClassName, !name.isEmpty,
            name != "NSEntityMigrationPolicy"
        else { return NSEntityMigrationPolicy() }
        guard let type = NSClassFromString(name) as? NSEntityMigrationPolicy.Type else {
            throw CoreDataError.make(
                NSEntityMigrationPolicyError,
                "entity mapping \(mapping.name ?? "?") names the migration policy class '\(name)', which is not a "
                    + "subclass of NSEntityMigrationPolicy in this process (name it with NSStringFromClass)")
        }
        return type.init()
    }

    /// The source instances `mapping` migrates: every instance of its source entity (not
    /// of sub-entities), or those its source expression's predicate string selects.
    private func sourceInstances(of mapping: NSEntityMapping) throws -> [NSManagedObject] {
        guard let entityName = mapping.sourceEntityName else { return [] }
        guard sourceModel.entitiesByName[entityName] != nil else {
            throw CoreDataError.make(
                NSMigrationError,
                "entity mapping \(mapping.name ?? "?") names a source entity '\(entityName)' that "
                    + "the source model does not have")
        }
        let request = NSFetchRequest<NSManagedObject>(entityName: entityName)
        request.includesSubentities = false
        if let expression = mapping.sourceExpression,
            expression.function == "fetchRequestForSourceEntityNamed:predicateString:",
            let arguments = expression.arguments, arguments.count == 2,
            let text = arguments[1].constantValue as? String, text != "TRUEPREDICATE"
        {
            request.predicate = try NSPredicate(validatingFormat: text, argumentArray: nil)
        }
        return try sourceContext.fetch(request)
    }

    // MARK: Entities and associations

    /// The source entity of `mEntity`.
    open func sourceEntity(for mEntity: NSEntityMapping) -> NSEntityDescription? {
        mEntity.sourceEntityName.flatMap { sourceModel.entitiesByName[$0] }
    }

    /// The destination entity of `mEntity`.
    open func destinationEntity(for mEntity: NSEntityMapping) -> NSEntityDescription? {
        mEntity.destinationEntityName.flatMap { destinationModel.entitiesByName[$0] }
    }

    /// Records that `destinationInstance` was made from `sourceInstance` by `entityMapping`.
    open func associate(
        sourceInstance: NSManagedObject, withDestinationInstance destinationInstance: NSManagedObject,
        for entityMapping: NSEntityMapping
    ) {
        let name = entityMapping.name ?? ""
        destinationsBySource[name, default: [:]][ObjectIdentifier(sourceInstance), default: []].append(
            destinationInstance)
        sourcesByDestination[name, default: [:]][ObjectIdentifier(destinationInstance), default: []].append(
            sourceInstance)
        created[name, default: []].append(destinationInstance)
    }

    /// The destination instances the mapping named `mappingName` made from `sourceInstances`
    /// (from every source instance it migrated when nil), in order.
    open func destinationInstances(forEntityMappingName mappingName: String, sourceInstances: [NSManagedObject]?)
        -> [NSManagedObject]
    {
        guard let sourceInstances else { return created[mappingName] ?? [] }
        let table = destinationsBySource[mappingName] ?? [:]
        return sourceInstances.flatMap { table[ObjectIdentifier($0)] ?? [] }
    }

    /// The source instances the mapping named `mappingName` made `destinationInstances`
    /// from (every one it migrated when nil).
    open func sourceInstances(forEntityMappingName mappingName: String, destinationInstances: [NSManagedObject]?)
        -> [NSManagedObject]
    {
        let table = sourcesByDestination[mappingName] ?? [:]
        guard let destinationInstances else {
            return (created[mappingName] ?? []).flatMap { table[ObjectIdentifier($0)] ?? [] }
        }
        return destinationInstances.flatMap { table[ObjectIdentifier($0)] ?? [] }
    }

    // MARK: Expressions

    /// The functions `$manager` answers in value expressions.
    public func predicateFunction(_ name: String, arguments: [Any?]) throws -> Any? {
        switch name {
        case "destinationInstancesForEntityMappingNamed:sourceInstances:":
            guard arguments.count == 2, let mappingName = arguments[0] as? String else {
                throw PredicateLanguageError.typeMismatch("\(name) takes a mapping name and source instances")
            }
            return destinationInstances(forEntityMappingName: mappingName, sourceInstances: objects(arguments[1]))
        case "destinationInstancesForSourceRelationshipNamed:sourceInstances:":
            guard arguments.count == 2 else {
                throw PredicateLanguageError.typeMismatch("\(name) takes a relationship name and source instances")
            }
            // Each instance's destinations from whichever mapping migrated it.
            return objects(arguments[1]).flatMap { source in
                destinationsBySource.values.compactMap { $0[ObjectIdentifier(source)] }.flatMap { $0 }
            }
        case "fetchRequestForSourceEntityNamed:predicateString:":
            guard arguments.count == 2, let entity = arguments[0] as? String, let text = arguments[1] as? String else {
                throw PredicateLanguageError.typeMismatch("\(name) takes an entity name and a predicate string")
            }
            let request = NSFetchRequest<NSManagedObject>(entityName: entity)
            request.predicate = try NSPredicate(validatingFormat: text, argumentArray: nil)
            return request
        default:
            throw PredicateLanguageError(.unsupported, "the migration manager has no function '\(name)'")
        }
    }

    /// The managed objects in `value` (one object, a set, an ordered set or an array).
    private func objects(_ value: Any?) -> [NSManagedObject] {
        switch value {
        case let object as NSManagedObject: return [object]
        case let set as Set<NSManagedObject>: return set.sorted { $0.objectID.key < $1.objectID.key }
        case let ordered as NSOrderedSet: return ordered.array.compactMap { $0 as? NSManagedObject }
        case let set as NSSet:
            return set.allObjects.compactMap { $0 as? NSManagedObject }.sorted { $0.objectID.key < $1.objectID.key }
        case let array as [Any]: return array.compactMap { $0 as? NSManagedObject }
        default: return []
        }
    }

    /// The value of a property mapping's expression for one instance.
    ///
    /// - Throws: `NSEntityMigrationPolicyError` (134170) naming the mapping and property.
    func evaluate(
        _ expression: NSExpression, source: NSManagedObject, destination: NSManagedObject?,
        mapping: NSEntityMapping, propertyMapping: NSPropertyMapping, policy: NSEntityMigrationPolicy
    ) throws -> Any? {
        var variables: [String: Any] = [
            NSMigrationManagerKey: self, NSMigrationSourceObjectKey: source, NSMigrationEntityMappingKey: mapping,
            NSMigrationPropertyMappingKey: propertyMapping, NSMigrationEntityPolicyKey: policy,
        ]
        variables[NSMigrationDestinationObjectKey] = destination
        do {
            return try expression.value(with: source, variables: variables)
        } catch {
            throw CoreDataError.make(
                NSEntityMigrationPolicyError,
                "the value expression \(expression) of \(mapping.name ?? "?").\(propertyMapping.name ?? "?") failed: "
                    + "\(error)", userInfo: [NSUnderlyingErrorKey: error])
        }
    }

    /// Sets `value` as `key` of `object`: a to-one takes the one object of a collection, a
    /// to-many any collection of objects.
    ///
    /// - Throws: `NSEntityMigrationPolicyError` (134170) for an unknown key or a value the
    ///   property cannot hold.
    func assign(_ value: Any?, to key: String, of object: NSManagedObject, mapping: NSEntityMapping) throws {
        var converted = value
        if let relationship = object.entity.relationshipsByName[key] {
            let found = objects(value)
            if relationship.isToMany {
                converted = relationship.isOrdered ? NSOrderedSet(array: found) as Any : Set(found) as Any
            } else {
                guard found.count <= 1 else {
                    throw CoreDataError.make(
                        NSEntityMigrationPolicyError,
                        "\(mapping.name ?? "?").\(key) maps to \(found.count) objects but is a to-one relationship")
                }
                converted = found.first
            }
        }
        do {
            try object.writeValue(converted, forKey: key)
        } catch {
            throw CoreDataError.make(
                NSEntityMigrationPolicyError, "cannot set \(mapping.name ?? "?").\(key): \(error)",
                userInfo: [NSUnderlyingErrorKey: error])
        }
    }
}
