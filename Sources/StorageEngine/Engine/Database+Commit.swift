// Commit (SPEC.md §2.4) and checkpoint (§2.5).

extension Database {
    /// Commits the writer's changes: catalog entries, a new free-list chain, then every dirty
    /// page as log frames; publishes the new state. Returns the log sequence to wait for, or
    /// nil when there was nothing to commit. Runs under the writer lock.
    /// `direct` commits straight into the page file (§2.4 step 7) whatever the
    /// transaction's size; the caller then holds the checkpoint lock already.
    func commit(_ core: TransactionCore, direct: Bool = false) throws -> UInt64? {
        guard let writer = core.writer else { return nil }
        internalCheck(writerGate.isHeldByCurrentThread, "§2.4: a commit without the writer lock")
        writer.beginCommit()
        // Only the loop below may have changed the catalog for the cache to carry entries
        // over: a catalog edited directly (a forged entry, a relocation) starts it afresh.
        let catalogWasUntouched = !core.catalog.changed
        for tree in core.trees.values where tree.changed {
            var name = tree.name
            try name.withUTF8 { key in
                let key = UnsafeRawBufferPointer(key)
                if tree.deleted {
                    try core.remove(core.catalog, key: key)
                } else {
                    _ = try CatalogEntry(root: tree.root, count: tree.count).withEncoded {
                        try core.put(core.catalog, key: key, value: $0)
                    }
                }
            }
        }
        guard writer.hasChanges else { return nil }
        internalCheck(core.changedTreesProblem)
        let bornInLog = store.logged(writer.freed)
        let state = CommitState(
            transaction: writer.transaction, catalogRoot: core.catalog.root, freeListHead: core.snapshot.freeListHead,
            pageCount: writer.pageCount)
        internalCheck(state.successorProblem(of: core.snapshot))
        var pages = writer.dirty.values
        pages.sort { $0.number < $1.number }
        for page in pages {
            internalCheck(page.keyOrderProblem)
            page.seal(transaction: writer.transaction)
        }
        let spills = !writer.spilled.isEmpty
        var written = pages.reduce(0) { $0 + ($1.number >= core.snapshot.pageCount ? 1 : 0) }
        if spills { written += writer.spilled.reduce(0) { $0 + ($1 >= core.snapshot.pageCount ? 1 : 0) } }
        let implicitGrowth = Int(writer.pageCount - core.snapshot.pageCount) - written
        // A transaction that spilled has pages in the page file already: it commits there.
        let large = spills || pages.count * geometry.pageSize >= options.checkpointThreshold
        if try direct || ((large || implicitGrowth > Database.implicitGrowthLimit) && beginExclusiveCheckpoint()) {
            defer { if !direct { endExclusiveCheckpoint() } }
            var entries = writer.reusable.map { FreeEntry(page: $0, freedAt: 0) }
            entries.append(contentsOf: freeList.entries)
            for (page, born) in zip(writer.freed, bornInLog) {
                entries.append(FreeEntry(page: page, freedAt: writer.transaction, bornInLog: born))
            }
            writer.freeListReturned = true
            try flush(to: state, entries: entries, extraPages: pages, spilled: writer.spilled)
            catalogCache.advance(
                committing: core.trees, from: catalogWasUntouched ? core.snapshot.transaction : nil,
                to: state.transaction, store: core.store)
            return nil
        }
        if spills {
            // Multi-process mode, another handle's snapshot in the way of a direct commit: the
            // spilled pages are read back and logged with the others (the page file's copies
            // are then unreachable until a checkpoint writes the log's over them).
            for number in Array(writer.spilled) {
                let page = try core.reloadSpilled(number, writer)
                page.seal(transaction: writer.transaction)
                pages.append(page)
            }
            pages.sort { $0.number < $1.number }
        }
        let offsets: [UInt64]
        do {
            if !log.hasHeader { try log.reset(baseTransaction: checkpointed.transaction, salt: saltGenerator.next()) }
            let before = log.end
            offsets = try log.append(freed: writer.freed, pages: pages, commit: state)
            loggedBytes += log.end - before
        } catch {
            throw poisonHandle(error)
        }
        store.publish(pages, offsets: offsets)
        writer.freeListReturned = true
        freeList.reusable = writer.reusable
        freeList.append(freed: writer.freed, at: writer.transaction, bornInLog: bornInLog)
        try announceChange(transaction: state.transaction)
        stateLock.withLock { committed = state }
        catalogCache.advance(
            committing: core.trees, from: catalogWasUntouched ? core.snapshot.transaction : nil,
            to: state.transaction, store: core.store)
        syncCoordinator.noteWritten(loggedBytes)
        return loggedBytes
    }

