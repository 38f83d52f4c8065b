// A write cursor: it walks a tree in key order (by seeks to ascending keys or by next)
// and replaces or removes entries where it stands. A put or removal descends from the
// root and copies its path for every entry; the editor descends once per leaf, copies
// that leaf's path once, replaces a value in its cell (BTree+Edit.swift), and leaves the
// merge of a leaf its removals thinned until it moves off that leaf (B3 then holds as
// after the same removals one by one; an emptied leaf goes at once, V4).
//
// The editor's position is the writer's path (WriterState.pathPages), which every put or
// removal of any tree also uses: the editor checks that the path is still the one it
// left and that its tree did not change under it (its version), and descends again from
// its current key when either moved. Its own edits keep both in step.

/// Walks one tree of a write transaction in key order, replacing and removing entries as
/// it goes, one descent per leaf rather than per entry.
///
/// ```swift
/// try database.write { transaction in
///     let rows = try transaction.openTree(named: "rows")
///     try rows.edit { editor in
///         for key in sortedKeys where try editor.seek(key) {
///             try editor.replaceValue(newValue)  // or: try editor.removeEntry()
///         }
///     }
/// }
/// ```
///
/// Seeks to ascending keys within one leaf cost a search of that leaf; any other seek
/// descends from the root. Other changes may interleave (to this tree or others): the
/// editor notices and finds its place again. Call ``finish()`` when done (``Tree/edit(_:)``
/// does): it merges the last leaf the editor thinned with a sibling, as a removal would
/// have. An editor left unfinished leaves a valid tree, only less compact.
public final class TreeEditor {
    let core: TransactionCore
    let state: TreeState
    /// The leaf at the end of the writer's path when this editor put it there; nil when
    /// the editor must descend again.
    private var leaf: Page?
    /// The entry's position in `leaf` (when not `found`: where `key` would be).
    private var index = 0
    /// Whether the editor is on an entry (`key`'s).
    private var found = false
    /// Whether the editor has a position (`key` holds it).
    private var positioned = false
    /// The tree's version when the editor last positioned or changed it.
    private var version = 0
    /// Whether the path to `leaf` has been copied for this transaction.
    private var writable = false
    /// Whether the editor removed or shortened entries of `leaf` (a merge may be due).
    private var thinned = false
    /// The current key, kept to find the place again after another change. Unchecked:
    /// only this editor's own steps touch it, one at a time, and the dynamic exclusivity
    /// check of its copy cost more than the copy on every seek of a sorted walk.
    @exclusivity(unchecked) private var key: [UInt8] = []
    /// The positions a run of ``removeEntries(count:keys:)`` removes from one leaf, kept to
    /// reuse its storage from leaf to leaf. Unchecked as `key` is: the dynamic exclusivity
    /// check of each append cost ~115 instructions per removed entry.
    @exclusivity(unchecked) private var runIndices: [Int] = []

    init(core: TransactionCore, state: TreeState) {
        self.core = core
        self.state = state
        key.reserveCapacity(32)
    }

    /// Whether the editor is on an entry.
    public var isOnEntry: Bool { positioned && found }

    private func writer() throws -> WriterState {
        let writer = try core.requireWriter()
        if state.deleted { throw StorageError(.treeDeleted, "tree \"\(state.name)\" was deleted") }
        return writer
    }

    /// `leaf` while it is still where the editor left it.
    @inline(__always)
    private func currentLeaf(_ writer: WriterState) -> Page? {
        guard let leaf, state.version == version, writer.pathPages.last === leaf else { return nil }
        return leaf
    }

    /// Moves to `key`; returns whether the tree holds it (the editor is then on its entry;
    /// otherwise ``next()`` moves to the first entry after `key`).
    /// - Throws: ``StorageError``: `readOnly` in a read transaction, `closed`, `treeDeleted`,
    ///   `corrupt` for a damaged page.
    @discardableResult
    public func seek(_ key: UnsafeRawBufferPointer) throws -> Bool {
        try seek(key, writer())
    }

