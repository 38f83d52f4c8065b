// predicateFormat round trips: every generated well-formed predicate prints to a
// format that parses back to an equal predicate, prints identically again, and
// evaluates the same on sample objects.
import OpenCoreData
import TestSupport
import Testing

/// Generates random well-formed predicate format strings.
struct PredicateFormatGenerator {
    var random: SeededRandom
    let keys = ["a", "b", "name", "tags", "sub.a", "sub.name", "items"]

    mutating func keyword(_ word: String) -> String {
        switch random.int(in: 0...3) {
        case 0: word.lowercased()
        case 1: word.capitalized
        default: word
        }
    }

    mutating func stringLiteral() -> String {
        let pieces = ["a", "B", "é", "\\\"", "\\'", "\\\\", " ", "*", "?", "%", "\\n", "日本", "0"]
        var text = ""
        for _ in 0..<random.int(in: 0...4) { text += random.pick(pieces) }
        return random.chance(0.5) ? "\"" + text + "\"" : "'" + text.replacingOccurrences(of: "\\\"", with: "\"") + "'"
    }

    mutating func expression(_ depth: Int) -> String {
        let choice = depth <= 0 ? random.int(in: 0...4) : random.int(in: 0...13)
        switch choice {
        case 0: return random.pick(keys)
        case 1: return String(random.int(in: -1000...1000))
        case 2: return random.pick(["1.5", "2.0e3", "0x1F", "0b11", "0o7", "-0.25"])
        case 3: return stringLiteral()
        case 4: return random.pick(["nil", keyword("YES"), keyword("false"), "$v", "SELF", "CAST(12, 'NSDate')"])
        case 5: return "{" + (0..<random.int(in: 0...3)).map { _ in expression(0) }.joined(separator: ", ") + "}"
        case 6:
            return expression(depth - 1) + " " + random.pick(["+", "-", "*", "/", "**"]) + " " + expression(depth - 1)
        case 7: return "(" + expression(depth - 1) + ")"
        case 8: return "-" + random.pick(keys)
        case 9: return random.pick(["sum", "max", "min", "average", "count"]) + "(" + expression(depth - 1) + ")"
        case 10:
            return random.pick(keys)
                + random.pick(["[FIRST]", "[LAST]", "[SIZE]", "[0]", ".@count", ".@sum.a", ".@avg.a"])
        case 11:
            return keyword("TERNARY") + "(" + predicate(depth - 1) + ", " + expression(depth - 1) + ", "
                + expression(depth - 1) + ")"
        case 12:
            return keyword("SUBQUERY") + "(items, $x, $x.a " + random.pick(["==", ">", "<"]) + " " + expression(0)
                + ").@count"
        default:
            return expression(depth - 1) + " " + keyword(random.pick(["UNION", "INTERSECT", "MINUS"])) + " "
                + expression(depth - 1)
        }
    }

    mutating func predicate(_ depth: Int) -> String {
        let choice = depth <= 0 ? random.int(in: 0...1) : random.int(in: 0...6)
        switch choice {
        case 0, 1:
            let modifier = random.chance(0.7) ? "" : keyword(random.pick(["ANY", "ALL", "NONE", "SOME"])) + " "
            let operators = [
                "==", "=", "!=", "<>", "<", "<=", "=<", ">", ">=", "=>", "BETWEEN", "IN", "CONTAINS", "BEGINSWITH",
                "ENDSWITH", "LIKE", "MATCHES",
            ]
            let op = random.pick(operators)
            let options = random.chance(0.3) ? "[" + random.pick(["c", "d", "cd", "n", "l", "cdn"]) + "]" : ""
            let right = op == "MATCHES" ? random.pick(["'a.*'", "'[0-9]+'", "'x|y'"]) : expression(depth - 1)
            return modifier + expression(depth - 1) + " " + keyword(op) + options + " " + right
        case 2: return keyword(random.pick(["TRUEPREDICATE", "FALSEPREDICATE"]))
        case 3: return predicate(depth - 1) + " " + random.pick([keyword("AND"), "&&"]) + " " + predicate(depth - 1)
        case 4: return predicate(depth - 1) + " " + random.pick([keyword("OR"), "||"]) + " " + predicate(depth - 1)
        case 5: return random.pick([keyword("NOT") + " ", "!"]) + "(" + predicate(depth - 1) + ")"
        default: return "(" + predicate(depth - 1) + ")"
        }
    }
}

@Suite struct PredicateRoundTripTests {
    nonisolated(unsafe) static let samples: [Any?] = [
        nil, 3, "abc",
        [
            "a": 2, "b": 5, "name": "Ann", "tags": ["x", "y"], "sub": ["a": 1, "name": "é"],
            "items": [["a": 1], ["a": 7]],
        ],
        ["a": -1, "b": 1.5, "name": "*", "tags": [String](), "sub": NSNull(), "items": [[String: Any]]()],
    ]

