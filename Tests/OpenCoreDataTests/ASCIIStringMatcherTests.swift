// The ASCII fast path of string operators (==, !=, BEGINSWITH, ENDSWITH, CONTAINS with
// [c], [d], [cd]) answers exactly what the general Unicode path answers: random strings
// mixing ASCII, CR LF, combining marks, precomposed and case-changing letters and emoji,
// each compared both ways.
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

struct ASCIIStringMatcherTests {
    /// Pieces the random strings are built from: each a hazard for a byte-level compare.
    static let pieces = [
        "a", "A", "b", "Z", "z", "son", "SON", "Son", " ", "-", "@", "[", "`", "{", "\0", "\r", "\n", "\r\n",
        "\u{301}", "é", "É", "e\u{301}", "ß", "SS", "İ", "ı", "K", "\u{212A}", "ﬀ", "🚀", "Ä", "ä", "Å",
    ]

    static func randomString(_ random: inout SeededRandom, maximumPieces: Int) -> String {
        var text = ""
        for _ in 0..<random.int(in: 0...maximumPieces) {
            // Mostly ASCII letters, so the fast path runs often and finds matches.
            text += random.chance(0.7) ? random.pick(["a", "A", "s", "S", "o", "O", "n", "N"]) : random.pick(pieces)
        }
        return text
    }

