// The second pass of reading model files: every reference by name (parent entity,
// composite definition, destination and inverse, indexed and constrained properties,
// fetch request entities, configuration members) is resolved, and the model is filled.
import Foundation

extension ModelFileReader {
    /// Resolves every reference and fills `model` (which must be new and editable).
    ///
    /// - Throws: ``ModelFileError`` at the position of the first reference that names
    ///   nothing, or of a parent-entity cycle.
    func finish(into model: NSManagedObjectModel) throws(ModelFileError) {
        try linkParents()
        for pending in composites {
            pending.attribute.elements = try compositeElements(pending.definition, at: pending.position, depth: 0)
        }
        try linkRelationships()
        try linkIndexesAndConstraints()
        for (request, entityName, position) in requests {
            guard let entity = entitiesByName[entityName] else {
                throw position.error(
                    "the fetch request names the entity '\(entityName)', which the model does not have")
            }
            request.entity = entity
        }
        var configurationEntities: [String: [NSEntityDescription]] = [:]
        for (name, members) in configurations {
            var list = configurationEntities[name] ?? []
            for (member, position) in members {
                guard let entity = entitiesByName[member] else {
                    throw position.error(
                        "configuration '\(name)' names the entity '\(member)', which the model does not have")
                }
                if !list.contains(where: { $0 === entity }) { list.append(entity) }
            }
            configurationEntities[name] = list
        }
        model.entities = entities
        model.versionIdentifiers = versionIdentifiers
        for (name, list) in configurationEntities { model.setEntities(list, forConfigurationName: name) }
        for (name, request) in templates { model.setFetchRequestTemplate(request, forName: name) }
    }

    private func linkParents() throws(ModelFileError) {
        var children: [ObjectIdentifier: [NSEntityDescription]] = [:]
        var order: [NSEntityDescription] = []
        for (entity, parentName, position) in parents {
            guard let parent = entitiesByName[parentName] else {
                throw position.error("parentEntity '\(parentName)' is not an entity of the model")
            }
            if children[ObjectIdentifier(parent)] == nil { order.append(parent) }
            children[ObjectIdentifier(parent), default: []].append(entity)
        }
        for parent in order { parent.subentities = children[ObjectIdentifier(parent)] ?? [] }
        for (entity, _, position) in parents {
            var ancestor = entity.superentity
            var steps = 0
            while let current = ancestor {
                steps += 1
                guard current !== entity, steps <= entities.count else {
                    throw position.error("parent entities form a cycle through '\(entity.name ?? "")'")
                }
                ancestor = current.superentity
            }
        }
    }

    /// Fresh element attributes for one use of the composite named `name`.
    private func compositeElements(_ name: String, at position: ModelFilePosition, depth: Int)
        throws(ModelFileError) -> [NSAttributeDescription]
    {
        guard let (definition, file) = compositeDefinitions[name] else {
            throw position.error("the composite attribute '\(name)' is not defined in the model")
        }
        guard depth < 8 else { throw position.error("composite attributes nest too deeply at '\(name)'") }
        var elements: [NSAttributeDescription] = []
        for child in definition.children {
            guard child.name == "attribute" else { throw child.unexpected(in: "composite", file: file) }
            let pendingBefore = composites.count
            let element = try readAttribute(child, file: file)
            if let nested = element as? NSCompositeAttributeDescription, composites.count > pendingBefore {
                let (_, nestedName, nestedPosition) = composites.removeLast()
                nested.elements = try compositeElements(nestedName, at: nestedPosition, depth: depth + 1)
            }
            elements.append(element)
        }
        return elements
    }

    private func linkRelationships() throws(ModelFileError) {
        for pending in relationships {
            guard let destination = entitiesByName[pending.destination] else {
                throw pending.position.error(
                    "destinationEntity '\(pending.destination)' is not an entity of the model")
            }
            pending.relationship.destinationEntity = destination
            guard let inverseName = pending.inverseName else { continue }
            let ownerName = pending.inverseEntity ?? pending.destination
            guard let owner = entitiesByName[ownerName] else {
                throw pending.position.error("inverseEntity '\(ownerName)' is not an entity of the model")
            }
            guard let inverse = property(named: inverseName, of: owner) as? NSRelationshipDescription else {
                throw pending.position.error(
                    "the inverse '\(inverseName)' is not a relationship of the entity '\(ownerName)'")
            }
            pending.relationship.inverseRelationship = inverse
        }
    }

    private func linkIndexesAndConstraints() throws(ModelFileError) {
        var indexesByEntity: [ObjectIdentifier: [NSFetchIndexDescription]] = [:]
        for pending in indexes {
            var elements: [NSFetchIndexElementDescription] = []
            for item in pending.elements {
                guard let property = indexedProperty(named: item.property, of: pending.entity) else {
                    throw item.position.error(
                        "the index '\(pending.index.name)' names '\(item.property)', which is not a property of "
                            + "'\(pending.entity.name ?? "")'")
                }
                let element = NSFetchIndexElementDescription(property: property, collationType: item.type)
                element.isAscending = item.ascending
                elements.append(element)
            }
            pending.index.elements = elements
            indexesByEntity[ObjectIdentifier(pending.entity), default: []].append(pending.index)
        }
        for entity in entities {
            if let list = indexesByEntity[ObjectIdentifier(entity)] { entity.indexes = list }
        }
        for (entity, groups, position) in constraints {
            for name in groups.joined() where indexedProperty(named: name, of: entity) == nil {
                throw position.error(
                    "the uniqueness constraint names '\(name)', which is not a property (or composite element) of "
                        + "'\(entity.name ?? "")'")
            }
            entity.uniquenessConstraints += groups as [[Any]]
        }
    }

    /// The property `name` of `entity` (or an ancestor), or the composite element it names
    /// by key path (`location.latitude`).
    private func indexedProperty(named name: String, of entity: NSEntityDescription) -> NSPropertyDescription? {
        let head = String(name.prefix { $0 != "." })
        guard let property = property(named: head, of: entity) else { return nil }
        return NSEntityDescription.property(atKeyPath: name, in: [head: property])
    }

    /// The property `name` of `entity` or of one of its ancestors.
    private func property(named name: String, of entity: NSEntityDescription) -> NSPropertyDescription? {
        var current: NSEntityDescription? = entity
        var steps = 0
        while let candidate = current, steps <= entities.count {
            if let property = candidate.properties.first(where: { $0.name == name }) { return property }
            current = candidate.superentity
            steps += 1
        }
        return nil
    }
}
