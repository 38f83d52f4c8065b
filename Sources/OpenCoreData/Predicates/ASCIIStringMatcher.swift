// Byte-level string operators for ASCII operands: what `==`, BEGINSWITH, ENDSWITH and
// CONTAINS (with [c] and [d]) reduce to when both sides are ASCII, without the folded
// copies of the general path (`FoldedString`).
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

    /// `byte` with A-Z mapped to a-z.
    @inline(__always)
    static func lowercased(_ byte: UInt8) -> UInt8 {
        byte &- 0x41 < 26 ? byte | 0x20 : byte
    }

    /// The operators a matcher answers.
    enum Test {
        case equals, isPrefix, isSuffix, isContained
    }

    /// Whether `subject` equals the pattern; nil when `subject` is not plain ASCII.
    func equals(_ subject: String) -> Bool? { test(.equals, subject) }

    /// Whether `subject` starts with the (non-empty) pattern; nil when `subject` is not plain ASCII.
    func isPrefix(of subject: String) -> Bool? { test(.isPrefix, subject) }

    /// Whether `subject` ends with the (non-empty) pattern; nil when `subject` is not plain ASCII.
    func isSuffix(of subject: String) -> Bool? { test(.isSuffix, subject) }

    /// Whether `subject` contains the (non-empty) pattern; nil when `subject` is not plain ASCII.
    func isContained(in subject: String) -> Bool? { test(.isContained, subject) }

    /// `test` on `subject`; nil when `subject` is not plain ASCII without CR.
    func test(_ test: Test, _ subject: String) -> Bool? {
        var subject = subject
        return subject.withUTF8 { self.test(test, utf8: UnsafeRawBufferPointer($0)) }
    }

    /// `test` on a subject given as UTF-8 bytes; nil when they are not plain ASCII without CR.
    func test(_ test: Test, utf8 text: UnsafeRawBufferPointer) -> Bool? {
        pattern.withUnsafeBytes { Self.test(test, pattern: $0, caseInsensitive: caseInsensitive, utf8: text) }
    }

    /// The folded pattern's bytes, for a holder that tests many subjects through
    /// ``test(_:pattern:caseInsensitive:utf8:)`` without copying the matcher per subject.
    var foldedPattern: [UInt8] { pattern }

    /// Whether the matcher folds case.
    var foldsCase: Bool { caseInsensitive }

    /// `test` of the folded `pattern` on a subject given as UTF-8 bytes; nil when they are
    /// not plain ASCII without CR.
    static func test(
        _ test: Test, pattern: UnsafeRawBufferPointer, caseInsensitive: Bool, utf8 text: UnsafeRawBufferPointer
    ) -> Bool? {
        // CONTAINS checks the subject as it searches it.
        guard test == .isContained || ASCIIWordSearch.isPlainASCII(text) else { return nil }
        switch test {
        case .equals:
            return text.count == pattern.count && matches(pattern, caseInsensitive, text, at: 0)
        case .isPrefix:
            return !pattern.isEmpty && text.count >= pattern.count && matches(pattern, caseInsensitive, text, at: 0)
        case .isSuffix:
            return !pattern.isEmpty && text.count >= pattern.count
                && matches(pattern, caseInsensitive, text, at: text.count - pattern.count)
        case .isContained:
            return ASCIIWordSearch.isContained(pattern: pattern, caseInsensitive: caseInsensitive, utf8: text)
        }
    }

    /// ``test(_:pattern:caseInsensitive:utf8:)`` of `.isContained`, for a scan that tests
    /// every row with it (ASCIIWordSearch.swift).
    @inline(__always)
    static func isContained(pattern: UnsafeRawBufferPointer, caseInsensitive: Bool, utf8 text: UnsafeRawBufferPointer)
        -> Bool?
    {
        ASCIIWordSearch.isContained(pattern: pattern, caseInsensitive: caseInsensitive, utf8: text)
    }

    /// Whether the folded `pattern`'s bytes equal `text`'s from `start` (folded), comparing
    /// from the pattern's byte `first`; `text` is long enough.
    @inline(__always)
    static func matches(
        _ pattern: UnsafeRawBufferPointer, _ caseInsensitive: Bool, _ text: UnsafeRawBufferPointer, at start: Int,
        from first: Int = 0
    ) -> Bool {
        var index = first
        while index < pattern.count {
            let byte = text[start + index]
            if (caseInsensitive ? lowercased(byte) : byte) != pattern[index] { return false }
            index += 1
        }
        return true
    }
}
