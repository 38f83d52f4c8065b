// The writer's to-many steps (SPEC.md §3.2 R1): join entries change by difference, so a
// big to-many is never rewritten whole when one destination changes; an ordered one
// keeps the order keys of the entries that stay in order and gives the others keys
// between their neighbours.
import Foundation
import StorageEngine

extension PageFileWriter {
    /// Makes the join entries of `relationship` of the row with primary key `source` list
    /// `destinations`, writing only the difference from the stored entries (`isNew`: there
    /// are none). A to-many kept through its inverse's reference index has no entries.
    ///
    /// - Returns: The destinations added and removed (none for a to-many kept through its inverse).
    @discardableResult
    func setToMany(
        _ relationship: NSRelationshipDescription, of source: Int64, to destinations: [NSManagedObjectID], isNew: Bool
    ) throws -> (added: [NSManagedObjectID], removed: [NSManagedObjectID]) {
        guard case .join(let treeName, let ordered) = PageFileToMany.storage(of: relationship) else { return ([], []) }
        let declared = relationship.destinationEntity
        let stored =
            isNew
            ? []
            : try reader.joinEntries(treeName, ordered: ordered, relationship: relationship, source: source)
        if stored.isEmpty && destinations.isEmpty { return ([], []) }
        let tree = try transaction.openTree(named: treeName)
        guard ordered else {
            let wanted = Set(destinations)
            let have = Set(stored.map(\.destination))
            var removed: [NSManagedObjectID] = []
            for entry in stored where !wanted.contains(entry.destination) {
                _ = try tree.removeValue(forKey: entry.key)
                removed.append(entry.destination)
            }
            var seen: Set<NSManagedObjectID> = []
            let added = destinations.filter { !have.contains($0) && seen.insert($0).inserted }
            for destination in added.sorted(by: { $0.key < $1.key }) {
                try tree.setValue(
                    PageFileToMany.joinValue(destination, declared: declared),
                    forKey: PageFileToMany.joinKey(source: source, order: nil, destination: destination.key))
            }
            return (added, removed)
        }
        // Ordered: keep the longest run of stored entries already in the wanted order; give
        // the others order keys between their kept neighbours.
        var unique: [NSManagedObjectID] = []
        var seen: Set<NSManagedObjectID> = []
        for destination in destinations where seen.insert(destination).inserted { unique.append(destination) }
        let storedByID = Dictionary(stored.map { ($0.destination, $0) }, uniquingKeysWith: { first, _ in first })
        let kept = PageFileToMany.longestIncreasingRun(unique.map { storedByID[$0]?.order })
        var orders: [UInt64?] = unique.indices.map { kept.contains($0) ? storedByID[unique[$0]]?.order : nil }
        if !PageFileToMany.fillOrders(&orders) {
            // No room between two kept neighbours: renumber the whole list.
            orders = unique.indices.map { UInt64($0 + 1) * PageFileToMany.orderGap }
        }
        var keptKeys: Set<[UInt8]> = []
        var writes: [([UInt8], [UInt8])] = []
        for (position, destination) in unique.enumerated() {
            let key = PageFileToMany.joinKey(source: source, order: orders[position], destination: destination.key)
            if storedByID[destination]?.key == key {
                keptKeys.insert(key)
            } else {
                writes.append((key, PageFileToMany.joinValue(destination, declared: declared)))
            }
        }
        for entry in stored where !keptKeys.contains(entry.key) { _ = try tree.removeValue(forKey: entry.key) }
        for (key, value) in writes { try tree.setValue(value, forKey: key) }
        return (
            unique.filter { storedByID[$0] == nil },
            stored.map(\.destination).filter { !seen.contains($0) }
        )
    }

    /// Removes every join entry of `source` in the join trees of `entity`'s to-many
    /// relationships; with `reporting`, returns the links removed.
    @discardableResult
    func removeJoins(of source: NSManagedObjectID, reporting: Bool = false) throws -> [StoreLinkChange] {
        var removed: [StoreLinkChange] = []
        for relationship in source.entity.layout.relationshipBySlot.compactMap({ $0 }) {
            guard case .join(let treeName, let ordered) = PageFileToMany.storage(of: relationship),
                let tree = try transaction.tree(named: treeName)
            else { continue }
            if reporting, relationship.inverseRelationship != nil {
                for entry in try reader.joinEntries(
                    treeName, ordered: ordered, relationship: relationship, source: source.key)
                {
                    removed.append(
                        StoreLinkChange(
                            source: source, relationship: relationship, destination: entry.destination, isAdded: false))
                }
            }
            let prefix = PageFileToMany.joinPrefix(source: source.key)
            let keys = try tree.entries(from: prefix, to: PageFileKey.successor(ofPrefix: prefix)).map(\.key)
            for key in keys { _ = try tree.removeValue(forKey: key) }
        }
        return removed
    }

    /// Points join entries at the rows that absorbed upserted objects.
    func rewriteJoinDestinations(_ replaced: [NSManagedObjectID: NSManagedObjectID]) throws {
        let byKey = Dictionary(replaced.map { ($0.key.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        var done: Set<String> = []
        for entity in catalog.entities {
            for relationship in entity.relationshipsByName.values {
                guard case .join(let treeName, let ordered) = PageFileToMany.storage(of: relationship),
                    done.insert(treeName).inserted, let tree = try transaction.tree(named: treeName)
                else { continue }
                var changes: [(old: [UInt8], new: [UInt8], value: [UInt8], source: Int64, target: Int64)] = []
                try tree.scan { key, _ in
                    guard let parts = PageFileToMany.parseJoinKey(key, ordered: ordered),
                        let target = byKey[parts.destination]
                    else { return true }
                    changes.append(
                        (
                            Array(key),
                            PageFileToMany.joinKey(source: parts.source, order: parts.order, destination: target.key),
                            PageFileToMany.joinValue(target, declared: relationship.destinationEntity),
                            parts.source, target.key
                        ))
                    return true
                }
                for change in changes {
                    _ = try tree.removeValue(forKey: change.old)
                    // An ordered list already naming the absorbing row keeps its own entry.
                    if ordered,
                        try reader.joinEntries(
                            treeName, ordered: true, relationship: relationship, source: change.source
                        )
                        .contains(where: { $0.destination.key == change.target })
                    {
                        continue
                    }
                    try tree.setValue(change.value, forKey: change.new)
                }
            }
        }
    }

    /// Rewrites join tree `treeName` between the ordered and unordered key forms, keeping the
    /// destinations' order.
    func rewriteJoinTree(_ treeName: String, from wasOrdered: Bool, to ordered: Bool) throws {
        guard let tree = try transaction.tree(named: treeName) else { return }
        var entries: [(source: Int64, destination: Int64, value: [UInt8])] = []
        try tree.scan { key, value in
            guard let parts = PageFileToMany.parseJoinKey(key, ordered: wasOrdered) else {
                throw CoreDataError.make(NSFileReadCorruptFileError, "an entry of \(treeName) is damaged")
            }
            entries.append((parts.source, parts.destination, Array(value)))
            return true
        }
        _ = try transaction.deleteTree(named: treeName)
        let rewritten = try transaction.openTree(named: treeName)
        var position: (source: Int64, index: UInt64)?
        for entry in entries {
            let index = position?.source == entry.source ? (position?.index ?? 0) + 1 : 1
            position = (entry.source, index)
            let order = ordered ? index * PageFileToMany.orderGap : nil
            try rewritten.setValue(
                entry.value,
                forKey: PageFileToMany.joinKey(source: entry.source, order: order, destination: entry.destination))
        }
    }
}
