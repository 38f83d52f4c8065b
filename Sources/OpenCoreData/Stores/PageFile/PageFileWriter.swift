// Every row change of the default store goes through this writer, inside one engine
// write transaction: a row and all that depends on it change together, in small steps.
//
//   STEP                           CHANGES
//   insert(row)                    the row (SPEC.md §3.2), its index entries (§3.4: unique
//                                  ones at once, the others at finish()), blobs of its large
//                                  binary values (§3.8), join entries of its to-manys (R1)
//   update(&row, changes:)         the same, for what the changes replace
//   delete(row)                    the row, its index entries, blobs and join entries
//   setToMany(...)                 one to-many's join entries: only the difference
//   rewriteReferences(replaced)    to-ones and join entries pointing at upserted rows
//   recordHistory(record)          the next history record (§3.7)
//   finish()                       the ordinary index entries, sorted
//
// A unique key is checked before anything of its row is written, so a clash leaves the
// transaction as it was. A context save (PageFileWriter+Save.swift), a migration and
// batch requests are sequences of these steps; the transaction commits them together or
// not at all.
import Foundation
import StorageEngine

/// A row that a write step did not write: one of its unique keys belongs to another row.
struct PageFileUniqueClash {
    /// The row as it would have been written.
    let row: StoreRow
    /// The primary key of the row holding the key.
    let owner: Int64
    /// The unique index of the key.
    let index: PageFileIndex
}

/// Writes rows of the default store, with their index entries, blobs, join entries and
/// history, in one engine write transaction.
///
/// A value over the transaction: make one per transaction, call its steps, then
/// ``finish()`` before the transaction commits.
struct PageFileWriter {
    let transaction: WriteTransaction
    /// Reads the rows and join entries the steps replace, in the same transaction.
    let reader: PageFileRowReader
    var catalog: PageFileCatalog { reader.catalog }
    var codec: PageFileRowCodec { reader.codec }
    /// Ordinary index entries added so far, by index ordinal, written sorted by ``finish()``.
    var pendingIndexKeys: [PendingIndexKeys]
    /// Row trees by entity, opened once per transaction instead of by name for every row;
    /// in the order opened, found by comparing identities (a save touches a few entities,
    /// and a table entry cost more than the comparisons).
    private var rowTrees: [(entity: ObjectIdentifier, tree: Tree)] = []
    /// The row tree used last: a save's rows mostly come entity by entity.
    private var lastRowTree: (entity: ObjectIdentifier, tree: Tree)?
    /// Index trees by ordinal, looked up once per transaction (nil: not looked up, or absent).
    private var indexTrees: [Tree?]
    /// The entity of the last step: consecutive rows of one entity look it up once.
    private var lastInfo: PageFileCatalog.EntityInfo?
    /// The bytes of the last row ``storeRow(_:info:externalizingBlobs:replacing:)`` wrote.
    var rowBuffer = StoreByteWriter()
    /// The links the steps added or removed, while a save records them for the integrity
    /// pass (StoreRelationshipIntegrity.swift); nil otherwise.
    var linkChanges: [StoreLinkChange]?
    /// Set by a context's save (PageFileWriter+InPlace.swift): an update replaces its
    /// stored row where an editor of the row tree stands and leaves the removal of its
    /// replaced ordinary attribute index entries to ``finish()``, so updates in key order
    /// descend once per leaf rather than once per row and tree.
    var updatesInPlace = false
    /// The row trees' editors by entity, while updates are in place (as ``rowTrees``).
    var rowEditors: [(entity: ObjectIdentifier, editor: TreeEditor)] = []
    /// Stored entries of ordinary attribute indexes that in-place updates replaced, by
    /// index ordinal: removed in one walk of each tree before its pending entries go in.
    /// Empty until the first replaced entry (most saves replace none).
    var replacedIndexKeys: [PendingIndexKeys] = []
    /// The indexes of ``replacedIndexKeys`` that hold keys, by ordinal.
    var replacedIndexes: [Int: PageFileIndex] = [:]

