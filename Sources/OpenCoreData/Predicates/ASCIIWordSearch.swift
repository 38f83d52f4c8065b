// CONTAINS of an ASCII pattern in a subject, eight bytes at a time: the scan's test of
// every row (`firstName CONTAINS[c] %@`), where a byte loop over a name cost ~180
// instructions per row, most of them in its first-byte misses.
//
// Each 8-byte window of the subject is checked and searched as one word:
//
//   plain     no byte >= 0x80 and no CR (0x0D): else nil, for the Unicode path
//   folded    A-Z to a-z (what `ASCIIStringMatcher.lowercased` does to one byte)
//   starts    bytes equal to the pattern's first byte whose next byte equals its second
//   verified  the rest of the pattern compared byte by byte at each such start
//
// With every byte below 0x80, adding 0x7F (or the range bounds' complements) to a byte
// never carries into the next, so the per-byte tests are exact, not the usual
// "has a zero byte" approximation. Windows advance by 7 (by 8 for a one-byte pattern): a
// start's second byte lies in the same window. The last window ends at the subject's
// end, overlapping the one before; a subject shorter than 8 bytes is read in pieces of
// 4, 2 and 1 bytes, never past its end. The whole subject is checked even after a
// match: a subject beyond ASCII answers nil, whatever its ASCII bytes hold.
import Foundation

/// ``ASCIIStringMatcher``'s CONTAINS, eight bytes at a time (see the file comment).
enum ASCIIWordSearch {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highs: UInt64 = 0x8080_8080_8080_8080
    private static let carriageReturns: UInt64 = 0x0D0D_0D0D_0D0D_0D0D

    /// Whether the folded `pattern` (ASCII without CR, folded to lower case when
    /// `caseInsensitive`) occurs in `text`; nil when `text` is not plain ASCII without CR.
    /// An empty pattern occurs nowhere.
    @inline(__always)
    static func isContained(pattern: UnsafeRawBufferPointer, caseInsensitive: Bool, utf8 text: UnsafeRawBufferPointer)
        -> Bool?
    {
        let count = text.count
        guard let base = text.baseAddress, count > 0 else { return false }
        guard let first = pattern.first, count >= pattern.count else {
            return isPlainASCII(text) ? false : nil
        }
        let length = pattern.count
        let second = length > 1 ? pattern[1] : 0
        let firsts = ones &* UInt64(first)
        let seconds = ones &* UInt64(second)
        // The last start a match can have.
        let lastStart = count - length
        if count < 8 {
            let word = partialLittleEndianWord(base, count: count)
            guard isPlain(word) else { return nil }
            return search(
                word, at: 0, lastStart: lastStart, firsts: firsts, seconds: seconds, length: length,
                caseInsensitive: caseInsensitive, pattern: pattern, text: text)
        }
        let step = length > 1 ? 7 : 8
        var found = false
        var offset = 0
        while true {
            let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            guard isPlain(word) else { return nil }
            if !found, offset <= lastStart {
                found = search(
                    word, at: offset, lastStart: lastStart, firsts: firsts, seconds: seconds, length: length,
                    caseInsensitive: caseInsensitive, pattern: pattern, text: text)
            }
            if offset == count - 8 { return found }
            offset = min(offset + step, count - 8)
        }
    }

    /// The word a pattern byte is compared with: `byte` in every byte (see
    /// ``isContained(patternWords:length:caseInsensitive:in:start:count:)``).
    static func broadcast(_ byte: UInt8) -> UInt64 { ones &* UInt64(byte) }

