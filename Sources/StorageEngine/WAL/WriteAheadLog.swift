// The write-ahead log (SPEC.md §2.3; its header and frame layout: LogFormat.swift).
// Commits append frames, a checkpoint resets the log to a new generation (fresh salt),
// and opening scans the frames to recover the committed state (§2.6).

#if canImport(Glibc)
    import Glibc
#endif

/// Zeros that log preallocations write from: a read-only anonymous mapping, so clearing
/// it costs nothing (clearing the frame buffer before each 1 MiB step did, in a small
/// commit's share) and its pages stay the kernel's shared zero page (no resident memory).
/// Nil if the mapping fails; the frame buffer is cleared then.
enum LogZeros {
    static let byteCount = 1 << 20
    private static let address: UInt = {
        guard let mapped = mmap(nil, byteCount, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
            mapped != MAP_FAILED
        else { return 0 }
        return UInt(bitPattern: mapped)
    }()
    static var bytes: UnsafeRawPointer? { UnsafeRawPointer(bitPattern: address) }
}

/// The log file: appends frames, resets after a checkpoint, and scans on open.
final class WriteAheadLog: @unchecked Sendable {
    /// The log format this build writes (SPEC.md §2.3); it also reads format 1.
    static let formatVersion = 2

    let file: any StorageFile
    let pageSize: Int
    var frameSize: Int { FrameHeader.size + pageSize }
    /// The current header's salt; meaningful once `hasHeader`.
    private(set) var salt: UInt64 = 0
    private(set) var baseTransaction: UInt64 = 0
    /// Whether this generation's header has been written (or read back valid).
    private(set) var hasHeader = false
    /// This generation's format: 2 when this build reset the log, 1 for a generation an
    /// older build began (its frames keep format 1 until the next reset).
    private(set) var version = WriteAheadLog.formatVersion
    /// Where the next frame goes.
    private(set) var end = UInt64(LogHeader.size)
    private(set) var chain: UInt64 = 0
    /// Bytes of committed frames in this generation.
    var committedBytes: UInt64 { end - UInt64(LogHeader.size) }
    /// Committed frames in this generation (page images and free records).
    private(set) var committedFrames: UInt64 = 0
    /// Bytes at the start of the file already written (frames of any generation, or the
    /// zeros of a preallocation): frames inside them overwrite blocks the file system has
    /// allocated, so a sync writes data only, not a new file size (SPEC.md §2.3 W3).
    private(set) var allocatedEnd: UInt64 = 0
    /// The most frames the log grows by at once, written as zeros.
    let growthFrames: Int
    /// Past this size a reset shrinks the file back to it (a log that grew while
    /// checkpoints were blocked does not stay large).
    let retainedBytes: UInt64
    fileprivate var buffer: UnsafeMutableRawPointer
    fileprivate let bufferFrames: Int
    /// The pieces of the next gathered write (reused between commits). Used under the
    /// writer lock only, so its dynamic exclusivity checks (a runtime call per access,
    /// several per frame) buy nothing.
    @exclusivity(unchecked) fileprivate var pieces: [UnsafeRawBufferPointer] = []
    /// At most this many pieces per gathered write (a frame adds two).
    fileprivate static let maximumPieces = 512

    /// A log in `file` for pages of `pageSize` bytes; `checkpointThreshold` (the log size
    /// at which commits checkpoint) sizes its preallocation steps and its retained size.
    init(file: any StorageFile, pageSize: Int, checkpointThreshold: Int) {
        self.file = file
        self.pageSize = pageSize
        let frameSize = FrameHeader.size + pageSize
        bufferFrames = max(1, (1 << 20) / frameSize)
        // Steps of at most an eighth of the threshold (at most 1 MiB, at least 4 frames):
        // about 8 of them fill the first generation once the file has doubled up to that
        // size, and each steady-state generation extends nothing.
        let threshold = min(max(0, checkpointThreshold), 1 << 48)
        growthFrames = max(4, min((1 << 20) / frameSize, threshold / 8 / frameSize))
        let thresholdFrames = UInt64(threshold / frameSize + 1)
        let chunks = (thresholdFrames + UInt64(growthFrames) - 1) / UInt64(growthFrames)
        retainedBytes = UInt64(LogHeader.size) + 2 * chunks * UInt64(growthFrames * frameSize)
        buffer = UnsafeMutableRawPointer.allocate(
            byteCount: bufferFrames * (FrameHeader.size + pageSize), alignment: 16)
    }

    deinit { buffer.deallocate() }

