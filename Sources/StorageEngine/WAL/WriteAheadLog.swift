// The write-ahead log (SPEC.md §2.3). Header, 64 bytes:
//
//   offset size field
//        0    8 magic "OCDWALOG"
//        8    4 format version (1)
//       12    4 page size
//       16    8 salt (fresh at every reset)
//       24    8 base transaction id
//       32   24 reserved, zero
//       56    8 checksum H(bytes 0..<56, 0)
//
// Then frames of 64 + pageSize bytes, from offset 64:
//
//   offset size field
//        0    8 page number
//        8    8 transaction id
//       16    4 flags (bit 0: commit frame)
//       20    4 reserved, zero
//       24    8 commit frames: catalog root
//       32    8 commit frames: free-list head
//       40    8 commit frames: page count
//       48    8 salt (the header's)
//       56    8 checksum H(frame bytes 0..<56 ++ page bytes 0..<8, previous checksum or salt)
//       64    . the page image (its own checksum covers its bytes 8..<pageSize)

#if canImport(Glibc)
    import Glibc
#endif

/// The log file: appends frames, resets after a checkpoint, and scans on open.
final class WriteAheadLog: @unchecked Sendable {
    static let headerSize = 64
    static let frameHeaderSize = 64
    static let magic: [UInt8] = Array("OCDWALOG".utf8)
    static let commitFlag: UInt32 = 1

    let file: any StorageFile
    let pageSize: Int
    var frameSize: Int { Self.frameHeaderSize + pageSize }
    /// The current header's salt; meaningful once `hasHeader`.
    private(set) var salt: UInt64 = 0
    private(set) var baseTransaction: UInt64 = 0
    /// Whether this generation's header has been written (or read back valid).
    private(set) var hasHeader = false
    /// Where the next frame goes.
    private(set) var end = UInt64(WriteAheadLog.headerSize)
    private(set) var chain: UInt64 = 0
    /// Bytes of committed frames in this generation.
    var committedBytes: UInt64 { end - UInt64(Self.headerSize) }
    /// Bytes at the start of the file already written (frames of any generation, or the
    /// zeros of a preallocation): frames inside them overwrite blocks the file system has
    /// allocated, so a sync writes data only, not a new file size (SPEC.md §2.3 W3).
    private(set) var allocatedEnd: UInt64 = 0
    /// Frames the log grows by at once, written as zeros.
    let growthFrames: Int
    /// Past this size a reset shrinks the file back to it (a log that grew while
    /// checkpoints were blocked does not stay large).
    let retainedBytes: UInt64
    private var buffer: UnsafeMutableRawPointer
    private let bufferFrames: Int

