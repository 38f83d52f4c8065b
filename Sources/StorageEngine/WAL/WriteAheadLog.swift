// The write-ahead log (SPEC.md §2.3). Header, 64 bytes:
//
//   offset size field
//        0    8 magic "OCDWALOG"
//        8    4 format version (2; format 1 is still read)
//       12    4 page size
//       16    8 salt (fresh at every reset)
//       24    8 base transaction id
//       32   24 reserved, zero
//       56    8 checksum H(bytes 0..<56, 0)
//
// Then frames, back to back from offset 64: a 64-byte frame header and a payload.
//
//   offset size field
//        0    8 page number (0: free record)
//        8    8 transaction id
//       16    4 flags (bit 0: commit frame)
//       20    4 payload length: 0 = a page image of pageSize bytes; else a free record
//                of that many bytes (format 2 only)
//       24    8 commit frames: catalog root
//       32    8 commit frames: free-list head
//       40    8 commit frames: page count
//       48    8 salt (the header's)
//       56    8 checksum H(frame bytes 0..<56 ++ C, previous checksum or salt), where C is
//                the page's own checksum (page bytes 0..<8, covering its bytes 8..<pageSize)
//                or, for a free record, H(payload, 0)
//       64    . the payload: a page image, or a free record's u64 page numbers

#if canImport(Glibc)
    import Glibc
#endif

/// The log file: appends frames, resets after a checkpoint, and scans on open.
final class WriteAheadLog: @unchecked Sendable {
    static let headerSize = 64
    static let frameHeaderSize = 64
    static let magic: [UInt8] = Array("OCDWALOG".utf8)
    static let commitFlag: UInt32 = 1
    /// The log format this build writes (SPEC.md §2.3); it also reads format 1.
    static let formatVersion = 2

    let file: any StorageFile
    let pageSize: Int
    var frameSize: Int { Self.frameHeaderSize + pageSize }
    /// The current header's salt; meaningful once `hasHeader`.
    private(set) var salt: UInt64 = 0
    private(set) var baseTransaction: UInt64 = 0
    /// Whether this generation's header has been written (or read back valid).
    private(set) var hasHeader = false
    /// This generation's format: 2 when this build reset the log, 1 for a generation an
    /// older build began (its frames keep format 1 until the next reset).
    private(set) var version = WriteAheadLog.formatVersion
    /// Where the next frame goes.
    private(set) var end = UInt64(WriteAheadLog.headerSize)
    private(set) var chain: UInt64 = 0
    /// Bytes of committed frames in this generation.
    var committedBytes: UInt64 { end - UInt64(Self.headerSize) }
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

    /// A log in `file` for pages of `pageSize` bytes; `checkpointThreshold` (the log size
    /// at which commits checkpoint) sizes its preallocation steps and its retained size.
    init(file: any StorageFile, pageSize: Int, checkpointThreshold: Int) {
        self.file = file
        self.pageSize = pageSize
        let frameSize = Self.frameHeaderSize + pageSize
        bufferFrames = max(1, (1 << 20) / frameSize)
        // Steps of at most an eighth of the threshold (at most 1 MiB, at least 4 frames):
        // about 8 of them fill the first generation once the file has doubled up to that
        // size, and each steady-state generation extends nothing.
        let threshold = min(max(0, checkpointThreshold), 1 << 48)
        growthFrames = max(4, min((1 << 20) / frameSize, threshold / 8 / frameSize))
        let thresholdFrames = UInt64(threshold / frameSize + 1)
        let chunks = (thresholdFrames + UInt64(growthFrames) - 1) / UInt64(growthFrames)
        retainedBytes = UInt64(Self.headerSize) + 2 * chunks * UInt64(growthFrames * frameSize)
        buffer = UnsafeMutableRawPointer.allocate(
            byteCount: bufferFrames * (Self.frameHeaderSize + pageSize), alignment: 16)
    }

    deinit { buffer.deallocate() }