    /// Starts a new generation: a header with a fresh salt. Frames already in the file stop
    /// validating because their salt differs.
    /// `version` is for tests that need a format-1 generation (as an older build left it).
    func reset(baseTransaction: UInt64, salt newSalt: UInt64, version newVersion: Int = formatVersion) throws {
        let header = LogHeader.encode(
            version: newVersion, pageSize: pageSize, salt: newSalt, baseTransaction: baseTransaction)
        try header.withUnsafeBytes { try file.write($0, at: 0) }
        allocatedEnd = max(allocatedEnd, UInt64(LogHeader.size))
        version = newVersion
        salt = newSalt
        self.baseTransaction = baseTransaction
        hasHeader = true
        end = UInt64(LogHeader.size)
        committedFrames = 0
        chain = newSalt
        if allocatedEnd > 2 * retainedBytes {
            // Every frame past the new header is stale (old salt), so dropping them is safe
            // whichever of the header write and the truncation survives a crash.
            try file.truncate(to: retainedBytes)
            allocatedEnd = retainedBytes
        }
    }

    /// Writes zeros after `position` (the end of the frames, at or past the written bytes)
    /// so that the frames of later commits overwrite allocated blocks: as many bytes as
    /// the log's frames already take (the file doubles), at least 4 and at most
    /// `growthFrames` frames. Unsynced: the sync of the commit that needed it covers it;
    /// zeros or garbage there are frames that do not validate.
    private func preallocate(from position: UInt64) throws {
        let frames = (position - UInt64(LogHeader.size)) / UInt64(frameSize)
        let step = UInt64(frameSize) * min(UInt64(growthFrames), max(4, frames))
        let target = position + step
        var offset = position
        let zeros: UnsafeRawPointer
        let capacity: Int
        if let shared = LogZeros.bytes {
            zeros = shared
            capacity = Int(min(UInt64(LogZeros.byteCount), step))
        } else {
            capacity = Int(min(UInt64(bufferFrames * frameSize), step))
            memset(buffer, 0, capacity)
            zeros = UnsafeRawPointer(buffer)
        }
        while offset < target {
            let count = Int(min(UInt64(capacity), target - offset))
            try file.write(UnsafeRawBufferPointer(start: zeros, count: count), at: offset)
            offset += UInt64(count)
        }
        allocatedEnd = target
    }

    /// Empties the file (a clean close, after a checkpoint): every frame in it is at most
    /// the durable meta's transaction, so whichever of the old bytes survive a crash,
    /// recovery applies none of them.
    func truncateAfterCheckpoint() throws {
        try file.truncate(to: 0)
        allocatedEnd = 0
        hasHeader = false
        end = UInt64(LogHeader.size)
        committedFrames = 0
    }

    /// Appends one transaction's frames: records of the committed pages it freed, then
    /// `pages` (already sealed), the last flagged commit with `state`. Returns the offsets
    /// of the page images, in the order of `pages`.
    func append(freed: [UInt64], pages: [Page], commit state: CommitState) throws -> [UInt64] {
        precondition(hasHeader && !(pages.isEmpty && freed.isEmpty))
        internalCheck(Self.pageImagesProblem(pages, commit: state))
        var offsets: [UInt64] = []
        offsets.reserveCapacity(pages.count)
        pieces.removeAll(keepingCapacity: true)
        var writer = FrameWriter(log: self, position: end, chain: chain)
        // Format-1 free records are pages too, written from their own bytes: they must
        // live until the last write.
        var legacyRecords: [Page] = []
        if version >= 2 {
            // Format 2: short records of at most a page of entries each (W1). The last frame
            // is a free record only when no page was written (a catalog emptied).
            let perRecord = FreeRecordPayload.capacity(pageSize: pageSize)
            var start = 0
            while start < freed.count {
                let count = min(perRecord, freed.count - start)
                let commit = pages.isEmpty && start + count == freed.count ? state : nil
                let bytes = FreeRecordPayload.entrySize * count
                _ = try writer.frame(payloadBytes: bytes) { frame, payload in
                    frame.pageNumber = 0
                    frame.transaction = state.transaction
                    frame.payloadLength = bytes
                    if let commit { frame.storeCommit(commit) }
                    for index in 0..<count {
                        payload.setU64(at: FreeRecordPayload.entrySize * index, freed[start + index])
                    }
                    return XXH64.hash(payload, count: bytes, seed: 0)
                }
                start += count
            }
        } else {
            // A format-1 generation (recovered from an older build) keeps format-1 frames.
            legacyRecords = legacyFreeRecords(freed, transaction: state.transaction)
            for (index, record) in legacyRecords.enumerated() {
                let commit = pages.isEmpty && index == legacyRecords.count - 1 ? state : nil
                _ = try writer.frame(page: record, transaction: state.transaction, commit: commit)
            }
        }
        for (index, page) in pages.enumerated() {
            offsets.append(
                try writer.frame(
                    page: page, transaction: state.transaction, commit: index == pages.count - 1 ? state : nil))
        }
        let position = try withExtendedLifetime(legacyRecords) { try writer.finish() }
        end = position
        committedFrames += writer.frames
        chain = writer.chain
        allocatedEnd = max(allocatedEnd, position)
        if position >= allocatedEnd { try preallocate(from: position) }
        return offsets
    }

