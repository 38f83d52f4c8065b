// The one byte reader and writer of every store format: rows (SPEC.md §3.2), index keys'
// exact elements (§3.4), blob headers (§3.8), history records (§3.7), the binary store
// file (§4) and its metadata. Every format builds from the same primitives:
//
//   PRIMITIVE        BYTES
//   byte             1
//   varint           unsigned LEB128: 7 bits a byte, low groups first, high bit = more
//                    follows; at most 10 bytes, the tenth holding only bit 63
//   signed           zigzag ((n << 1) ^ (n >> 63)), then varint: small negatives stay short
//   fixed32/fixed64  4/8 bytes, little-endian
//   length-prefixed  varint byte count, then the bytes (strings: UTF-8, validated on read)
//
// The reader works on borrowed bytes (a row straight from an engine page, no copy) and
// checks every length and count against the bytes left before it reads or allocates.
import Foundation

/// Appends the primitives of the store formats.
struct StoreByteWriter {
    var bytes: [UInt8] = []

    mutating func byte(_ value: UInt8) { bytes.append(value) }

    /// Unsigned LEB128.
    mutating func varint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    /// A count or index (a negative one is written as 0).
    mutating func varint(_ value: Int) { varint(UInt64(max(value, 0))) }

    /// Zigzag then LEB128, so small negative numbers stay short.
    mutating func signed(_ value: Int64) { varint(StoreByteWriter.zigzag(value)) }

    static func zigzag(_ value: Int64) -> UInt64 { UInt64(bitPattern: (value << 1) ^ (value >> 63)) }

    mutating func fixed64(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func fixed32(_ value: UInt32) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func lengthPrefixed(_ content: some Collection<UInt8>) {
        varint(content.count)
        bytes.append(contentsOf: content)
    }

    /// Appends `raw` with one copy (appending raw bytes as a sequence copies them one by one).
    @inline(__always)
    mutating func append(_ raw: UnsafeRawBufferPointer) {
        raw.withMemoryRebound(to: UInt8.self) { bytes.append(contentsOf: $0) }
    }

    /// Appends `other` with one copy.
    @inline(__always)
    mutating func append(_ other: [UInt8]) { bytes.append(contentsOf: other) }

    /// Length-prefixed UTF-8, straight from the string (no intermediate array).
    mutating func string(_ value: String) {
        varint(value.utf8.count)
        utf8(value)
    }

    /// The UTF-8 bytes of `value`, copied at once from the string's own storage.
    mutating func utf8(_ value: String) {
        var value = value
        value.withUTF8 { bytes.append(contentsOf: $0) }
    }
}

/// Reads what ``StoreByteWriter`` wrote from borrowed bytes, checking every bound; a
/// read past the end or a malformed value throws an error naming what is read.
struct StoreByteReader {
    let bytes: UnsafeRawBufferPointer
    var offset: Int
    /// Names the bytes in error messages ("history record 7"); nil for a stored row.
    private let what: String?
    /// The Cocoa error code of a damaged-bytes error.
    private let errorCode: Int

    init(_ bytes: UnsafeRawBufferPointer, from offset: Int = 0, what: String, errorCode: Int = NSCoreDataError) {
        self.bytes = bytes
        self.offset = offset
        self.what = what
        self.errorCode = errorCode
    }

    /// A reader of one stored row: damage is `NSFileReadCorruptFileError`.
    init(row bytes: UnsafeRawBufferPointer, from offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
        self.what = nil
        self.errorCode = NSFileReadCorruptFileError
    }

    var remaining: Int { bytes.count - offset }
    var isAtEnd: Bool { offset >= bytes.count }

    func damaged(_ problem: String) -> NSError {
        CoreDataError.make(errorCode, "\(what ?? "a row in the store") is damaged: \(problem) (at byte \(offset))")
    }

    mutating func byte() throws -> UInt8 {
        guard offset < bytes.count else { throw damaged("it ends early") }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func varint() throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let next = try byte()
            if shift == 63 && next > 1 { throw damaged("a varint overflows 64 bits") }
            result |= UInt64(next & 0x7F) << shift
            if next & 0x80 == 0 { return result }
            shift += 7
            if shift > 63 { throw damaged("a varint is too long") }
        }
    }

