// To-many relationships of the default store kept outside the rows (SPEC.md §3.2 R1):
// a big to-many is never rewritten whole when one destination changes.
//
//   unordered, inverse to-one   nothing stored: the inverse's reference index
//                               `rel.<Entity>.<to-one>` (destination key, source key)
//                               is range-scanned by the destination key
//   otherwise (many-to-many,    join tree `join.<Entity>.<relationship>` (declaring
//   no inverse, ordered)        entity) keyed source key, [order key], destination key;
//                               value: empty, or the destination's entity name when it
//                               is a sub-entity of the declared destination
//
// A many-to-many pair has one join tree per direction, so each side scans its own.
// Order keys are 8-byte big-endian gap numbers: a move rewrites only the moved entries.
import Foundation
import StorageEngine

/// Where the default store keeps one to-many relationship.
enum PageFileToMany {
    /// Derived from the inverse to-one's reference index.
    case inverse(NSRelationshipDescription)
    /// In a join tree, with order keys when ordered.
    case join(tree: String, ordered: Bool)

    /// The storage of `relationship`, or nil when it is to-one.
    static func storage(of relationship: NSRelationshipDescription) -> PageFileToMany? {
        guard relationship.isToMany else { return nil }
        if !relationship.isOrdered, let inverse = relationship.inverseRelationship, !inverse.isToMany {
            return .inverse(inverse)
        }
        let owner = relationship.entity?.name ?? "entity"
        return .join(tree: "join.\(owner).\(relationship.name)", ordered: relationship.isOrdered)
    }

    /// Whether `relationship` is a to-one whose inverse is kept through its reference index.
    static func needsReferenceIndex(_ relationship: NSRelationshipDescription) -> Bool {
        guard !relationship.isToMany, let inverse = relationship.inverseRelationship else { return false }
        return inverse.isToMany && !inverse.isOrdered
    }

    /// Gap between consecutive order keys written fresh.
    static let orderGap: UInt64 = 1 << 32

    // MARK: Join keys

    static func joinPrefix(source: Int64) -> [UInt8] { PageFileKey.primary(source) }

    static func joinKey(source: Int64, order: UInt64?, destination: Int64) -> [UInt8] {
        var bytes = PageFileKey.primary(source)
        if let order {
            for shift in stride(from: 56, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: order >> UInt64(shift)))
            }
        }
        bytes += PageFileKey.primary(destination)
        return bytes
    }

    /// The parts of a join key; nil when damaged.
    static func parseJoinKey(_ bytes: UnsafeRawBufferPointer, ordered: Bool)
        -> (source: Int64, order: UInt64?, destination: Int64)?
    {
        guard let header = bytes.first else { return nil }
        let count = header >= 0x80 ? Int(header - 0x80) : Int(0x7F - header)
        let sourceLength = count + 2
        guard count <= 8, bytes.count > sourceLength,
            let source = PageFileKey.rowKey(UnsafeRawBufferPointer(rebasing: bytes[0..<sourceLength]))
        else { return nil }
        var offset = sourceLength
        var order: UInt64?
        if ordered {
            guard bytes.count >= offset + 8 else { return nil }
            var value: UInt64 = 0
            for byte in bytes[offset..<(offset + 8)] { value = value << 8 | UInt64(byte) }
            order = value
            offset += 8
        }
        guard let destination = PageFileKey.rowKey(UnsafeRawBufferPointer(rebasing: bytes[offset...])) else {
            return nil
        }
        return (source, order, destination)
    }

    /// The value of a join entry: the destination's entity name unless it is `declared`.
    static func joinValue(_ destination: NSManagedObjectID, declared: NSEntityDescription?) -> [UInt8] {
        destination.entity === declared ? [] : Array((destination.entity.name ?? "").utf8)
    }
}

/// One stored join entry.
struct PageFileJoinEntry {
    var key: [UInt8]
    var order: UInt64?
    var destination: NSManagedObjectID
}

