// MATCHES: the linear-time matcher agrees with ICU (NSRegularExpression) on random
// patterns and texts, and patterns that make backtracking engines explode finish at once.
import OpenCoreData
import TestSupport
import Testing

@Suite struct PredicateRegularExpressionTests {
    func matches(_ pattern: String, _ text: String, caseInsensitive: Bool = false) -> Bool {
        NSPredicate(format: caseInsensitive ? "SELF MATCHES[c] %@" : "SELF MATCHES %@", pattern).evaluate(with: text)
    }

    func icu(_ pattern: String, _ text: String, caseInsensitive: Bool = false) -> Bool? {
        guard
            let expression = try? NSRegularExpression(
                pattern: "^(?:" + pattern + ")$", options: caseInsensitive ? [.caseInsensitive] : [])
        else { return nil }
        let range = NSRange(location: 0, length: text.utf16.count)
        return expression.firstMatch(in: text, options: [.anchored], range: range) != nil
    }

    @Test func documentedShapes() {
        #expect(matches("J[a-z]+n", "John"))
        #expect(!matches("J[a-z]+n", "Johanna"))
        #expect(matches("\\d{3}-\\d{4}", "555-1234"))
        #expect(!matches("\\d{3}-\\d{4}", "555-12345"))
        #expect(matches("[A-Z][a-z]*( [A-Z][a-z]*)?", "New York"))
        #expect(matches("(foo|bar)+", "foobarfoo"))
        #expect(matches("colou?r", "color") && matches("colou?r", "colour"))
        #expect(matches("[^aeiou]+", "rhythm"))
        #expect(matches("\\w+@\\w+\\.com", "me@example.com"))
        #expect(matches("a.c", "abc") && !matches("a.c", "a\nc"))
        #expect(matches("\\p{Lu}\\p{Ll}+", "Émile"))
        #expect(matches("JOHN", "john", caseInsensitive: true))
        #expect(!matches("[a-z]+", "émile") && matches("\\p{Ll}+", "émile"))
        #expect(matches("x{2,3}", "xxx") && !matches("x{2,3}", "xxxx") && matches("x{2,}", "xxxxx"))
        #expect(matches("\\bword\\b", "word"))
        #expect(matches("(a)\\1", "aa"), "back-references run on ICU")
        #expect(matches("^abc$", "abc"))
    }

    @Test func catastrophicPatternsFinishQuickly() {
        let text = String(repeating: "a", count: 30_000) + "!"
        let start = Date()
        #expect(!matches("(a+)+b", text))
        #expect(!matches("(a|aa)*c", text))
        #expect(!matches("(a*)*$x", text))
        #expect(matches("(a+)+!", text))
        // A hang guard, not a speed target: backtracking these would take longer than the universe,
        // while a loaded 2-core machine may take seconds.
        #expect(Date().timeIntervalSince(start) < 60)
    }

    @Test func agreesWithICUOnRandomPatterns() {
        var random = SeededRandom(environmentOr: 99)
        let atoms = ["a", "b", "c", ".", "[ab]", "[^a]", "[a-c]", "\\d", "\\w", "x", "é", "(a|b)", "(ab)", "(?:b|c)"]
        let quantifiers = ["", "", "*", "+", "?", "{2}", "{1,2}", "{0,}", "*?"]
        for _ in 0..<400 {
            var pattern = ""
            for _ in 0..<random.int(in: 1...5) { pattern += random.pick(atoms) + random.pick(quantifiers) }
            if random.chance(0.2) { pattern = "(" + pattern + ")|" + random.pick(atoms) }
            let caseInsensitive = random.chance(0.2)
            for _ in 0..<6 {
                let text = String((0..<random.int(in: 0...6)).map { _ in random.pick(Array("abcxAB1é")) })
                guard let expected = icu(pattern, text, caseInsensitive: caseInsensitive) else { continue }
                #expect(
                    matches(pattern, text, caseInsensitive: caseInsensitive) == expected,
                    "\(pattern) on \(text) (case-insensitive: \(caseInsensitive)); \(random.replayHint)")
            }
        }
    }
}