    /// The problem with the page images of one commit (§2.3, W2): not in ascending page
    /// order, outside `1..<pageCount`, or not sealed by the committing transaction (P1;
    /// builds with internal checks know a page is sealed without hashing it again).
    static func pageImagesProblem(_ pages: [Page], commit state: CommitState) -> String? {
        var previous: UInt64 = 0
        for page in pages {
            guard page.number > previous, page.number < state.pageCount else {
                return "§2.3: page image \(page.number) after \(previous), with \(state.pageCount) pages"
            }
            guard page.transaction == state.transaction, page.isSealed else {
                return "P1: page \(page.number) is not sealed by transaction \(state.transaction)"
            }
            previous = page.number
        }
        return nil
    }

    /// Gathers frames and writes them in large pieces: frame headers and free records in
    /// the log's buffer, page images from the pages' own bytes (a gathered write, so a
    /// commit does not copy its pages into the buffer first).
    private struct FrameWriter {
        let log: WriteAheadLog
        /// File offset of the first byte not yet written.
        var position: UInt64
        /// Bytes added since the last write (buffered and the pages').
        var pending = 0
        /// Bytes of the log's buffer in use.
        var used = 0
        var chain: UInt64
        /// Frames added.
        var frames: UInt64 = 0

        init(log: WriteAheadLog, position: UInt64, chain: UInt64) {
            self.log = log
            self.position = position
            self.chain = chain
        }

        /// Adds one frame with a `payloadBytes` payload: `fill` writes the frame header's
        /// fields (the salt and checksum are added here) and, unless the payload is
        /// `pageBytes`, the payload after it; it returns the payload's own checksum, which
        /// the chained checksum covers. Returns the payload's file offset.
        mutating func frame(
            payloadBytes: Int, pageBytes: UnsafeRawPointer? = nil,
            fill: (FrameHeader, UnsafeMutableRawPointer) -> UInt64
        ) throws -> UInt64 {
            let size = FrameHeader.size + payloadBytes
            if pending + size > log.bufferFrames * log.frameSize || log.pieces.count + 2 > WriteAheadLog.maximumPieces {
                try flush()
            }
            let frame = FrameHeader(log.buffer + used)
            memset(frame.base, 0, FrameHeader.size)
            let payloadChecksum = fill(frame, frame.base + FrameHeader.size)
            frame.salt = log.salt
            frame.checksum = payloadChecksum
            chain = XXH64.hash(frame.base, count: FrameHeader.size, seed: chain)
            frame.checksum = chain
            let buffered = pageBytes == nil ? size : FrameHeader.size
            addPiece(UnsafeRawPointer(log.buffer + used), buffered)
            used += buffered
            if let pageBytes { addPiece(pageBytes, payloadBytes) }
            let offset = position + UInt64(pending + FrameHeader.size)
            pending += size
            frames += 1
            return offset
        }

        /// Appends `count` bytes at `start` to the next write, extending the last piece
        /// when they follow it.
        private func addPiece(_ start: UnsafeRawPointer, _ count: Int) {
            if let last = log.pieces.last, let base = last.baseAddress, base + last.count == start {
                log.pieces[log.pieces.count - 1] = UnsafeRawBufferPointer(start: base, count: last.count + count)
            } else {
                log.pieces.append(UnsafeRawBufferPointer(start: start, count: count))
            }
        }

        /// Adds a page image frame; `commit` flags it as its transaction's commit frame.
        /// The page's bytes are written from the page itself, which must not change before
        /// ``finish()`` (a sealed page does not).
        mutating func frame(page: Page, transaction: UInt64, commit: CommitState?) throws -> UInt64 {
            try frame(payloadBytes: log.pageSize, pageBytes: UnsafeRawPointer(page.bytes)) { frame, _ in
                frame.pageNumber = page.number
                frame.transaction = transaction
                if let commit { frame.storeCommit(commit) }
                return page.storedChecksum
            }
        }