extension PageFileStore {
    /// The destinations of `relationship` of `objectID`, read in `transaction`: from the
    /// row for to-one, from the join tree or the inverse's reference index for to-many.
    func destinationIDs(
        of relationship: NSRelationshipDescription, for objectID: NSManagedObjectID, in transaction: ReadTransaction,
        codec: PageFileRowCodec
    ) throws -> [NSManagedObjectID] {
        switch PageFileToMany.storage(of: relationship) {
        case .inverse(let inverse):
            return try inverseSources(of: inverse, pointingAt: objectID.key, in: transaction)
        case .join(let tree, let ordered):
            return try joinEntries(
                tree, ordered: ordered, relationship: relationship, source: objectID.key, in: transaction
            )
            .map(\.destination)
        case nil:
            // The relationship is all it needs: blobs stay unread.
            guard
                let row = try loadRow(
                    objectID.entity, key: objectID.key, in: transaction, codec: codec, resolvingBlobs: false),
                let slot = objectID.entity.layout.slotsByName[relationship.name], slot < row.values.count
            else { return [] }
            switch row.values[slot] {
            case .objectID(let destination): return [destination]
            case .objectIDs(let destinations): return destinations
            default: return []
            }
        }
    }

    /// The rows whose to-one `inverse` points at primary key `destination`, in key order per
    /// concrete entity (entities depth first, as fetches return them).
    func inverseSources(
        of inverse: NSRelationshipDescription, pointingAt destination: Int64, in transaction: ReadTransaction
    )
        throws -> [NSManagedObjectID]
    {
        guard let owner = inverse.entity else { return [] }
        var result: [NSManagedObjectID] = []
        let prefix = PageFileKey.primary(destination)
        for entity in owner.hierarchy(includingSubentities: true) {
            guard let info = infoByEntityIfAny(entity),
                let index = info.indexes.first(where: { $0.isReference && $0.name == inverse.name }),
                let tree = try transaction.tree(named: index.treeName)
            else { continue }
            try tree.scan(from: prefix, to: PageFileKey.successor(ofPrefix: prefix)) { key, _ in
                guard let source = PageFileKey.primaryKey(key) else {
                    throw CoreDataError.make(NSFileReadCorruptFileError, "an entry of \(index.treeName) is damaged")
                }
                result.append(newObjectID(for: entity, key: source))
                return true
            }
        }
        return result
    }

    /// The entries of join tree `treeName` for `source`, in key order (relationship order).
    func joinEntries(
        _ treeName: String, ordered: Bool, relationship: NSRelationshipDescription, source: Int64,
        in transaction: ReadTransaction
    ) throws -> [PageFileJoinEntry] {
        guard let tree = try transaction.tree(named: treeName) else { return [] }
        let prefix = PageFileToMany.joinPrefix(source: source)
        var result: [PageFileJoinEntry] = []
        var failure: Error?
        try tree.scan(from: prefix, to: PageFileKey.successor(ofPrefix: prefix)) { key, value in
            guard let parts = PageFileToMany.parseJoinKey(key, ordered: ordered), parts.source == source else {
                failure = CoreDataError.make(NSFileReadCorruptFileError, "an entry of \(treeName) is damaged")
                return false
            }
            var entity = relationship.destinationEntity
            if !value.isEmpty {
                let name = String(decoding: value, as: UTF8.self)
                entity = persistentStoreCoordinator?.managedObjectModel.entitiesByName[name]
            }
            guard let entity else {
                failure = CoreDataError.make(
                    NSFileReadCorruptFileError, "an entry of \(treeName) names an entity the model does not have")
                return false
            }
            result.append(
                PageFileJoinEntry(
                    key: Array(key), order: parts.order, destination: newObjectID(for: entity, key: parts.destination)))
            return true
        }
        if let failure { throw failure }
        return result
    }

    // MARK: Writing

