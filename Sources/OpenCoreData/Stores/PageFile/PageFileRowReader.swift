// Reading the default store's rows by key in one engine transaction: a row's bytes from
// its entity tree (SPEC.md §3.2), then on request its blobs (§3.8) and its to-manys kept
// outside the row (§3.2 R1). Faults, fetches and the writer (the rows a save replaces)
// all load rows through it; the blob and to-many readers are in PageFileBlobs.swift and
// PageFileToMany.swift.
import Foundation
import StorageEngine

/// Loads rows of the default store in one read (or write) transaction.
///
/// A value over the transaction, the catalog and the codec: cheap to make per read.
struct PageFileRowReader {
    let transaction: ReadTransaction
    let catalog: PageFileCatalog
    let codec: PageFileRowCodec

    /// The stored row of `entity` with primary key `key`, or nil when there is none; with
    /// `resolvingBlobs` false, values kept in the blob tree stay `.unresolved`, and
    /// to-manys kept outside the row are `.unresolved` either way; `intoSlots`: in the slot
    /// form a context fills objects from when the row takes it.
    ///
    /// - Throws: `NSFileReadCorruptFileError` for a damaged row or blob.
    func row(_ entity: NSEntityDescription, key: Int64, resolvingBlobs: Bool = true, intoSlots: Bool = false) throws
        -> StoreRow?
    {
        let info = try catalog.info(for: entity)
        guard let tree = try transaction.tree(named: info.treeName) else { return nil }
        guard var row = try row(entity, key: key, in: tree, intoSlots: intoSlots) else { return nil }
        if resolvingBlobs, !info.blobSlots.isEmpty { try resolveBlobs(&row, info: info) }
        return row
    }

    /// The row of `entity` with `key` in its row tree `rows` (looked up once by the caller),
    /// under `objectID` when the caller has the row's ID already (else one is made); with
    /// `intoSlots`, in the slot form a context fills objects from when the row takes it.
    func row(
        _ entity: NSEntityDescription, key: Int64, in rows: Tree, objectID: NSManagedObjectID? = nil,
        intoSlots: Bool = false
    ) throws -> StoreRow? {
        // The row comes out through a local, the engine's generic lookup returning nothing:
        // `Tree.withValue` is not specialized for a row, so a row it returned went through
        // its generic value witnesses (a metadata lookup and an indirect copy per row).
        var row: StoreRow?
        try PageFileKey.withPrimary(key) { keyBytes in
            _ = try rows.withValue(forKey: keyBytes) { bytes in
                row = try codec.row(bytes, entity: entity, intoSlots: intoSlots) {
                    objectID ?? codec.makeObjectID(entity, key)
                }
            }
        }
        return row
    }

    /// The rows of `keys` of `entity`, whole (blobs and to-manys resolved), nil where there
    /// is none: a batch of faults or a prefetch step in one read.
    func rows(keys: [Int64], of entity: NSEntityDescription) throws -> [StoreRow?] {
        try keys.map { try completeRow(entity, key: $0) }
    }

