// Which derived attributes a model has and whether the stores can compute them.
//
// The stores compute a derived attribute at save time (DerivedAttributeComputation.swift)
// from its derivationExpression, evaluated against the rows as the save leaves them.
// Supported, as Core Data documents them:
//   attribute                      a copy of another attribute of the entity
//   relationship.attribute         a copy of a to-one's attribute
//   relationship.@count            the number of a to-many's destinations
//   relationship.@sum.attribute    (@avg, @min, @max) an aggregate over a to-many
//   sum:(relationship.attribute)   (count:, min:, max:, average:) the same as functions
//   lowercase:(...), uppercase:(...), canonical:(...)   string transformations
//   now()                          the time of the save
// and constants, nested as the functions allow. A relationship a value is derived through
// must have an inverse: it is how a save of a destination finds the objects whose values
// depend on it. Anything else is refused when a store is added (134020) with a message
// naming the attribute and the part of the expression that is not supported.
import Foundation

/// A derived attribute of an entity: its slot and its expression.
struct DerivedSlot {
    let slot: Int
    let attribute: NSDerivedAttributeDescription
    let expression: NSExpression
}

/// The derived attributes of a model, by entity, and the relationships they read through.
final class DerivedAttributePlan: @unchecked Sendable {
    /// For each entity (by identity) with derived attributes, its derived slots.
    let slotsByEntity: [ObjectIdentifier: [DerivedSlot]]
    /// Relationships some derived attribute reads through, with the entity that owns the
    /// attribute: a change of a destination recomputes the objects its inverse names.
    let dependencies: [(owner: NSEntityDescription, relationship: NSRelationshipDescription)]

    var isEmpty: Bool { slotsByEntity.isEmpty }

    /// Whether `operation` may change a derived value: its entity (or a sub-entity) has
    /// derived attributes or is read by one through a relationship. Every batch delete
    /// is, as its cascades and nullified inverses may reach any entity.
    func isAffected(by operation: StoreBatchOperation) -> Bool {
        let entity: NSEntityDescription
        switch operation {
        case .insert(let insert): entity = insert.entity
        case .update(let update): entity = update.entity
        case .delete: return !isEmpty
        }
        return entity.hierarchy(includingSubentities: true).contains { candidate in
            slotsByEntity[ObjectIdentifier(candidate)] != nil
                || dependencies.contains { dependency in
                    dependency.relationship.destinationEntity.map { candidate.isKindOf(entity: $0) } ?? false
                }
        }
    }

    /// The functions a derivation expression may call.
    static let functions: Set<String> = [
        "lowercase:", "uppercase:", "canonical:", "now", "sum:", "count:", "min:", "max:", "average:", "length:",
        "add:to:", "from:subtract:", "multiply:by:", "divide:by:", "abs:",
    ]
    static let aggregateOperators: Set<String> = ["@count", "@sum", "@avg", "@min", "@max"]

    /// The plan of `model`.
    ///
    /// - Throws: `NSPersistentStoreIncompatibleSchemaError` (134020) naming a derived
    ///   attribute the stores cannot compute.
    init(model: NSManagedObjectModel, storeType: String) throws {
        var slotsByEntity: [ObjectIdentifier: [DerivedSlot]] = [:]
        var dependencies: [(NSEntityDescription, NSRelationshipDescription)] = []
        for entity in model.entities {
            let layout = entity.layout
            for (slot, property) in layout.properties.enumerated() {
                guard let derived = property as? NSDerivedAttributeDescription else { continue }
                func refuse(_ problem: String) -> NSError {
                    CoreDataError.make(
                        NSPersistentStoreIncompatibleSchemaError,
                        "cannot add a store of type \(storeType): the derived attribute "
                            + "\(entity.name ?? "entity").\(derived.name) \(problem)",
                        userInfo: [NSStoreTypeKey: storeType])
                }
                guard let expression = derived.derivationExpression else { throw refuse("has no derivationExpression") }
                if derived.isTransient { throw refuse("is transient: derived values are stored") }
                if derived.attributeType == .undefinedAttributeType || derived.attributeType == .compositeAttributeType
                    || derived.attributeType == .transformableAttributeType
                {
                    throw refuse("has a type a derived value cannot have")
                }
                var relationships: [NSRelationshipDescription] = []
                if let problem = Self.problem(in: expression, entity: entity, relationships: &relationships) {
                    throw refuse("has the expression '\(expression)', which the stores cannot compute: \(problem)")
                }
                slotsByEntity[ObjectIdentifier(entity), default: []].append(
                    DerivedSlot(slot: slot, attribute: derived, expression: expression))
                for relationship in relationships
                where !dependencies.contains(where: { $0.0 === entity && $0.1 === relationship }) {
                    dependencies.append((entity, relationship))
                }
            }
        }
        self.slotsByEntity = slotsByEntity
        self.dependencies = dependencies
    }