    init(transaction: WriteTransaction, catalog: PageFileCatalog, codec: PageFileRowCodec) {
        self.transaction = transaction
        self.reader = PageFileRowReader(transaction: transaction, catalog: catalog, codec: codec)
        pendingIndexKeys = Array(repeating: PendingIndexKeys(), count: catalog.indexTreeNames.count)
        indexTrees = Array(repeating: nil, count: catalog.indexTreeNames.count)
    }

    /// The catalog entry of `entity`.
    ///
    /// - Throws: `NSCoreDataError` when the entity is not in the store's model.
    mutating func info(for entity: NSEntityDescription) throws -> PageFileCatalog.EntityInfo {
        if let lastInfo, lastInfo.entity === entity { return lastInfo }
        let info = try catalog.info(for: entity)
        lastInfo = info
        return info
    }

    // MARK: Row steps

    /// Writes a new row with its index entries, blobs and join entries (its version as given).
    ///
    /// - Returns: The clash when one of its unique keys belongs to another row; then
    ///   nothing is written.
    mutating func insert(_ row: StoreRow) throws -> PageFileUniqueClash? {
        let info = try info(for: row.objectID.entity)
        if let clash = try uniqueClash(of: row, info: info) { return clash }
        try write(row, info: info)
        for (slot, relationship) in info.joinSlots where slot < row.values.count {
            guard case .objectIDs(let destinations) = row.values[slot], !destinations.isEmpty else { continue }
            try setToMany(relationship, of: row.objectID.key, to: destinations, isNew: true)
        }
        if linkChanges != nil, !info.linkSlots.isEmpty {
            recordLinks {
                StoreLinkChange.append(
                    row.objectID, before: nil, after: row.values, slots: info.linkSlots, to: &$0)
            }
        }
        return nil
    }

    /// Applies `changes` (slot, new value; `.unresolved` keeps the stored value) to the
    /// stored `row`, raises its version and writes it, replacing the index entries, blobs
    /// and join entries the changes replace.
    ///
    /// - Returns: The clash when the changed row would take another row's unique key;
    ///   then nothing is written (`row` holds the changed values).
    mutating func update(_ row: inout StoreRow, changes: [(slot: Int, value: StoreValue)]) throws
        -> PageFileUniqueClash?
    {
        let info = try info(for: row.objectID.entity)
        let stored = row
        for change in changes where change.slot < row.values.count {
            if case .unresolved = change.value { continue }
            row.values[change.slot] = change.value
        }
        row.version += 1
        if let clash = try uniqueClash(of: row, info: info) { return clash }
        try releaseReplacedBlobs(
            of: stored, slots: changes.lazy.filter { $0.value != .unresolved }.map(\.slot), info: info)
        try storeRow(row, info: info, replacing: updatesInPlace)
        try replaceIndexEntries(of: stored, with: row, info: info, changedSlots: changes.map(\.slot))
        for change in changes {
            guard case .objectIDs(let destinations) = change.value,
                let relationship = info.joinSlots.first(where: { $0.slot == change.slot })?.relationship
            else { continue }
            let delta = try setToMany(relationship, of: row.objectID.key, to: destinations, isNew: false)
            noteLinks(of: row.objectID, relationship, delta)
        }
        if linkChanges != nil, !info.linkSlots.isEmpty {
            let layout = row.objectID.entity.layout
            let toOnes = changes.map(\.slot).filter {
                info.linkSlots.contains($0) && layout.relationshipBySlot[$0]?.isToMany == false
            }
            if !toOnes.isEmpty {
                recordLinks {
                    StoreLinkChange.append(
                        row.objectID, before: stored.values, after: row.values, slots: toOnes, to: &$0)
                }
            }
        }
        return nil
    }

