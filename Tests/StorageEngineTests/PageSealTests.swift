import Foundation
import TestSupport
import Testing

@testable import StorageEngine

/// Sealing a page (SPEC.md §2.1 P1, §2.2): the checksum is XXH64 over bytes 8..<pageSize
/// however it is computed; a tree page's free space is cleared first and hashed as zeros.
@Suite struct PageSealTests {
    /// The hash over a range known to hold zeros equals the plain XXH64 for every placement
    /// of the range: aligned or not to the 32-byte stripes, empty, covering everything, past
    /// the end, and for lengths around the stripe size.
    @Test func hashOverKnownZerosIsXXH64() {
        var random = SeededRandom(environmentOr: 15)
        for _ in 0..<2_000 {
            let count = random.chance(0.2) ? random.int(in: 0...80) : random.int(in: 0...600)
            let lower = random.int(in: 0...(count + 40))
            let upper = random.int(in: lower...(count + 80))
            var bytes = random.bytes(count)
            for index in min(lower, count)..<min(upper, count) { bytes[index] = 0 }
            let seed = random.chance(0.5) ? 0 : random.next()
            let (plain, zeroed) = bytes.withUnsafeBytes { buffer in
                let base = buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 8)!
                return (
                    XXH64.hash(base, count: count, seed: seed),
                    XXH64.hash(base, count: count, seed: seed, zeroes: lower..<upper)
                )
            }
            #expect(plain == zeroed, "count \(count), zeroes \(lower)..<\(upper), seed \(random.seed)")
        }
    }

    /// Stale bytes in a leaf's free space (left by a removed cell, as removals and
    /// compaction leave them) are cleared by sealing, the cells are not touched, and the
    /// stored checksum is the whole page's XXH64, so the page validates.
    @Test func sealingClearsFreeSpaceAndKeepsTheChecksumXXH64() throws {
        for pageSize in [512, 4_096] {
            let page = Page(size: pageSize)
            page.format(.leaf, number: 7)
            let cell = [UInt8](repeating: 0xC5, count: 24)
            let offset = pageSize - cell.count
            cell.withUnsafeBytes { (page.bytes + offset).copyMemory(from: $0.baseAddress!, byteCount: cell.count) }
            page.setU16(offset + LeafCell.keyLengthOffset, 4)
            page.setU8(offset + LeafCell.flagsOffset, 0)
            page.setU32(offset + LeafCell.valueLengthOffset, cell.count - LeafCell.headerSize - 4)
            page.setSlot(0, offset)
            page.count = 1
            page.contentStart = offset
            let freeStart = SlotArray.offset(of: 1)
            memset(page.bytes + freeStart, 0x5A, offset - freeStart)
            let cellsBefore = Array(UnsafeRawBufferPointer(start: page.bytes + offset, count: cell.count))
            page.seal(transaction: 3)
            let image = Array(UnsafeRawBufferPointer(start: page.bytes, count: pageSize))
            #expect(image[freeStart..<offset].allSatisfy { $0 == 0 })
            #expect(Array(image[offset...]) == cellsBefore)
            #expect(page.storedChecksum == checksum(Array(image[8...])))
            try page.validate(number: 7, maximumTransaction: 3)
        }
    }
}
