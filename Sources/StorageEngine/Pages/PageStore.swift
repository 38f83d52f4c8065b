// Where committed pages come from: the page cache, else the newest log frame of the
// page, else the page file. Every page read from disk is validated once (P1) and then
// shared read-only. A page's newest copy is the copy every snapshot that reaches it
// sees (SPEC.md §2.7), so the store needs no versions.

/// The committed pages of one open database.
final class PageStore: @unchecked Sendable {
    let pageSize: Int
    let dataFile: any StorageFile
    let log: WriteAheadLog
    /// Guards the cache and the log index, and each miss's lookup-and-read so a checkpoint
    /// cannot move a page between the two.
    let lock = Lock()
    // Every access to these happens under `lock`, so the per-access dynamic exclusivity
    // checks (a runtime call each, on every level of every lookup) buy nothing.
    @exclusivity(unchecked) private var cache: ContiguousArray<Page?> = []
    /// `searchSlots[i]` describes `cache[i]` for a reader's descent (``readerValue``):
    /// plain pointers, so the descent neither touches nor reference-counts page objects.
    @exclusivity(unchecked) private var searchSlots: ContiguousArray<SearchSlot> = []
    @exclusivity(unchecked) private var cachedCount = 0
    private let capacity: Int
    @exclusivity(unchecked) private var clockHand = 0
    /// Page number -> offset of its newest committed image in the log.
    @exclusivity(unchecked) private(set) var logIndex = PageNumberTable<UInt64>()

    init(dataFile: any StorageFile, log: WriteAheadLog, pageSize: Int, cacheBytes: Int) {
        self.dataFile = dataFile
        self.log = log
        self.pageSize = pageSize
        capacity = max(64, cacheBytes / pageSize)
    }

    /// The committed page `number`, validated against `maximumTransaction`.
    func page(_ number: UInt64, maximumTransaction: UInt64) throws -> Page {
        lock.lock()
        defer { lock.unlock() }
        return try pageLocked(number, maximumTransaction: maximumTransaction)
    }

    /// ``page(_:maximumTransaction:)`` for a caller holding `lock` (a reader's whole
    /// descent takes the lock once instead of once per level).
    @inline(__always)
    func pageLocked(_ number: UInt64, maximumTransaction: UInt64) throws -> Page {
        let index = Int(number)
        if index < cache.count, let page = cache[index] {
            #if STORAGE_ENGINE_INTERNAL_CHECKS
                if page.number != number { internalCheckFailed("P1: the cache holds page \(page.number) as \(number)") }
            #endif
            return page
        }
        return try loadLocked(number, maximumTransaction: maximumTransaction)
    }

    /// What a reader's locked point lookup found.
    enum ReaderLookup<Found> {
        /// What the leaf cell holding the key gave.
        case found(Found)
        case absent
        /// An overflow value (for ``readerValue(root:key:limit:maximumTransaction:)``) or a
        /// page that is not a tree node: the caller takes the general path (which reads the
        /// chain, or reports the damage).
        case generalPath
    }

    /// A read transaction's point lookup in the tree at `root`, under one hold of the lock:
    /// the descent reads search slots, search tables and the one cell, and copies an
    /// inline value out before unlocking.
    func readerValue(
        root: UInt64, key: SearchKey, limit: UInt64, maximumTransaction: UInt64
    ) throws -> ReaderLookup<[UInt8]> {
        var hint = DescentHint()
        return try lookUp(root: root, key: key, limit: limit, maximumTransaction: maximumTransaction, hint: &hint) {
            bytes, offset, loaded, _ in
            let cell = LeafCell(bytes + offset)
            guard !cell.isOverflow else { return .generalPath }
            let value = Array(cell.inlineValue)
            return withExtendedLifetime(loaded) { .found(value) }
        }
    }

    /// Like ``readerValue(root:key:limit:maximumTransaction:)``, but hands back the
    /// leaf (kept alive by this reference) and the cell's offset, so the caller can read
    /// the value in place after the lock is released; only the leaf's page object is
    /// retained.
    ///
    /// `hint` is where the tree's previous lookup went down; the descent starts each
    /// branch search there and records its own path in it (``DescentHint``).
    func readerCell(
        root: UInt64, key: SearchKey, limit: UInt64, maximumTransaction: UInt64, hint: inout DescentHint
    ) throws -> ReaderLookup<(leaf: Page, offset: Int)> {
        try lookUp(root: root, key: key, limit: limit, maximumTransaction: maximumTransaction, hint: &hint) {
            _, offset, loaded, index in
            guard let leaf = loaded ?? cache[index] else { return .generalPath }
            return .found((leaf, offset))
        }
    }