    /// Records the links a to-many step added and removed, while a save records them.
    mutating func noteLinks(
        of source: NSManagedObjectID, _ relationship: NSRelationshipDescription,
        _ delta: (added: [NSManagedObjectID], removed: [NSManagedObjectID])
    ) {
        guard linkChanges != nil, relationship.inverseRelationship != nil else { return }
        for destination in delta.removed {
            linkChanges?.append(
                StoreLinkChange(source: source, relationship: relationship, destination: destination, isAdded: false))
        }
        for destination in delta.added {
            linkChanges?.append(
                StoreLinkChange(source: source, relationship: relationship, destination: destination, isAdded: true))
        }
    }

    /// Removes the stored `row` with its index entries, blobs and join entries.
    mutating func delete(_ row: StoreRow) throws {
        let info = try info(for: row.objectID.entity)
        try removeIndexEntries(of: row, info: info)
        try deleteRemainder(of: row, info: info)
    }

    /// Removes the stored `rows` as ``delete(_:)`` does each, but their ordinary index
    /// entries in one walk of each index tree in key order, and the rows in one walk of
    /// each row tree (a save deleting thousands of rows pays no descent per entry). The
    /// walks run before a row whose deletion reads an index (the sources of an inverse
    /// to-many), and at the end.
    mutating func delete(_ rows: [StoreRow]) throws {
        // Most saves delete nothing: they pay for no tables below.
        guard !rows.isEmpty else { return }
        var deferred = DeferredRemovals(indexCount: pendingIndexKeys.count)
        for row in rows {
            let info = try info(for: row.objectID.entity)
            if !info.externalSlots.isEmpty { try removeDeferred(&deferred) }
            let primaryKey = row.objectID.key
            // By position, not `for index in` (a copy of each index per row); and the
            // index's parts passed, not the index: an element read through an unsafe
            // pointer is copied whole to be passed (the compiler cannot tell that nothing
            // writes to it during the call), its names and arrays retained and released,
            // ~0.7k per deleted row of three indexes.
            try info.indexes.withUnsafeBufferPointer { indexes in
                for position in indexes.indices {
                    let ordinal = indexes[position].ordinal
                    // An entry this writer added (not yet stored) is taken back from its pending keys.
                    if indexes[position].isUnique || pendingIndexKeys[ordinal].count > 0 {
                        guard let key = indexes[position].key(for: row.values, primaryKey: primaryKey) else { continue }
                        try removeIndexEntry(key, of: indexes[position], primaryKey: primaryKey)
                    } else if deferred.keys[ordinal].insertEntry(
                        fields: indexes[position].fields, isReference: indexes[position].isReference,
                        values: row.values, primaryKey: primaryKey)
                    {
                        // Written in place in the deferred keys' buffer: no key array per entry.
                        // The index noted with its first entry (`== nil` on the optional
                        // copied the index every time).
                        if deferred.keys[ordinal].count == 1 { deferred.indexes[ordinal] = indexes[position] }
                    }
                }
            }
            try deleteRemainder(of: row, info: info, removingRow: false)
            deferred.addRow(primaryKey, of: info)
        }
        try removeDeferred(&deferred)
    }

    /// The removals ``delete(_:)-([StoreRow])`` defers to one walk of each tree. Passed
    /// along as a value: captured by a local function, its tables were boxed and each
    /// access checked for exclusivity at run time.
    private struct DeferredRemovals {
        /// Ordinary index entries by index ordinal: no dictionary entry, index copy or key
        /// set made per entry.
        var keys: [PendingIndexKeys]
        var indexes: [PageFileIndex?]
        /// The primary keys of removed rows, by entity in the order the entities came (a
        /// save deletes rows of a few entities: a list, no hashing per row).
        var rows: [(info: PageFileCatalog.EntityInfo, keys: [Int64])] = []

