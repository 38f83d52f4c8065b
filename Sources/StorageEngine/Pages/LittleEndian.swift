// Little-endian integers at byte offsets (SPEC.md §1: every integer on disk is
// little-endian unless a table says otherwise): loads from raw page and frame memory,
// and the byte-array forms the meta slots, log header and catalog entries use.

extension UnsafeRawPointer {
    @inline(__always) func u8(at offset: Int) -> UInt8 { load(fromByteOffset: offset, as: UInt8.self) }
    @inline(__always) func u16(at offset: Int) -> Int {
        Int(UInt16(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt16.self)))
    }
    @inline(__always) func u32(at offset: Int) -> Int {
        Int(UInt32(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
    }
    @inline(__always) func u64(at offset: Int) -> UInt64 {
        UInt64(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }
}

extension UnsafeMutableRawPointer {
    @inline(__always) func setU8(at offset: Int, _ value: UInt8) {
        storeBytes(of: value, toByteOffset: offset, as: UInt8.self)
    }
    @inline(__always) func setU16(at offset: Int, _ value: Int) {
        storeBytes(of: UInt16(truncatingIfNeeded: value).littleEndian, toByteOffset: offset, as: UInt16.self)
    }
    @inline(__always) func setU32(at offset: Int, _ value: Int) {
        storeBytes(of: UInt32(truncatingIfNeeded: value).littleEndian, toByteOffset: offset, as: UInt32.self)
    }
    @inline(__always) func setU64(at offset: Int, _ value: UInt64) {
        storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt64.self)
    }
}

@inline(__always) func put32(_ bytes: inout [UInt8], _ offset: Int, _ value: UInt32) {
    for index in 0..<4 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(index))) }
}
@inline(__always) func put64(_ bytes: inout [UInt8], _ offset: Int, _ value: UInt64) {
    for index in 0..<8 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(index))) }
}
@inline(__always) func get32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
    var value: UInt32 = 0
    for index in 0..<4 { value |= UInt32(bytes[offset + index]) << (8 * UInt32(index)) }
    return value
}
@inline(__always) func get64(_ bytes: [UInt8], _ offset: Int) -> UInt64 {
    var value: UInt64 = 0
    for index in 0..<8 { value |= UInt64(bytes[offset + index]) << (8 * UInt64(index)) }
    return value
}