    /// Makes the join entries of `relationship` of `source` list `destinations`, writing only
    /// the difference from the stored entries (`isNew`: there are none).
    func writeJoin(
        _ relationship: NSRelationshipDescription, source: Int64, destinations: [NSManagedObjectID], isNew: Bool,
        in transaction: WriteTransaction
    ) throws {
        guard case .join(let treeName, let ordered) = PageFileToMany.storage(of: relationship) else { return }
        let declared = relationship.destinationEntity
        let stored =
            isNew
            ? []
            : try joinEntries(treeName, ordered: ordered, relationship: relationship, source: source, in: transaction)
        if stored.isEmpty && destinations.isEmpty { return }
        let tree = try transaction.openTree(named: treeName)
        guard ordered else {
            let wanted = Set(destinations)
            let have = Set(stored.map(\.destination))
            for entry in stored where !wanted.contains(entry.destination) {
                _ = try tree.removeValue(forKey: entry.key)
            }
            var seen: Set<NSManagedObjectID> = []
            let added = destinations.filter { !have.contains($0) && seen.insert($0).inserted }
            for destination in added.sorted(by: { $0.key < $1.key }) {
                try tree.setValue(
                    PageFileToMany.joinValue(destination, declared: declared),
                    forKey: PageFileToMany.joinKey(source: source, order: nil, destination: destination.key))
            }
            return
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
    }

    /// Removes every join entry of `source` in the join trees of `entity`'s to-many relationships.
    func removeJoins(of source: NSManagedObjectID, in transaction: WriteTransaction) throws {
        for relationship in source.entity.layout.relationshipBySlot.compactMap({ $0 }) {
            guard case .join(let treeName, _) = PageFileToMany.storage(of: relationship),
                let tree = try transaction.tree(named: treeName)
            else { continue }
            let prefix = PageFileToMany.joinPrefix(source: source.key)
            let keys = try tree.entries(from: prefix, to: PageFileKey.successor(ofPrefix: prefix)).map(\.key)
            for key in keys { _ = try tree.removeValue(forKey: key) }
        }
    }

    /// Points join entries at the rows that absorbed upserted objects.
    func rewriteJoinDestinations(_ replaced: [NSManagedObjectID: NSManagedObjectID], in transaction: WriteTransaction)
        throws
    {
        guard let model = persistentStoreCoordinator?.managedObjectModel else { return }
        let byKey = Dictionary(replaced.map { ($0.key.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        var done: Set<String> = []
        for entity in model.entities {
            for relationship in entity.relationshipsByName.values {
                guard case .join(let treeName, let ordered) = PageFileToMany.storage(of: relationship),
                    done.insert(treeName).inserted, let tree = try transaction.tree(named: treeName)
                else { continue }
                var changes: [(old: [UInt8], new: [UInt8], value: [UInt8])] = []
                try tree.scan { key, _ in
                    guard let parts = PageFileToMany.parseJoinKey(key, ordered: ordered),
                        let target = byKey[parts.destination]
                    else { return true }
                    changes.append(
                        (
                            Array(key),
                            PageFileToMany.joinKey(source: parts.source, order: parts.order, destination: target.key),
                            PageFileToMany.joinValue(target, declared: relationship.destinationEntity)
                        ))
                    return true
                }
                for change in changes {
                    _ = try tree.removeValue(forKey: change.old)
                    try tree.setValue(change.value, forKey: change.new)
                }
            }
        }
    }
}

extension PageFileToMany {
    /// The positions of the longest strictly increasing run of known order keys.
    static func longestIncreasingRun(_ orders: [UInt64?]) -> Set<Int> {
        var tails: [Int] = []  // positions; orders[tails[k]] is the smallest tail of a run of length k+1
        var previous = [Int](repeating: -1, count: orders.count)
        for (position, order) in orders.enumerated() {
            guard let order else { continue }
            var low = 0
            var high = tails.count
            while low < high {
                let middle = (low + high) / 2
                if let tail = orders[tails[middle]], tail < order { low = middle + 1 } else { high = middle }
            }
            if low > 0 { previous[position] = tails[low - 1] }
            if low == tails.count { tails.append(position) } else { tails[low] = position }
        }
        var result: Set<Int> = []
        var position = tails.last ?? -1
        while position >= 0 {
            result.insert(position)
            position = previous[position]
        }
        return result
    }

    /// Fills the nil order keys between their known neighbours, evenly spaced; false when
    /// some run has no room.
    static func fillOrders(_ orders: inout [UInt64?]) -> Bool {
        var start = 0
        while start < orders.count {
            guard orders[start] == nil else {
                start += 1
                continue
            }
            var end = start
            while end < orders.count, orders[end] == nil { end += 1 }
            let low = start > 0 ? orders[start - 1] ?? 0 : 0
            let count = UInt64(end - start)
            let high: UInt64
            if end < orders.count, let next = orders[end] {
                high = next
            } else {
                // After the last kept entry: continue at the usual gap when it fits.
                let (sum, overflow) = low.addingReportingOverflow(orderGap * (count + 1))
                high = overflow ? UInt64.max : sum
            }
            guard high > low, (high - low) / (count + 1) > 0 else { return false }
            let step = (high - low) / (count + 1)
            for offset in 0..<(end - start) { orders[start + offset] = low + step * UInt64(offset + 1) }
            start = end
        }
        return true
    }
}

extension PageFileStore {
    /// Catalog lines of the join trees (SPEC.md §3.1): `tree<TAB>join|join-ordered<TAB>`
    /// source row trees `|` destination row trees `|` the inverse's join tree, or
    /// `ref:<slot>` for a to-one inverse in that slot of the destination rows, or nothing;
    /// so `verify()` checks them without the model.
    func joinCatalogLines() -> [String] {
        var lines: [String] = []
        for entity in persistentStoreCoordinator?.managedObjectModel.entities ?? [] {
            for relationship in entity.relationshipsByName.values.sorted(by: { $0.name < $1.name })
            where relationship.entity === entity {
                guard case .join(let tree, let ordered) = PageFileToMany.storage(of: relationship),
                    let destination = relationship.destinationEntity
                else { continue }
                func rowTrees(_ root: NSEntityDescription) -> String {
                    root.hierarchy(includingSubentities: true).compactMap(\.name).map { "rows.\($0)" }
                        .joined(separator: ",")
                }
                var mirror = ""
                if let inverse = relationship.inverseRelationship,
                    case .join(let inverseTree, _) = PageFileToMany.storage(of: inverse)
                {
                    mirror = inverseTree
                } else if let inverse = relationship.inverseRelationship,
                    let slot = destination.layout.slotsByName[inverse.name]
                {
                    // An ordered one-to-many: the destinations' to-one names the source.
                    mirror = "ref:\(slot)"
                }
                lines.append(
                    "\(tree)\t\(ordered ? "join-ordered" : "join")\t\(rowTrees(entity))|\(rowTrees(destination))|\(mirror)"
                )
            }
        }
        return lines
    }
}

extension PageFileStore {
    /// Resolves, in the fetch's own read, the to-manys kept outside the rows that the
    /// request prefetches first (`relationshipKeyPathsForPrefetching`), so prefetching
    /// them costs no call per fetched object.
    func resolvePrefetched(
        _ request: NSFetchRequest<NSFetchRequestResult>, _ rows: inout [StoreRow], in transaction: ReadTransaction,
        codec: PageFileRowCodec
    ) throws {
        guard let keyPaths = request.relationshipKeyPathsForPrefetching, !keyPaths.isEmpty, !rows.isEmpty else {
            return
        }
        let names = Set(keyPaths.compactMap { $0.split(separator: ".").first.map(String.init) })
        for position in rows.indices { try resolveToMany(&rows[position], only: names, in: transaction, codec: codec) }
    }
}