        init(indexCount: Int) {
            keys = Array(repeating: PendingIndexKeys(), count: indexCount)
            indexes = Array(repeating: nil, count: indexCount)
        }

        mutating func addRow(_ primaryKey: Int64, of info: PageFileCatalog.EntityInfo) {
            if let position = rows.lastIndex(where: { $0.info.entity === info.entity }) {
                rows[position].keys.append(primaryKey)
            } else {
                rows.append((info, [primaryKey]))
            }
        }
    }

    /// Removes the deferred index entries and rows, each tree in one walk, and forgets them.
    private mutating func removeDeferred(_ deferred: inout DeferredRemovals) throws {
        for ordinal in deferred.keys.indices where deferred.keys[ordinal].count > 0 {
            guard let index = deferred.indexes[ordinal] else { continue }
            try removeStoredIndexEntries(deferred.keys[ordinal], of: index)
            deferred.keys[ordinal] = PendingIndexKeys()
        }
        for (info, keys) in deferred.rows { try removeStoredRows(keys, info: info) }
        deferred.rows = []
    }

    /// Removes the rows with primary keys `keys` from the row tree of `info` in one walk in
    /// key order; a key with no row is skipped, as a single removal would skip it.
    private mutating func removeStoredRows(_ keys: [Int64], info: PageFileCatalog.EntityInfo) throws {
        let tree = try rowTree(info)
        // The keys' bytes back to back, in key order, each known by where it ends: the
        // editor takes them by position and walks each leaf once.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(keys.count * 10)
        var ends: [Int] = []
        ends.reserveCapacity(keys.count)
        for key in keys.sorted() {
            PageFileKey.appendPrimary(key, to: &bytes)
            ends.append(bytes.count)
        }
        try bytes.withUnsafeBytes { base in
            try ends.withUnsafeBufferPointer { ends in
                try tree.edit { editor in
                    _ = try editor.removeEntries(count: ends.count) { position in
                        let start = position == 0 ? 0 : ends[position - 1]
                        return UnsafeRawBufferPointer(rebasing: base[start..<ends[position]])
                    }
                }
            }
        }
    }

    /// The parts of a row's deletion after its index entries: blobs, join entries, links, and
    /// the row unless the caller removes it later (`removingRow` false).
    private mutating func deleteRemainder(
        of row: StoreRow, info: PageFileCatalog.EntityInfo, removingRow: Bool = true
    ) throws {
        if !info.blobSlots.isEmpty { try removeBlobs(of: row, info: info) }
        let recording = linkChanges != nil
        if !info.joinSlots.isEmpty {
            let removed = try removeJoins(of: row.objectID, reporting: recording)
            if recording { linkChanges?.append(contentsOf: removed) }
        }
        if recording { try noteDeletedLinks(of: row, info: info) }
        if removingRow { _ = try rowTree(info).removeValue(forKey: PageFileKey.primary(row.objectID.key)) }
    }

    /// Appends `record` as the next history record.
    func recordHistory(_ record: PersistentHistoryRecord) throws {
        let current = try PageFileStore.historyBounds(in: transaction).current
        try transaction.openTree(named: PageFileStore.historyTreeName).setValue(
            record.encoded(), forKey: PageFileKey.sequence(current + 1))
    }

    /// Writes the catalog record (the index and join trees of the catalog's model).
    func writeCatalog() throws {
        try transaction.openTree(named: PageFileStore.metaTreeName).setValue(
            catalog.record, forKey: PageFileStore.catalogKey)
    }

    /// Writes the ordinary index entries added so far, sorted: call it before the
    /// transaction commits.
    mutating func finish() throws {
        try finishRowEditors()
        for ordinal in catalog.indexTreeNames.indices { try writePendingIndexKeys(ordinal: ordinal) }
    }

    /// Pending keys of one index past which they are written at once (sorted) rather than
    /// at ``finish()``: a batch of a million rows then holds a few megabytes of keys, not
    /// a hundred, and the engine can spill the index pages like any other.
    static let pendingIndexKeyLimit = 65_536