    /// A varint used as a count or index: at most `limit`.
    mutating func count(atMost limit: Int) throws -> Int {
        let value = try varint()
        guard value <= UInt64(max(limit, 0)) else { throw damaged("a count of \(value) exceeds its bound \(limit)") }
        return Int(value)
    }

    mutating func signed() throws -> Int64 { StoreByteReader.unzigzag(try varint()) }

    static func unzigzag(_ value: UInt64) -> Int64 { Int64(bitPattern: (value >> 1) ^ (0 &- (value & 1))) }

    mutating func fixed64() throws -> UInt64 {
        guard remaining >= 8 else { throw damaged("8 bytes expected, \(remaining) left") }
        defer { offset += 8 }
        return UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    mutating func fixed32() throws -> UInt32 {
        guard remaining >= 4 else { throw damaged("4 bytes expected, \(remaining) left") }
        defer { offset += 4 }
        return UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    /// The next `count` bytes, borrowed: valid as long as the reader's bytes are.
    /// Checked above, so no slice is made and checked again; the error is made out of
    /// line, which keeps this small enough to inline into every string a row reads.
    @inline(__always)
    mutating func take(_ count: Int) throws -> UnsafeRawBufferPointer {
        guard count >= 0, count <= remaining else { throw short(of: count) }
        defer { offset += count }
        return UnsafeRawBufferPointer(start: bytes.baseAddress.map { $0 + offset }, count: count)
    }

    mutating func skip(_ count: Int) throws {
        guard count >= 0, count <= remaining else { throw short(of: count) }
        offset += count
    }

    /// The error of `count` bytes expected where fewer are left.
    @inline(never)
    private func short(of count: Int) -> NSError { damaged("\(count) bytes expected, \(remaining) left") }

    mutating func lengthPrefixed() throws -> UnsafeRawBufferPointer {
        try take(try count(atMost: remaining))
    }

    mutating func skipLengthPrefixed() throws {
        try skip(try count(atMost: remaining))
    }

    mutating func string() throws -> String {
        try string(length: try count(atMost: remaining))
    }

    /// The next `length` bytes as a string (a short string's length is in its row tag).
    mutating func string(length: Int) throws -> String {
        guard let text = StoreByteReader.validatedString(try take(length)) else {
            throw damaged("a string is not UTF-8")
        }
        return text
    }

    /// The next `length` bytes as a string, as ``string(length:)`` reads them: ASCII short
    /// enough for a small string is loaded straight into its words here, with no call per
    /// layer of reading (a row's names and keys); anything else takes ``string(length:)``.
    @inline(__always)
    mutating func shortString(length: Int) throws -> String {
        if length <= remaining, length <= Self.smallStringCapacity, Self.smallASCIIBitsHold,
            let base = bytes.baseAddress, let bits = Self.smallASCIIBits(base + offset, count: length)
        {
            offset += length
            return unsafeBitCast(bits, to: String.self)
        }
        return try string(length: length)
    }

    /// The most UTF-8 bytes a String holds inline, without an allocation (on 64-bit platforms).
    private static var smallStringCapacity: Int { 15 }

    /// The two words of the small string holding the `count` (at most
    /// ``smallStringCapacity``) bytes at `base` when they are ASCII, nil otherwise: the code
    /// units loaded straight into the string's two words (the second's last byte is the
    /// small, ASCII flags and the count). One pass of loads both makes the words and checks
    /// for ASCII, where a check of the bytes, a copy into the words and
    /// `String(unsafeUninitializedCapacity:)`'s own ASCII check each went over them once
    /// (~105 instructions per string, two strings a row of object-traverse-100k). Only
    /// where ``smallASCIIBitsHold``.
    @inline(__always)
    private static func smallASCIIBits(_ base: UnsafeRawPointer, count: Int) -> (UInt64, UInt64)? {
        let low =
            count >= 8
            ? UInt64(littleEndian: base.loadUnaligned(as: UInt64.self)) : partialLittleEndianWord(base, count: count)
        let high = count > 8 ? partialLittleEndianWord(base + 8, count: count - 8) : 0
        guard (low | high) & 0x8080_8080_8080_8080 == 0 else { return nil }
        return (low, high | (0xE0 | UInt64(truncatingIfNeeded: count)) << 56)
    }

    /// Whether this platform's small strings are laid out as ``smallASCIIBits(_:count:)``
    /// makes them (64-bit little-endian): checked once against strings the standard library
    /// made, of every small length; else the standard library makes each. The check
    /// compares words and never makes a String of ours, so a platform laid out otherwise
    /// holds no String of foreign bits even for a moment.
    static let smallASCIIBitsHold: Bool = {
        guard MemoryLayout<String>.size == 16, UInt64(1).littleEndian == 1 else { return false }
        let letters = Array("0123456789abcdefghij".utf8)
        return (0...smallStringCapacity).allSatisfy { count in
            let made = String(decoding: letters[0..<count], as: UTF8.self)
            let ourBits = letters.withUnsafeBytes { raw in
                raw.baseAddress.flatMap { smallASCIIBits($0, count: count) }
            }
            let madeBits = unsafeBitCast(made, to: (UInt64, UInt64).self)
            return ourBits.map { $0 == madeBits } ?? false
        }
    }()

    /// The string whose UTF-8 is `raw`, or nil when `raw` is not valid UTF-8.
    ///
    /// `String(validating:as:)` runs unspecialized on Linux (generic metadata lookups on every
    /// call, about half the cost of decoding a row); decoding with repair and comparing the
    /// bytes back is exact — a repaired string differs from its input at the first invalid
    /// byte — and stays on the standard library's fast path.
    static func validatedString(_ raw: UnsafeRawBufferPointer) -> String? {
        guard let base = raw.baseAddress, !raw.isEmpty else { return "" }
        // ASCII (most names and keys) is UTF-8 as it stands: nothing repaired, nothing to compare
        // back; and a short one is loaded straight into a small string's words
        // (`String(decoding:)` runs its full repairing decode, ~150 instructions per string).
        if raw.count <= Self.smallStringCapacity, Self.smallASCIIBitsHold {
            if let bits = Self.smallASCIIBits(base, count: raw.count) { return unsafeBitCast(bits, to: String.self) }
        } else if ASCIIWordSearch.isASCII(raw) {
            let units = UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: raw.count)
            guard raw.count <= Self.smallStringCapacity else { return String(decoding: units, as: UTF8.self) }
            return String(unsafeUninitializedCapacity: raw.count) { buffer in
                UnsafeMutableRawBufferPointer(buffer).copyMemory(from: raw)
                return raw.count
            }
        }
        let units = UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: raw.count)
        var string = String(decoding: units, as: UTF8.self)
        let valid = string.withUTF8 { decoded in
            guard let start = decoded.baseAddress, decoded.count == units.count else { return false }
            return memcmp(start, base, units.count) == 0
        }
        return valid ? string : nil
    }
}

