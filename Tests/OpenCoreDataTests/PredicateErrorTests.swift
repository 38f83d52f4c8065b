// Bad input gives errors, never traps: malformed formats carry their position,
// validatingFormat throws, evaluation errors (unknown key, type mismatch, missing
// variable) surface through the throwing entry points while evaluate(with:) is false.
import OpenCoreData
import Testing

@Suite struct PredicateErrorTests {
    func position(_ format: String, _ arguments: Any...) -> Int? {
        NSPredicate(format: format, argumentArray: arguments).validationError?.position
    }

    @Test func malformedFormatsReportPositions() {
        #expect(position("age >> AND (") == 5)
        #expect(position("age > ") == 6)
        #expect(position("age 5") == 4)
        #expect(position("(age > 5") == 8)
        #expect(position("name == 'unterminated") == 8)
        #expect(position("a == 1 b == 2") == 7)
        #expect(position("a ==[x] 1") == 5)
        #expect(position("a == %@") == 5)
        #expect(position("a == 0xZZ") == 7)
        #expect(position("a == %q") == 5)
        #expect(position("") == 0)
        #expect(position("a == 1)") == 6)
        #expect(position("SUBQUERY(a, b, c == 1).@count > 0") == 12)
        #expect(position("a IN") == 4)
        #expect(position("unknownFunction(1) == 1") == 0)
        #expect(position("%K == 1", 5) == 0)
        #expect(position("a == %d", "text") == 5)
        #expect(position("CAST('x', 'NSDate') == 1") == 0)
    }

    @Test func malformedPredicateEvaluatesFalseAndThrowsOnDemand() {
        let predicate = NSPredicate(format: "age >> AND (")
        #expect(!predicate.evaluate(with: ["age": 3]))
        #expect(predicate.predicateFormat == "age >> AND (")
        #expect(throws: PredicateLanguageError.self) { try predicate.validate() }
        #expect(throws: PredicateLanguageError.self) { try predicate.evaluateThrowing(with: nil) }
        #expect(throws: PredicateLanguageError.self) { try predicate.compiled() }
        #expect(throws: PredicateLanguageError.self) { try NSPredicate(validatingFormat: "age >> AND (") }
        #expect(throws: PredicateLanguageError.self) { try NSPredicate(validatingFormat: "a == %@", argumentArray: []) }
        #expect(throws: Never.self) { try NSPredicate(validatingFormat: "a == %@", "x") }
        let message = NSPredicate(format: "age >> AND (").validationError?.message ?? ""
        #expect(
            message.hasPrefix("Unable to parse the format string \"age >> AND (\" at position 5 (near \"> AND (\")"))
        let error = NSPredicate(format: "a ==").validationError
        #expect(error?.message.contains("position 4") == true)
        let nsError = error.map { $0 as NSError }
        #expect(nsError?.domain == NSCocoaErrorDomain)
        #expect(nsError?.code == CocoaError.formatting.rawValue)
    }

    @Test func unknownKeyThrows() {
        let predicate = NSPredicate(format: "shoeSize > 3")
        let person = TestPerson("A", "B", age: 1)
        #expect(!predicate.evaluate(with: person))
        #expect(throws: KeyValueCodingError.unknownKey("shoeSize", in: "TestPerson")) {
            try predicate.evaluateThrowing(with: person)
        }
        #expect(throws: KeyValueCodingError.self) {
            try NSPredicate(format: "company.shoeSize == 1").evaluateThrowing(with: Fixtures.people()[0])
        }
        #expect(throws: KeyValueCodingError.self) { try NSPredicate(format: "length == 1").evaluateThrowing(with: 5) }
    }

    @Test func typeMismatchesThrow() {
        let person = TestPerson("A", "B", age: 30)
        let mismatches = [
            "age BEGINSWITH 'x'", "age LIKE '3*'", "age MATCHES '3.'", "firstName CONTAINS 3", "age > 'thirty'",
            "firstName < 3", "age BETWEEN 5", "age IN 5", "age ENDSWITH 0", "firstName * 2 == 1",
            "sqrt(firstName) == 1",
            "uppercase(age) == 'A'", "birthday == nil AND firstName[0] == 'A'",
        ]
        for format in mismatches {
            let predicate = NSPredicate(format: format)
            #expect(predicate.validationError == nil, "\(format) parses")
            #expect(!predicate.evaluate(with: person), "\(format)")
            #expect(throws: PredicateLanguageError.self, "\(format)") { try predicate.evaluateThrowing(with: person) }
        }
        #expect(!NSPredicate(format: "firstName == 3").evaluate(with: person), "== across kinds is false, not an error")
    }

    @Test func missingVariablesAndBadPatternsThrow() {
        #expect(throws: PredicateLanguageError(.missingVariable("x"), "no value for the variable $x")) {
            try NSPredicate(format: "a == $x").evaluateThrowing(with: ["a": 1])
        }
        #expect(throws: PredicateLanguageError.self) {
            try NSPredicate(format: "SELF MATCHES '('").evaluateThrowing(with: "x")
        }
        #expect(throws: PredicateLanguageError.self) {
            try NSPredicate(format: "1 / 0 == $y").evaluateThrowing(with: nil)
        }
    }

    @Test func nestingIsBounded() {
        let deep = String(repeating: "(", count: 10_000) + "a == 1" + String(repeating: ")", count: 10_000)
        #expect(NSPredicate(format: deep).validationError?.message.contains("nesting") == true)
        let negations = String(repeating: "NOT ", count: 5_000) + "a == 1"
        #expect(NSPredicate(format: negations).validationError != nil)
        let minus = "a == " + String(repeating: "-", count: 5_000) + "1"
        #expect(NSPredicate(format: minus).validationError != nil)
        var built: NSPredicate = NSPredicate(format: "a == 1")
        for _ in 0..<1_000 { built = NSCompoundPredicate(notPredicateWithSubpredicate: built) }
        #expect(throws: PredicateLanguageError.self) { try built.evaluateThrowing(with: ["a": 1]) }
        let shallow = String(repeating: "(", count: 20) + "a == 1" + String(repeating: ")", count: 20)
        #expect(NSPredicate(format: shallow).evaluate(with: ["a": 1]))
    }
}