    @Test func stage2Example() {
        #expect(NSPredicate(format: "firstName == %@", "John").predicateFormat == "firstName == \"John\"")
    }

    @Test func generatedCorpusRoundTrips() {
        var generator = PredicateFormatGenerator(random: SeededRandom(environmentOr: 20_261_122))
        var parsed = 0
        for _ in 0..<1_500 {
            let format = generator.predicate(3)
            let predicate = NSPredicate(format: format)
            if let error = predicate.validationError {
                Issue.record("generated format failed to parse: \(format): \(error); \(generator.random.replayHint)")
                continue
            }
            parsed += 1
            let printed = predicate.predicateFormat
            let reparsed = NSPredicate(format: printed)
            #expect(
                reparsed.validationError == nil,
                "\(format) printed as \(printed): \(reparsed.validationError?.message ?? "")")
            #expect(reparsed == predicate, "\(format) -> \(printed) -> \(reparsed.predicateFormat)")
            #expect(reparsed.hash == predicate.hash, "\(format) hash")
            #expect(reparsed.predicateFormat == printed, "\(format) prints stably")
            for sample in Self.samples {
                let variables: [String: Any] = ["v": 2]
                let first = try? predicate.evaluateThrowing(with: sample, substitutionVariables: variables)
                let second = try? reparsed.evaluateThrowing(with: sample, substitutionVariables: variables)
                if !printed.contains("now()") {
                    #expect(first == second, "\(format) evaluates differently after printing as \(printed)")
                }
            }
        }
        #expect(parsed == 1_500)
    }

    @Test func argumentsRoundTrip() {
        let date = Date(timeIntervalSinceReferenceDate: 123_456.789)
        let uuid = UUID()
        let values: [Any] = [
            "with \"quotes\" and \\ backslash", 42, Int16(-7), 2.5, true, date, date as NSDate, Data([0, 1, 255]), uuid,
            URL(string: "https://example.com/a?b=c")!, ["a", "b"], Set([1, 2]), Decimal(string: "12.34")!,
            NSNumber(value: 9), "line\nbreak\ttab", "",
        ]
        for value in values {
            let predicate = NSPredicate(format: "key == %@", value)
            let reparsed = NSPredicate(format: predicate.predicateFormat)
            #expect(reparsed.validationError == nil, "\(predicate.predicateFormat)")
            #expect(reparsed == predicate, "\(value): \(predicate.predicateFormat) -> \(reparsed.predicateFormat)")
            #expect(reparsed.evaluate(with: ["key": value]), "\(value) still matches after the round trip")
        }
    }

    @Test func equalityAndHashing() {
        #expect(NSPredicate(format: "a == 1") == NSPredicate(format: "a = 1"))
        #expect(NSPredicate(format: "a == 1") == NSPredicate(format: "a == 1.0"))
        #expect(NSPredicate(format: "a == 1") != NSPredicate(format: "a == 2"))
        #expect(NSPredicate(format: "a == 1") != NSPredicate(format: "a ==[c] 1"))
        #expect(NSPredicate(format: "a == 1 AND b == 2") != NSPredicate(format: "b == 2 AND a == 1"))
        #expect(
            Set([NSPredicate(format: "x > 1"), NSPredicate(format: "x > 1"), NSPredicate(format: "x > 2")]).count == 2)
        #expect(NSPredicate(format: "TRUEPREDICATE") == NSPredicate(value: true))
        #expect(
            NSCompoundPredicate(andPredicateWithSubpredicates: [NSPredicate(format: "a == 1")])
                == NSPredicate(format: "a == 1"))
        let comparison = NSComparisonPredicate(
            leftExpression: NSExpression(forKeyPath: "a"), rightExpression: NSExpression(forConstantValue: 1),
            modifier: .direct, type: .equalTo)
        #expect(comparison == NSPredicate(format: "a == 1"))
        #expect(NSExpression(format: "a + 1") == NSExpression(format: "a+1"))
    }
}

