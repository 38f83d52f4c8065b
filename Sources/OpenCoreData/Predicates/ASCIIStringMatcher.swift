// Byte-level string operators for ASCII operands: what `==`, BEGINSWITH, ENDSWITH and
// CONTAINS (with [c] and [d]) reduce to when both sides are ASCII, without folding
// copies or Foundation's Unicode search.
//
// Why the reduction is exact: ASCII has no diacritics and one case mapping (A-Z to
// a-z), which is what `StringComparisonOptions.fold` already does to ASCII, and every
// ASCII character is its own grapheme cluster except CR LF, which Swift's String
// compares as one Character. So a text or pattern holding CR, or any byte >= 0x80,
// answers nil here and the caller takes the full Unicode path.
import Foundation

/// One constant pattern, folded once, tested against subject strings byte by byte.
struct ASCIIStringMatcher {
    private static let carriageReturn: UInt8 = 0x0D

    /// The folded pattern's bytes.
    private let pattern: [UInt8]
    private let caseInsensitive: Bool

    /// A matcher for `pattern`; nil when the pattern is not plain ASCII (or holds CR) or
    /// the comparison is locale-sensitive.
    init?(pattern: String, options: StringComparisonOptions) {
        guard !options.localeSensitive else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(pattern.utf8.count)
        for byte in pattern.utf8 {
            guard byte < 0x80, byte != Self.carriageReturn else { return nil }
            bytes.append(options.caseInsensitive ? Self.lowercased(byte) : byte)
        }
        self.pattern = bytes
        self.caseInsensitive = options.caseInsensitive
    }

    @inline(__always)
    private static func lowercased(_ byte: UInt8) -> UInt8 {
        byte &- 0x41 < 26 ? byte | 0x20 : byte
    }

    /// Whether `subject` equals the pattern; nil when `subject` is not plain ASCII.
    func equals(_ subject: String) -> Bool? {
        withASCII(subject) { text in
            text.count == pattern.count && matches(text, at: 0)
        }
    }

    /// Whether `subject` starts with the (non-empty) pattern; nil when `subject` is not plain ASCII.
    func isPrefix(of subject: String) -> Bool? {
        withASCII(subject) { text in
            !pattern.isEmpty && text.count >= pattern.count && matches(text, at: 0)
        }
    }

    /// Whether `subject` ends with the (non-empty) pattern; nil when `subject` is not plain ASCII.
    func isSuffix(of subject: String) -> Bool? {
        withASCII(subject) { text in
            !pattern.isEmpty && text.count >= pattern.count && matches(text, at: text.count - pattern.count)
        }
    }

    /// Whether `subject` contains the (non-empty) pattern; nil when `subject` is not plain ASCII.
    func isContained(in subject: String) -> Bool? {
        withASCII(subject) { text in
            guard let first = pattern.first, text.count >= pattern.count else { return false }
            var start = 0
            let last = text.count - pattern.count
            while start <= last {
                let byte = caseInsensitive ? Self.lowercased(text[start]) : text[start]
                if byte == first && matches(text, at: start) { return true }
                start += 1
            }
            return false
        }
    }

    /// Whether the pattern's bytes equal `text`'s from `start` (folded); `text` is long enough.
    @inline(__always)
    private func matches(_ text: UnsafeBufferPointer<UInt8>, at start: Int) -> Bool {
        var index = 0
        while index < pattern.count {
            let byte = text[start + index]
            if (caseInsensitive ? Self.lowercased(byte) : byte) != pattern[index] { return false }
            index += 1
        }
        return true
    }

    /// `body` on `subject`'s UTF-8 when it is plain ASCII without CR; nil otherwise.
    private func withASCII(_ subject: String, _ body: (UnsafeBufferPointer<UInt8>) -> Bool) -> Bool? {
        var subject = subject
        return subject.withUTF8 { text -> Bool? in
            for byte in text where byte >= 0x80 || byte == Self.carriageReturn { return nil }
            return body(text)
        }
    }
}