    /// Writes the pending ordinary entries of the index `ordinal`, sorted, and forgets them.
    private mutating func writePendingIndexKeys(ordinal: Int) throws {
        // The replaced entries first: a pending entry may be one of them, added back.
        try removeReplacedIndexKeys(ordinal: ordinal)
        let pending = pendingIndexKeys[ordinal]
        pendingIndexKeys[ordinal] = PendingIndexKeys()
        guard pending.count > 0 else { return }
        let tree = try openIndexTreeAfresh(ordinal: ordinal)
        indexTrees[ordinal] = tree
        let empty = UnsafeRawBufferPointer(start: nil, count: 0)
        try pending.forEachSorted { key in try tree.setValue(empty, forKey: key) }
    }

    // MARK: Parts of a row

    /// The row's bytes and index entries (its join entries are the caller's).
    mutating func write(_ row: StoreRow, info: PageFileCatalog.EntityInfo) throws {
        try storeRow(row, info: info)
        try addIndexEntries(of: row, info: info)
    }

    /// The row's bytes in its entity tree; large binary values go to the blob tree first
    /// unless `externalizingBlobs` is false (the row keeps them inline).
    mutating func storeRow(
        _ row: StoreRow, info: PageFileCatalog.EntityInfo, externalizingBlobs: Bool = true, replacing: Bool = false
    ) throws {
        var values =
            info.blobSlots.isEmpty || !externalizingBlobs ? row.values : try externalizedValues(of: row, info: info)
        // To-manys live in join trees or come from their inverse (SPEC.md §3.2 R1).
        for slot in info.externalSlots where slot < values.count { values[slot] = .unresolved }
        if replacing {
            let bytes = PageFileRowCodec.encode(
                values: values, version: row.version, layout: row.objectID.entity.layout,
                externalToMany: !info.externalSlots.isEmpty)
            return try replaceStoredRow(bytes, primaryKey: row.objectID.key, info: info)
        }
        // Encoded into the writer's reused buffer: a save of many new rows allocates none per row.
        rowBuffer.bytes.removeAll(keepingCapacity: true)
        PageFileRowCodec.encode(
            values: values, version: row.version, layout: row.objectID.entity.layout,
            externalToMany: !info.externalSlots.isEmpty, into: &rowBuffer)
        let tree = try rowTree(info)
        try PageFileKey.withPrimary(row.objectID.key) { key in
            try rowBuffer.bytes.withUnsafeBytes { try tree.setValue($0, forKey: key) }
        }
    }

    mutating func rowTree(_ info: PageFileCatalog.EntityInfo) throws -> Tree {
        let entity = ObjectIdentifier(info.entity)
        if let last = lastRowTree, last.entity == entity { return last.tree }
        let tree: Tree
        if let known = rowTrees.first(where: { $0.entity == entity }) {
            tree = known.tree
        } else {
            tree =
                try info.treeHandle.map { try transaction.openTree($0) } ?? transaction.openTree(named: info.treeName)
            // One allocation for a save's few entities instead of regrowing at 1, 2, 4.
            if rowTrees.isEmpty { rowTrees.reserveCapacity(4) }
            rowTrees.append((entity, tree))
        }
        lastRowTree = (entity, tree)
        return tree
    }