@Suite struct PredicateFormatPropertyTests {
    func expectRoundTrip(
        _ predicate: NSPredicate, printing expected: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(predicate.validationError == nil, sourceLocation: sourceLocation)
        let printed = predicate.predicateFormat
        if let expected { #expect(printed == expected, sourceLocation: sourceLocation) }
        let reparsed = NSPredicate(format: printed)
        #expect(reparsed.validationError == nil, "\(printed.prefix(200))", sourceLocation: sourceLocation)
        #expect(reparsed == predicate, "\(printed.prefix(200))", sourceLocation: sourceLocation)
    }

    /// Chains printed one pair of parentheses per operator and nested past the parser's 64
    /// levels; keys `%K` brought printed as `#first name`.
    @Test func printerRegressions() {
        let sum = "a" + String(repeating: " + a", count: 150) + " == 1"
        expectRoundTrip(NSPredicate(format: sum), printing: sum)
        expectRoundTrip(NSPredicate(format: "a - (b - c) == a - b - c"), printing: "a - (b - c) == a - b - c")
        expectRoundTrip(NSPredicate(format: "a * b + c / d ** 2 ** 3 == (a + b) * c"))
        expectRoundTrip(NSPredicate(format: "(a ** b) ** c == a ** b ** c"), printing: "(a ** b) ** c == a ** b ** c")
        let power = "a" + String(repeating: " ** a", count: 40) + " > 1"
        expectRoundTrip(NSPredicate(format: power), printing: power)
        let sets = "{1, 2}" + String(repeating: " UNION tags MINUS tags", count: 80) + " CONTAINS 1"
        expectRoundTrip(NSPredicate(format: sets), printing: sets)
        let nots = String(repeating: "NOT ", count: 60) + "a == 1"
        expectRoundTrip(NSPredicate(format: nots), printing: nots)
        expectRoundTrip(NSPredicate(format: "NOT (a == 1 OR b == 2)"), printing: "NOT (a == 1 OR b == 2)")
        expectRoundTrip(NSPredicate(format: "a == 1 OR b == 2 AND c == 3"), printing: "a == 1 OR b == 2 AND c == 3")
        expectRoundTrip(NSPredicate(format: "(a == 1 OR b == 2) AND c == 3"))
        expectRoundTrip(NSPredicate(format: "(a == 1 AND b == 2) AND c == 3"))
        expectRoundTrip(NSPredicate(format: "-a * 2 == (-1).@count"))
        for key in ["first name", "a..b", ".a", "a.", "1abc", "@", "@1", "a-b", "x.#y", "'", "\"", "%@", "\0", "日本"] {
            expectRoundTrip(NSPredicate(format: "%K == 1", key))
        }
        expectRoundTrip(NSPredicate(format: "%K == 1", "first name"), printing: "#\"first name\" == 1")
        #expect(NSPredicate(format: "#'first name' == 1") == NSPredicate(format: "%K == 1", "first name"))
        #expect(NSPredicate(format: "#\"\" == 1").validationError == nil)
    }

    /// An expression chain at the 200-level bound under a comparison made a predicate of
    /// 201 levels that parsed but could neither evaluate nor print.
    @Test func predicatesPastTheDepthBoundDoNotParse() {
        let chain = "a" + String(repeating: " + a", count: 199)
        #expect(NSExpression(format: chain).validationError == nil)
        let predicate = NSPredicate(format: chain + " == 1")
        #expect(predicate.validationError?.message.contains("nests deeper than 200 levels") == true)
    }

    /// Every format that parses — generated, mutated, with random arguments — prints a
    /// `predicateFormat` that parses back to an equal predicate which prints the same.
    @Test func everyParsedFormatRoundTrips() {
        var generator = PredicateFuzzGenerator(random: SeededRandom(environmentOr: 20_261_124))
        var parsed = 0
        var failures: [String] = []
        for iteration in 0..<12_000 {
            var format: String
            var arguments: [Any]
            if iteration % 3 == 0 {
                (format, arguments) = generator.stressFormat()
            } else {
                format = generator.predicate(generator.random.int(in: 0...4))
                if generator.random.chance(0.6) { format = generator.mutate(format) }
                arguments = (0..<generator.random.int(in: 0...3)).map { _ in generator.argument() }
            }
            let predicate = NSPredicate(format: format, argumentArray: arguments)
            guard predicate.validationError == nil else { continue }
            parsed += 1
            let printed = predicate.predicateFormat
            let reparsed = NSPredicate(format: printed)
            func short(_ text: String) -> String { String(text.prefix(160)).debugDescription }
            if let error = reparsed.validationError {
                failures.append("\(short(format)) \(arguments) printed \(short(printed)): \(error.message)")
            } else if reparsed != predicate {
                failures.append("\(short(format)) \(arguments) printed \(short(printed)): reparsed unequal")
            } else if reparsed.predicateFormat != printed {
                failures.append("\(short(format)) printed \(short(printed)) then \(short(reparsed.predicateFormat))")
            }
        }
        #expect(parsed > 4_000)
        let listed = failures.prefix(40).joined(separator: "\n")
        #expect(failures.isEmpty, "\(failures.count) of \(parsed):\n\(listed)")
    }
}