    /// A log in `file` for pages of `pageSize` bytes; `checkpointThreshold` (the log size
    /// at which commits checkpoint) sizes its preallocation steps and its retained size.
    init(file: any StorageFile, pageSize: Int, checkpointThreshold: Int) {
        self.file = file
        self.pageSize = pageSize
        let frameSize = Self.frameHeaderSize + pageSize
        bufferFrames = max(1, (1 << 20) / frameSize)
        // An eighth of the threshold, at most 1 MiB, at least 4 frames: about 8 extensions
        // fill the first generation, and each steady-state generation extends nothing.
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
    func reset(baseTransaction: UInt64, salt newSalt: UInt64) throws {
        var header = [UInt8](repeating: 0, count: Self.headerSize)
        header.replaceSubrange(0..<8, with: Self.magic)
        put32(&header, 8, UInt32(storageEngineFormatVersion))
        put32(&header, 12, UInt32(pageSize))
        put64(&header, 16, newSalt)
        put64(&header, 24, baseTransaction)
        put64(&header, 56, checksum(Array(header[0..<56])))
        try header.withUnsafeBytes { try file.write($0, at: 0) }
        allocatedEnd = max(allocatedEnd, UInt64(Self.headerSize))
        salt = newSalt
        self.baseTransaction = baseTransaction
        hasHeader = true
        end = UInt64(Self.headerSize)
        chain = newSalt
        if allocatedEnd > 2 * retainedBytes {
            // Every frame past the new header is stale (old salt), so dropping them is safe
            // whichever of the header write and the truncation survives a crash.
            try file.truncate(to: retainedBytes)
            allocatedEnd = retainedBytes
        }
    }

    /// Writes zeros from `position` to the next preallocation step past it, so that the
    /// frames of later commits overwrite allocated blocks. Unsynced: the sync of the commit
    /// that needed it covers it; garbage or zeros there are frames that do not validate.
    private func preallocate(from position: UInt64) throws {
        let step = UInt64(growthFrames * frameSize)
        let frames = position - UInt64(Self.headerSize)
        let target = UInt64(Self.headerSize) + (frames / step + 1) * step
        var offset = max(position, allocatedEnd)
        guard offset < target else { return }
        let capacity = bufferFrames * frameSize
        memset(buffer, 0, capacity)
        while offset < target {
            let count = Int(min(UInt64(capacity), target - offset))
            try file.write(UnsafeRawBufferPointer(start: buffer, count: count), at: offset)
            offset += UInt64(count)
        }
        allocatedEnd = target
    }

    /// Appends `pages` (already sealed) as one transaction's frames, the last flagged commit
    /// with `state`. Returns the offsets of the page images, in order.
    func append(_ pages: [Page], commit state: CommitState) throws -> [UInt64] {
        precondition(hasHeader && !pages.isEmpty)
        var offsets: [UInt64] = []
        offsets.reserveCapacity(pages.count)
        var position = end
        var chain = self.chain
        var index = 0
        while index < pages.count {
            let batch = min(bufferFrames, pages.count - index)
            for slot in 0..<batch {
                let page = pages[index + slot]
                let frame = buffer + slot * frameSize
                let isCommit = index + slot == pages.count - 1
                memset(frame, 0, Self.frameHeaderSize)
                frame.storeBytes(of: page.number.littleEndian, toByteOffset: 0, as: UInt64.self)
                frame.storeBytes(of: state.transaction.littleEndian, toByteOffset: 8, as: UInt64.self)
                if isCommit {
                    frame.storeBytes(of: Self.commitFlag.littleEndian, toByteOffset: 16, as: UInt32.self)
                    frame.storeBytes(of: state.catalogRoot.littleEndian, toByteOffset: 24, as: UInt64.self)
                    frame.storeBytes(of: state.freeListHead.littleEndian, toByteOffset: 32, as: UInt64.self)
                    frame.storeBytes(of: state.pageCount.littleEndian, toByteOffset: 40, as: UInt64.self)
                }
                frame.storeBytes(of: salt.littleEndian, toByteOffset: 48, as: UInt64.self)
                frame.storeBytes(of: page.storedChecksum.littleEndian, toByteOffset: 56, as: UInt64.self)
                chain = XXH64.hash(frame, count: Self.frameHeaderSize, seed: chain)
                frame.storeBytes(of: chain.littleEndian, toByteOffset: 56, as: UInt64.self)
                (frame + Self.frameHeaderSize).copyMemory(from: page.bytes, byteCount: pageSize)
                offsets.append(position + UInt64(slot * frameSize + Self.frameHeaderSize))
            }
            try file.write(UnsafeRawBufferPointer(start: buffer, count: batch * frameSize), at: position)
            position += UInt64(batch * frameSize)
            index += batch
        }
        end = position
        self.chain = chain
        allocatedEnd = max(allocatedEnd, position)
        if position >= allocatedEnd { try preallocate(from: position) }
        return offsets
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
        let fileSize = try file.size()
        allocatedEnd = fileSize
        guard fileSize >= UInt64(Self.headerSize) else { return recovery }
        var header = [UInt8](repeating: 0, count: Self.headerSize)
        _ = try header.withUnsafeMutableBytes { try file.read(into: $0, at: 0) }
        guard Array(header[0..<8]) == Self.magic, get64(header, 56) == checksum(Array(header[0..<56])) else {
            return recovery
        }
        guard get32(header, 8) == UInt32(storageEngineFormatVersion) else {
            throw StorageError(.unsupportedFormat, "log format version \(get32(header, 8))")
        }
        guard Int(get32(header, 12)) == pageSize else {
            throw StorageError.corrupt("log page size \(get32(header, 12)) differs from the page file's \(pageSize)")
        }
        let base = get64(header, 24)
        guard base <= meta.transaction else {
            throw StorageError.corrupt(
                "log begins after transaction \(base) but the page file's newest valid meta is \(meta.transaction)")
        }
        salt = get64(header, 16)
        baseTransaction = base
        hasHeader = true
        chain = salt
        end = UInt64(Self.headerSize)

        var position = UInt64(Self.headerSize)
        var runningChain = salt
        var pending: [(page: UInt64, offset: UInt64)] = []
        var pendingFreed: [UInt64] = []
        var pendingTransaction: UInt64?
        let page = Page(size: pageSize)
        scan: while position + UInt64(frameSize) <= fileSize {
            let available = Int(min(UInt64(bufferFrames), (fileSize - position) / UInt64(frameSize)))
            let read = try file.read(
                into: UnsafeMutableRawBufferPointer(start: buffer, count: available * frameSize), at: position)
            let frames = read / frameSize
            if frames == 0 { break }
            for slot in 0..<frames {
                let frame = buffer + slot * frameSize
                let framePosition = position + UInt64(slot * frameSize)
                let pageNumber = UInt64(littleEndian: frame.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
                let transaction = UInt64(littleEndian: frame.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
                let flags = UInt32(littleEndian: frame.loadUnaligned(fromByteOffset: 16, as: UInt32.self))
                let frameSalt = UInt64(littleEndian: frame.loadUnaligned(fromByteOffset: 48, as: UInt64.self))
                let stored = UInt64(littleEndian: frame.loadUnaligned(fromByteOffset: 56, as: UInt64.self))
                guard frameSalt == salt, flags <= Self.commitFlag, pageNumber < MetaSlot.maximumPageCount else {
                    break scan
                }
                page.bytes.copyMemory(from: frame + Self.frameHeaderSize, byteCount: pageSize)
                frame.storeBytes(of: page.storedChecksum.littleEndian, toByteOffset: 56, as: UInt64.self)
                let computed = XXH64.hash(frame, count: Self.frameHeaderSize, seed: runningChain)
                guard computed == stored else { break scan }
                guard (try? page.validate(number: pageNumber, maximumTransaction: transaction)) != nil else {
                    break scan
                }
                if let pendingTransaction, pendingTransaction != transaction { break scan }
                guard (pageNumber == 0) == (page.kindByte == PageKind.freeRecord.rawValue) else { break scan }
                pendingTransaction = transaction
                runningChain = computed
                if pageNumber == 0 {
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
                end = framePosition + UInt64(frameSize)
                chain = runningChain
                pending.removeAll(keepingCapacity: true)
                pendingFreed.removeAll(keepingCapacity: true)
                pendingTransaction = nil
            }
            position += UInt64(frames * frameSize)
        }
        return recovery
    }

    /// Reads the page image at `offset` (from ``append`` or ``recover``) into `page`.
    func readImage(at offset: UInt64, into page: Page) throws {
        let read = try file.read(into: UnsafeMutableRawBufferPointer(start: page.bytes, count: pageSize), at: offset)
        guard read == pageSize else { throw StorageError.corrupt("log ends inside the frame at \(offset)") }
    }
}
