// Cached format templates (PredicateTemplate.swift) against the parse they stand for:
// binding a call's arguments into a format's template must give the tree a fresh parse
// of the format with those arguments gives — the same predicateFormat, an equal
// predicate, the same evaluation — and the same error when the call does not parse.
import TestSupport
import Testing

@testable import OpenCoreData

@Suite struct PredicateTemplateTests {
    /// What a format gives with some arguments: a predicate's observable parts, or its error.
    struct Outcome: Equatable, CustomStringConvertible {
        let format: String?
        let depth: Int
        let evaluations: [String]
        let error: PredicateLanguageError?

        var description: String { error.map { "error \($0.message)" } ?? "\(format ?? "") \(evaluations)" }
    }

    nonisolated(unsafe) static let variables: [String: Any] = ["v": 1, "x": "a"]

    static func outcome(_ parse: () throws -> NSPredicate, on samples: [Any?]) -> (Outcome, NSPredicate?) {
        do {
            let tree = try parse()
            let predicate = NSPredicate(content: .parsed(tree))
            let evaluations = samples.map { sample in
                switch Result(catching: {
                    try predicate.evaluateThrowing(with: sample, substitutionVariables: variables)
                }) {
                case .success(let value): "\(value)"
                case .failure(let error): "error \(error)"
                }
            }
            return (
                Outcome(
                    format: predicate.predicateFormat, depth: predicate.depth, evaluations: evaluations, error: nil),
                predicate
            )
        } catch {
            return (Outcome(format: nil, depth: 0, evaluations: [], error: error as? PredicateLanguageError), nil)
        }
    }

    /// The format parsed fresh, with no cache.
    static func uncached(_ format: String, _ arguments: [Any]) throws -> NSPredicate {
        try PredicateParser.explained(format) {
            var lexer = PredicateLexer(format)
            return try PredicateParser.parsePredicate(tokens: try lexer.tokenize(), arguments: arguments)
        }
    }

    /// Checks that the cached path (a first call fills the cache, a second binds the
    /// template) gives what a fresh parse gives; answers whether the template bound it.
    @discardableResult
    static func check(
        _ format: String, _ arguments: [Any], samples: [Any?] = PredicateFuzzGenerator.samples, hint: String = ""
    ) -> Bool {
        let (expected, fresh) = outcome({ try uncached(format, arguments) }, on: samples)
        for call in 1...2 {
            let (actual, cached) = outcome(
                { try PredicateParser.parsePredicate(format, arguments: arguments) }, on: samples)
            #expect(actual == expected, "call \(call) of \(format.debugDescription) \(arguments) \(hint)")
            if let fresh, let cached {
                #expect(cached == fresh, "\(format.debugDescription) \(arguments) \(hint)")
            }
        }
        guard let template = try? PredicateFormatCache.entry(of: format).template else { return false }
        return template.bind(arguments) != nil
    }

    @Test func everyArgumentKindBindsAsItParses() {
        let date = Date(timeIntervalSinceReferenceDate: 100)
        let cases: [(String, [Any])] = [
            ("id == %lld", [Int64(7)]), ("id == %lld", [Int64.min]), ("a == %d", [3]), ("a == %i", [Int16(-2)]),
            ("a == %u", [UInt(5)]), ("a == %ld", [NSNumber(value: 4)]), ("a < %f", [2.5]), ("a < %lf", [Float(1.5)]),
            ("a < %e", [7]), ("a < %g", [NSNumber(value: 7)]), ("a == %x", [15]), ("a == %c", ["z"]),
            ("a == %c", [65]), ("a == %@", ["abc"]), ("a == %@", [2]), ("a == %@", [NSNull()]),
            ("a == %@", [Optional<String>.none as Any]), ("a == %@", [date]), ("a == %@", [Data([1, 2])]),
            ("a == %@", [UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!]), ("a IN %@", [[1, 2, 3]]),
            ("a IN %@", [Set(["a", "b"])]), ("%K == %@", ["a", 2]), ("%K == %@", ["sub.a", 1]),
            ("%K CONTAINS[c] %@", ["b", "X"]), ("ANY %K == %@", ["tags", "a"]), ("a BETWEEN {%d, %d}", [1, 5]),
            ("a BETWEEN {%@, %@}", [1, Optional<Int>.none as Any]), ("a BETWEEN %@", [[1, 5]]),
            ("a IN {%@, 'x', %d}", ["a", 2]), ("a IN {{%d}, 1}", [2]), ("a IN {%K, 1}", ["b"]),
            ("b LIKE '100%%' AND a == %d", [1]), ("b == '%%@' OR a == %@", [3]), ("a == %%", [1]),
            ("a > %d AND (b == %@ OR NOT a < %d)", [1, "x", 9]), ("(%K) == 1", ["a"]), ("(%K == %@)", ["a", 2]),
            ("(a + %d) * 2 > %f", [1, 2.0]), ("tags[%d] == %@", [0, "a"]), ("%K[FIRST] == %@", ["tags", "a"]),
            ("SUBQUERY(items, $i, $i.a > %d).@count == %d", [1, 1]),
            ("TERNARY(a == %d, %@, %@) == 'y'", [2, "y", "n"]),
            ("$v == %d", [1]), ("sum(%@) == 6", [[1, 2, 3]]), ("SELF == %@", [3]), ("a == %@", [[Int]()]),
            ("%K.%K == %@", ["sub", "a", 1]), ("a == -%d", [3]), ("a == -%@", [3.5]), ("-%d == a", [2]),
            ("a == CAST(%@, 'NSDate')", [0]), ("FUNCTION(b, %@) == 'X'", ["uppercaseString"]),
            ("FUNCTION(%@, 'uppercaseString') == 'X'", ["x"]), ("%@.@count == 3", [[1, 2, 3]]),
            ("a == %d", []), ("a == %d AND b == %@", [1]), ("a == %d", ["x"]), ("%K == 1", [3]), ("%K == 1", [""]),
            ("a == %d", [1, 2, 3]), ("a == %1$@", ["x"]), ("a == %@", [NSExpression(forKeyPath: "b")]),
            ("a == %@", [NSExpression(format: "1 + 2")]), ("%@ == 1", [NSExpression(forKeyPath: "a")]),
            ("a == %K", [NSString(string: "b")]), ("a == %d", [true]), ("a == %d", [date]), ("a >> %d", [3]),
            ("TRUEPREDICATE", []), ("a == 1", [5]), ("a == 1 AND b == 'x'", []), ("", []),
        ]
        var bound = 0
        for (format, arguments) in cases where Self.check(format, arguments) { bound += 1 }
        // Most of them go through the template, not the parse.
        #expect(bound > cases.count / 2, "\(bound) of \(cases.count) bound")
    }

