// Both sides of every relationship, checked through the store protocol alone: what the
// default store's verify() checks of its joins and to-ones, for any store type (the
// in-memory and binary stores keep to-manys as lists in their rows). For tests, the
// fuzzer and soak runs after every round.
import Foundation
import OpenCoreData

/// Checks the relationships of a store's rows: every destination a row names through a
/// relationship with an inverse exists, and names the row back through that inverse.
public enum RelationshipAudit {
    /// The problems in `store`'s rows of `model`'s entities, one sentence each (at most
    /// `limit`); empty when both sides of every relationship agree.
    ///
    /// Call it where nothing else uses the store (between rounds): it reads every row.
    ///
    /// - Throws: The store's read errors.
    /// - Complexity: O(rows + links), every row in memory at once.
    public static func problems(in store: NSPersistentStore, model: NSManagedObjectModel, limit: Int = 20) throws
        -> [String]
    {
        var rows: [Int64: StoreRow] = [:]
        for entity in model.entities {
            let request = NSFetchRequest<NSFetchRequestResult>(entityName: entity.name ?? "")
            request.entity = entity
            request.includesSubentities = false
            for row in try store.fetchRows(request) { rows[row.objectID.storeKey ?? -1] = row }
        }
        var problems: [String] = []
        func note(_ problem: String) {
            if problems.count < limit { problems.append(problem) }
        }
        func destinations(_ row: StoreRow, _ relationship: NSRelationshipDescription) throws -> [NSManagedObjectID] {
            guard let slot = slot(of: relationship.name, in: row.objectID.entity), slot < row.values.count else {
                return []
            }
            switch row.values[slot] {
            case .objectID(let id): return [id]
            case .objectIDs(let ids): return ids
            case .unresolved: return try store.objectIDs(forRelationship: relationship, of: row.objectID)
            default: return []
            }
        }
        for row in rows.values.sorted(by: { ($0.objectID.storeKey ?? 0) < ($1.objectID.storeKey ?? 0) }) {
            let entity = row.objectID.entity
            for relationship in entity.relationshipsByName.values.sorted(by: { $0.name < $1.name }) {
                guard let inverse = relationship.inverseRelationship else { continue }
                let named = try destinations(row, relationship)
                if Set(named).count != named.count {
                    note("\(describe(row.objectID)).\(relationship.name) names a row twice")
                }
                for destination in named {
                    guard let other = rows[destination.storeKey ?? -1], other.objectID.entity == destination.entity
                    else {
                        note(
                            "\(describe(row.objectID)).\(relationship.name) names \(describe(destination)), which does not exist"
                        )
                        continue
                    }
                    if !(try destinations(other, inverse)).contains(row.objectID) {
                        note(
                            "\(describe(row.objectID)).\(relationship.name) names \(describe(destination)), whose "
                                + "\(inverse.name) does not name it back")
                    }
                }
            }
        }
        return problems
    }

    /// The slot of the property `name` of `entity`, as stores number them: the root
    /// entity's properties first, each name once (StoreRow's documentation).
    private static func slot(of name: String, in entity: NSEntityDescription) -> Int? {
        var lineage: [NSEntityDescription] = []
        var current: NSEntityDescription? = entity
        while let candidate = current {
            lineage.insert(candidate, at: 0)
            current = candidate.superentity
        }
        var seen: Set<String> = []
        for property in lineage.flatMap(\.properties) where seen.insert(property.name).inserted {
            if property.name == name { return seen.count - 1 }
        }
        return nil
    }

    private static func describe(_ id: NSManagedObjectID) -> String {
        "\(id.entity.name ?? "?") \(id.storeKey.map(String.init) ?? "?")"
    }
}