    /// Runs a locked descent for `key`; `found` reads the leaf cell it ends at (its bytes,
    /// offset, the page if just loaded, and its cache index) while the lock is still held.
    @inline(__always)
    private func lookUp<Found>(
        root: UInt64, key: SearchKey, limit: UInt64, maximumTransaction: UInt64, hint: inout DescentHint,
        found: (UnsafeRawPointer, Int, Page?, Int) -> ReaderLookup<Found>
    ) throws -> ReaderLookup<Found> {
        lock.lock()
        defer { lock.unlock() }
        switch try descendLocked(
            root: root, key: key, limit: limit, maximumTransaction: maximumTransaction, hint: &hint)
        {
        case .generalPath: return .generalPath
        case .absent: return .absent
        case .found(let bytes, let offset, let loaded, let index): return found(bytes, offset, loaded, index)
        }
    }

    /// Where a locked descent ended: the leaf cell holding the key, no such key, or a page
    /// the fast path does not handle.
    private enum Descent {
        /// `bytes` stay valid while the lock is held (and `loaded`, a page just read in
        /// that the cache may already have evicted, is kept alive).
        case found(bytes: UnsafeRawPointer, cellOffset: Int, loaded: Page?, index: Int)
        case absent
        case generalPath
    }

    /// The descent both lookups share. The caller holds `lock`.
    @inline(__always)
    private func descendLocked(
        root: UInt64, key: SearchKey, limit: UInt64, maximumTransaction: UInt64, hint: inout DescentHint
    ) throws -> Descent {
        var number = root
        var depth = 0
        while true {
            guard number >= 1 && number < limit else {
                throw StorageError.corrupt("page number \(number) out of range 1..<\(limit)")
            }
            let index = Int(number)
            var slot = index < searchSlots.count ? searchSlots[index] : SearchSlot()
            // Keeps a page just loaded alive even if the clock evicted it on insertion.
            var loaded: Page?
            if slot.table == nil {
                let page = try searchablePageLocked(number, maximumTransaction: maximumTransaction)
                slot = SearchSlot(page)
                loaded = page
            }
            guard let table = slot.table, let bytes = slot.bytes else { return .generalPath }
            let count = slot.count
            if slot.isLeaf {
                let (position, found) = tableLeafSearch(bytes, table, count, key)
                guard found else { return withExtendedLifetime(loaded) { .absent } }
                return .found(
                    bytes: bytes, cellOffset: Int(truncatingIfNeeded: table[count + position]), loaded: loaded,
                    index: index)
            }
            let child = tableBranchSearch(bytes, table, count, key, from: hint.child(atLevel: depth, of: number))
            hint.record(child, atLevel: depth, of: number)
            depth += 1
            try checkDescentDepth(depth)
            number = table[count + child]
            withExtendedLifetime(loaded) {}
        }
    }

    /// ``pageLocked(_:maximumTransaction:)`` for a reader's search: builds the page's
    /// search table first if it has none yet (a published page gets it on its first
    /// search, not at publish) and refreshes its search slot. The caller holds `lock`.
    @inline(__always)
    func searchablePageLocked(_ number: UInt64, maximumTransaction: UInt64) throws -> Page {
        let page = try pageLocked(number, maximumTransaction: maximumTransaction)
        if page.prefixes == nil { buildSearchTableLocked(page) }
        return page
    }

    @inline(never)
    private func buildSearchTableLocked(_ page: Page) {
        page.buildPrefixes()
        let index = Int(page.number)
        if index < cache.count, cache[index] === page { searchSlots[index] = SearchSlot(page) }
    }

    /// A cache miss: reads, validates and caches page `number`. The caller holds `lock`.
    private func loadLocked(_ number: UInt64, maximumTransaction: UInt64) throws -> Page {
        let index = Int(number)
        let page = Page(size: pageSize)
        if let offset = logIndex[number] {
            try log.readImage(at: offset, into: page)
        } else {
            let read = try dataFile.read(
                into: UnsafeMutableRawBufferPointer(start: page.bytes, count: pageSize), at: number * UInt64(pageSize))
            guard read == pageSize else {
                throw StorageError.corrupt("page \(number): the page file ends before it (truncated)")
            }
        }
        try page.validate(number: number, maximumTransaction: maximumTransaction)
        page.buildPrefixes()
        insertLocked(page, at: index)
        return page
    }

    private func insertLocked(_ page: Page, at index: Int) {
        if index >= cache.count {
            let growth = max(index + 1 - cache.count, cache.count / 2)
            cache.append(contentsOf: repeatElement(nil, count: growth))
            searchSlots.append(contentsOf: repeatElement(SearchSlot(), count: growth))
        }
        if cache[index] == nil { cachedCount += 1 }
        page.markShared()
        cache[index] = page
        searchSlots[index] = SearchSlot(page)
        if cachedCount > capacity { evictLocked() }
    }

