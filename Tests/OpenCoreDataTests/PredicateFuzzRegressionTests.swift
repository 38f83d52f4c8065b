// Inputs kept from fuzzing and from reading the parser for edge cases: each must
// parse or report an error, and evaluate or throw, without trapping or hanging.
import OpenCoreData
import Testing

@Suite struct PredicateFuzzRegressionTests {
    static let corpus: [String] = [
        "", " ", "(", ")", "((", "a", "a ==", "== a", "a == == b", "a[", "a[]", "a[FIRST", "a.", "a..b", ".a",
        "@", "@count", "$", "$ == 1", "#", "# == 1", "%", "%%", "%@", "%K", "a == %", "'", "\"", "'\\", "'\\u12'",
        "'\\uZZZZ'", "0x", "0b2", "0o9", "1e", "1e+", "99999999999999999999999 == 1", "-9223372036854775808 == a",
        "a == -(-(-1))", "{", "{1,", "{1 2}", "SUBQUERY(", "SUBQUERY(a, $x)", "SUBQUERY(a, x, TRUEPREDICATE)",
        "FUNCTION(", "FUNCTION(a)", "FUNCTION(a, 5)", "TERNARY(a, b, c)", "TERNARY(a == 1, b)", "CAST(", "CAST(1)",
        "CAST(1, 2)", "a BETWEEN", "a BETWEEN {1}", "a BETWEEN {1, 2, 3} == 1", "ANY", "ANY ANY a == 1",
        "NOT", "NOT NOT", "a ==[", "a ==[c", "a ==[] 1", "a ==[zz] 1", "a := 1 == 1", "$a := 1", "a == 1 AND",
        "AND a == 1", "a == 1 OR OR b == 2", "TRUEPREDICATE AND", "a == 'x' 'y'", "a == \u{0}", "a\u{0} == 1",
        "a == 1 ) (", "sum() == 1", "sum(1, 2) == 3", "now(1) == 1", "a[SIZE][SIZE] == 1", "a.@count.@count == 1",
        "a.@bogus == 1", "a MATCHES '((((((((((('", "a MATCHES '(a*)*b'", "a LIKE '\\'", "a LIKE '****?**'",
        "ANYKEY == 1", "SELF[0] == 1", "{1, 2}[5] == 1", "{1, 2}[-1] == 1", "{1,2}['x'] == 1", "1 / 0 == 1",
        "2 ** 99999 == 1", "0 ** -1 == 1", "leftshift:by:(1, 9999) == 1", "modulus:by:(1, 0) == 1",
        "-9223372036854775807 - 2 == 1", "9223372036854775807 * 2 == 1", "abs(-9223372036854775807 - 1) == 1",
    ]

    nonisolated(unsafe) static let subjects: [Any?] = [
        nil, 0, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!", ["a": [1, 2], "b": NSNull()],
        [[String: Any]](), Set<Int>(), NSArray(), Date.distantFuture,
    ]

    @Test(arguments: corpus) func neverTraps(format: String) {
        let predicate = NSPredicate(format: format)
        for subject in Self.subjects {
            _ = predicate.evaluate(with: subject)
            _ = try? predicate.evaluateThrowing(with: subject, substitutionVariables: ["x": 1])
        }
        if predicate.validationError == nil {
            #expect(
                NSPredicate(format: predicate.predicateFormat) == predicate, "\(format) -> \(predicate.predicateFormat)"
            )
        } else {
            #expect((predicate.validationError?.position ?? -1) >= 0, "\(format) reports a position")
        }
        _ = NSExpression(format: format).expressionValue(with: nil, context: nil)
    }

    @Test func largeInputsStayBounded() {
        let wide = (0..<10_000).map { "a == \($0)" }.joined(separator: " OR ")
        #expect(NSPredicate(format: wide).evaluate(with: ["a": 9_999]))
        #expect(!NSPredicate(format: wide).evaluate(with: ["a": -1]))
        let longString = String(repeating: "a", count: 200_000)
        #expect(!NSPredicate(format: "SELF LIKE '*b*a*b*a*b*'").evaluate(with: longString))
        #expect(NSPredicate(format: "SELF LIKE '*a'").evaluate(with: longString))
        #expect(NSPredicate(format: "SELF MATCHES 'a+'").evaluate(with: String(repeating: "a", count: 5_000)))
        let many = (0..<20_000).map { ["v": $0 % 1_000] }
        #expect(NSPredicate(format: "@distinctUnionOfObjects.v.@count == 1000").evaluate(with: many))
        #expect(NSPredicate(format: "SELF IN %@", Array(0..<20_000)).evaluate(with: 19_999.0))
        #expect(
            NSPredicate(format: "(%@ MINUS %@).@count == 1", Array(0..<20_000), Array(1..<20_000)).evaluate(with: nil))
        let hugePattern = String(repeating: "a", count: 5_000)
        #expect(throws: PredicateLanguageError.self) {
            try NSPredicate(format: "SELF MATCHES %@", hugePattern).evaluateThrowing(with: "a")
        }
    }
}