    /// Adds `row`'s index entries: unique ones at once (later rows check against them),
    /// the others at ``finish()``.
    mutating func addIndexEntries(of row: StoreRow, info: PageFileCatalog.EntityInfo) throws {
        let indexes = info.indexes
        let primaryKey = row.objectID.key
        for position in indexes.indices {
            if indexes[position].isUnique {
                guard let key = indexes[position].key(for: row.values, primaryKey: primaryKey) else { continue }
                try addIndexEntry(key, of: indexes[position], primaryKey: primaryKey)
                continue
            }
            // Written into the pending keys' buffer: no key array per entry; the index's
            // parts passed, not the index (a copy of it per entry, as in the deletion's walk).
            let ordinal = indexes[position].ordinal
            guard
                pendingIndexKeys[ordinal].insertEntry(
                    fields: indexes[position].fields, isReference: indexes[position].isReference, values: row.values,
                    primaryKey: primaryKey)
            else { continue }
            if pendingIndexKeys[ordinal].count >= Self.pendingIndexKeyLimit {
                try writePendingIndexKeys(ordinal: ordinal)
            }
        }
    }

    /// Adds the entry `key` of the row `primaryKey` to `index`.
    mutating func addIndexEntry(_ key: [UInt8], of index: PageFileIndex, primaryKey: Int64) throws {
        if index.isUnique {
            try openIndexTree(index).setValue(PageFileKey.primary(primaryKey), forKey: key)
        } else {
            pendingIndexKeys[index.ordinal].insert(key)
            if pendingIndexKeys[index.ordinal].count >= Self.pendingIndexKeyLimit {
                try writePendingIndexKeys(ordinal: index.ordinal)
            }
        }
    }

    /// Removes the index entries of the stored `row` (a unique entry only while it is
    /// the row's own).
    mutating func removeIndexEntries(of row: StoreRow, info: PageFileCatalog.EntityInfo) throws {
        for index in info.indexes {
            guard let key = index.key(for: row.values, primaryKey: row.objectID.key) else { continue }
            try removeIndexEntry(key, of: index, primaryKey: row.objectID.key)
        }
    }

    /// Removes the entry `key` of the row `primaryKey` from `index` (a unique entry only
    /// while it is that row's own); `mayBePending` false when this writer cannot have
    /// added it (a stored row's entry that no earlier step replaced), which spares the
    /// pending keys a lookup set.
    mutating func removeIndexEntry(
        _ key: [UInt8], of index: PageFileIndex, primaryKey: Int64, mayBePending: Bool = true
    ) throws {
        if !index.isUnique, mayBePending, pendingIndexKeys[index.ordinal].remove(key) { return }
        guard let tree = try indexTree(index) else { return }
        if index.isUnique {
            guard let owner = try tree.value(forKey: key), owner == PageFileKey.primary(primaryKey) else { return }
        }
        _ = try tree.removeValue(forKey: key)
    }

    /// Removes the stored entries `keys` of the ordinary (not unique) `index` in one walk
    /// of its tree in key order: a batch step's entries of rows it changed or removed,
    /// none of them added by this writer.
    mutating func removeStoredIndexEntries(_ keys: PendingIndexKeys, of index: PageFileIndex) throws {
        precondition(!index.isUnique, "a unique entry is removed only while it is its row's own")
        guard keys.count > 0, let tree = try indexTree(index) else { return }
        // Each key read where it lies in the pending buffer (no array per key), and each
        // leaf walked once for all its keys.
        try keys.withSortedKeys { count, key in
            _ = try tree.edit { editor in try editor.removeEntries(count: count, keys: key) }
        }
    }

    /// Moves the index entries of the stored row `old` to those of `new`, its update: an
    /// index whose key the update leaves as it was is not touched (an update of one
    /// attribute rewrites that attribute's indexes only).
    ///
    /// Only the indexes reading one of `changedSlots` are looked at (the other slots hold
    /// the same values in both rows, so their keys are the same): an update of one
    /// attribute builds no key of the others' indexes.
    mutating func replaceIndexEntries(
        of old: StoreRow, with new: StoreRow, info: PageFileCatalog.EntityInfo, changedSlots: [Int]
    ) throws {
        for index in info.indexes where index.fields.contains(where: { changedSlots.contains($0.slot) }) {
            let oldKey = index.key(for: old.values, primaryKey: old.objectID.key)
            let newKey = index.key(for: new.values, primaryKey: new.objectID.key)
            if oldKey == newKey { continue }
            if let oldKey, !deferRemoval(oldKey, of: index) {
                try removeIndexEntry(oldKey, of: index, primaryKey: old.objectID.key)
            }
            if let newKey { try addIndexEntry(newKey, of: index, primaryKey: new.objectID.key) }
        }
    }