    private func seek(_ key: UnsafeRawBufferPointer, _ writer: WriterState) throws -> Bool {
        if let leaf = currentLeaf(writer), leaf.count > 0, compareKeys(key, leaf.leafCell(leaf.count - 1).key) <= 0,
            self.key.withUnsafeBytes({ compareKeys($0, key) }) < 0
        {
            // After the current key, at most the leaf's last: the next key of a sorted walk,
            // mostly a few entries on. Every entry before `index` is below the current key.
            (index, found) = Self.lowerBound(of: key, in: leaf, from: found ? index + 1 : index)
            remember(key)
            return found
        }
        if let leaf = currentLeaf(writer), leaf.count > 0, compareKeys(leaf.leafCell(0).key, key) <= 0,
            compareKeys(key, leaf.leafCell(leaf.count - 1).key) <= 0
        {
            // Between the leaf's first and last keys: the leaf alone decides.
            (index, found) = leaf.leafLowerBound(SearchKey(key))
            remember(key)
            return found
        }
        remember(key)
        try leaveLeaf(writer)
        return try descend(writer)
    }

    /// Moves to `key`; returns whether the tree holds it.
    /// - Throws: As ``seek(_:)-(UnsafeRawBufferPointer)``.
    @discardableResult
    public func seek(_ key: [UInt8]) throws -> Bool { try key.withUnsafeBytes { try seek($0) } }

    /// Moves to the next entry: after the current one, after the place of a seek that
    /// found nothing or of a removed entry, or the first entry when the editor has no
    /// position yet; false at the end.
    /// - Throws: ``StorageError``: `readOnly` in a read transaction, `closed`, `treeDeleted`,
    ///   `corrupt` for a damaged page.
    @discardableResult
    public func next() throws -> Bool {
        let writer = try writer()
        if !positioned {
            guard state.root != 0 else { return false }
            try core.spillIfNeeded(writer)
            writer.appendHint = nil
            try descendLeftmost(writer, from: state.root, depth: 0)
            positioned = true
        } else if currentLeaf(writer) == nil {
            guard state.root != 0 else { return false }
            _ = try descend(writer)
        }
        if found { index += 1 }
        found = false
        while let leaf, index >= leaf.count {
            if thinned {
                try leaveLeaf(writer)
                if self.leaf == nil {
                    // A merge moved entries between this leaf and a sibling: find the place again.
                    if try descend(writer) { index += 1 }
                    found = false
                    continue
                }
            }
            guard try climbToNextLeaf(writer) else { return false }
        }
        guard let leaf else { return false }
        found = true
        remember(leaf.leafCell(index).key)
        return true
    }

    /// The current entry's key.
    /// - Throws: ``StorageError``: `invalidArgument` when the editor is not on an entry,
    ///   `closed`, `treeDeleted`, `corrupt` for a damaged page.
    public var currentKey: [UInt8] {
        get throws {
            _ = try entryLeaf()
            return key
        }
    }

    /// Calls `body` with the current entry's value, not copied when it is inline; the
    /// buffer is valid only inside `body`, which must not change the tree.
    /// - Throws: What `body` throws, or ``StorageError`` as ``currentKey`` does.
    public func withValue<R>(_ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        let (leaf, _) = try entryLeaf()
        return try core.withValue(of: leaf, at: index, body)
    }

    /// Replaces the current entry's value; the editor stays on the entry.
    /// - Throws: ``StorageError``: `invalidArgument` when the editor is not on an entry,
    ///   `valueTooLarge`, `closed`, `treeDeleted`, `corrupt` for a damaged page.
    public func replaceValue(_ value: UnsafeRawBufferPointer) throws {
        guard value.count <= Int(Int32.max) else {
            throw StorageError(.valueTooLarge, "value of \(value.count) bytes; at most \(Int32.max)")
        }
        let (leaf, writer) = try writableEntryLeaf()
        let old = leaf.leafCell(index)
        let oldSize = old.size
        let shrinks =
            LeafCell.size(
                keyLength: old.keyLength, valueLength: value.count,
                isOverflow: !core.geometry.isInline(keyLength: old.keyLength, valueLength: value.count)) < oldSize
        changed()
        if try core.replaceValue(writer, tree: state, at: index, with: value) {
            if shrinks { thinned = true }
        } else {
            // The leaf split: the next use descends to the key again.
            self.leaf = nil
        }
    }

