// Vacuum: copy the newest state compactly into a new file and swap it in (sync the new
// file, rename it over the old one, sync the directory). A crash at any point leaves
// either the old file or the new one, with the same contents.

extension Database {
    /// Rewrites the database compactly, dropping free pages and refilling pages.
    ///
    /// Snapshots open during a vacuum keep reading the old file, which stays valid for them.
    /// - Throws: ``StorageError``; an I/O error poisons the handle (reopen recovers either
    ///   file).
    /// - Complexity: O(entries).
    public func vacuum() throws {
        try withMaintenanceGate { try vacuumLocked() }
    }

    /// The vacuum, under the writer gate.
    private func vacuumLocked() throws {
        if options.multiProcess {
            // Other handles would keep reading the replaced file: vacuum only when alone.
            guard try lockFile.tryLock(byte: LockByte.open, exclusive: true) else {
                throw StorageError(.busy, "another handle has \(path) open; vacuum needs it alone")
            }
            try refreshLocked()
        }
        defer { if options.multiProcess { _ = try? lockFile.tryLock(byte: LockByte.open, exclusive: false) } }
        try checkpointLocked()
        let temporary = path + "-vacuum"
        do {
            for suffix in ["", "-wal", "-lock", "-new"] { try fileSystem.removeFile(atPath: temporary + suffix) }
            var targetOptions = options
            targetOptions.pageSize = geometry.pageSize
            targetOptions.checkpointOnClose = true
            targetOptions.createIfMissing = true
            targetOptions.checkpointThreshold = Int.max
            let target = try Database.open(at: temporary, options: targetOptions)
            let state = stateLock.withLock { committed }
            let source = TransactionCore(store: store, snapshot: state, geometry: geometry, writer: nil)
            let reader = ReadTransaction(database: self, core: source, readerID: nil)
            try target.write { transaction in
                for name in try reader.treeNames() {
                    guard let tree = try reader.tree(named: name) else { continue }
                    let copy = try transaction.openTree(named: name)
                    try tree.scan { key, value in
                        try copy.setValue(value, forKey: key)
                        return true
                    }
                }
            }
            reader.close()
            target.stateLock.withLock {
                target.committed.transaction = max(target.committed.transaction, state.transaction)
            }
            try target.close()
            try fileSystem.renameFile(atPath: temporary, toPath: path)
            if options.durability != .off { try fileSystem.synchronizeDirectory(atPath: Database.directory(of: path)) }
            for suffix in ["-wal", "-lock"] { try fileSystem.removeFile(atPath: temporary + suffix) }
            let newFile = try fileSystem.openFile(atPath: path, create: false)
            let choice = try Database.readMeta(newFile, path: path)
            let (meta, slot) = (choice.state, choice.slot)
            let newStore = PageStore(
                dataFile: newFile, log: log, pageSize: geometry.pageSize, cacheBytes: options.cacheSize)
            let (entries, pages) = try Database.rebuildFreeList(
                newStore, geometry: geometry, meta: meta, recovery: WriteAheadLog.Recovery(state: meta))
            try newStore.resetLog { try log.reset(baseTransaction: meta.transaction, salt: saltGenerator.next()) }
            stateLock.withLock {
                store = newStore
                dataFile = newFile
                committed = meta
                catalogCache.clear()
            }
            checkpointed = meta
            metaSlot = slot
            metaRepair = .none
            freeEntries = entries
            freeListPages = pages
        } catch {
            throw poisonHandle(error)
        }
    }
}