    /// The tree of `index`, created when missing, looked up once per transaction.
    private mutating func openIndexTree(_ index: PageFileIndex) throws -> Tree {
        try openIndexTree(ordinal: index.ordinal)
    }

    /// The tree of the index `ordinal`, created when missing, looked up once per transaction.
    private mutating func openIndexTree(ordinal: Int) throws -> Tree {
        if let known = indexTrees[ordinal] { return known }
        let tree = try openIndexTreeAfresh(ordinal: ordinal)
        indexTrees[ordinal] = tree
        return tree
    }

    /// The tree of the index `ordinal` from the transaction, created when missing: by its
    /// handle, so the engine compares no names.
    private func openIndexTreeAfresh(ordinal: Int) throws -> Tree {
        if let handle = catalog.indexTreeHandles[ordinal] { return try transaction.openTree(handle) }
        return try transaction.openTree(named: catalog.indexTreeNames[ordinal])
    }

    /// The tree of `index`, looked up once per transaction; nil while it does not exist.
    private mutating func indexTree(_ index: PageFileIndex) throws -> Tree? {
        if let known = indexTrees[index.ordinal] { return known }
        let tree = try existingIndexTree(index)
        indexTrees[index.ordinal] = tree
        return tree
    }

    /// The tree of `index`, nil while it does not exist (by its handle when it has one).
    private func existingIndexTree(_ index: PageFileIndex) throws -> Tree? {
        let handles = catalog.indexTreeHandles
        if index.ordinal < handles.count, let handle = handles[index.ordinal], handle.name == index.treeName {
            return try transaction.tree(handle)
        }
        return try transaction.tree(named: index.treeName)
    }

    /// Writes the encoded row `bytes` (SPEC.md §3.2) as the row `primaryKey` of the
    /// entity of `info`: a batch insert's row, its index entries the caller's.
    mutating func storeEncodedRow(_ bytes: [UInt8], primaryKey: Int64, info: PageFileCatalog.EntityInfo) throws {
        let tree = try rowTree(info)
        try PageFileKey.withPrimary(primaryKey) { key in
            try bytes.withUnsafeBytes { try tree.setValue($0, forKey: key) }
        }
    }

    /// The clash of `row` with the row holding one of its unique keys, when that is
    /// another row.
    ///
    /// - Throws: `NSFileReadCorruptFileError` for a damaged unique entry.
    func uniqueClash(of row: StoreRow, info: PageFileCatalog.EntityInfo) throws -> PageFileUniqueClash? {
        guard info.hasUniqueIndexes else { return nil }
        for index in info.indexes where index.isUnique {
            guard let key = index.key(for: row.values, primaryKey: row.objectID.key),
                let tree = try existingIndexTree(index), let value = try tree.value(forKey: key)
            else { continue }
            guard let owner = value.withUnsafeBytes({ PageFileKey.primaryKey($0) }) else {
                throw CoreDataError.make(
                    NSFileReadCorruptFileError, "a unique index entry of \(index.treeName) is damaged")
            }
            if owner != row.objectID.key { return PageFileUniqueClash(row: row, owner: owner, index: index) }
        }
        return nil
    }
}

extension PageFileWriter {
    /// Lets `body` add to the link changes while the writer records them (nil: it records
    /// none, and `body` does not run); the list is moved out and back, never copied.
    mutating func recordLinks(_ body: (inout [StoreLinkChange]) -> Void) {
        guard var changes = linkChanges.take() else { return }
        body(&changes)
        linkChanges = changes
    }
}
