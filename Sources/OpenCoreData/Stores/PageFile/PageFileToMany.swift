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

extension PageFileRowReader {
    /// The destinations of `relationship` of `objectID`: from the
    /// row for to-one, from the join tree or the inverse's reference index for to-many.
    func destinationIDs(
        of relationship: NSRelationshipDescription, for objectID: NSManagedObjectID
    ) throws -> [NSManagedObjectID] {
        switch PageFileToMany.storage(of: relationship) {
        case .inverse(let inverse):
            return try inverseSources(of: inverse, pointingAt: objectID.key)
        case .join(let tree, let ordered):
            return try joinEntries(tree, ordered: ordered, relationship: relationship, source: objectID.key)
                .map(\.destination)
        case nil:
            // The relationship is all it needs: blobs stay unread.
            guard let row = try row(objectID.entity, key: objectID.key, resolvingBlobs: false),
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
    func inverseSources(of inverse: NSRelationshipDescription, pointingAt destination: Int64) throws
        -> [NSManagedObjectID]
    {
        guard let owner = inverse.entity else { return [] }
        var result: [NSManagedObjectID] = []
        let prefix = PageFileKey.primary(destination)
        for entity in owner.hierarchy(includingSubentities: true) {
            guard let info = catalog.infoIfAny(entity),
                let index = info.indexes.first(where: { $0.isReference && $0.name == inverse.name }),
                let tree = try transaction.tree(named: index.treeName)
            else { continue }
            try tree.scan(from: prefix, to: PageFileKey.successor(ofPrefix: prefix)) { key, _ in
                guard let source = PageFileKey.primaryKey(key) else {
                    throw CoreDataError.make(NSFileReadCorruptFileError, "an entry of \(index.treeName) is damaged")
                }
                result.append(codec.makeObjectID(entity, source))
                return true
            }
        }
        return result
    }

    /// The entries of join tree `treeName` for `source`, in key order (relationship order).
    func joinEntries(_ treeName: String, ordered: Bool, relationship: NSRelationshipDescription, source: Int64)
        throws -> [PageFileJoinEntry]
    {
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
                entity = catalog.entity(named: name)
            }
            guard let entity else {
                failure = CoreDataError.make(
                    NSFileReadCorruptFileError, "an entry of \(treeName) names an entity the model does not have")
                return false
            }
            result.append(
                PageFileJoinEntry(
                    key: Array(key), order: parts.order, destination: codec.makeObjectID(entity, parts.destination)))
            return true
        }
        if let failure { throw failure }
        return result
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
        let reader = PageFileRowReader(transaction: transaction, catalog: catalog, codec: codec)
        for position in rows.indices { try reader.resolveToMany(&rows[position], only: names) }
    }
}