    private func evictLocked() {
        let target = capacity - capacity / 8
        while cachedCount > target {
            clockHand = clockHand >= cache.count - 1 ? 1 : clockHand + 1
            if cache[clockHand] != nil {
                cache[clockHand] = nil
                searchSlots[clockHand] = SearchSlot()
                cachedCount -= 1
            }
        }
    }

    /// Publishes a transaction's pages after their frames are written: they become the
    /// newest copies. Their search tables are built on their first search by a reader
    /// (``searchablePageLocked(_:maximumTransaction:)``): the next commit often copies them
    /// again before anyone searches them.
    func publish(_ pages: [Page], offsets: [UInt64]) {
        lock.withLock {
            for (page, offset) in zip(pages, offsets) where page.number != 0 {
                logIndex[page.number] = offset
                insertLocked(page, at: Int(page.number))
            }
        }
    }

    /// Publishes pages written straight into the page file (no log frames); their search
    /// tables too are built on first search.
    func publishDirect(_ pages: [Page]) {
        lock.withLock {
            for page in pages {
                logIndex[page.number] = nil
                insertLocked(page, at: Int(page.number))
            }
        }
    }

    /// For each page, whether it has a frame in the current log (was written after the
    /// durable meta).
    func logged(_ pages: [UInt64]) -> [Bool] {
        lock.withLock { pages.map { logIndex[$0] != nil } }
    }

    /// The log offset of page `number`'s newest image, if it is in the log.
    func logIndexSnapshotOffset(_ number: UInt64) -> UInt64? { lock.withLock { logIndex[number] } }

    /// Forgets every cached page and installs a new log index (another handle changed the
    /// files), atomically for readers.
    func replaceAll(logIndex index: [UInt64: UInt64]) {
        lock.withLock {
            cache.removeAll()
            searchSlots.removeAll()
            cachedCount = 0
            logIndex = PageNumberTable(index)
        }
    }

    /// Installs the index found by recovery.
    func installLogIndex(_ index: [UInt64: UInt64]) {
        lock.withLock { logIndex = PageNumberTable(index) }
    }

    /// The log index, for a checkpoint (taken under the writer lock, so it cannot change).
    func logIndexSnapshot() -> PageNumberTable<UInt64> { lock.withLock { logIndex } }

    /// How many pages the cache holds now (at most its capacity, from `cacheBytes`).
    var cachedPageCount: Int { lock.withLock { cachedCount } }

    /// A cached copy of page `number`, if any.
    func cachedPage(_ number: UInt64) -> Page? {
        lock.withLock {
            let index = Int(number)
            return index < cache.count ? cache[index] : nil
        }
    }

    /// After a checkpoint copied every logged page into the page file: forget the log
    /// offsets and let `body` reset the log, atomically for readers.
    func resetLog(_ body: () throws -> Void) rethrows {
        try lock.withLock {
            try body()
            logIndex.removeAll()
        }
    }

    /// Writes pages (ascending numbers) into their slots of the page file, coalescing runs
    /// of consecutive numbers into writes of up to 1 MiB; `fill` copies page `number` to
    /// the pointer. Does not sync.
    func writeToPageFile(_ numbers: [UInt64], fill: (UInt64, UnsafeMutableRawPointer) throws -> Void) throws {
        let batchPages = max(1, (1 << 20) / pageSize)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: batchPages * pageSize, alignment: 16)
        defer { buffer.deallocate() }
        var position = 0
        while position < numbers.count {
            var run = 1
            while run < batchPages, position + run < numbers.count,
                numbers[position + run] == numbers[position] + UInt64(run)
            {
                run += 1
            }
            for offset in 0..<run { try fill(numbers[position + offset], buffer + offset * pageSize) }
            try dataFile.write(
                UnsafeRawBufferPointer(start: buffer, count: run * pageSize), at: numbers[position] * UInt64(pageSize))
            position += run
        }
    }

    /// Forgets the cached copies and log offsets of `numbers`: a transaction that spilled
    /// (SPEC.md §2.4 step 7a) wrote their new images straight into the page file.
    func forget(_ numbers: Set<UInt64>) {
        lock.withLock {
            for number in numbers {
                logIndex[number] = nil
                let index = Int(number)
                guard index < cache.count, cache[index] != nil else { continue }
                cache[index] = nil
                searchSlots[index] = SearchSlot()
                cachedCount -= 1
            }
        }
    }

    /// Drops every cached page (after vacuum replaced the file).
    func clearCache() {
        lock.withLock {
            cache.removeAll()
            searchSlots.removeAll()
            cachedCount = 0
            logIndex = PageNumberTable()
        }
    }
}