    /// Replaces the current entry's value.
    /// - Throws: As ``replaceValue(_:)-(UnsafeRawBufferPointer)``.
    public func replaceValue(_ value: [UInt8]) throws { try value.withUnsafeBytes { try replaceValue($0) } }

    /// Removes the current entry; ``next()`` then moves to the entry after it.
    /// - Throws: ``StorageError``: `invalidArgument` when the editor is not on an entry,
    ///   `closed`, `treeDeleted`, `corrupt` for a damaged page.
    public func removeEntry() throws {
        let (leaf, writer) = try writableEntryLeaf()
        try removeEntry(of: leaf, writer)
    }

    /// Moves to `key` and removes its entry when the tree holds it, as ``seek(_:)`` then
    /// ``removeEntry()`` would, in one step: a walk removing thousands of sorted keys (a
    /// save's deleted rows and their index entries) checks the writer and the editor's
    /// place once per key instead of twice. Returns whether there was an entry; either
    /// way ``next()`` then moves to the first entry after `key`.
    /// - Throws: As ``seek(_:)-(UnsafeRawBufferPointer)`` and ``removeEntry()``.
    @discardableResult
    public func removeEntry(forKey key: UnsafeRawBufferPointer) throws -> Bool {
        let writer = try writer()
        // Found, the editor stands on the entry in the current leaf (`seek` just put it there).
        guard try seek(key, writer), let leaf else { return false }
        try removeEntry(of: writable ? leaf : makeLeafWritable(writer), writer)
        return true
    }

    /// Moves to `key` and removes its entry when the tree holds it; returns whether it did.
    /// - Throws: As ``removeEntry(forKey:)-(UnsafeRawBufferPointer)``.
    @discardableResult
    public func removeEntry(forKey key: [UInt8]) throws -> Bool {
        try key.withUnsafeBytes { try removeEntry(forKey: $0) }
    }

    /// Removes the entries of `count` keys given in ascending order (`key(position)` is
    /// the key at `position`, its bytes valid until this returns; absent keys and repeats
    /// are skipped), as ``removeEntry(forKey:)-(UnsafeRawBufferPointer)`` of each in turn
    /// would, leaving the same tree: one descent per leaf, where each following key is
    /// found by searching forward from the last one, and the leaf's slot array closed once
    /// for all its removed entries. Returns how many entries it removed; ``next()`` then
    /// moves to the first entry after the last key.
    ///
    /// ```swift
    /// let removed = try tree.edit { editor in
    ///     try editor.removeEntries(count: sortedKeys.count) { sortedKeyBuffers[$0] }
    /// }
    /// ```
    ///
    /// - Throws: What `key` throws, or as ``removeEntry(forKey:)-(UnsafeRawBufferPointer)``.
    ///   Entries removed before a throw stay removed.
    /// - Complexity: O(*k* log *n*) key comparisons for *k* keys, with one descent per leaf
    ///   they fall in rather than per key.
    @discardableResult
    public func removeEntries(count: Int, keys key: (Int) throws -> UnsafeRawBufferPointer) throws -> Int {
        let writer = try writer()
        var removed = 0
        var position = 0
        while position < count {
            let first = try key(position)
            let firstFound = try seek(first, writer)
            position += 1
            guard let leaf else { continue }  // An empty tree: nothing to remove.
            // The positions of the leaf's entries to remove, found in the leaf as it is.
            runIndices.removeAll(keepingCapacity: true)
            if firstFound { runIndices.append(index) }
            var from = firstFound ? index + 1 : index
            var last = first
            var lastIndex = index
            var lastFound = firstFound
            while position < count {
                let next = try key(position)
                // Past the leaf's last key: another leaf's, or absent (a descent tells).
                let (at, found) = Self.lowerBound(of: next, in: leaf, from: from)
                guard at < leaf.count else { break }
                if found { runIndices.append(at) }
                from = found ? at + 1 : at
                (last, lastIndex, lastFound) = (next, at, found)
                position += 1
            }
            guard !runIndices.isEmpty else {
                // Every key of the run absent: the editor stands where the last one would be.
                remember(last)
                (index, found) = (lastIndex, false)
                continue
            }
            let target = writable ? leaf : makeLeafWritable(writer)
            try runIndices.withUnsafeBufferPointer { indices in
                for position in indices { try core.freeOverflow(of: target.leafCell(position), writer) }
                target.removeCells(at: indices)
            }
            removed += runIndices.count
            state.count &-= UInt64(runIndices.count)
            changed()
            // Where the last key stands in the leaf without the removed entries.
            remember(last)
            index = lastIndex - (lastFound ? runIndices.count - 1 : runIndices.count)
            try settleAfterRemoval(from: target, writer)
        }
        return removed
    }

