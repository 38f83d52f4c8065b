// A plain object graph: the reference the object layer's relationship maintenance
// is checked against. Nodes are integers; each relationship is a dictionary from a
// node to its destinations, and every edit updates both sides by the textbook rules.
import Foundation

/// A relationship shape the oracle models: the two sides' cardinalities.
public struct OracleRelationship: Sendable, Hashable {
    /// The relationship's name on the source side.
    public let name: String
    /// The inverse's name on the destination side.
    public let inverseName: String
    /// Whether the source side holds many destinations.
    public let isToMany: Bool
    /// Whether the destination side holds many sources.
    public let inverseIsToMany: Bool

    /// A relationship `name` with inverse `inverseName` and the given cardinalities.
    public init(name: String, inverseName: String, isToMany: Bool, inverseIsToMany: Bool) {
        self.name = name
        self.inverseName = inverseName
        self.isToMany = isToMany
        self.inverseIsToMany = inverseIsToMany
    }
}

/// A plain model of relationships between numbered nodes, maintaining inverses the
/// way Core Data specifies: setting one side updates the other, a to-one destination
/// that gains a new source loses its previous one.
public struct ObjectGraphOracle: Sendable {
    /// Destinations of each (relationship, node), forward side.
    public private(set) var forward: [String: [Int: Set<Int>]] = [:]
    /// Sources of each (relationship, node), inverse side.
    public private(set) var backward: [String: [Int: Set<Int>]] = [:]
    private let relationships: [String: OracleRelationship]

    /// An empty graph over `relationships`.
    public init(relationships: [OracleRelationship]) {
        self.relationships = Dictionary(uniqueKeysWithValues: relationships.map { ($0.name, $0) })
    }

    /// The destinations of `node` through `relationship`.
    public func destinations(_ relationship: String, of node: Int) -> Set<Int> {
        forward[relationship]?[node] ?? []
    }

    /// The sources pointing at `node` through `relationship` (its inverse's value).
    public func sources(_ relationship: String, of node: Int) -> Set<Int> {
        backward[relationship]?[node] ?? []
    }

    /// Links `source` to `destination`; for a to-one side, replaces the previous link.
    public mutating func link(_ relationship: String, _ source: Int, _ destination: Int) {
        guard let shape = relationships[relationship] else { return }
        if !shape.isToMany {
            for old in destinations(relationship, of: source) where old != destination {
                unlink(relationship, source, old)
            }
        }
        if !shape.inverseIsToMany {
            for old in sources(relationship, of: destination) where old != source {
                unlink(relationship, old, destination)
            }
        }
        forward[relationship, default: [:]][source, default: []].insert(destination)
        backward[relationship, default: [:]][destination, default: []].insert(source)
    }

    /// Removes the link from `source` to `destination`, if any.
    public mutating func unlink(_ relationship: String, _ source: Int, _ destination: Int) {
        forward[relationship]?[source]?.remove(destination)
        backward[relationship]?[destination]?.remove(source)
    }

    /// Replaces all destinations of `source` with `destinations`.
    public mutating func replace(_ relationship: String, _ source: Int, with destinations: Set<Int>) {
        for old in self.destinations(relationship, of: source) where !destinations.contains(old) {
            unlink(relationship, source, old)
        }
        for destination in destinations.sorted() { link(relationship, source, destination) }
    }
}