    @Test func fastPathAgreesWithUnicodeComparison() throws {
        var random = SeededRandom(environmentOr: 5_151)
        let operators: [OpenCoreData.NSComparisonPredicate.Operator] = [
            .equalTo, .notEqualTo, .beginsWith, .endsWith, .contains,
        ]
        let optionSets: [OpenCoreData.NSComparisonPredicate.Options] = [
            [], .caseInsensitive, .diacriticInsensitive, [.caseInsensitive, .diacriticInsensitive],
        ]
        var fastPathRuns = 0
        for _ in 0..<4_000 {
            let subject = Self.randomString(&random, maximumPieces: 8)
            var pattern = Self.randomString(&random, maximumPieces: 3)
            if random.chance(0.3), !subject.isEmpty {
                // A piece of the subject, so substring operators often match.
                let characters = Array(subject)
                let start = random.int(in: 0...(characters.count - 1))
                let end = random.int(in: start...characters.count)
                pattern = String(characters[start..<end])
                if random.chance(0.5) { pattern = random.chance(0.5) ? pattern.uppercased() : pattern.lowercased() }
            }
            let operatorType = random.pick(operators)
            let options = random.pick(optionSets)
            let operation = ComparisonOperation(type: operatorType, options: options)
            let expected = try operation.evaluate(subject, pattern)
            let prepared = try operation.prepared(right: pattern)
            let actual = try prepared(subject)
            if ASCIIStringMatcher(pattern: pattern, options: StringComparisonOptions(options)) != nil,
                subject.utf8.allSatisfy({ $0 < 0x80 && $0 != 0x0D })
            {
                fastPathRuns += 1
            }
            #expect(
                actual == expected,
                "operator \(operatorType.rawValue) options \(options.rawValue) subject \(subject.debugDescription) pattern \(pattern.debugDescription) (\(random.replayHint))"
            )
            if actual != expected { return }
        }
        #expect(fastPathRuns > 1_000, "the fast path ran \(fastPathRuns) times (\(random.replayHint))")
    }

    /// CONTAINS eight bytes at a time (ASCIIWordSearch) on subjects of every length up to
    /// 40 bytes, so each window position, the overlapping last window and the short-word
    /// reads meet matches: the same answer as the Unicode path, nil exactly for subjects
    /// beyond ASCII or holding CR.
    @Test func wordSearchAgreesWithUnicodeContains() throws {
        var random = SeededRandom(environmentOr: 1_616)
        // The bytes around A-Z and a-z (the fold's bounds), NUL, LF, DEL, CR and one non-ASCII letter.
        let hazards = ["@", "A", "Z", "[", "`", "a", "z", "{", "\0", "\n", "\u{7F}", "\r", "é"]
        var matched = 0
        for _ in 0..<20_000 {
            let letters = random.chance(0.5) ? ["a", "r", "A", "R"] : ["s", "t", "1", "S", "T"]
            var subject = ""
            for _ in 0..<random.int(in: 0...40) {
                subject += random.chance(0.97) ? random.pick(letters) : random.pick(hazards)
            }
            var pattern = ""
            for _ in 0..<random.int(in: 0...5) { pattern += random.pick(letters + ["@", "[", "`", "{", "\0"]) }
            let caseInsensitive = random.chance(0.7)
            let options: OpenCoreData.NSComparisonPredicate.Options = caseInsensitive ? .caseInsensitive : []
            guard let matcher = ASCIIStringMatcher(pattern: pattern, options: StringComparisonOptions(options)) else {
                Issue.record("an ASCII pattern without CR has a matcher: \(pattern.debugDescription)")
                return
            }
            // In a buffer of exactly the subject's size.
            let bytes = Array(subject.utf8)
            let actual = bytes.withUnsafeBufferPointer { buffer in
                let exact = UnsafeMutableRawBufferPointer.allocate(byteCount: buffer.count, alignment: 1)
                defer { exact.deallocate() }
                exact.copyBytes(from: buffer)
                return matcher.foldedPattern.withUnsafeBytes {
                    ASCIIWordSearch.isContained(
                        pattern: $0, caseInsensitive: caseInsensitive, utf8: UnsafeRawBufferPointer(exact))
                }
            }
            let plain = bytes.allSatisfy { $0 < 0x80 && $0 != 0x0D }
            let expected = try ComparisonOperation(type: .contains, options: options).evaluate(subject, pattern)
            let context =
                "subject \(subject.debugDescription) pattern \(pattern.debugDescription) [c] \(caseInsensitive) "
                + "(\(random.replayHint))"
            if plain {
                #expect(actual == expected, "\(context)")
                if actual != expected { return }
                if actual == true { matched += 1 }
            } else {
                #expect(actual == nil, "\(context)")
                if actual != nil { return }
            }
        }
        #expect(matched > 2_000, "\(matched) matches (\(random.replayHint))")
    }

    @Test func nonStringLeftSidesKeepTheGeneralSemantics() throws {
        let contains = ComparisonOperation(
            type: .contains, options: OpenCoreData.NSComparisonPredicate.Options.caseInsensitive)
        let prepared = try contains.prepared(right: "ab")
        #expect(try prepared(["x", "AB"]) == true)
        #expect(try prepared(["x", "abc"]) == false)
        #expect(try prepared(nil) == false)
        #expect(throws: PredicateLanguageError.self) { try prepared(3) }
    }

    @Test func matcherRefusesWhatItCannotCompareByBytes() {
        let plain = StringComparisonOptions([])
        #expect(ASCIIStringMatcher(pattern: "é", options: plain) == nil)
        #expect(ASCIIStringMatcher(pattern: "a\r", options: plain) == nil)
        #expect(
            ASCIIStringMatcher(
                pattern: "ab",
                options: StringComparisonOptions(OpenCoreData.NSComparisonPredicate.Options.localeSensitive)) == nil)
        let matcher = ASCIIStringMatcher(
            pattern: "son", options: StringComparisonOptions(OpenCoreData.NSComparisonPredicate.Options.caseInsensitive)
        )
        #expect(matcher?.isContained(in: "JOHNSON") == true)
        #expect(matcher?.isContained(in: "Jackson\r\n") == nil)
        #expect(matcher?.isContained(in: "Sønne") == nil)
        #expect(matcher?.isPrefix(of: "Sonia") == true)
        #expect(matcher?.isSuffix(of: "Anderson") == true)
        #expect(matcher?.equals("SoN") == true)
    }
}
