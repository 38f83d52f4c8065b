// The grammar: Apple's documented examples ("Predicate Format String Syntax", "BNF
// Definition of Cocoa Predicates") parse into the documented structure and evaluate
// as documented; precedence; literals; keywords in any case; `#` escapes.
import OpenCoreData
import TestSupport
import Testing

@Suite struct PredicateParserTests {
    func comparison(_ format: String, _ arguments: Any...) throws -> NSComparisonPredicate {
        let predicate = try NSPredicate(validatingFormat: format, argumentArray: arguments)
        return try #require(predicate.resolvedComparison)
    }

    /// The format strings of Apple's two predicate pages, each with an object it must (or must not) match.
    @Test func appleDocumentationExamples() throws {
        let birthday = Date(timeIntervalSinceReferenceDate: 0)
        let person: [String: Any] = [
            "lastName": "Smith", "firstName": "Mark", "birthday": birthday.addingTimeInterval(100),
            "expenses": 300, "name": "Ben", "anAttribute": true, "date": birthday,
            "employees": [["firstName": "Matthew", "salary": 40_000], ["firstName": "Al", "salary": 20_000]],
            "grade": "7",
            "children": [["age": 13], ["age": 15]], "dateAttribute": NSNull(),
        ]
        let examples: [(String, [Any], Bool)] = [
            ("(lastName like[cd] %@) AND (birthday > %@)", ["smith", birthday], true),
            ("lastName like[c] \"S*\"", [], true),
            ("%K like %@", ["lastName", "Sm?th"], true),
            ("anAttribute == %@", [NSNumber(value: true)], true),
            ("anAttribute == YES", [], true),
            ("expenses BETWEEN {200, 400}", [], true),
            ("(expenses >= 200) AND (expenses <= 400)", [], true),
            ("name IN {'Ben', 'Melissa', 'Nick'}", [], true),
            ("name IN %@", [["Ben", "Melissa"]], true),
            ("ANY employees.firstName like 'Matthew'", [], true),
            ("ANY employees.salary > 30000", [], true),
            ("ALL children.age > 12", [], true),
            ("ANY children.age > 14", [], true),
            ("NONE children.age > 20", [], true),
            ("firstName = nil", [], false),
            ("dateAttribute = nil", [], true),
            ("(dateAttribute = nil) OR (dateAttribute > %@)", [birthday], true),
            ("firstName BEGINSWITH[cd] %@ AND lastName BEGINSWITH[cd] %@", ["ma", "SM"], true),
            ("SUBQUERY(employees, $x, $x.firstName == 'Matthew' && $x.salary > 1).@count != 0", [], true),
            ("date = $DATE", [], false),
            ("lastName MATCHES '[A-Z][a-z]+'", [], true),
            ("name CONTAINS[c] 'EN'", [], true),
            ("name ENDSWITH 'en'", [], true),
            ("employees[FIRST].firstName == 'Matthew' AND employees[LAST].salary == 20000", [], true),
            ("employees[SIZE] == 2 AND employees[1].firstName == 'Al'", [], true),
            ("employees.@count == 2 AND employees.@sum.salary == 60000", [], true),
            (
                "employees.@avg.salary == 30000 AND employees.@max.salary == 40000 AND employees.@min.salary == 20000",
                [], true
            ),
            ("TRUEPREDICATE", [], true),
            ("FALSEPREDICATE", [], false),
            ("NOT name == 'Ben'", [], false),
            ("! (name == 'Ben')", [], false),
            ("name == 'Ben' || name == 'Nick'", [], true),
            ("expenses > 100 && expenses < 1000", [], true),
            ("@sum.employees.salary < 100000", [], true),
            ("@count.employees == 2", [], true),
            ("date between {$YESTERDAY, $TOMORROW}", [], true),
            ("grade == \"7\" OR name contains[cd] 'BÉN'", [], true),
            ("(firstName like 'Mark') OR (lastName like 'Chen')", [], true),
        ]
        for (format, arguments, expected) in examples {
            let predicate = try NSPredicate(validatingFormat: format, argumentArray: arguments)
            let variables: [String: Any] = [
                "DATE": birthday.addingTimeInterval(1), "YESTERDAY": birthday.addingTimeInterval(-86_400),
                "TOMORROW": birthday.addingTimeInterval(86_400),
            ]
            let result = try predicate.evaluateThrowing(with: person, substitutionVariables: variables)
            #expect(result == expected, "\(format)")
            #expect(
                NSPredicate(format: predicate.predicateFormat) == predicate,
                "\(format) round trip: \(predicate.predicateFormat)")
        }
    }

    @Test func operatorsParseIntoTheirTypes() throws {
        let cases: [(String, NSComparisonPredicate.Operator)] = [
            ("a = 1", .equalTo), ("a == 1", .equalTo), ("a != 1", .notEqualTo), ("a <> 1", .notEqualTo),
            ("a < 1", .lessThan), ("a <= 1", .lessThanOrEqualTo), ("a =< 1", .lessThanOrEqualTo),
            ("a > 1", .greaterThan), ("a >= 1", .greaterThanOrEqualTo), ("a => 1", .greaterThanOrEqualTo),
            ("a BETWEEN {1, 2}", .between), ("a IN {1}", .in), ("a CONTAINS 'x'", .contains),
            ("a BEGINSWITH 'x'", .beginsWith), ("a ENDSWITH 'x'", .endsWith), ("a LIKE 'x'", .like),
            ("a MATCHES 'x'", .matches),
        ]
        for (format, type) in cases {
            #expect(try comparison(format).predicateOperatorType == type, "\(format)")
        }
        let options = try comparison("a ==[cdnl] 'x'").options
        #expect(options == [.caseInsensitive, .diacriticInsensitive, .normalized, .localeSensitive])
        #expect(try comparison("ANY a == 1").comparisonPredicateModifier == .any)
        #expect(try comparison("SOME a == 1").comparisonPredicateModifier == .any)
        #expect(try comparison("ALL a == 1").comparisonPredicateModifier == .all)
        let none = NSPredicate(format: "NONE a == 1")
        #expect(none.predicateFormat == "NOT ANY a == 1")
        #expect(NSPredicate(format: none.predicateFormat) == none)
    }

    @Test func keywordsInAnyCase() {
        let object: [String: Any] = ["name": "Ben", "age": 3]
        #expect(
            NSPredicate(format: "name beginswith 'B' and age between {1, 5} or falsepredicate").evaluate(with: object))
        #expect(NSPredicate(format: "Name == nil aNd NOT age In {1, 2}").evaluate(with: ["age": 3]))
        #expect(NSPredicate(format: "name LiKe[C] 'b*' AND age == yes + 2").evaluate(with: object))
    }

    @Test func precedenceTable() {
        // Each format is evaluated against a/b/c and must equal the explicitly parenthesized one.
        let pairs: [(String, String)] = [
            ("a == 1 OR b == 1 AND c == 1", "a == 1 OR (b == 1 AND c == 1)"),
            ("a == 1 AND b == 1 OR c == 1", "(a == 1 AND b == 1) OR c == 1"),
            ("NOT a == 1 AND b == 1", "(NOT a == 1) AND b == 1"),
            ("NOT a == 1 OR b == 1", "(NOT (a == 1)) OR b == 1"),
            ("! a == 1 && b == 1 || c == 1", "((NOT a == 1) AND b == 1) OR c == 1"),
            ("a + b * c == 7", "a + (b * c) == 7"),
            ("a - b - c == 0", "(a - b) - c == 0"),
            ("a * b + c == 7", "(a * b) + c == 7"),
            ("a / b * c == 1", "(a / b) * c == 1"),
            ("-a ** 2 == 1", "(-a) ** 2 == 1"),
            ("a ** b ** c == 1", "a ** (b ** c) == 1"),
            ("(a + b) * c == 2", "(a + b) * c == 2"),
        ]
        var random = SeededRandom(environmentOr: 42)
        for _ in 0..<40 {
            let object: [String: Any] = [
                "a": random.int(in: 0...2), "b": random.int(in: 0...2), "c": random.int(in: 0...2),
            ]
            for (plain, explicit) in pairs {
                let left = NSPredicate(format: plain)
                let right = NSPredicate(format: explicit)
                #expect(left.validationError == nil && right.validationError == nil, "\(plain)")
                #expect(
                    left.evaluate(with: object) == right.evaluate(with: object),
                    "\(plain) vs \(explicit) on \(object); \(random.replayHint)")
                #expect(left == right, "\(plain) parses as \(explicit)")
            }
        }
        #expect(NSPredicate(format: "a == 1 AND b == 1 AND c == 1").predicateFormat == "a == 1 AND b == 1 AND c == 1")
        #expect(NSPredicate(format: "(a == 1 OR b == 1) AND c == 1").predicateFormat == "(a == 1 OR b == 1) AND c == 1")
    }

    @Test func literals() throws {
        func constant(_ text: String) throws -> Any? {
            try comparison("x == " + text).rightExpression.constantValue
        }
        #expect(try constant("42") as? Int == 42)
        #expect(try constant("-42") as? Int == -42)
        #expect(try constant("0x2A") as? Int == 42)
        #expect(try constant("0o52") as? Int == 42)
        #expect(try constant("0b101010") as? Int == 42)
        #expect(try constant("4.25") as? Double == 4.25)
        #expect(try constant("1e3") as? Double == 1000)
        #expect(try constant("1.5E-2") as? Double == 0.015)
        #expect(try constant("'it\\'s'") as? String == "it's")
        #expect(try constant("\"say \\\"hi\\\"\"") as? String == "say \"hi\"")
        #expect(try constant("'tab\\there\\n'") as? String == "tab\there\n")
        #expect(try constant("'\\u00e9'") as? String == "é")
        #expect(try constant("TRUE") as? Bool == true)
        #expect(try constant("yes") as? Bool == true)
        #expect(try constant("FALSE") as? Bool == false)
        #expect(try constant("No") as? Bool == false)
        #expect(try constant("NULL") == nil)
        #expect(try constant("nil") == nil)
        #expect(try constant("{1, 'a'}") as? [Any] != nil)
        #expect(try constant("CAST(0, 'NSDate')") as? Date == Date(timeIntervalSinceReferenceDate: 0))
    }

    @Test func placeholders() throws {
        #expect(try comparison("%K == %@", "a.b", "x").leftExpression.keyPath == "a.b")
        #expect(try comparison("x == %d", 5).rightExpression.constantValue as? Int == 5)
        #expect(try comparison("x == %i", Int16(5)).rightExpression.constantValue as? Int16 == 5)
        #expect(try comparison("x == %ld", 5).rightExpression.constantValue as? Int == 5)
        #expect(try comparison("x == %f", 2.5).rightExpression.constantValue as? Double == 2.5)
        #expect(try comparison("x == %lf", 2).rightExpression.constantValue as? Double == 2)
        #expect(try comparison("x == %@", "'quoted'").rightExpression.constantValue as? String == "'quoted'")
        #expect(try comparison("x == '%@'").rightExpression.constantValue as? String == "%@")
        #expect(try comparison("x == '100%'").rightExpression.constantValue as? String == "100%")
        #expect(try comparison("x == '100%%'").rightExpression.constantValue as? String == "100%")
        #expect(NSPredicate(format: "x == %@", "5%").predicateFormat == "x == \"5%%\"")
        let optional: String? = nil
        #expect(try comparison("x == %@", optional as Any).rightExpression.constantValue == nil)
        #expect(try comparison("$v == 1").leftExpression.variable == "v")
    }

    @Test func escapedReservedWordsAreKeys() throws {
        let object: [String: Any] = ["in": 3, "first": "a", "size": 2]
        #expect(NSPredicate(format: "#in == 3 AND #first == 'a' AND #size == 2").evaluate(with: object))
        #expect(try comparison("#IN == 3").leftExpression.keyPath == "IN")
        #expect(NSPredicate(format: "size == 2").validationError != nil)
        #expect(NSPredicate(format: "%K == 3", "in").predicateFormat == "#in == 3")
    }

    @Test func expressionStructure() throws {
        let subquery = try comparison("SUBQUERY(items, $i, $i.price > 5).@count > 0").leftExpression
        #expect(subquery.expressionType == .keyPath || subquery.expressionType == .function)
        let ternary = try comparison("TERNARY(a > 1, 'x', 'y') == 'x'").leftExpression
        #expect(ternary.expressionType == .conditional)
        #expect(try comparison("a UNION b == {}").leftExpression.expressionType == .unionSet)
        #expect(try comparison("a INTERSECT b == {}").leftExpression.expressionType == .intersectSet)
        #expect(try comparison("a MINUS b == {}").leftExpression.expressionType == .minusSet)
        #expect(try comparison("SELF == 1").leftExpression.expressionType == .evaluatedObject)
        #expect(try comparison("FUNCTION(SELF, 'length') == 1").leftExpression.function == "length")
        #expect(try comparison("sum({1, a}) == 1").leftExpression.function == "sum:")
        #expect(try comparison("a + 1 == 1").leftExpression.function == "add:to:")
        #expect(try comparison("{a, 1} == {}").leftExpression.expressionType == .aggregate)
    }
}

extension NSPredicate {
    /// The comparison this predicate is or wraps (a format predicate wraps its parsed tree).
    var resolvedComparison: NSComparisonPredicate? {
        if let comparison = self as? NSComparisonPredicate { return comparison }
        return structuredPredicate as? NSComparisonPredicate
    }
}
