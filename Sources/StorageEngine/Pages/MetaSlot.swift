// The two meta slots in page 0 (SPEC.md §2.1):
//
//   offset size field
//        0    8 magic "OCDSTORE"
//        8    4 format version (1)
//       12    4 feature flags (none defined)
//       16    4 page size
//       20    4 slot number (0 or 1)
//       24    8 transaction id
//       32    8 catalog root page
//       40    8 free-list head page
//       48    8 page count
//       56    8 successor: the transaction of the newer meta in the other slot, written
//                once that meta is synced (M3); 0: none known
//       64  184 reserved, zero
//      248    8 checksum H(bytes 0..<248, 0)

/// The storage engine's on-disk format version (SPEC.md §6).
public let storageEngineFormatVersion = 1

/// A committed state: what a meta slot or a commit frame records.
struct CommitState: Equatable, Sendable {
    var transaction: UInt64
    var catalogRoot: UInt64
    var freeListHead: UInt64
    var pageCount: UInt64

    /// The problem with this state following `previous` as the next commit (W2): not the
    /// next transaction, fewer pages, or a root at or past the page count.
    func successorProblem(of previous: CommitState) -> String? {
        guard transaction == previous.transaction + 1 else {
            return "W2: transaction \(transaction) commits after \(previous.transaction)"
        }
        guard pageCount >= previous.pageCount else {
            return "W2: the page count fell from \(previous.pageCount) to \(pageCount)"
        }
        guard catalogRoot < pageCount, freeListHead < pageCount else {
            return "W2: roots \(catalogRoot), \(freeListHead) at or past the page count \(pageCount)"
        }
        return nil
    }
}

/// Encodes and decodes the meta slots.
enum MetaSlot {
    static let size = 256
    static let magic: [UInt8] = Array("OCDSTORE".utf8)
    static let magicOffset = 0
    static let versionOffset = 8
    static let flagsOffset = 12
    static let pageSizeOffset = 16
    static let slotOffset = 20
    static let transactionOffset = 24
    static let catalogRootOffset = 32
    static let freeListHeadOffset = 40
    static let pageCountOffset = 48
    static let successorOffset = 56
    static let checksumOffset = 248
    static let minimumPageSize = 512
    static let maximumPageSize = 65_536
    static let maximumPageCount: UInt64 = 1 << 40
    /// Transaction ids lie below this (SPEC.md §5).
    static let transactionLimit: UInt64 = 1 << 63

    static func isValidPageSize(_ size: Int) -> Bool {
        size >= minimumPageSize && size <= maximumPageSize && size & (size - 1) == 0
    }

    /// The bytes of `slot` recording `state`; `successor` is the newer meta's transaction
    /// the other slot holds (M3), 0 when none is known.
    static func encode(_ state: CommitState, pageSize: Int, slot: Int, successor: UInt64 = 0) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: size)
        bytes.replaceSubrange(magicOffset..<(magicOffset + magic.count), with: magic)
        put32(&bytes, versionOffset, UInt32(storageEngineFormatVersion))
        put32(&bytes, flagsOffset, 0)
        put32(&bytes, pageSizeOffset, UInt32(pageSize))
        put32(&bytes, slotOffset, UInt32(slot))
        put64(&bytes, transactionOffset, state.transaction)
        put64(&bytes, catalogRootOffset, state.catalogRoot)
        put64(&bytes, freeListHeadOffset, state.freeListHead)
        put64(&bytes, pageCountOffset, state.pageCount)
        put64(&bytes, successorOffset, successor)
        let sum = bytes.withUnsafeBytes { checksum(UnsafeRawBufferPointer(rebasing: $0[0..<checksumOffset])) }
        put64(&bytes, checksumOffset, sum)
        return bytes
    }

    enum Decoded {
        /// A valid slot: its state, page size and successor field (0: none).
        case valid(CommitState, pageSize: Int, successor: UInt64)
        /// A slot of zeros: never written (slot 1 of a database no checkpoint has reached).
        case neverWritten
        case invalid(String)
        case unsupported(String)
    }

    /// Decodes the slot at `slot` of `header` (the first 512 bytes of the file).
    static func decode(_ header: [UInt8], slot: Int) -> Decoded {
        let base = slot * size
        guard header.count >= base + size else { return .invalid("slot \(slot) is past the end of the file") }
        let bytes = Array(header[base..<(base + size)])
        if bytes.allSatisfy({ $0 == 0 }) { return .neverWritten }
        guard Array(bytes[magicOffset..<(magicOffset + magic.count)]) == magic else {
            return .invalid("slot \(slot): not a database (bad magic)")
        }
        let stored = get64(bytes, checksumOffset)
        let computed = bytes.withUnsafeBytes { checksum(UnsafeRawBufferPointer(rebasing: $0[0..<checksumOffset])) }
        guard stored == computed else { return .invalid("slot \(slot): checksum mismatch") }
        let version = get32(bytes, versionOffset)
        guard version == UInt32(storageEngineFormatVersion) else {
            return .unsupported("format version \(version) (this build reads \(storageEngineFormatVersion))")
        }
        let flags = get32(bytes, flagsOffset)
        guard flags == 0 else { return .unsupported("unknown feature flags 0x\(String(flags, radix: 16))") }
        let pageSize = Int(get32(bytes, pageSizeOffset))
        guard isValidPageSize(pageSize) else { return .invalid("slot \(slot): page size \(pageSize)") }
        guard get32(bytes, slotOffset) == UInt32(slot) else { return .invalid("slot \(slot): wrong slot number") }
        let state = CommitState(
            transaction: get64(bytes, transactionOffset), catalogRoot: get64(bytes, catalogRootOffset),
            freeListHead: get64(bytes, freeListHeadOffset), pageCount: get64(bytes, pageCountOffset))
        guard state.pageCount >= 1, state.pageCount < maximumPageCount, state.catalogRoot < state.pageCount,
            state.freeListHead < state.pageCount, state.transaction < transactionLimit
        else { return .invalid("slot \(slot): roots out of range") }
        let successor = get64(bytes, successorOffset)
        guard successor == 0 || (successor > state.transaction && successor < transactionLimit) else {
            return .invalid("slot \(slot): successor \(successor) is not above its transaction \(state.transaction)")
        }
        return .valid(state, pageSize: pageSize, successor: successor)
    }
}