    /// The free-list chain for a checkpoint to `state`: chain pages come from entries no
    /// snapshot and no durable meta reaches (or extend the file); the previous chain's
    /// pages become free at `state.transaction`. Returns the final state, the chain pages,
    /// the entries they list and the chain's page numbers.
    private func prepareFreeListChain(
        _ state: CommitState, entries: [FreeEntry], excluding: Set<UInt64>
    ) -> (CommitState, [Page], [FreeEntry], [UInt64]) {
        let threshold = reuseThreshold(state)
        // Free pages at the end of the file that nothing can reach leave it (§2.5 step 2).
        var pageCount = Database.trimmedPageCount(state.pageCount, entries: entries, threshold: threshold)
        var remaining = pageCount < state.pageCount ? entries.filter { $0.page < pageCount } : entries
        var chain: [UInt64] = []
        let perPage = geometry.freeListEntriesPerPage
        // The chain takes the lowest pages it may, so that it never holds the file's end.
        var candidates = remaining.indices.filter {
            remaining[$0].freedAt <= threshold && !excluding.contains(remaining[$0].page)
        }
        candidates.sort { remaining[$0].page > remaining[$1].page }
        var taken: [Int] = []
        while chain.count * perPage < remaining.count - taken.count + freeListPages.count {
            if let index = candidates.popLast() {
                chain.append(remaining[index].page)
                taken.append(index)
            } else {
                chain.append(pageCount)
                pageCount += 1
            }
        }
        if !taken.isEmpty {
            let chosen = Set(taken)
            remaining = remaining.indices.filter { !chosen.contains($0) }.map { remaining[$0] }
        }
        var listed = remaining
        listed.append(contentsOf: freeListPages.map { FreeEntry(page: $0, freedAt: state.transaction) })
        var pages: [Page] = []
        var cursor = 0
        for (position, number) in chain.enumerated() {
            let page = Page(size: geometry.pageSize, zeroed: false)
            page.format(.freeList, number: number)
            page.contentStart = 0
            let count = min(perPage, listed.count - cursor)
            for index in 0..<count {
                page.setFreeListEntry(index, page: listed[cursor + index].page, freedAt: listed[cursor + index].freedAt)
            }
            page.count = count
            cursor += count
            if position + 1 < chain.count { page.link = chain[position + 1] }
            page.seal(transaction: state.transaction)
            pages.append(page)
        }
        var final = state
        final.freeListHead = chain.first ?? 0
        final.pageCount = pageCount
        return (final, pages, listed, chain)
    }

    /// Copies the log's newest pages into the page file and starts a new log.
    ///
    /// Call it to bound the log or before copying the files; commits run it automatically
    /// past ``Options/checkpointThreshold``. It also gives space back when a fifth of the
    /// file is free (``Options/shrinksAutomatically``, SPEC.md §2.13), which writes alone
    /// do only past half.
    /// - Throws: ``StorageError``; an I/O error poisons the handle; `readOnly` on a handle
    ///   opened with ``Options/readOnly``.
    public func checkpoint() throws {
        try withMaintenanceGate {
            if options.multiProcess {
                try Database.acquire(lockFile, byte: LockByte.writer, timeout: options.busyTimeout)
            }
            defer { if options.multiProcess { lockFile.unlock(byte: LockByte.writer) } }
            // A handle behind the others would otherwise flush its older state and reset the
            // log over their commits (L4).
            try refreshLocked()
            guard try beginExclusiveCheckpoint() else {
                throw StorageError(.busy, "another process holds a snapshot of \(path); checkpoint later")
            }
            defer { endExclusiveCheckpoint() }
            try checkpointLocked()
            try shrinkIfDue(.checkpoint)
        }
    }