    @Test func templatesAreRefusedWhereAnArgumentShapesTheTree() throws {
        for format in [
            "a == -%d", "a == -(%d)", "%K.%K == 1", "%K.b == 1", "a == CAST(%@, 'NSDate')", "FUNCTION(b, %@) == 1",
        ] {
            #expect(try PredicateFormatCache.entry(of: format).template == nil, "\(format)")
        }
        for format in ["id == %lld", "age BETWEEN {%d, %d}", "%K == %@", "a IN %@", "a == -(%d + 1)"] {
            #expect(try PredicateFormatCache.entry(of: format).template != nil, "\(format)")
        }
        // Unbindable calls fall back to the parse: missing, refused and expression arguments.
        let template = try #require(try PredicateFormatCache.entry(of: "%K == %@").template)
        #expect(template.bind(["a"]) == nil)
        #expect(template.bind([1, 2]) == nil)
        #expect(template.bind(["a", NSExpression(forKeyPath: "b")]) == nil)
        #expect(template.bind(["a", 2]) != nil)
    }

    /// The fuzzer's formats (generated, mutated, with placeholders the mutator inserts) and
    /// formats whose literals became placeholders, with random arguments.
    @Test func fuzzFormatsBindAsTheyParse() {
        var random = SeededRandom(environmentOr: 11)
        let hint = random.replayHint
        var bound = 0
        for round in 0..<1_500 {
            var generator = PredicateFuzzGenerator(random: random)
            var format = generator.predicate(generator.random.int(in: 0...4))
            if generator.random.chance(0.5) {
                format = Self.withPlaceholders(format, &generator)
            } else if generator.random.chance(0.6) {
                format = generator.mutate(format)
            }
            let placeholders = format.components(separatedBy: "%").count - 1
            var arguments: [Any] = []
            for _ in 0..<max(0, placeholders + generator.random.int(in: -1...1)) {
                arguments.append(
                    generator.random.chance(0.4)
                        ? generator.random.pick(["a", "b", "tags", "sub.a"]) : generator.argument())
            }
            random = generator.random
            if Self.check(format, arguments, hint: "round \(round), \(hint)") { bound += 1 }
        }
        #expect(bound > 100, "\(bound) bound, \(hint)")
    }

    /// `format` with some of its number, string and key literals replaced by placeholders.
    static func withPlaceholders(_ format: String, _ generator: inout PredicateFuzzGenerator) -> String {
        let replacements = [
            ("1", "%d"), ("2", "%lld"), ("3", "%@"), ("'a*'", "%@"), ("\"b?\"", "%@"), ("1.5e2", "%f"), ("a ", "%K "),
            ("b ", "%K "), ("tags", "%K"), ("nil", "%@"), ("{1, 2}", "{%d, %@}"), ("YES", "%@"), ("-", "-%d + "),
        ]
        var text = format
        for (literal, placeholder) in replacements where generator.random.chance(0.5) {
            text = text.replacingOccurrences(of: literal, with: placeholder)
        }
        return text
    }
}
