// The string operators on awkward user data: NULs, CR LF, combining marks, ligatures
// and case mappings that change length. Each case must give the same answer through
// every evaluation path (constant, substitution variable, compiled, key-value, a fetch
// from each store) and the answer README "Predicate semantics" documents — the one
// `StringOperatorOracle` computes. The first cases trapped in Foundation's
// `String.contains` ("String index is out of bounds") or answered differently with a
// constant and with a variable.
import OpenCoreData
import TestSupport
import Testing

@Suite struct PredicateStringOperatorTests {
    /// `subject op pattern` through every in-memory path, expecting `expected`.
    func check(
        _ subject: String, _ operation: NSComparisonPredicate.Operator, _ pattern: String,
        _ options: NSComparisonPredicate.Options = [], _ expected: Bool,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let testCase = StringOperatorCase(subject: subject, pattern: pattern, operation: operation, options: options)
        #expect(testCase.expected == expected, "oracle: \(testCase)", sourceLocation: sourceLocation)
        #expect(testCase.disagreement() == nil, sourceLocation: sourceLocation)
        for (path, answer) in testCase.answers() {
            #expect((try? answer.get()) == expected, "\(testCase) via \(path)", sourceLocation: sourceLocation)
        }
    }

    @Test func searchesThatTrappedInFoundation() {
        check("aß\0\r\naÉ", .contains, "É\0", .caseInsensitive, false)
        check("aß\0\r\naÉ", .contains, "a\0", .diacriticInsensitive, false)
        check("\rßﬀa", .contains, "a\0", [], false)
        check("aß\0\r\naÉ\0", .contains, "É\0", .caseInsensitive, true)
        check("aß\0\r\na\0", .contains, "a\0", .diacriticInsensitive, true)
    }

    @Test func patternsHoldingNULAgreeWithAConstantAndAVariable() {
        check("\0", .contains, "\0\0", [], false)
        check("o\0s", .contains, "S\0", [.caseInsensitive, .diacriticInsensitive], false)
        check(" ", .contains, " \0", [], false)
        check("\0\0", .contains, "\0\0", [], true)
        check("a\0b", .beginsWith, "a\0", .caseInsensitive, true)
        check("a\0", .endsWith, "\0\0", [], false)
        check("a\0", .equalTo, "A\0", .caseInsensitive, true)
        check("a\0", .notEqualTo, "a", [], true)
        check("a\0b", .like, "a?b", [], true)
        check("a\0b", .like, "*\0*", .diacriticInsensitive, true)
        check("a\0", .in, "A\0", .caseInsensitive, true)
    }

    @Test func lengthChangingCaseFoldsMatchWholeCharacters() {
        check("Straße", .equalTo, "STRASSE", .caseInsensitive, true)
        check("STRASSE", .equalTo, "straße", .caseInsensitive, true)
        check("Straße", .contains, "SS", .caseInsensitive, true)
        check("Strasse", .contains, "ß", .caseInsensitive, true)
        check("ß", .contains, "s", .caseInsensitive, false)
        check("ß", .beginsWith, "s", .caseInsensitive, false)
        check("ß", .endsWith, "s", .caseInsensitive, false)
        check("ẞ", .equalTo, "ss", .caseInsensitive, true)
        check("ﬀ", .equalTo, "FF", .caseInsensitive, true)
        check("ﬀ", .beginsWith, "f", .caseInsensitive, false)
        check("off", .endsWith, "ﬀ", .caseInsensitive, true)
        check("ﬀ", .contains, "ff", [], false)
        check("ﬀ", .like, "?", .caseInsensitive, true)
        check("ﬀ", .like, "ff", .caseInsensitive, true)
        check("ﬀ", .like, "f*", .caseInsensitive, false)
        check("aßb", .like, "*SS*", .caseInsensitive, true)
        check("İ", .equalTo, "i\u{307}", .caseInsensitive, true)
        check("ı", .equalTo, "I", .caseInsensitive, false)
        check("ΣΑΣ", .equalTo, "σας", .caseInsensitive, true)
        check("Straße", .in, "STRASSE", .caseInsensitive, true)
        check("Straße", .in, "STRASSE", [], false)
    }

