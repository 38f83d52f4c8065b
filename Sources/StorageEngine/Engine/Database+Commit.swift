// Commit (SPEC.md §2.4) and checkpoint (§2.5).

extension Database {
    /// Commits the writer's changes: catalog entries, a new free-list chain, then every dirty
    /// page as log frames; publishes the new state. Returns the log sequence to wait for, or
    /// nil when there was nothing to commit. Runs under the writer lock.
    func commit(_ core: TransactionCore) throws -> UInt64? {
        guard let writer = core.writer else { return nil }
        for tree in core.trees.values where tree.changed {
            let key = Array(tree.name.utf8)
            try key.withUnsafeBytes { key in
                if tree.deleted {
                    try core.remove(core.catalog, key: key)
                } else {
                    var entry = [UInt8](repeating: 0, count: 16)
                    put64(&entry, 0, tree.root)
                    put64(&entry, 8, tree.count)
                    _ = try entry.withUnsafeBytes { try core.put(core.catalog, key: key, value: $0) }
                }
            }
        }
        guard writer.hasChanges else { return nil }
        let (newEntries, chain, freeHead) = writeFreeList(writer)
        let state = CommitState(
            transaction: writer.transaction, catalogRoot: core.catalog.root, freeListHead: freeHead,
            pageCount: writer.pageCount)
        let pages = writer.dirty.values.sorted { $0.number < $1.number }
        for page in pages { page.seal(transaction: writer.transaction) }
        let offsets: [UInt64]
        do {
            if !log.hasHeader { try log.reset(baseTransaction: checkpointed.transaction, salt: saltGenerator.next()) }
            let before = log.end
            offsets = try log.append(pages, commit: state)
            loggedBytes += log.end - before
        } catch {
            throw poisonHandle(error)
        }
        store.publish(pages, offsets: offsets)
        freeEntries = newEntries
        freeListPages = chain
        stateLock.withLock { committed = state }
        syncCoordinator.noteWritten(loggedBytes)
        return loggedBytes
    }

    /// Frees the old chain, then writes every free entry into newly allocated chain pages
    /// (allocating may consume entries; a chain page may end up partly empty).
    private func writeFreeList(_ writer: WriterState) -> ([FreeEntry], [UInt64], UInt64) {
        for page in freeListPages { writer.free(page) }
        let perPage = geometry.freeListEntriesPerPage
        var chain: [Page] = []
        while true {
            let total = writer.held.count + writer.reusable.count + writer.freed.count
            if chain.count * perPage >= total { break }
            chain.append(writer.allocate(.freeList))
        }
        var entries = writer.held
        entries.append(contentsOf: writer.reusable.map { FreeEntry(page: $0, freedAt: 0) })
        entries.append(contentsOf: writer.freed.map { FreeEntry(page: $0, freedAt: writer.transaction) })
        var cursor = 0
        for (position, page) in chain.enumerated() {
            let count = min(perPage, entries.count - cursor)
            for index in 0..<count {
                page.setU64(PageHeader.size + 16 * index, entries[cursor + index].page)
                page.setU64(PageHeader.size + 16 * index + 8, entries[cursor + index].freedAt)
            }
            page.count = count
            cursor += count
            if position + 1 < chain.count { page.link = chain[position + 1].number }
        }
        return (entries, chain.map(\.number), chain.first?.number ?? 0)
    }

    /// Copies the log's newest pages into the page file and starts a new log.
    ///
    /// Call it to bound the log or before copying the files; commits run it automatically
    /// past ``Options/checkpointThreshold``.
    /// - Throws: ``StorageError``; an I/O error poisons the handle.
    public func checkpoint() throws {
        try checkUsable()
        guard writerGate.acquire(timeout: options.busyTimeout) else {
            throw StorageError(.busy, "another writer held \(path) for \(options.busyTimeout) s")
        }
        defer { writerGate.release() }
        try checkUsable()
        try checkpointLocked()
    }

    /// The checkpoint, under the writer lock.
    func checkpointLocked() throws {
        let state = stateLock.withLock { committed }
        guard state != checkpointed else { return }
        do {
            let index = store.logIndexSnapshot().sorted { $0.key < $1.key }
            let pageSize = geometry.pageSize
            let batchPages = max(1, (1 << 20) / pageSize)
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: batchPages * pageSize, alignment: 16)
            defer { buffer.deallocate() }
            var position = 0
            while position < index.count {
                var run = 1
                while run < batchPages, position + run < index.count,
                    index[position + run].key == index[position].key + UInt64(run)
                {
                    run += 1
                }
                for offset in 0..<run {
                    let (number, logOffset) = index[position + offset]
                    let destination = buffer + offset * pageSize
                    if let cached = store.cachedPage(number) {
                        destination.copyMemory(from: cached.bytes, byteCount: pageSize)
                    } else {
                        let read = try log.file.read(
                            into: UnsafeMutableRawBufferPointer(start: destination, count: pageSize), at: logOffset)
                        guard read == pageSize else { throw StorageError.corrupt("log ends inside a committed frame") }
                    }
                }
                try dataFile.write(
                    UnsafeRawBufferPointer(start: buffer, count: run * pageSize),
                    at: index[position].key * UInt64(pageSize))
                position += run
            }
            if options.durability != .off { try dataFile.synchronize(.data) }
            let slot = 1 - metaSlot
            let meta = MetaSlot.encode(state, pageSize: pageSize, slot: slot)
            try meta.withUnsafeBytes { try dataFile.write($0, at: UInt64(slot * MetaSlot.size)) }
            if options.durability != .off { try dataFile.synchronize(.data) }
            metaSlot = slot
            checkpointed = state
            try store.resetLog { try log.reset(baseTransaction: state.transaction, salt: saltGenerator.next()) }
            syncCoordinator.markAllDurable()
        } catch {
            throw poisonHandle(error)
        }
    }
}