    /// The rows of `objectIDs` (IDs of this store), whole, nil where there is none, each
    /// under its given ID: a batch of faults in one read. An entity's info and row tree are
    /// looked up once for a run of its IDs, not per row (a resolved to-many's batch is one
    /// entity), and the run's rows are read through that tree and entity held as plain
    /// values: nothing per row but the lookup, the decode and the row. With `toManyNames`,
    /// only the to-manys of those names are resolved and the others stay `.unresolved` (a
    /// prefetch step resolves only the key paths it follows). With `intoSlots`, rows come in
    /// the slot form a context fills objects from where they take it.
    func completeRows(
        _ objectIDs: [NSManagedObjectID], resolvingToMany toManyNames: Set<String>? = nil, intoSlots: Bool = false
    ) throws -> [StoreRow?] {
        var result: [StoreRow?] = []
        result.reserveCapacity(objectIDs.count)
        var start = 0
        while start < objectIDs.count {
            let entity = objectIDs[start].entity
            var end = start + 1
            while end < objectIDs.count, objectIDs[end].entity === entity { end += 1 }
            // The entity's info (a large value) is read once per run, never copied per row.
            let info = try catalog.info(for: entity)
            guard let tree = try transaction.tree(named: info.treeName) else {
                result.append(contentsOf: repeatElement(nil, count: end - start))
                start = end
                continue
            }
            let hasBlobSlots = !info.blobSlots.isEmpty
            let hasExternalSlots = Self.resolvesSome(info.externalSlots, of: entity, named: toManyNames)
            for position in start..<end {
                let id = objectIDs[position]
                guard var row = try row(entity, key: id.key, in: tree, objectID: id, intoSlots: intoSlots) else {
                    result.append(nil)
                    continue
                }
                if hasBlobSlots { try resolveBlobs(&row, info: info) }
                if hasExternalSlots { try resolveToMany(&row, only: toManyNames) }
                result.append(row)
            }
            start = end
        }
        return result
    }

    /// Whether any of `externalSlots` of `entity` is a to-many in `names` (every one when nil).
    private static func resolvesSome(_ externalSlots: [Int], of entity: NSEntityDescription, named names: Set<String>?)
        -> Bool
    {
        guard let names else { return !externalSlots.isEmpty }
        let relationships = entity.layout.relationshipBySlot
        return externalSlots.contains { slot in
            slot < relationships.count && relationships[slot].map { names.contains($0.name) } == true
        }
    }

    /// The row of `entity` with `key` whole (blobs and to-manys resolved), or nil.
    func completeRow(_ entity: NSEntityDescription, key: Int64) throws -> StoreRow? {
        guard var row = try row(entity, key: key) else { return nil }
        try resolveToMany(&row)
        return row
    }

    /// `row` whole: its blobs read and its to-manys resolved (a row leaving the store for a
    /// merge policy, which compares and merges whole snapshots).
    func resolvedCopy(_ row: StoreRow) throws -> StoreRow {
        let info = try catalog.info(for: row.objectID.entity)
        guard !info.blobSlots.isEmpty || !info.externalSlots.isEmpty else { return row }
        var copy = row
        if !info.blobSlots.isEmpty { try resolveBlobs(&copy, info: info) }
        if !info.externalSlots.isEmpty { try resolveToMany(&copy) }
        return copy
    }

    /// Replaces `row`'s to-many slots kept outside it (`only`: those relationships) by their
    /// destinations.
    func resolveToMany(_ row: inout StoreRow, only names: Set<String>? = nil) throws {
        let layout = row.objectID.entity.layout
        if row.slots != nil { return try resolveToMany(inSlots: &row, only: names) }
        for slot in try catalog.info(for: row.objectID.entity).externalSlots where slot < row.values.count {
            guard let relationship = layout.relationshipBySlot[slot], names?.contains(relationship.name) ?? true,
                case .unresolved = row.values[slot]
            else { continue }
            row.values[slot] = .objectIDs(try destinationIDs(of: relationship, for: row.objectID))
        }
    }

    /// ``resolveToMany(_:only:)`` for a row in the slot form: the list goes into the slot as
    /// the slot form holds a stored list.
    private func resolveToMany(inSlots row: inout StoreRow, only names: Set<String>?) throws {
        let layout = row.objectID.entity.layout
        for slot in try catalog.info(for: row.objectID.entity).externalSlots {
            guard let relationship = layout.relationshipBySlot[slot], names?.contains(relationship.name) ?? true,
                let slots = row.slots, slot < slots.values.count,
                case .unresolved(let stored) = slots.values.storage[slot], stored.objectIDs == nil
            else { continue }
            let ids = try destinationIDs(of: relationship, for: row.objectID)
            row.slots?.values.storage[slot] = .unresolved(UnresolvedRelationship(objectIDs: ids))
        }
    }
}
