// NSExpression: every kind built in code, expressionValue(with:context:), the
// function table, and expression format strings.
import OpenCoreData
import Testing

@Suite struct ExpressionTests {
    @Test func kindsAndValues() throws {
        let object: [String: Any] = ["price": 2.5, "quantity": 4, "tags": ["a", "b"], "name": "Ann"]
        #expect(NSExpression(forConstantValue: 5).expressionValue(with: nil, context: nil) as? Int == 5)
        #expect(NSExpression(forKeyPath: "price").expressionValue(with: object, context: nil) as? Double == 2.5)
        #expect(NSExpression.expressionForEvaluatedObject().expressionValue(with: 7, context: nil) as? Int == 7)
        let context = NSMutableDictionary()
        context["x"] = 3
        #expect(NSExpression(forVariable: "x").expressionValue(with: nil, context: context) as? Int == 3)
        #expect(NSExpression(forVariable: "missing").expressionValue(with: nil, context: nil) == nil)
        #expect(NSExpression(format: "price * quantity").expressionValue(with: object, context: nil) as? Double == 10)
        let total = NSExpression(
            forFunction: "multiply:by:",
            arguments: [NSExpression(forKeyPath: "price"), NSExpression(forKeyPath: "quantity")])
        #expect(total.expressionValue(with: object, context: nil) as? Double == 10)
        #expect(
            try NSExpression(forFunction: "average:", arguments: [NSExpression(forConstantValue: [1, 2, 6])]).value(
                with: nil) as? Double == 3)
        #expect(
            try NSExpression(forFunction: "count:", arguments: [NSExpression(forKeyPath: "tags")]).value(with: object)
                as? Int == 2)
        #expect(
            try NSExpression(forFunction: "uppercase:", arguments: [NSExpression(forKeyPath: "name")]).value(
                with: object) as? String == "ANN")
        #expect(
            try NSExpression(forFunction: "stddev:", arguments: [[2, 4, 4, 4, 5, 5, 7, 9]]).value(with: nil) as? Double
                == 2)
        #expect(try NSExpression(forFunction: "mode:", arguments: [[1, 2, 2, 3]]).value(with: nil) as? [Double] == [2])
        #expect(try NSExpression(forFunction: "now", arguments: []).value(with: nil) is Date)
        #expect(try NSExpression(forFunction: "bitwiseXor:with:", arguments: [6, 3]).value(with: nil) as? Int == 5)
        let aggregate = NSExpression(forAggregate: [
            NSExpression(forConstantValue: 1), NSExpression(forKeyPath: "quantity"),
        ])
        #expect(try aggregate.value(with: object) as? [Any?] != nil)
        let union = NSExpression(
            forUnionSet: NSExpression(forConstantValue: [1, 2]), with: NSExpression(forConstantValue: [2, 3]))
        #expect((try union.value(with: nil) as? [Any])?.count == 3)
        let conditional = NSExpression(
            forConditional: NSPredicate(format: "quantity > 3"), trueExpression: NSExpression(forConstantValue: "many"),
            falseExpression: NSExpression(forConstantValue: "few"))
        #expect(try conditional.value(with: object) as? String == "many")
        let subquery = NSExpression(
            forSubquery: NSExpression(forKeyPath: "tags"), usingIteratorVariable: "t",
            predicate: NSPredicate(format: "$t != 'a'"))
        #expect((try subquery.value(with: object) as? [Any?])?.count == 1)
        let block = NSExpression(
            block: { object, arguments, _ in (arguments.first as? Int ?? 0) * 2 },
            arguments: [NSExpression(forConstantValue: 21)])
        #expect(try block.value(with: nil) as? Int == 42)
        #expect(block.expressionType == .block)
        #expect(NSExpression.expressionForAnyKey().expressionType == .anyKey)
    }

    /// How a dictionary fetch computes an `NSExpressionDescription` over a group: the group's
    /// objects are the evaluated object, and key paths map over them.
    @Test func aggregateFunctionsOverAGroup() throws {
        let group: [[String: Any]] = [["age": 20], ["age": 30], ["age": NSNull()], ["age": 40]]
        let age = NSExpression(forKeyPath: "age")
        #expect(try NSExpression(forFunction: "average:", arguments: [age]).value(with: group) as? Double == 30)
        #expect(try NSExpression(forFunction: "sum:", arguments: [age]).value(with: group) as? Int == 90)
        #expect(try NSExpression(forFunction: "count:", arguments: [age]).value(with: group) as? Int == 3)
        #expect(try NSExpression(forFunction: "max:", arguments: [age]).value(with: group) as? Int == 40)
        #expect(try NSExpression(forFunction: "min:", arguments: [age]).value(with: group) as? Int == 20)
        #expect(try NSExpression(format: "@count").value(with: group) as? Int == 4)
    }

    @Test func accessors() {
        let function = NSExpression(forFunction: "add:to:", arguments: [1, 2])
        #expect(
            function.expressionType == .function && function.function == "add:to:" && function.arguments?.count == 2)
        #expect(NSExpression(forKeyPath: "a.b").keyPath == "a.b")
        #expect(NSExpression(forVariable: "v").variable == "v")
        #expect(NSExpression(forConstantValue: nil).constantValue == nil)
        #expect(NSExpression(format: "a + 1").description == "a + 1")
        #expect(NSExpression(format: "a +").validationError != nil)
        #expect(NSExpression(format: "%K.@count", "items").keyPath == "items.@count")
    }

    struct Temperature: PredicateFunctionReceiver {
        let celsius: Double
        func predicateFunction(_ name: String, arguments: [Any?]) throws -> Any? {
            switch name {
            case "fahrenheit": return celsius * 9 / 5 + 32
            case "plus:": return celsius + ((arguments.first ?? nil) as? Double ?? 0)
            default: throw PredicateLanguageError(.unsupported, "no function \(name)")
            }
        }
    }

    @Test func functionReceivers() {
        let object: [String: Any] = ["temperature": Temperature(celsius: 100)]
        #expect(NSPredicate(format: "FUNCTION(temperature, 'fahrenheit') == 212").evaluate(with: object))
        #expect(NSPredicate(format: "FUNCTION(temperature, 'plus:', 5.0) == 105").evaluate(with: object))
        #expect(!NSPredicate(format: "FUNCTION(temperature, 'kelvin') == 1").evaluate(with: object))
        #expect(NSPredicate(format: "FUNCTION('abc', 'length') == 3").evaluate(with: nil))
        #expect(NSPredicate(format: "FUNCTION(12, 'stringValue') == '12'").evaluate(with: nil))
        #expect(NSPredicate(format: "FUNCTION('7', 'intValue') == 7").evaluate(with: nil))
    }

    @Test func functionsReportErrors() throws {
        #expect(throws: PredicateLanguageError.self) {
            try NSExpression(forFunction: "bogus:", arguments: [1]).value(with: nil)
        }
        #expect(throws: PredicateLanguageError.self) {
            try NSExpression(forFunction: "add:to:", arguments: [1]).value(with: nil)
        }
        #expect(throws: PredicateLanguageError.self) {
            try NSExpression(forFunction: "sum:", arguments: [["a"]]).value(with: nil)
        }
        #expect(throws: PredicateLanguageError.self) {
            try NSExpression(format: "CAST(1, 'NSWhatever')").value(with: nil)
        }
        #expect(
            try NSExpression(format: "9223372036854775807 + 1").value(with: nil) as? Double == 9.223372036854775808e18)
    }
}