@Suite struct PredicateTreeHeightTests {
    @Test func longOperatorChainsAreRefusedNotOverflowed() {
        let chain = "a == " + Array(repeating: "1", count: 5_000).joined(separator: " + ")
        #expect(NSPredicate(format: chain).validationError?.message.contains("deeper") == true)
        let indexes = "a" + String(repeating: "[0]", count: 5_000) + " == 1"
        #expect(NSPredicate(format: indexes).validationError != nil)
        let members = "$x" + String(repeating: ".@count", count: 3) + " == 1"
        #expect(NSPredicate(format: members).validationError == nil)
        let fine = "a == " + Array(repeating: "1", count: 100).joined(separator: " + ")
        #expect(NSPredicate(format: fine).evaluate(with: ["a": 100]))
    }

    @Test func tallTreesBuiltInCodeAreHandled() {
        var expression = NSExpression(forConstantValue: 1)
        for _ in 0..<20_000 {
            expression = NSExpression(
                forFunction: "add:to:", arguments: [expression, NSExpression(forConstantValue: 1)])
        }
        let predicate = NSComparisonPredicate(
            leftExpression: expression, rightExpression: NSExpression(forConstantValue: 1), modifier: .direct,
            type: .equalTo)
        #expect(!predicate.evaluate(with: nil))
        #expect(predicate.predicateFormat.contains("deeper"))
        #expect(predicate == predicate)
        #expect(
            predicate
                != NSComparisonPredicate(
                    leftExpression: expression, rightExpression: NSExpression(forConstantValue: 1), modifier: .direct,
                    type: .equalTo))
        _ = predicate.hash
        _ = predicate.withSubstitutionVariables(["x": 1])
        #expect(throws: PredicateLanguageError.self) { try predicate.evaluateThrowing(with: nil) }
    }
}
