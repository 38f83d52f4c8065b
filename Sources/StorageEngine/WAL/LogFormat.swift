// The write-ahead log's header and frame header (SPEC.md §2.3). Header, 64 bytes:
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

/// The log header.
enum LogHeader {
    static let size = 64
    static let magic: [UInt8] = Array("OCDWALOG".utf8)
    static let magicOffset = 0
    static let versionOffset = 8
    static let pageSizeOffset = 12
    static let saltOffset = 16
    static let baseTransactionOffset = 24
    static let checksumOffset = 56

    /// A header's bytes, checksum included.
    static func encode(version: Int, pageSize: Int, salt: UInt64, baseTransaction: UInt64) -> [UInt8] {
        var header = [UInt8](repeating: 0, count: size)
        header.replaceSubrange(magicOffset..<(magicOffset + magic.count), with: magic)
        put32(&header, versionOffset, UInt32(version))
        put32(&header, pageSizeOffset, UInt32(pageSize))
        put64(&header, saltOffset, salt)
        put64(&header, baseTransactionOffset, baseTransaction)
        put64(&header, checksumOffset, checksum(Array(header[0..<checksumOffset])))
        return header
    }

    /// Whether `header` (``size`` bytes) has the magic and a matching checksum.
    static func isIntact(_ header: [UInt8]) -> Bool {
        Array(header[magicOffset..<(magicOffset + magic.count)]) == magic
            && get64(header, checksumOffset) == checksum(Array(header[0..<checksumOffset]))
    }
}

/// A frame header in memory (the log's buffer), read and written in place.
struct FrameHeader {
    static let size = 64
    static let pageNumberOffset = 0
    static let transactionOffset = 8
    static let flagsOffset = 16
    static let payloadLengthOffset = 20
    static let catalogRootOffset = 24
    static let freeListHeadOffset = 32
    static let pageCountOffset = 40
    static let saltOffset = 48
    static let checksumOffset = 56
    /// The flags bit of a transaction's last frame.
    static let commitFlag: UInt32 = 1

    let base: UnsafeMutableRawPointer

    init(_ base: UnsafeMutableRawPointer) { self.base = base }

    private var readable: UnsafeRawPointer { UnsafeRawPointer(base) }

    var pageNumber: UInt64 {
        get { readable.u64(at: Self.pageNumberOffset) }
        nonmutating set { base.setU64(at: Self.pageNumberOffset, newValue) }
    }
    var transaction: UInt64 {
        get { readable.u64(at: Self.transactionOffset) }
        nonmutating set { base.setU64(at: Self.transactionOffset, newValue) }
    }
    var flags: UInt32 { UInt32(truncatingIfNeeded: readable.u32(at: Self.flagsOffset)) }
    /// 0 for a page image, else a free record's payload bytes.
    var payloadLength: Int {
        get { readable.u32(at: Self.payloadLengthOffset) }
        nonmutating set { base.setU32(at: Self.payloadLengthOffset, newValue) }
    }
    var salt: UInt64 {
        get { readable.u64(at: Self.saltOffset) }
        nonmutating set { base.setU64(at: Self.saltOffset, newValue) }
    }
    /// The chained checksum; while it is computed, the payload's own checksum stands here.
    var checksum: UInt64 {
        get { readable.u64(at: Self.checksumOffset) }
        nonmutating set { base.setU64(at: Self.checksumOffset, newValue) }
    }

    /// Flags the frame as its transaction's commit frame, with the state it commits.
    func storeCommit(_ commit: CommitState) {
        base.setU32(at: Self.flagsOffset, Int(Self.commitFlag))
        base.setU64(at: Self.catalogRootOffset, commit.catalogRoot)
        base.setU64(at: Self.freeListHeadOffset, commit.freeListHead)
        base.setU64(at: Self.pageCountOffset, commit.pageCount)
    }

    /// The state a commit frame records.
    var committedState: CommitState {
        CommitState(
            transaction: transaction, catalogRoot: readable.u64(at: Self.catalogRootOffset),
            freeListHead: readable.u64(at: Self.freeListHeadOffset), pageCount: readable.u64(at: Self.pageCountOffset))
    }
}

/// The payload of a short free record (format 2): u64 page numbers.
enum FreeRecordPayload {
    static let entrySize = 8

    /// Page numbers one record holds (at most a page of payload, W1).
    static func capacity(pageSize: Int) -> Int { pageSize / entrySize }
}
