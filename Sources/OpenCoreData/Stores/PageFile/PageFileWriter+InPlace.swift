// In-place updates, for a context's save (PageFileWriter+Save.swift runs its updates in
// key order): an editor per row tree replaces each stored row where it stands, one
// descent per leaf instead of per row, and the replaced entries of ordinary attribute
// indexes are removed in one sorted walk per index tree before its pending entries go
// in (finish()), so nothing moves the editors between rows. Unique indexes (later rows
// check against them) and reference indexes (an inverse to-many is read through them
// during the save) keep their entries exact at every step.
import StorageEngine

extension PageFileWriter {
    /// Writes `bytes` as the stored row `primaryKey` of the entity of `info` through the
    /// row tree's editor (a plain put when the row is not there).
    mutating func replaceStoredRow(_ bytes: [UInt8], primaryKey: Int64, info: PageFileCatalog.EntityInfo) throws {
        let tree = try rowTree(info)
        let editor = try rowEditor(info)
        try PageFileKey.withPrimary(primaryKey) { key in
            try bytes.withUnsafeBytes { value in
                if try editor.seek(key) {
                    try editor.replaceValue(value)
                } else {
                    try tree.setValue(value, forKey: key)
                }
            }
        }
    }

    /// The editor of the row tree of `info`'s entity, made on first use.
    mutating func rowEditor(_ info: PageFileCatalog.EntityInfo) throws -> TreeEditor {
        let entity = ObjectIdentifier(info.entity)
        if let known = rowEditors.first(where: { $0.entity == entity }) { return known.editor }
        let editor = try rowTree(info).makeEditor()
        rowEditors.append((entity, editor))
        return editor
    }

    /// Ends the row editors: a leaf they left thinned merges with a sibling (B3).
    mutating func finishRowEditors() throws {
        guard !rowEditors.isEmpty else { return }
        for (_, editor) in rowEditors { try editor.finish() }
        rowEditors = []
    }

    /// Whether the removal of the stored entry `key` of `index` is taken care of without
    /// touching its tree now: while updates are in place, an ordinary attribute index's
    /// entry is taken back from the pending ones or left to ``finish()``.
    mutating func deferRemoval(_ key: [UInt8], of index: PageFileIndex) -> Bool {
        guard updatesInPlace, !index.isUnique, !index.isReference else { return false }
        if pendingIndexKeys[index.ordinal].remove(key) { return true }
        if replacedIndexKeys.isEmpty {
            replacedIndexKeys = Array(repeating: PendingIndexKeys(), count: pendingIndexKeys.count)
        }
        replacedIndexKeys[index.ordinal].insert(key)
        replacedIndexes[index.ordinal] = index
        return true
    }

    /// Removes the replaced entries of the index `ordinal` in one walk of its tree.
    mutating func removeReplacedIndexKeys(ordinal: Int) throws {
        guard ordinal < replacedIndexKeys.count, replacedIndexKeys[ordinal].count > 0,
            let index = replacedIndexes[ordinal]
        else { return }
        let keys = replacedIndexKeys[ordinal]
        replacedIndexKeys[ordinal] = PendingIndexKeys()
        replacedIndexes[ordinal] = nil
        try removeStoredIndexEntries(keys, of: index)
    }
}