        mutating func flush() throws {
            guard pending > 0 else { return }
            defer { log.pieces.removeAll(keepingCapacity: true) }
            if log.pieces.count == 1 {
                try log.file.write(log.pieces[0], at: position)
            } else {
                try log.pieces.withUnsafeBufferPointer { try log.file.write(gathering: $0, at: position) }
            }
            position += UInt64(pending)
            pending = 0
            used = 0
        }

        /// Writes what is pending; returns the offset after the last frame.
        mutating func finish() throws -> UInt64 {
            try flush()
            return position
        }
    }

    /// Format-1 free records: whole pages (kind 5, number 0) of page numbers.
    private func legacyFreeRecords(_ freed: [UInt64], transaction: UInt64) -> [Page] {
        let perPage = FreeRecordPage.capacity(pageSize: pageSize)
        var records: [Page] = []
        var start = 0
        while start < freed.count {
            let count = min(perPage, freed.count - start)
            let page = Page(size: pageSize, zeroed: false)
            page.format(.freeRecord, number: 0)
            page.contentStart = 0
            for index in 0..<count { page.setFreeRecordEntry(index, freed[start + index]) }
            page.count = count
            page.seal(transaction: transaction)
            records.append(page)
            start += count
        }
        return records
    }

    /// What a scan of the log found.
    struct Recovery {
        var state: CommitState
        /// Page number -> offset of its newest committed image.
        var index: [UInt64: UInt64] = [:]
        var appliedTransactions = 0
        /// Each applied transaction: its state, the pages it wrote and the pages it freed.
        var transactions: [(state: CommitState, written: [UInt64], freed: [UInt64])] = []
        /// The base of a log that began after the meta recovery started from (the newest
        /// meta was lost, §2.6 step 2); such a log is set aside, its frames unread.
        var newerLogBase: UInt64?
    }

    /// Reads the header and scans the frames (SPEC.md §2.6), starting from the page file's
    /// `meta`. Never writes. A log whose base lies after `meta` is set aside (its base in
    /// ``Recovery/newerLogBase``): the caller decides whether that is acceptable (M4).
    /// Whether the file holds log this handle has not recovered: a frame of this
    /// generation's salt where this handle's next frame goes, or a header it did not read
    /// (another handle's reset). A multi-process writer told of no change checks it before
    /// it appends: a process killed between its append and its announcement leaves a
    /// commit there that a handle opened since may have read, and appending over it would
    /// take that commit back. A false "yes" (a torn append of a killed process) costs one
    /// reload.
    func holdsFramesBeyondEnd() throws -> Bool {
        var header = [UInt8](repeating: 0, count: LogHeader.size)
        let headerBytes = try header.withUnsafeMutableBytes { try file.read(into: $0, at: 0) }
        guard headerBytes == LogHeader.size, LogHeader.isIntact(header) else { return hasHeader }
        guard hasHeader, get64(header, LogHeader.saltOffset) == salt else { return true }
        var frame = [UInt8](repeating: 0, count: FrameHeader.size)
        let frameBytes = try frame.withUnsafeMutableBytes { try file.read(into: $0, at: end) }
        return frameBytes == FrameHeader.size && get64(frame, FrameHeader.saltOffset) == salt
    }

