// XXH64, the published 64-bit xxHash algorithm: the checksum of every page, meta slot
// and log frame (SPEC.md §2). Fast enough to verify every page read from disk.

/// XXH64 of `bytes` with `seed`, as specified by the xxHash project.
@inline(__always)
func checksum(_ bytes: UnsafeRawBufferPointer, seed: UInt64 = 0) -> UInt64 {
    guard let base = bytes.baseAddress else { return XXH64.finish(seed &+ XXH64.prime5) }
    return XXH64.hash(base, count: bytes.count, seed: seed)
}

/// XXH64 of a byte array (convenience for headers and tests).
func checksum(_ bytes: [UInt8], seed: UInt64 = 0) -> UInt64 {
    bytes.withUnsafeBytes { checksum($0, seed: seed) }
}

enum XXH64 {
    static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
    static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    static let prime3: UInt64 = 0x1656_67B1_9E37_79F9
    static let prime4: UInt64 = 0x85EB_CA77_C2B2_AE63
    static let prime5: UInt64 = 0x27D4_EB2F_1656_67C5

    @inline(__always)
    static func rotate(_ value: UInt64, _ amount: UInt64) -> UInt64 {
        (value << amount) | (value >> (64 - amount))
    }

    @inline(__always)
    static func round(_ accumulator: UInt64, _ input: UInt64) -> UInt64 {
        rotate(accumulator &+ input &* prime2, 31) &* prime1
    }

    @inline(__always)
    static func merge(_ accumulator: UInt64, _ value: UInt64) -> UInt64 {
        (accumulator ^ round(0, value)) &* prime1 &+ prime4
    }

    @inline(__always)
    static func load64(_ pointer: UnsafeRawPointer, _ offset: Int) -> UInt64 {
        UInt64(littleEndian: pointer.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    static func hash(_ pointer: UnsafeRawPointer, count: Int, seed: UInt64) -> UInt64 {
        hash(pointer, count: count, seed: seed, zeroes: 0..<0)
    }

    /// XXH64 of `count` bytes at `pointer` whose bytes in `zeroes` the caller guarantees to
    /// be zero: the same value as ``hash(_:count:seed:)``, in fewer instructions, because a
    /// 32-byte stripe of zeros needs no loads, multiplications by the input or additions
    /// (a page's free space, which ``Page/seal(transaction:)`` clears, is most of a small
    /// commit's pages).
    static func hash(_ pointer: UnsafeRawPointer, count: Int, seed: UInt64, zeroes: Range<Int>) -> UInt64 {
        var offset = 0
        var hash: UInt64
        if count >= 32 {
            var lanes = (seed &+ prime1 &+ prime2, seed &+ prime2, seed, seed &- prime1)
            // The stripes (32-byte steps from offset 0) lying wholly inside `zeroes`.
            let firstZero = (max(zeroes.lowerBound, 0) + 31) & ~31
            let zeroStripes = max(0, (min(zeroes.upperBound, count) - firstZero) / 32)
            if zeroStripes > 0 {
                stripes(pointer, from: &offset, to: firstZero, count: count, &lanes)
                for _ in 0..<zeroStripes {
                    lanes.0 = rotate(lanes.0, 31) &* prime1
                    lanes.1 = rotate(lanes.1, 31) &* prime1
                    lanes.2 = rotate(lanes.2, 31) &* prime1
                    lanes.3 = rotate(lanes.3, 31) &* prime1
                }
                offset = firstZero + 32 * zeroStripes
            }
            stripes(pointer, from: &offset, to: count, count: count, &lanes)
            let (v1, v2, v3, v4) = lanes
            hash = rotate(v1, 1) &+ rotate(v2, 7) &+ rotate(v3, 12) &+ rotate(v4, 18)
            hash = merge(hash, v1)
            hash = merge(hash, v2)
            hash = merge(hash, v3)
            hash = merge(hash, v4)
        } else {
            hash = seed &+ prime5
        }
        hash &+= UInt64(count)
        while offset + 8 <= count {
            hash ^= round(0, load64(pointer, offset))
            hash = rotate(hash, 27) &* prime1 &+ prime4
            offset += 8
        }
        if offset + 4 <= count {
            let word = UInt64(UInt32(littleEndian: pointer.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            hash ^= word &* prime1
            hash = rotate(hash, 23) &* prime2 &+ prime3
            offset += 4
        }
        while offset < count {
            hash ^= UInt64(pointer.load(fromByteOffset: offset, as: UInt8.self)) &* prime5
            hash = rotate(hash, 11) &* prime1
            offset += 1
        }
        return finish(hash)
    }

    /// The rounds of the whole stripes from `offset` while they start before `end` and end
    /// within `count`; `offset` moves past them.
    @inline(__always)
    static func stripes(
        _ pointer: UnsafeRawPointer, from offset: inout Int, to end: Int, count: Int,
        _ lanes: inout (UInt64, UInt64, UInt64, UInt64)
    ) {
        let limit = min(end, count - 31)
        while offset < limit {
            lanes.0 = round(lanes.0, load64(pointer, offset))
            lanes.1 = round(lanes.1, load64(pointer, offset + 8))
            lanes.2 = round(lanes.2, load64(pointer, offset + 16))
            lanes.3 = round(lanes.3, load64(pointer, offset + 24))
            offset += 32
        }
    }

    @inline(__always)
    static func finish(_ value: UInt64) -> UInt64 {
        var hash = value
        hash ^= hash >> 33
        hash &*= prime2
        hash ^= hash >> 29
        hash &*= prime3
        hash ^= hash >> 32
        return hash
    }
}

/// The checksum of SPEC.md §2 (XXH64), for tools and tests that inspect or forge files.
public enum StorageChecksum {
    /// XXH64 of `bytes` with `seed`.
    public static func xxh64(_ bytes: [UInt8], seed: UInt64 = 0) -> UInt64 {
        checksum(bytes, seed: seed)
    }
}