    /// The checkpoint, under the writer lock.
    func checkpointLocked() throws {
        internalCheck(writerGate.isHeldByCurrentThread, "§2.5: a checkpoint without the writer lock")
        let state = stateLock.withLock { committed }
        guard state != checkpointed else {
            try settleMetaSlots()
            return
        }
        try flush(to: state, entries: freeEntries, extraPages: [])
    }

    /// Moves the log's newest pages, `extraPages` (a transaction committing directly) and a
    /// new free-list chain into the page file, flips the meta to `state` and resets the log.
    /// `spilled`: pages the transaction committing directly wrote into the page file
    /// already (§2.4 step 7a), which the log's older images must not overwrite.
    func flush(to state: CommitState, entries: [FreeEntry], extraPages: [Page], spilled: Set<UInt64> = []) throws {
        internalCheck(writerGate.isHeldByCurrentThread, "§2.5: pages flushed without the writer lock")
        // Announce before the first destructive write too: if this process dies halfway,
        // other handles still see a new counter and reload from the files (L4).
        try announceChange(transaction: state.transaction)
        do {
            let index = store.logIndexSnapshot()
            var excluded = Set(index.keys)
            for page in extraPages { excluded.insert(page.number) }
            excluded.formUnion(spilled)
            let (final, chainPages, listed, chain) = prepareFreeListChain(state, entries: entries, excluding: excluded)
            var direct: [UInt64: Page] = [:]
            for page in extraPages + chainPages { direct[page.number] = page }
            // Pages past the new end are free: their log images need not be copied.
            let numbers = Set(index.keys).union(direct.keys).filter { $0 < final.pageCount && !spilled.contains($0) }
                .sorted()
            try writeToPageFile(numbers) { number, destination in
                if let page = direct[number] ?? store.cachedPage(number) {
                    destination.copyMemory(from: page.bytes, byteCount: geometry.pageSize)
                } else if let offset = index[number] {
                    let read = try log.file.read(
                        into: UnsafeMutableRawBufferPointer(start: destination, count: geometry.pageSize), at: offset)
                    guard read == geometry.pageSize else {
                        throw StorageError.corrupt("log ends inside a committed frame")
                    }
                }
            }
            try writeMeta(final)
            try trimPageFile(to: final.pageCount)
            try store.resetLog { try log.reset(baseTransaction: final.transaction, salt: saltGenerator.next()) }
            if !spilled.isEmpty { store.forget(spilled) }
            store.publishDirect(extraPages + chainPages)
            freeEntries = listed
            freeListPages = chain
            stateLock.withLock { committed = final }
            syncCoordinator.markAllDurable()
        } catch {
            throw poisonHandle(error)
        }
        try announceChange(transaction: state.transaction)
    }

    /// Writes pages (ascending numbers) into their slots of the page file, coalescing runs
    /// into large writes, then syncs the file.
    func writeToPageFile(_ numbers: [UInt64], fill: (UInt64, UnsafeMutableRawPointer) throws -> Void) throws {
        try store.writeToPageFile(numbers, fill: fill)
        if options.durability != .off { try dataFile.synchronize(.data) }
    }
}

extension Array where Element == Page {
    /// The index of the page numbered `number` in an array sorted by number.
    func binarySearchIndex(of number: UInt64) -> Int {
        var low = 0
        var high = count - 1
        while low < high {
            let middle = (low + high) / 2
            if self[middle].number < number { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