    /// ``isContained(pattern:caseInsensitive:utf8:)`` for a pattern of 1 to 8 bytes, given
    /// as `length` words each holding one of its folded bytes in every byte
    /// (``broadcast(_:)``) and as one word (``packed(_:)``), in the subject of `count` bytes at `start` of `bytes`. A subject
    /// of at most 8 bytes is one word, tested in one pass with no byte compared twice; when
    /// it ends 8 or more bytes into `bytes`, the word read is the 8 bytes ending it (the
    /// bytes before it shifted out), so a scan reads a row's string with one load. A longer
    /// subject is read in windows of 8
    /// (``isContained(patternWords:packed:length:caseInsensitive:inLong:count:)``).
    ///
    /// Each pattern byte marks the subject's bytes equal to it, shifted back by its place
    /// in the pattern: the marks left in every pattern byte's set are the match starts,
    /// counted only where the whole pattern fits (so the zero bytes above a short subject
    /// never match a NUL in the pattern).
    @inline(__always)
    static func isContained(
        patternWords: UnsafePointer<UInt64>, packed: UInt64, length: Int, caseInsensitive: Bool,
        in bytes: UnsafeRawBufferPointer, start: Int, count: Int
    ) -> Bool? {
        guard count > 0, let base = bytes.baseAddress else { return false }
        if count > 8 {
            return isContained(
                patternWords: patternWords, packed: packed, length: length, caseInsensitive: caseInsensitive,
                inLong: base + start, count: count)
        }
        let end = start &+ count
        let word: UInt64
        if end >= 8 {
            let last = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: end &- 8, as: UInt64.self))
            word = last &>> UInt64(64 &- 8 &* count)
        } else {
            word = partialLittleEndianWord(base + start, count: count)
        }
        guard isPlain(word) else { return nil }
        guard count >= length else { return false }
        let subject = caseInsensitive ? folded(word) : word
        // The starts where the pattern fits: bytes 0 through count - length.
        var starts = highs &>> UInt64(8 &* (7 &- (count &- length)))
        var index = 0
        while index < length, starts != 0 {
            starts &= zeroBytes(subject ^ patternWords[index]) &>> UInt64(8 &* index)
            index &+= 1
        }
        return starts != 0
    }

    /// The folded pattern `bytes` (1 to 8) packed into one word's low bytes, for the
    /// windowed test's check of a candidate start in one compare.
    static func packed(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var word: UInt64 = 0
        for (index, byte) in bytes.enumerated() where index < 8 { word |= UInt64(byte) << (8 * index) }
        return word
    }

    /// The test of a subject of more than 8 bytes at `base` (a pattern of 1 to 8, its bytes
    /// also `packed`): windows of 8 bytes stepping by 7 (by 8 for a one-byte pattern), the
    /// starts in each marked where the pattern's first two bytes lie, each such start
    /// checked by comparing the 8 bytes read at it (or the last 8, shifted, near the end)
    /// with the packed pattern under a mask of its length. The last window ends at the
    /// subject's end. After a match the windows step by 8, only to check the rest of the
    /// subject: any byte >= 0x80 or CR answers nil, as in the short form. Out of line: the
    /// short form is the scan's common case.
    @inline(never)
    static func isContained(
        patternWords: UnsafePointer<UInt64>, packed: UInt64, length: Int, caseInsensitive: Bool,
        inLong base: UnsafeRawPointer, count: Int
    ) -> Bool? {
        @inline(__always) func word(at offset: Int) -> UInt64 {
            UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        }
        let firsts = patternWords[0]
        let seconds = length > 1 ? patternWords[1] : 0
        let mask = length >= 8 ? ~UInt64(0) : (UInt64(1) &<< UInt64(8 &* length)) &- 1
        let step = length > 1 ? 7 : 8
        let last = count &- 8
        let lastStart = count &- length
        var hazards: UInt64 = 0
        var found = false
        var offset = 0
        while true {
            let window = word(at: offset)
            // Exact for a plain word; a word with a byte >= 0x80 marks itself whatever its carries.
            hazards |= window & highs | zeroBytes(window ^ carriageReturns)
            if !found {
                let subject = caseInsensitive ? folded(window) : window
                var starts = zeroBytes(subject ^ firsts)
                if length > 1 { starts &= zeroBytes(subject ^ seconds) &>> 8 }
                let within = lastStart &- offset
                if within < 7 { starts &= (UInt64(1) &<< UInt64(8 &* (within &+ 1))) &- 1 }
                while starts != 0 {
                    let start = offset &+ starts.trailingZeroBitCount &>> 3
                    let candidate = start <= last ? word(at: start) : word(at: last) &>> UInt64(8 &* (start &- last))
                    if ((caseInsensitive ? folded(candidate) : candidate) ^ packed) & mask == 0 {
                        found = true
                        break
                    }
                    starts &= starts &- 1
                }
            }
            if offset == last { break }
            offset = min(offset &+ (found ? 8 : step), last)
        }
        return hazards == 0 ? found : nil
    }

    /// Whether a match starts in the window `word` at `offset` (at most at `lastStart`).
    @inline(__always)
    private static func search(
        _ word: UInt64, at offset: Int, lastStart: Int, firsts: UInt64, seconds: UInt64, length: Int,
        caseInsensitive: Bool, pattern: UnsafeRawBufferPointer, text: UnsafeRawBufferPointer
    ) -> Bool {
        let subject = caseInsensitive ? folded(word) : word
        var starts = zeroBytes(subject ^ firsts)
        if length > 1 { starts &= zeroBytes(subject ^ seconds) >> 8 }
        // Starts past the last possible one (or in a short word's padding) do not count.
        let within = lastStart - offset
        if within < 7 { starts &= (UInt64(1) << (8 &* (within &+ 1))) &- 1 }
        guard length > 2 else { return starts != 0 }
        while starts != 0 {
            let start = offset + starts.trailingZeroBitCount >> 3
            if ASCIIStringMatcher.matches(pattern, caseInsensitive, text, at: start, from: 2) { return true }
            starts &= starts &- 1
        }
        return false
    }

    /// Whether `text` holds no byte >= 0x80 and no CR (ASCII a byte-level compare can answer).
    static func isPlainASCII(_ text: UnsafeRawBufferPointer) -> Bool {
        everyWord(of: text) { isPlain($0) }
    }

    /// Whether `text` holds no byte >= 0x80: it is ASCII, so UTF-8 as it stands.
    @inline(__always)
    static func isASCII(_ text: UnsafeRawBufferPointer) -> Bool {
        everyWord(of: text) { $0 & highs == 0 }
    }

    /// Whether `test` holds for every 8-byte window of `text` (overlapping at the end; a
    /// text shorter than 8 bytes is one word padded with zeros).
    @inline(__always)
    private static func everyWord(of text: UnsafeRawBufferPointer, _ test: (UInt64) -> Bool) -> Bool {
        let count = text.count
        guard let base = text.baseAddress, count > 0 else { return true }
        if count < 8 { return test(partialLittleEndianWord(base, count: count)) }
        var offset = 0
        while true {
            guard test(UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))) else {
                return false
            }
            if offset == count - 8 { return true }
            offset = min(offset + 8, count - 8)
        }
    }

    /// Whether `word` holds no byte >= 0x80 and no CR.
    @inline(__always)
    private static func isPlain(_ word: UInt64) -> Bool {
        word & highs == 0 && zeroBytes(word ^ carriageReturns) == 0
    }

    /// The high bit of each zero byte of `word`, whose bytes are all below 0x80.
    @inline(__always)
    private static func zeroBytes(_ word: UInt64) -> UInt64 {
        ~(word &+ 0x7F7F_7F7F_7F7F_7F7F) & highs
    }

    /// `word` (bytes below 0x80) with A-Z mapped to a-z.
    @inline(__always)
    private static func folded(_ word: UInt64) -> UInt64 {
        // A byte's high bit after adding 0x3F: it is >= 0x41 ("A"); after adding 0x25: >= 0x5B (past "Z").
        let upper = (word &+ 0x3F3F_3F3F_3F3F_3F3F) & ~(word &+ 0x2525_2525_2525_2525) & highs
        return word | (upper >> 2)
    }
}