    /// Starts a new generation: a header with a fresh salt. Frames already in the file stop
    /// validating because their salt differs.
    /// `version` is for tests that need a format-1 generation (as an older build left it).
    func reset(baseTransaction: UInt64, salt newSalt: UInt64, version newVersion: Int = formatVersion) throws {
        var header = [UInt8](repeating: 0, count: Self.headerSize)
        header.replaceSubrange(0..<8, with: Self.magic)
        put32(&header, 8, UInt32(newVersion))
        put32(&header, 12, UInt32(pageSize))
        put64(&header, 16, newSalt)
        put64(&header, 24, baseTransaction)
        put64(&header, 56, checksum(Array(header[0..<56])))
        try header.withUnsafeBytes { try file.write($0, at: 0) }
        allocatedEnd = max(allocatedEnd, UInt64(Self.headerSize))
        version = newVersion
        salt = newSalt
        self.baseTransaction = baseTransaction
        hasHeader = true
        end = UInt64(Self.headerSize)
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
        let frames = (position - UInt64(Self.headerSize)) / UInt64(frameSize)
        let step = UInt64(frameSize) * min(UInt64(growthFrames), max(4, frames))
        let target = position + step
        var offset = position
        let capacity = Int(min(UInt64(bufferFrames * frameSize), step))
        memset(buffer, 0, capacity)
        while offset < target {
            let count = Int(min(UInt64(capacity), target - offset))
            try file.write(UnsafeRawBufferPointer(start: buffer, count: count), at: offset)
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
        end = UInt64(Self.headerSize)
        committedFrames = 0
    }

    /// Appends one transaction's frames: records of the committed pages it freed, then
    /// `pages` (already sealed), the last flagged commit with `state`. Returns the offsets
    /// of the page images, in the order of `pages`.
    func append(freed: [UInt64], pages: [Page], commit state: CommitState) throws -> [UInt64] {
        precondition(hasHeader && !(pages.isEmpty && freed.isEmpty))
        var offsets: [UInt64] = []
        offsets.reserveCapacity(pages.count)
        var writer = FrameWriter(log: self, position: end, chain: chain)
        if version >= 2 {
            // Format 2: short records of at most a page of entries each (W1). The last frame
            // is a free record only when no page was written (a catalog emptied).
            let perRecord = pageSize / 8
            var start = 0
            while start < freed.count {
                let count = min(perRecord, freed.count - start)
                let commit = pages.isEmpty && start + count == freed.count ? state : nil
                _ = try writer.frame(payloadBytes: 8 * count) { frame, payload in
                    frame.storeBytes(of: UInt64(0), toByteOffset: 0, as: UInt64.self)
                    frame.storeBytes(of: state.transaction.littleEndian, toByteOffset: 8, as: UInt64.self)
                    frame.storeBytes(of: UInt32(8 * count).littleEndian, toByteOffset: 20, as: UInt32.self)
                    if let commit { FrameWriter.storeCommit(commit, in: frame) }
                    for index in 0..<count {
                        payload.storeBytes(
                            of: freed[start + index].littleEndian, toByteOffset: 8 * index, as: UInt64.self)
                    }
                    return XXH64.hash(payload, count: 8 * count, seed: 0)
                }
                start += count
            }
        } else {
            // A format-1 generation (recovered from an older build) keeps format-1 frames.
            let records = legacyFreeRecords(freed, transaction: state.transaction)
            for (index, record) in records.enumerated() {
                let commit = pages.isEmpty && index == records.count - 1 ? state : nil
                _ = try writer.frame(page: record, transaction: state.transaction, commit: commit)
            }
        }
        for (index, page) in pages.enumerated() {
            offsets.append(
                try writer.frame(
                    page: page, transaction: state.transaction, commit: index == pages.count - 1 ? state : nil))
        }
        let position = try writer.finish()
        end = position
        committedFrames += writer.frames
        chain = writer.chain
        allocatedEnd = max(allocatedEnd, position)
        if position >= allocatedEnd { try preallocate(from: position) }
        return offsets
    }

    /// Gathers frames in the log's buffer and writes them in large pieces.
    private struct FrameWriter {
        let log: WriteAheadLog
        /// File offset of the buffer's first byte.
        var position: UInt64
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
        /// fields (the salt and checksum are added here) and the payload, and returns the
        /// payload's own checksum, which the chained checksum covers. Returns the payload's
        /// file offset.
        mutating func frame(
            payloadBytes: Int, fill: (UnsafeMutableRawPointer, UnsafeMutableRawPointer) -> UInt64
        ) throws -> UInt64 {
            let size = WriteAheadLog.frameHeaderSize + payloadBytes
            if used + size > log.bufferFrames * log.frameSize { try flush() }
            let frame = log.buffer + used
            memset(frame, 0, WriteAheadLog.frameHeaderSize)
            let payloadChecksum = fill(frame, frame + WriteAheadLog.frameHeaderSize)
            frame.storeBytes(of: log.salt.littleEndian, toByteOffset: 48, as: UInt64.self)
            frame.storeBytes(of: payloadChecksum.littleEndian, toByteOffset: 56, as: UInt64.self)
            chain = XXH64.hash(frame, count: WriteAheadLog.frameHeaderSize, seed: chain)
            frame.storeBytes(of: chain.littleEndian, toByteOffset: 56, as: UInt64.self)
            let offset = position + UInt64(used + WriteAheadLog.frameHeaderSize)
            used += size
            frames += 1
            return offset
        }

        /// Adds a page image frame; `commit` flags it as its transaction's commit frame.
        mutating func frame(page: Page, transaction: UInt64, commit: CommitState?) throws -> UInt64 {
            let pageSize = log.pageSize
            return try frame(payloadBytes: pageSize) { frame, payload in
                frame.storeBytes(of: page.number.littleEndian, toByteOffset: 0, as: UInt64.self)
                frame.storeBytes(of: transaction.littleEndian, toByteOffset: 8, as: UInt64.self)
                if let commit { FrameWriter.storeCommit(commit, in: frame) }
                payload.copyMemory(from: page.bytes, byteCount: pageSize)
                return page.storedChecksum
            }
        }

        /// Flags `frame` as its transaction's commit frame, with the state it commits.
        static func storeCommit(_ commit: CommitState, in frame: UnsafeMutableRawPointer) {
            frame.storeBytes(of: WriteAheadLog.commitFlag.littleEndian, toByteOffset: 16, as: UInt32.self)
            frame.storeBytes(of: commit.catalogRoot.littleEndian, toByteOffset: 24, as: UInt64.self)
            frame.storeBytes(of: commit.freeListHead.littleEndian, toByteOffset: 32, as: UInt64.self)
            frame.storeBytes(of: commit.pageCount.littleEndian, toByteOffset: 40, as: UInt64.self)
        }

        mutating func flush() throws {
            guard used > 0 else { return }
            try log.file.write(UnsafeRawBufferPointer(start: log.buffer, count: used), at: position)
            position += UInt64(used)
            used = 0
        }

        /// Writes what is buffered; returns the offset after the last frame.
        mutating func finish() throws -> UInt64 {
            try flush()
            return position
        }
    }

    /// Format-1 free records: whole pages (kind 5, number 0) of page numbers.
    private func legacyFreeRecords(_ freed: [UInt64], transaction: UInt64) -> [Page] {
        let perPage = (pageSize - PageHeader.size) / 8
        var records: [Page] = []
        var start = 0
        while start < freed.count {
            let count = min(perPage, freed.count - start)
            let page = Page(size: pageSize, zeroed: false)
            page.format(.freeRecord, number: 0)
            page.contentStart = 0
            for index in 0..<count { page.setU64(PageHeader.size + 8 * index, freed[start + index]) }
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
    }

    /// Reads the header and scans the frames (SPEC.md §2.6), starting from the page file's
    /// `meta`. Never writes.
    func recover(from meta: CommitState) throws -> Recovery {
        var recovery = Recovery(state: meta)
        hasHeader = false
        version = Self.formatVersion
        let fileSize = try file.size()
        allocatedEnd = fileSize
        guard fileSize >= UInt64(Self.headerSize) else { return recovery }
        var header = [UInt8](repeating: 0, count: Self.headerSize)
        _ = try header.withUnsafeMutableBytes { try file.read(into: $0, at: 0) }
        guard Array(header[0..<8]) == Self.magic, get64(header, 56) == checksum(Array(header[0..<56])) else {
            return recovery
        }
        let headerVersion = get32(header, 8)
        guard headerVersion >= 1 && headerVersion <= UInt32(Self.formatVersion) else {
            throw StorageError(
                .unsupportedFormat, "log format version \(headerVersion) (this build reads 1 to \(Self.formatVersion))")
        }
        guard Int(get32(header, 12)) == pageSize else {
            throw StorageError.corrupt("log page size \(get32(header, 12)) differs from the page file's \(pageSize)")
        }
        let base = get64(header, 24)
        guard base <= meta.transaction else {
            throw StorageError.corrupt(
                "log begins after transaction \(base) but the page file's newest valid meta is \(meta.transaction)")
        }
        version = Int(headerVersion)
        salt = get64(header, 16)
        baseTransaction = base
        hasHeader = true
        chain = salt
        end = UInt64(Self.headerSize)
        committedFrames = 0

        var position = UInt64(Self.headerSize)
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
        scan: while try ensure(Self.frameHeaderSize) {
            var frame = buffer + Int(position - bufferStart)
            let pageNumber = UInt64(littleEndian: frame.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
            let transaction = UInt64(littleEndian: frame.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            let flags = UInt32(littleEndian: frame.loadUnaligned(fromByteOffset: 16, as: UInt32.self))
            let length = Int(UInt32(littleEndian: frame.loadUnaligned(fromByteOffset: 20, as: UInt32.self)))
            let frameSalt = UInt64(littleEndian: frame.loadUnaligned(fromByteOffset: 48, as: UInt64.self))
            let stored = UInt64(littleEndian: frame.loadUnaligned(fromByteOffset: 56, as: UInt64.self))
            guard frameSalt == salt, flags <= Self.commitFlag, pageNumber < MetaSlot.maximumPageCount else {
                break scan
            }
            // A short free record (format 2): page number 0, 1 to pageSize / 8 entries.
            let isShortRecord = length != 0
            if isShortRecord {
                guard version >= 2, pageNumber == 0, length % 8 == 0, length <= pageSize else { break scan }
            } else if version >= 2 && pageNumber == 0 {
                break scan
            }
            let payloadBytes = isShortRecord ? length : pageSize
            guard try ensure(Self.frameHeaderSize + payloadBytes) else { break scan }
            frame = buffer + Int(position - bufferStart)
            let payload = frame + Self.frameHeaderSize
            if isShortRecord {
                let payloadChecksum = XXH64.hash(payload, count: length, seed: 0)
                frame.storeBytes(of: payloadChecksum.littleEndian, toByteOffset: 56, as: UInt64.self)
            } else {
                page.bytes.copyMemory(from: payload, byteCount: pageSize)
                frame.storeBytes(of: page.storedChecksum.littleEndian, toByteOffset: 56, as: UInt64.self)
            }
            let computed = XXH64.hash(frame, count: Self.frameHeaderSize, seed: runningChain)
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
            position += UInt64(Self.frameHeaderSize + payloadBytes)
            if isShortRecord {
                for index in 0..<(length / 8) {
                    pendingFreed.append(
                        UInt64(littleEndian: payload.loadUnaligned(fromByteOffset: 8 * index, as: UInt64.self)))
                }
            } else if pageNumber == 0 {
                for index in 0..<page.count { pendingFreed.append(page.u64(PageHeader.size + 8 * index)) }
            } else {
                pending.append((pageNumber, framePosition + UInt64(Self.frameHeaderSize)))
            }
            guard flags & Self.commitFlag != 0 else { continue }
            let state = CommitState(
                transaction: transaction,
                catalogRoot: UInt64(littleEndian: frame.loadUnaligned(fromByteOffset: 24, as: UInt64.self)),
                freeListHead: UInt64(littleEndian: frame.loadUnaligned(fromByteOffset: 32, as: UInt64.self)),
                pageCount: UInt64(littleEndian: frame.loadUnaligned(fromByteOffset: 40, as: UInt64.self)))
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