    @Test func diacriticsAndCanonicalEquivalence() {
        check("e\u{301}", .equalTo, "é", [], true)
        check("café", .endsWith, "e\u{301}", [], true)
        check("e\u{301}", .contains, "e", [], false)
        check("e\u{301}", .contains, "e", .diacriticInsensitive, true)
        check("é", .beginsWith, "E", [.caseInsensitive, .diacriticInsensitive], true)
        check("é", .beginsWith, "E", .caseInsensitive, false)
        check("Ärger", .like, "a*", [.caseInsensitive, .diacriticInsensitive], true)
        check("\u{212B}", .equalTo, "Å", [], true)
        check("\u{212A}", .equalTo, "k", .caseInsensitive, true)
        check("son\r\n", .endsWith, "\n", [], false)
        check("son\r\n", .endsWith, "\r\n", [], true)
        check("🇫🇷🇩🇪", .contains, "🇷🇩", [], false)
    }

    /// `[l]` folds through the current locale, character by character (no ASCII shortcut).
    @Test func localeSensitiveFoldsAgreeAcrossPaths() {
        check("AB\0C", .contains, "b\0", [.caseInsensitive, .localeSensitive], true)
        check("Straße", .beginsWith, "STRASSE", [.caseInsensitive, .localeSensitive], true)
        check("ß", .contains, "s", [.caseInsensitive, .localeSensitive], false)
        check("e\u{301}", .equalTo, "É", [.caseInsensitive, .diacriticInsensitive, .localeSensitive], true)
    }

    @Test func emptyPatternsNeverMatchASearch() {
        for operation: NSComparisonPredicate.Operator in [.beginsWith, .endsWith, .contains] {
            check("abc", operation, "", [], false)
            check("", operation, "", .caseInsensitive, false)
        }
        check("", .equalTo, "", .caseInsensitive, true)
        check("", .like, "*", [], true)
    }

    @Test func matchesAgreesAcrossPaths() {
        for (subject, pattern, options): (String, String, NSComparisonPredicate.Options) in [
            ("aß\0\r\naÉ", ".*É\\x{0}.*", .caseInsensitive), ("a\0", "a\\x{0}", []),
            ("Émile", "emile", .diacriticInsensitive),
        ] {
            let testCase = StringOperatorCase(subject: subject, pattern: pattern, operation: .matches, options: options)
            #expect(testCase.disagreement() == nil)
        }
    }

    @Test func randomCasesAgreeWithTheOracleOnEveryPath() {
        var random = SeededRandom(environmentOr: 20_260_310)
        for _ in 0..<3_000 {
            let testCase = StringOperatorCase.random(&random)
            if let disagreement = testCase.disagreement() {
                Issue.record("\(disagreement); \(random.replayHint)")
                return
            }
        }
    }

    /// The trapping searches as fetches: the store evaluates them on its rows (the default
    /// store on the encoded bytes), the context on unsaved objects.
    @Test(arguments: [NSInMemoryStoreType, NSSQLiteStoreType, NSBinaryStoreType])
    func fetchesOnEveryStore(storeType: String) throws {
        let payloads = ["aß\0\r\naÉ", "\rßﬀa", "\0", "Straße", "ﬀ", "e\u{301}", "plain", "a\0b"]
        let stack = try StringStoreStack(storeType: storeType)
        defer { stack.close() }
        try stack.replaceRows(with: payloads, unsaved: ["ß\0", "É\0x"])
        let formats: [(String, String, [String])] = [
            ("payload CONTAINS[c] %@", "É\0", ["É\0x"]), ("payload CONTAINS[d] %@", "a\0", ["a\0b"]),
            ("payload CONTAINS %@", "a\0", ["a\0b"]), ("payload CONTAINS %@", "\0\0", []),
            ("payload BEGINSWITH[c] %@", "STRASSE", ["Straße"]), ("payload ==[c] %@", "FF", ["ﬀ"]),
            ("payload ENDSWITH[cd] %@", "E", ["aß\0\r\naÉ", "e\u{301}", "Straße"]),
            ("payload LIKE[c] %@", "*SS\0", ["ß\0"]),
            ("payload CONTAINS[c] %@", "s", ["Straße"]),
        ]
        for (format, pattern, expected) in formats {
            let fetched = try stack.fetchPayloads(NSPredicate(format: format, pattern))
            #expect(fetched.sorted() == expected.sorted(), "\(format) \(pattern.debugDescription) on \(storeType)")
        }
    }
}
