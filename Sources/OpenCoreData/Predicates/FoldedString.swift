// How the string operators see a string: its grapheme clusters (Swift's Characters),
// each folded on its own — canonical decomposition, then Foundation's case and/or
// diacritic folding as the options ask, then canonical composition — laid end to end
// as Unicode scalars with the cluster boundaries marked. BEGINSWITH, ENDSWITH, CONTAINS
// and LIKE match runs of whole clusters: a pattern must fold to exactly the scalars of
// the clusters it covers. So "Straße" ==[c] "STRASSE" and CONTAINS[c] "SS" (ß folds to
// ss, ﬀ to ff), but "ß" CONTAINS[c] "s" is false (half a cluster), as NSString's range
// search answers; "e\u{301}" CONTAINS "e" is false, CONTAINS[d] "e" true.
//
// Why our own search: Foundation's `range(of:)` (behind `String.contains`) on Linux traps
// ("String index is out of bounds") on strings mixing NUL, CR LF and length-changing
// folds, and answers wrongly on others ("\0" contains "\0\0"). Folding one cluster at a
// time makes every offset ours: nothing maps folded offsets back into the original.
import Foundation

/// A string folded for the string operators: the scalars of its folded clusters, with
/// the offsets where clusters start.
struct FoldedString {
    /// The folded clusters' scalar values, end to end.
    private(set) var scalars: [UInt32] = []
    /// `isBoundary[i]`: a cluster starts at `scalars[i]`; the last entry (the end) is true.
    private(set) var isBoundary: [Bool] = []

    init(_ string: String, options: StringComparisonOptions) {
        let utf8 = string.utf8
        scalars.reserveCapacity(utf8.count)
        isBoundary.reserveCapacity(utf8.count + 1)
        let asciiFolds = !options.localeSensitive  // a locale may fold ASCII too: Turkish I to ı
        var index = utf8.startIndex
        while index < utf8.endIndex {
            let byte = utf8[index]
            let next = utf8.index(after: index)
            // An ASCII character followed by another (but CR by LF) is a whole cluster; before a
            // non-ASCII scalar it may not be (a combining mark attaches to it).
            if asciiFolds, byte < 0x80,
                next == utf8.endIndex || (utf8[next] < 0x80 && !(byte == 0x0D && utf8[next] == 0x0A))
            {
                scalars.append(UInt32(options.caseInsensitive ? ASCIIStringMatcher.lowercased(byte) : byte))
                isBoundary.append(true)
                index = next
                continue
            }
            let end = string.index(after: index)
            let start = scalars.count
            options.appendFolded(string.unicodeScalars[index..<end], to: &scalars)
            // A cluster that folds to nothing is not there.
            if scalars.count > start {
                isBoundary.append(true)
                isBoundary.append(contentsOf: repeatElement(false, count: scalars.count - start - 1))
            }
            index = end
        }
        isBoundary.append(true)
    }

    /// The folded text as a string.
    var string: String {
        var view = String.UnicodeScalarView()
        for value in scalars { if let scalar = Unicode.Scalar(value) { view.append(scalar) } }
        return String(view)
    }

    /// Whether the first whole clusters fold to `pattern`, which is not empty.
    func hasPrefix(_ pattern: FoldedPattern) -> Bool {
        let count = pattern.scalars.count
        guard count > 0, count <= scalars.count, isBoundary[count] else { return false }
        return scalars[0..<count].elementsEqual(pattern.scalars)
    }

    /// Whether the last whole clusters fold to `pattern`, which is not empty.
    func hasSuffix(_ pattern: FoldedPattern) -> Bool {
        let count = pattern.scalars.count
        guard count > 0, count <= scalars.count, isBoundary[scalars.count - count] else { return false }
        return scalars[(scalars.count - count)...].elementsEqual(pattern.scalars)
    }

    /// Whether a run of whole clusters folds to `pattern`, which is not empty.
    ///
    /// Complexity: O(scalars + pattern) (Knuth-Morris-Pratt).
    func contains(_ pattern: FoldedPattern) -> Bool {
        let wanted = pattern.scalars
        guard !wanted.isEmpty, wanted.count <= scalars.count else { return false }
        var matched = 0
        for (index, value) in scalars.enumerated() {
            while matched > 0 && wanted[matched] != value { matched = pattern.fallback[matched - 1] }
            if wanted[matched] == value { matched += 1 }
            if matched == wanted.count {
                if isBoundary[index + 1] && isBoundary[index + 1 - matched] { return true }
                matched = pattern.fallback[matched - 1]
            }
        }
        return false
    }

    /// The offset where the cluster after the one starting at `offset` starts.
    func nextBoundary(after offset: Int) -> Int {
        var next = offset + 1
        while !isBoundary[next] { next += 1 }
        return next
    }

    /// Whether `run` is the whole clusters starting at `offset` (a boundary).
    func hasRun(_ run: [UInt32], at offset: Int) -> Bool {
        let end = offset + run.count
        guard end <= scalars.count, isBoundary[end] else { return false }
        return scalars[offset..<end].elementsEqual(run)
    }
}

/// The right operand of BEGINSWITH, ENDSWITH or CONTAINS, folded once.
struct FoldedPattern {
    /// The folded scalars (where the pattern's own clusters end does not matter).
    let scalars: [UInt32]
    /// Knuth-Morris-Pratt: `fallback[i]` is the length of the longest proper border of `scalars[0...i]`.
    let fallback: [Int]

    init(_ pattern: String, options: StringComparisonOptions) {
        scalars = FoldedString(pattern, options: options).scalars
        var fallback = [Int](repeating: 0, count: scalars.count)
        var border = 0
        for index in scalars.indices.dropFirst() {
            while border > 0 && scalars[index] != scalars[border] { border = fallback[border - 1] }
            if scalars[index] == scalars[border] { border += 1 }
            fallback[index] = border
        }
        self.fallback = fallback
    }
}

/// BEGINSWITH, ENDSWITH or CONTAINS against one pattern, prepared once: byte by byte when
/// both sides are ASCII (`ASCIIStringMatcher`), over folded clusters otherwise.
struct StringSearch {
    private let test: ASCIIStringMatcher.Test
    private let options: StringComparisonOptions
    private let ascii: ASCIIStringMatcher?
    private let pattern: FoldedPattern

    /// - Parameter test: `.isPrefix`, `.isSuffix` or `.isContained`.
    init(_ test: ASCIIStringMatcher.Test, pattern: String, options: StringComparisonOptions) {
        self.test = test
        self.options = options
        ascii = ASCIIStringMatcher(pattern: pattern, options: options)
        self.pattern = FoldedPattern(pattern, options: options)
    }

    /// Whether `subject` passes; false for a pattern that is (or folds to) nothing.
    func matches(_ subject: String) -> Bool {
        if let found = ascii?.test(test, subject) { return found }
        let text = FoldedString(subject, options: options)
        switch test {
        case .isPrefix: return text.hasPrefix(pattern)
        case .isSuffix: return text.hasSuffix(pattern)
        case .isContained: return text.contains(pattern)
        case .equals: return text.scalars == pattern.scalars
        }
    }
}