    func recover(from meta: CommitState) throws -> Recovery {
        var recovery = Recovery(state: meta)
        hasHeader = false
        version = Self.formatVersion
        let fileSize = try file.size()
        allocatedEnd = fileSize
        guard fileSize >= UInt64(LogHeader.size) else { return recovery }
        var header = [UInt8](repeating: 0, count: LogHeader.size)
        _ = try header.withUnsafeMutableBytes { try file.read(into: $0, at: 0) }
        guard LogHeader.isIntact(header) else { return recovery }
        let headerVersion = get32(header, LogHeader.versionOffset)
        guard headerVersion >= 1 && headerVersion <= UInt32(Self.formatVersion) else {
            throw StorageError(
                .unsupportedFormat, "log format version \(headerVersion) (this build reads 1 to \(Self.formatVersion))")
        }
        let headerPageSize = Int(get32(header, LogHeader.pageSizeOffset))
        guard headerPageSize == pageSize else {
            throw StorageError.corrupt("log page size \(headerPageSize) differs from the page file's \(pageSize)")
        }
        let base = get64(header, LogHeader.baseTransactionOffset)
        guard base <= meta.transaction else {
            recovery.newerLogBase = base
            return recovery
        }
        version = Int(headerVersion)
        salt = get64(header, LogHeader.saltOffset)
        baseTransaction = base
        hasHeader = true
        chain = salt
        end = UInt64(LogHeader.size)
        committedFrames = 0

        var position = UInt64(LogHeader.size)
        var runningChain = salt
        var pending: [(page: UInt64, offset: UInt64)] = []
        var pendingFreed: [UInt64] = []
        var pendingTransaction: UInt64?
        var scannedFrames: UInt64 = 0
        let page = Page(size: pageSize)
        let capacity = bufferFrames * frameSize
        // The buffer holds the file's bytes from `bufferStart`, `buffered` of them.
        var bufferStart = position
        var buffered = 0
        func ensure(_ bytes: Int) throws -> Bool {
            if position + UInt64(bytes) <= bufferStart + UInt64(buffered) { return true }
            guard position < fileSize else { return false }
            let count = Int(min(UInt64(capacity), fileSize - position))
            buffered = try file.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: count), at: position)
            bufferStart = position
            return buffered >= bytes
        }
        scan: while try ensure(FrameHeader.size) {
            var frame = FrameHeader(buffer + Int(position - bufferStart))
            let pageNumber = frame.pageNumber
            let transaction = frame.transaction
            let flags = frame.flags
            let length = frame.payloadLength
            let stored = frame.checksum
            guard frame.salt == salt, flags <= FrameHeader.commitFlag, pageNumber < MetaSlot.maximumPageCount else {
                break scan
            }
            // A short free record (format 2): page number 0, 1 to pageSize / 8 entries.
            let isShortRecord = length != 0
            if isShortRecord {
                guard version >= 2, pageNumber == 0, length % FreeRecordPayload.entrySize == 0, length <= pageSize
                else { break scan }
            } else if version >= 2 && pageNumber == 0 {
                break scan
            }
            let payloadBytes = isShortRecord ? length : pageSize
            guard try ensure(FrameHeader.size + payloadBytes) else { break scan }
            frame = FrameHeader(buffer + Int(position - bufferStart))
            let payload = UnsafeRawPointer(frame.base + FrameHeader.size)
            if isShortRecord {
                frame.checksum = XXH64.hash(payload, count: length, seed: 0)
            } else {
                page.bytes.copyMemory(from: payload, byteCount: pageSize)
                frame.checksum = page.storedChecksum
            }
            let computed = XXH64.hash(frame.base, count: FrameHeader.size, seed: runningChain)
            guard computed == stored else { break scan }
            if !isShortRecord {
                guard (try? page.validate(number: pageNumber, maximumTransaction: transaction)) != nil else {
                    break scan
                }
                guard (pageNumber == 0) == (page.kindByte == PageKind.freeRecord.rawValue) else { break scan }
            }
            if let pendingTransaction, pendingTransaction != transaction { break scan }
            pendingTransaction = transaction
            runningChain = computed
            scannedFrames += 1
            let framePosition = position
            position += UInt64(FrameHeader.size + payloadBytes)
            if isShortRecord {
                for index in 0..<(length / FreeRecordPayload.entrySize) {
                    pendingFreed.append(payload.u64(at: FreeRecordPayload.entrySize * index))
                }
            } else if pageNumber == 0 {
                for index in 0..<page.count { pendingFreed.append(page.freeRecordEntry(index)) }
            } else {
                pending.append((pageNumber, framePosition + UInt64(FrameHeader.size)))
            }
            guard flags & FrameHeader.commitFlag != 0 else { continue }
            let state = frame.committedState
            // Page counts never shrink (SPEC.md W2); a later count bounds every earlier one.
            guard state.pageCount < MetaSlot.maximumPageCount, state.pageCount >= recovery.state.pageCount,
                state.catalogRoot < state.pageCount,
                state.freeListHead < state.pageCount, pending.allSatisfy({ $0.page < state.pageCount }),
                pendingFreed.allSatisfy({ $0 >= 1 && $0 < state.pageCount })
            else { break scan }
            if transaction == recovery.state.transaction + 1 {
                for entry in pending { recovery.index[entry.page] = entry.offset }
                recovery.state = state
                recovery.appliedTransactions += 1
                recovery.transactions.append((state, pending.map(\.page), pendingFreed))
            } else if transaction > meta.transaction || recovery.appliedTransactions > 0 {
                break scan
            }
            end = position
            chain = runningChain
            committedFrames = scannedFrames
            pending.removeAll(keepingCapacity: true)
            pendingFreed.removeAll(keepingCapacity: true)
            pendingTransaction = nil
        }
        return recovery
    }

    /// Reads the page image at `offset` (from ``append`` or ``recover``) into `page`.
    func readImage(at offset: UInt64, into page: Page) throws {
        let read = try file.read(into: UnsafeMutableRawBufferPointer(start: page.bytes, count: pageSize), at: offset)
        guard read == pageSize else { throw StorageError.corrupt("log ends inside the frame at \(offset)") }
    }
}