extension StoreByteReader {
    /// The varint at `offset` of `bytes` as a non-negative `Int`, moving `offset` past it;
    /// nil, without throwing, when it runs past the end or does not fit: the unchecked
    /// fast path of a scan, which lets the checked reader name the damage.
    @inline(__always)
    static func length(in bytes: UnsafeRawBufferPointer, at offset: inout Int) -> Int? {
        var value = 0
        var shift = 0
        while offset < bytes.count, shift < 63 {
            let byte = bytes[offset]
            offset += 1
            value |= Int(byte & 0x7F) << shift
            if byte < 0x80 { return value >= 0 ? value : nil }
            shift += 7
        }
        return nil
    }
}

/// The `count` (< 8) bytes at `base` as the low bytes of a little-endian word, the rest
/// zero: at most three loads, none past the bytes (short strings' words, ASCIIWordSearch's).
@inline(__always)
func partialLittleEndianWord(_ base: UnsafeRawPointer, count: Int) -> UInt64 {
    var word: UInt64 = 0
    var offset = 0
    if count & 4 != 0 {
        word = UInt64(UInt32(littleEndian: base.loadUnaligned(as: UInt32.self)))
        offset = 4
    }
    if count & 2 != 0 {
        let piece = UInt16(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
        word |= UInt64(piece) << (offset &* 8)
        offset += 2
    }
    if count & 1 != 0 { word |= UInt64(base.load(fromByteOffset: offset, as: UInt8.self)) << (offset &* 8) }
    return word
}