    /// Removes the current entry of `leaf`, the editor's leaf, writable.
    private func removeEntry(of leaf: Page, _ writer: WriterState) throws {
        try core.freeOverflow(of: leaf.leafCell(index), writer)
        leaf.removeCell(at: index)
        state.count &-= 1
        changed()
        try settleAfterRemoval(from: leaf, writer)
    }

    /// After removals from `leaf`, the editor's leaf: an emptied leaf cannot wait (V4) and
    /// goes now, with what its parent loses; a thinned one is merged when the editor leaves it.
    private func settleAfterRemoval(from leaf: Page, _ writer: WriterState) throws {
        found = false
        if leaf.count == 0 {
            try core.rebalance(writer, tree: state, level: writer.pathPages.count - 1)
            self.leaf = nil
            thinned = false
        } else {
            thinned = true
        }
    }

    /// Merges the last leaf the editor thinned with a sibling when both fit in one page
    /// (B3). The editor keeps its position.
    /// - Throws: ``StorageError``: `closed`, `treeDeleted`, `corrupt` for a damaged page.
    public func finish() throws {
        try leaveLeaf(try writer())
    }

    // MARK: Steps

    /// The first position at or after `start` whose key is not below `key`, and whether it
    /// equals `key`, in `leaf`, whose keys before `start` are below `key`; `leaf.count` when
    /// every key is (a batch removal's next key past the leaf): probes 1, 2, 4, ... entries
    /// on, then searches between the last two probes (a walk removing a sixth of the
    /// entries finds each next key in a few comparisons, where a search of the whole leaf
    /// takes eight).
    private static func lowerBound(of key: UnsafeRawBufferPointer, in leaf: Page, from start: Int)
        -> (index: Int, found: Bool)
    {
        let search = SearchKey(key)
        let last = leaf.count - 1
        guard start <= last else { return (leaf.count, false) }
        var low = start
        var probe = start
        var step = 1
        while true {
            let cell = leaf.leafCell(probe)
            let order = compareKeys(cell.keyStart, cell.keyLength, search)
            if order == 0 { return (probe, true) }
            if order > 0 { break }
            if probe == last { return (leaf.count, false) }
            low = probe + 1
            probe = min(probe + step, last)
            step &<<= 1
        }
        // The answer lies in low...probe, and `probe`'s key is above `key`.
        return StorageEngine.lowerBound(low, probe) { position in
            let cell = leaf.leafCell(position)
            return compareKeys(cell.keyStart, cell.keyLength, search)
        }
    }

    private func remember(_ key: UnsafeRawBufferPointer) {
        // One access to the stored key and a copy in place: a sorted walk seeks once per entry.
        Self.copy(key, into: &self.key)
        positioned = true
    }

    /// Makes `target` hold the bytes of `source`, reusing its storage.
    private static func copy(_ source: UnsafeRawBufferPointer, into target: inout [UInt8]) {
        let count = source.count
        if target.count > count {
            target.removeLast(target.count - count)
        } else if target.count < count {
            target.append(contentsOf: repeatElement(0, count: count - target.count))
        }
        target.withUnsafeMutableBytes { $0.copyMemory(from: source) }
    }

    private func changed() {
        state.version &+= 1
        state.changed = true
        version = state.version
    }

    /// Descends to `key`, making the writer's path the editor's; returns whether it is there.
    private func descend(_ writer: WriterState) throws -> Bool {
        try core.spillIfNeeded(writer)
        writer.appendHint = nil
        thinned = false
        writable = false
        guard state.root != 0 else {
            leaf = nil
            found = false
            return false
        }
        if key.isEmpty {
            // Below every key (keys have at least one byte): before the first entry.
            try descendLeftmost(writer, from: state.root, depth: 0)
            return false
        }
        (index, found) = try key.withUnsafeBytes { try core.descend(writer, root: state.root, key: $0) }
        leaf = writer.pathPages[writer.pathPages.count - 1]
        version = state.version
        return found
    }