    /// Why `expression` cannot be computed on `entity`, or nil; collects the relationships it reads through.
    private static func problem(
        in expression: NSExpression, entity: NSEntityDescription, relationships: inout [NSRelationshipDescription],
        insideAggregate: Bool = false
    ) -> String? {
        switch expression.node {
        case .constant: return nil
        case .keyPath(let path):
            return keyPathProblem(path, entity: entity, relationships: &relationships, insideAggregate: insideAggregate)
        case .member(let base, let key):
            guard case .keyPath(let path) = base.node else { return "'\(expression)' is not a key path" }
            return keyPathProblem(
                path + "." + key, entity: entity, relationships: &relationships, insideAggregate: insideAggregate)
        case .function(let name, let arguments):
            guard functions.contains(name) else { return "the function \(name) is not supported" }
            let aggregate = ["sum:", "count:", "min:", "max:", "average:"].contains(name)
            for argument in arguments {
                if let problem = problem(
                    in: argument, entity: entity, relationships: &relationships, insideAggregate: aggregate)
                {
                    return problem
                }
            }
            return nil
        default:
            return "'\(expression)' is not a key path, a supported function or a constant"
        }
    }

    private static func keyPathProblem(
        _ path: String, entity: NSEntityDescription, relationships: inout [NSRelationshipDescription],
        insideAggregate: Bool
    ) -> String? {
        let keys = path.split(separator: ".").map(String.init)
        guard let first = keys.first, let property = entity.layout.propertiesByName[first] else {
            return "\(entity.name ?? "entity") has no property '\(keys.first ?? path)'"
        }
        if property is NSAttributeDescription {
            return keys.count == 1 ? nil : "'\(path)' goes past the attribute '\(first)'"
        }
        guard let relationship = property as? NSRelationshipDescription,
            let destination = relationship.destinationEntity
        else { return "'\(first)' is neither an attribute nor a relationship" }
        guard relationship.inverseRelationship != nil else {
            return "the relationship '\(first)' has no inverse, so changes of its destinations cannot be followed"
        }
        relationships.append(relationship)
        var rest = Array(keys.dropFirst())
        if relationship.isToMany {
            if let op = rest.first, aggregateOperators.contains(op) {
                rest.removeFirst()
                if op == "@count" { return rest.isEmpty ? nil : "nothing may follow @count" }
            } else if !insideAggregate {
                return "the to-many '\(first)' must be aggregated (@count, @sum, @avg, @min, @max or a function)"
            }
        } else if rest.isEmpty {
            return "'\(path)' names a to-one relationship, not a value"
        }
        guard rest.count == 1, let attribute = destination.layout.propertiesByName[rest[0]] as? NSAttributeDescription
        else { return "'\(path)' must end in an attribute of \(destination.name ?? "the destination")" }
        if attribute is NSDerivedAttributeDescription {
            return "'\(path)' reads another derived attribute, which the stores compute in no set order"
        }
        return nil
    }
}
