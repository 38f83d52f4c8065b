// A string operator's test on a slot's encoded bytes, held by one object that the scan
// reaches without retaining it: a scan tests every row, and copying a matcher's array
// and closures per row (a retain and release each) cost more than the test itself.
// ASCII subjects are answered byte by byte on the folded pattern's bytes, kept in memory
// this object owns; any other subject takes the operator's own String test. A scan asks
// a lone clause about a whole row (`evaluate(row:slot:)`): the slot is found without
// noting the offsets of the slots before it, and CONTAINS of a pattern of at most 8 bytes
// in a string of at most 63 (the short form) is one word's test, or one per 8-byte window.
import Foundation

/// `==`, `!=`, BEGINSWITH, ENDSWITH, CONTAINS or LIKE of a constant string, on encoded rows.
final class PageFileEncodedStringClause {
    /// The byte-level test for ASCII subjects; nil when the pattern or operator has none.
    private let asciiTest: ASCIIStringMatcher.Test?
    /// The folded pattern's bytes (empty without an ASCII test), owned by this object.
    private let pattern: UnsafeMutableRawBufferPointer
    private let caseInsensitive: Bool
    private let negated: Bool
    /// For CONTAINS of a pattern of 1 to 8 bytes: each folded byte in every byte of a word
    /// (`ASCIIWordSearch.broadcast`), owned by this object; else nil.
    private let patternWords: UnsafeMutableBufferPointer<UInt64>?
    /// The same pattern packed into one word (`ASCIIWordSearch.packed`).
    private let patternPacked: UInt64
    /// The operator's answer for a non-ASCII subject.
    private let text: (String) -> Bool
    /// The answer for nil.
    let null: Bool

    init(
        ascii: (matcher: ASCIIStringMatcher, test: ASCIIStringMatcher.Test, negated: Bool)?,
        text: @escaping (String) -> Bool, null: Bool
    ) {
        let bytes = ascii?.matcher.foldedPattern ?? []
        pattern = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 1)
        pattern.copyBytes(from: bytes)
        asciiTest = ascii?.test
        caseInsensitive = ascii?.matcher.foldsCase ?? false
        negated = ascii?.negated ?? false
        if asciiTest == .isContained, (1...8).contains(bytes.count) {
            let words = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: bytes.count)
            _ = words.initialize(from: bytes.map(ASCIIWordSearch.broadcast))
            patternWords = words
        } else {
            patternWords = nil
        }
        patternPacked = ASCIIWordSearch.packed(bytes)
        self.text = text
        self.null = null
    }

    deinit {
        pattern.deallocate()
        patternWords?.deallocate()
    }

    /// The answer for the row `bytes` whose value in slot `slot` the clause tests, as
    /// ``evaluate(_:at:)`` gives it at that slot's offset; nil also when the row holds no
    /// such slot or the walk to it stops at anything unexpected, for the caller to walk
    /// the row as usual (which names any damage).
    @inline(__always)
    func evaluate(row bytes: UnsafeRawBufferPointer, slot: Int) -> Bool? {
        guard let offset = PageFileRowCodec.quickSlotOffset(bytes, of: slot) else { return nil }
        let raw = bytes[offset]
        // A string in the short form (tags 0x40-0x7F, at most 63 bytes) within the row: one
        // word for at most 8 bytes, windows of 8 for 9 to 63.
        if let patternWords, let first = patternWords.baseAddress {
            let length = Int(raw &- PageFileRowCodec.shortStringBase)
            if length < 0x40, length < bytes.count &- offset,
                let found = ASCIIWordSearch.isContained(
                    patternWords: first, packed: patternPacked, length: patternWords.count,
                    caseInsensitive: caseInsensitive, in: bytes, start: offset &+ 1, count: length)
            {
                return found != negated
            }
        }
        return evaluate(bytes, at: offset)
    }

    /// The answer for the value at `offset` of the row `bytes`, as the clause's encoded test
    /// gives it (`PageFileEncodedClause.evaluate(_:at:)`): nil when the value is not a
    /// string or null, or the string's test needs the decoded path.
    @inline(__always)
    func evaluate(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Bool? {
        guard offset < bytes.count else { return nil }
        if bytes[offset] == PageFileRowCodec.Tag.null.rawValue { return null }
        guard let utf8 = PageFileRowCodec.stringBytes(bytes, at: offset) else { return nil }
        return evaluate(utf8: utf8)
    }

    /// The answer for the string `utf8` (a slot's bytes); nil when the bytes are not UTF-8,
    /// which is damage the decoded path names.
    @inline(__always)
    func evaluate(utf8: UnsafeRawBufferPointer) -> Bool? {
        // CONTAINS, the commonest scan of strings, without the operator dispatch.
        if asciiTest == .isContained,
            let found = ASCIIStringMatcher.isContained(
                pattern: UnsafeRawBufferPointer(pattern), caseInsensitive: caseInsensitive, utf8: utf8)
        {
            return found != negated
        }
        if let asciiTest,
            let found = ASCIIStringMatcher.test(
                asciiTest, pattern: UnsafeRawBufferPointer(pattern), caseInsensitive: caseInsensitive, utf8: utf8)
        {
            return found != negated
        }
        guard let subject = StoreByteReader.validatedString(utf8) else { return nil }
        return text(subject)
    }
}