    /// Descends from `page` (at `depth` on the writer's path, which is cut there) to the
    /// leftmost leaf below it; the editor stands before its first entry.
    private func descendLeftmost(_ writer: WriterState, from page: Page, depth: Int) throws {
        writer.pathPages.removeSubrange(depth...)
        writer.pathIndices.removeSubrange(depth...)
        var page = page
        while !page.isLeaf {
            try page.requireBranch()
            try checkDescentDepth(writer.pathPages.count)
            writer.pathPages.append(page)
            writer.pathIndices.append(0)
            page = try core.page(page.child(0))
        }
        writer.pathPages.append(page)
        writer.pathIndices.append(0)
        leaf = page
        index = 0
        found = false
        thinned = false
        writable =
            page.transaction == writer.transaction
            && writer.pathPages.allSatisfy {
                $0.transaction == writer.transaction
            }
        version = state.version
    }

    private func descendLeftmost(_ writer: WriterState, from root: UInt64, depth: Int) throws {
        try descendLeftmost(writer, from: try core.page(root), depth: depth)
    }

    /// Moves the writer's path to the leftmost leaf of the next subtree; false past the
    /// last leaf.
    private func climbToNextLeaf(_ writer: WriterState) throws -> Bool {
        try core.spillIfNeeded(writer)
        var level = writer.pathPages.count - 2
        while level >= 0, writer.pathIndices[level] >= writer.pathPages[level].count { level -= 1 }
        guard level >= 0 else {
            leaf = nil
            return false
        }
        writer.pathIndices[level] += 1
        let parent = writer.pathPages[level]
        try descendLeftmost(writer, from: try core.page(parent.child(writer.pathIndices[level])), depth: level + 1)
        return true
    }

    /// The leaf of the current entry, found again if the path moved.
    private func entryLeaf() throws -> (Page, WriterState) {
        let writer = try writer()
        guard positioned, found else {
            throw StorageError(.invalidArgument, "the editor is not on an entry")
        }
        if let leaf = currentLeaf(writer) { return (leaf, writer) }
        guard try descend(writer), let leaf else {
            throw StorageError(.invalidArgument, "the editor's entry was removed by another change")
        }
        return (leaf, writer)
    }

    /// ``entryLeaf()`` with its path copied for this transaction (once per leaf).
    private func writableEntryLeaf() throws -> (Page, WriterState) {
        let (leaf, writer) = try entryLeaf()
        if writable { return (leaf, writer) }
        return (makeLeafWritable(writer), writer)
    }

    /// Copies the path to the editor's leaf for this transaction; returns the leaf's copy.
    private func makeLeafWritable(_ writer: WriterState) -> Page {
        core.makePathWritable(writer, tree: state)
        let copy = writer.pathPages[writer.pathPages.count - 1]
        self.leaf = copy
        writable = true
        internalCheck(key.withUnsafeBytes { core.pathProblem(writer, key: $0) })
        return copy
    }

    /// Merges the thinned leaf the editor leaves, while its path is still the writer's.
    private func leaveLeaf(_ writer: WriterState) throws {
        defer { thinned = false }
        guard thinned, let leaf = currentLeaf(writer), leaf.hasLiveBytes(below: core.geometry.usable / 4) else {
            return
        }
        try core.rebalance(writer, tree: state, level: writer.pathPages.count - 1)
        changed()
        self.leaf = nil
    }
}

extension Tree {
    /// An editor of this tree, not yet positioned.
    /// - Throws: ``StorageError``: `readOnly` in a read transaction, `closed`, `treeDeleted`.
    public func makeEditor() throws -> TreeEditor {
        _ = try core.requireWriter()
        if state.deleted { throw StorageError(.treeDeleted, "tree \"\(state.name)\" was deleted") }
        return TreeEditor(core: core, state: state)
    }

    /// Calls `body` with an editor of this tree and finishes it when `body` returns.
    /// - Throws: What `body` throws, or as ``makeEditor()``.
    public func edit<R>(_ body: (TreeEditor) throws -> R) throws -> R {
        let editor = try makeEditor()
        let result = try body(editor)
        try editor.finish()
        return result
    }
}
