// A recursive-descent parser for Apple's predicate format grammar ("BNF Definition of
// Cocoa Predicates"). Precedence, loosest first:
//
//   OR ||   <   AND &&   <   NOT !   <   comparison (== != < <= > >= BETWEEN IN CONTAINS
//   BEGINSWITH ENDSWITH LIKE MATCHES, with ANY/SOME/ALL/NONE and [cdnl])
//   expressions:  UNION INTERSECT MINUS  <  + -  <  * /  <  ** (right-assoc)  <
//   unary -  <  postfix . [index]  <  primary
//
// Nesting is bounded (`maximumDepth`) so hostile input cannot exhaust the stack.
import Foundation

/// Parses format strings into predicate and expression trees.
struct PredicateParser {
    /// The deepest nesting of parentheses, NOT, unary minus and subqueries accepted.
    static let maximumDepth = 64

    private let tokens: [PredicateToken]
    private var index = 0
    let arguments: [Any]
    var argumentIndex = 0
    private var depth = 0
    /// Whether placeholders become template markers instead of consuming arguments
    /// (PredicateTemplate.swift).
    let buildsTemplate: Bool
    /// The placeholders met so far, by argument ordinal, when building a template.
    var placeholders: [PredicateTemplate.Placeholder] = []

    private init(tokens: [PredicateToken], arguments: [Any], buildsTemplate: Bool = false) {
        self.tokens = tokens
        self.arguments = arguments
        self.buildsTemplate = buildsTemplate
    }

    /// Parses a whole predicate format: a format parsed before binds `arguments` into its
    /// cached template (PredicateFormatCache.swift) instead of being parsed again.
    static func parsePredicate(_ format: String, arguments: [Any]) throws -> NSPredicate {
        try parseBoundPredicate(format, arguments: arguments).tree
    }

    /// Parses a whole predicate format as ``parsePredicate(_:arguments:)`` does, with the
    /// binding it came from when a cached template bound the arguments.
    static func parseBoundPredicate(_ format: String, arguments: [Any]) throws -> (
        tree: NSPredicate, binding: PredicateBinding?
    ) {
        try explained(format) {
            let parsed = try PredicateFormatCache.entry(of: format)
            if let template = parsed.template, let bound = template.binding(of: arguments) {
                return (bound.tree, bound.binding)
            }
            return (try parsePredicate(tokens: parsed.tokens, arguments: arguments), nil)
        }
    }

    /// Parses the tokens of a whole predicate format, binding `arguments`, without the cache.
    static func parsePredicate(tokens: [PredicateToken], arguments: [Any]) throws -> NSPredicate {
        var parser = PredicateParser(tokens: tokens, arguments: arguments)
        return try parser.parseWholePredicate()
    }

    /// The template of a predicate format's tokens; nil when the format is malformed or a
    /// placeholder sits where its argument shapes the tree (see PredicateTemplate.swift).
    static func template(of tokens: [PredicateToken]) -> PredicateTemplate? {
        var parser = PredicateParser(tokens: tokens, arguments: [], buildsTemplate: true)
        guard let tree = try? parser.parseWholePredicate() else { return nil }
        return PredicateTemplate(tree: tree, placeholders: parser.placeholders)
    }

    private mutating func parseWholePredicate() throws -> NSPredicate {
        let predicate = try parseOr()
        try expectEnd()
        // Expressions are held to the bound as they are built; the comparisons, NOTs and
        // compounds above them add levels too, and a taller tree would neither evaluate nor print.
        guard predicate.depth <= PredicateCompiler.maximumDepth else {
            throw PredicateLanguageError(
                .malformedFormat(position: 0),
                "the predicate nests deeper than \(PredicateCompiler.maximumDepth) levels")
        }
        return predicate
    }

    /// Parses a whole expression format.
    static func parseExpression(_ format: String, arguments: [Any]) throws -> NSExpression {
        try explained(format) {
            var lexer = PredicateLexer(format)
            var parser = PredicateParser(tokens: try lexer.tokenize(), arguments: arguments)
            let expression = try parser.parseExpression()
            try parser.expectEnd()
            return expression
        }
    }

    // MARK: Tokens

    var current: PredicateToken { tokens[min(index, tokens.count - 1)] }

    private mutating func advance() { if index < tokens.count - 1 { index += 1 } }

    private func keyword(_ token: PredicateToken) -> String? {
        if case .identifier(let word, false) = token.kind { return word.uppercased() }
        return nil
    }

    private func isKeyword(_ names: String...) -> Bool {
        guard let word = keyword(current) else { return false }
        return names.contains(word)
    }

    /// The value `choices` gives the current keyword, consumed; nil when it is none of them.
    private mutating func consumeKeyword<Value>(_ choices: KeyValuePairs<String, Value>) -> Value? {
        guard let word = keyword(current), let value = choices.first(where: { $0.key == word })?.value else {
            return nil
        }
        advance()
        return value
    }

    private func isSymbol(_ symbols: String...) -> Bool {
        if case .symbol(let symbol) = current.kind { return symbols.contains(symbol) }
        return false
    }

    private mutating func expectSymbol(_ symbol: String, _ context: String) throws {
        guard isSymbol(symbol) else { throw error("expected '\(symbol)' \(context)") }
        advance()
    }

    private func expectEnd() throws {
        guard case .end = current.kind else {
            throw error("unexpected \(describe(current)) after a complete predicate")
        }
    }

    private mutating func enter() throws {
        depth += 1
        if depth > Self.maximumDepth {
            throw PredicateLanguageError(
                .malformedFormat(position: current.position),
                "nesting deeper than \(Self.maximumDepth) levels"
            )
        }
    }

    private mutating func leave() { depth -= 1 }

    /// Refuses trees taller than the evaluator accepts (long operator chains nest without parentheses).
    private func checked(_ expression: NSExpression) throws -> NSExpression {
        guard expression.depth <= PredicateCompiler.maximumDepth else {
            throw error("the expression nests deeper than \(PredicateCompiler.maximumDepth) levels")
        }
        return expression
    }

    // MARK: Predicates

    private mutating func parseOr() throws -> NSPredicate {
        try enter()
        defer { leave() }
        return try parseCompound(.or, "OR", "||") { try $0.parseAnd() }
    }

    private mutating func parseAnd() throws -> NSPredicate {
        try parseCompound(.and, "AND", "&&") { try $0.parseNot() }
    }

    /// The predicates `operand` parses, joined by `keyword` or `symbol`: one compound of
    /// `type` for two or more, the predicate itself for one.
    private mutating func parseCompound(
        _ type: NSCompoundPredicate.LogicalType, _ keyword: String, _ symbol: String,
        _ operand: (inout Self) throws -> NSPredicate
    ) throws -> NSPredicate {
        var operands = [try operand(&self)]
        while isKeyword(keyword) || isSymbol(symbol) {
            advance()
            operands.append(try operand(&self))
        }
        return operands.count == 1 ? operands[0] : NSCompoundPredicate(type: type, subpredicates: operands)
    }

    private mutating func parseNot() throws -> NSPredicate {
        if isKeyword("NOT") || isSymbol("!") {
            advance()
            try enter()
            defer { leave() }
            return NSCompoundPredicate(type: .not, subpredicates: [try parseNot()])
        }
        return try parsePrimaryPredicate()
    }

    private mutating func parsePrimaryPredicate() throws -> NSPredicate {
        if isKeyword("TRUEPREDICATE") {
            advance()
            return NSPredicate(value: true)
        }
        if isKeyword("FALSEPREDICATE") {
            advance()
            return NSPredicate(value: false)
        }
        if isSymbol("(") {
            // `(a > 1)` is a predicate; `(a + 1) > 2` a comparison of a parenthesized expression.
            let saved = (index, argumentIndex, depth)
            advance()
            var failure: PredicateLanguageError?
            do {
                let inner = try parseOr()
                if isSymbol(")") {
                    advance()
                    if !startsOperatorOrArithmetic() { return inner }
                } else {
                    failure = error("expected ')' to close the '(' at position \(tokens[saved.0].position)")
                }
            } catch let parseError as PredicateLanguageError {
                failure = parseError
            }
            (index, argumentIndex, depth) = saved
            do {
                return try parseComparison()
            } catch let comparisonError as PredicateLanguageError {
                if let failure, (failure.position ?? 0) > (comparisonError.position ?? 0) { throw failure }
                throw comparisonError
            }
        }
        return try parseComparison()
    }

    private func startsOperatorOrArithmetic() -> Bool {
        if isSymbol("==", "=", "!=", "<>", "<", "<=", "=<", ">", ">=", "=>", "+", "-", "*", "/", "**", ".", "[") {
            return true
        }
        return isKeyword(
            "BETWEEN", "IN", "CONTAINS", "BEGINSWITH", "ENDSWITH", "LIKE", "MATCHES", "UNION", "INTERSECT", "MINUS")
    }

    private mutating func parseComparison() throws -> NSPredicate {
        // NONE is NOT ANY: the comparison under ANY, negated.
        let (modifier, negate) =
            consumeKeyword(["ANY": (.any, false), "SOME": (.any, false), "ALL": (.all, false), "NONE": (.any, true)])
            ?? (NSComparisonPredicate.Modifier.direct, false)
        let left = try parseExpression()
        let operatorPosition = current.position
        guard let type = parseOperator() else {
            throw error("expected a comparison operator, found \(describe(current))", at: operatorPosition)
        }
        let options = try parseOptions()
        let right = try parseExpression()
        let comparison = NSComparisonPredicate(
            leftExpression: left, rightExpression: right, modifier: modifier, type: type, options: options)
        return negate ? NSCompoundPredicate(type: .not, subpredicates: [comparison]) : comparison
    }

    /// The comparison operators, by symbol and by keyword: built once, not per comparison.
    private static let operatorSymbols: [String: NSComparisonPredicate.Operator] = [
        "==": .equalTo, "=": .equalTo, "!=": .notEqualTo, "<>": .notEqualTo, "<": .lessThan,
        "<=": .lessThanOrEqualTo, "=<": .lessThanOrEqualTo, ">": .greaterThan, ">=": .greaterThanOrEqualTo,
        "=>": .greaterThanOrEqualTo,
    ]
    private static let operatorWords: [String: NSComparisonPredicate.Operator] = [
        "BETWEEN": .between, "IN": .in, "CONTAINS": .contains, "BEGINSWITH": .beginsWith, "ENDSWITH": .endsWith,
        "LIKE": .like, "MATCHES": .matches,
    ]

    private mutating func parseOperator() -> NSComparisonPredicate.Operator? {
        if case .symbol(let symbol) = current.kind, let type = Self.operatorSymbols[symbol] {
            advance()
            return type
        }
        if let word = keyword(current), let type = Self.operatorWords[word] {
            advance()
            return type
        }
        return nil
    }

    private mutating func parseOptions() throws -> NSComparisonPredicate.Options {
        guard isSymbol("["), index + 2 < tokens.count, case .identifier(let letters, false) = tokens[index + 1].kind,
            case .symbol("]") = tokens[index + 2].kind
        else { return [] }
        var options: NSComparisonPredicate.Options = []
        for letter in letters.lowercased() {
            switch letter {
            case "c": options.insert(.caseInsensitive)
            case "d": options.insert(.diacriticInsensitive)
            case "n": options.insert(.normalized)
            case "l": options.insert(.localeSensitive)
            default:
                throw error(
                    "unknown comparison option '\(letter)' (expected c, d, n or l)", at: tokens[index + 1].position)
            }
        }
        index += 3
        return options
    }

    // MARK: Expressions

    mutating func parseExpression() throws -> NSExpression {
        var left = try parseAdditive()
        while let word = keyword(current), ["UNION", "INTERSECT", "MINUS"].contains(word) {
            advance()
            let right = try parseAdditive()
            switch word {
            case "UNION": left = NSExpression(forUnionSet: left, with: right)
            case "INTERSECT": left = NSExpression(forIntersectSet: left, with: right)
            default: left = NSExpression(forMinusSet: left, with: right)
            }
            left = try checked(left)
        }
        return left
    }

    private mutating func parseAdditive() throws -> NSExpression {
        try parseLeftAssociative("+", "add:to:", "-", "from:subtract:") { try $0.parseMultiplicative() }
    }

    private mutating func parseMultiplicative() throws -> NSExpression {
        try parseLeftAssociative("*", "multiply:by:", "/", "divide:by:") { try $0.parsePower() }
    }

    /// The expressions `operand` parses, joined left to right by the operator symbols
    /// `first` and `second`, each into the two-argument function it names.
    private mutating func parseLeftAssociative(
        _ first: String, _ firstFunction: String, _ second: String, _ secondFunction: String,
        _ operand: (inout Self) throws -> NSExpression
    ) throws -> NSExpression {
        var left = try operand(&self)
        while isSymbol(first, second) {
            let function = isSymbol(first) ? firstFunction : secondFunction
            advance()
            let right = try operand(&self)
            left = try checked(NSExpression(node: .function(function, [left, right])))
        }
        return left
    }

    private mutating func parsePower() throws -> NSExpression {
        let base = try parseUnary()
        guard isSymbol("**") else { return base }
        advance()
        try enter()
        defer { leave() }
        return NSExpression(node: .function("raise:toPower:", [base, try parsePower()]))
    }

    private mutating func parseUnary() throws -> NSExpression {
        guard isSymbol("-") else { return try parsePostfix() }
        advance()
        try enter()
        defer { leave() }
        let operand = try parseUnary()
        // A number argument negates into a constant: the tree depends on the argument.
        try refuseInTemplate(operand)
        if case .constant(let value) = operand.node {
            switch value {
            case let number as Int64: return NSExpression(forConstantValue: number == .min ? -Double(number) : -number)
            case let number as Int: return NSExpression(forConstantValue: number == .min ? -Double(number) : -number)
            case let number as Double: return NSExpression(forConstantValue: -number)
            default: break
            }
        }
        return NSExpression(node: .function("from:subtract:", [NSExpression(forConstantValue: 0), operand]))
    }

    private mutating func parsePostfix() throws -> NSExpression {
        var expression = try parsePrimary()
        while true {
            if isSymbol(".") {
                advance()
                let key: String
                switch current.kind {
                case .identifier(let word, _): key = word
                case .collectionOperator(let name): key = name
                default: throw error("expected a key after '.', found \(describe(current))")
                }
                advance()
                // `%K.name` joins the argument's key path: the tree depends on the argument.
                try refuseInTemplate(expression)
                switch expression.node {
                case .keyPath(let path): expression = NSExpression(forKeyPath: path + "." + key)
                case .evaluatedObject: expression = NSExpression(forKeyPath: key)
                case .member(let base, let path): expression = NSExpression(node: .member(base, path + "." + key))
                default: expression = try checked(NSExpression(node: .member(expression, key)))
                }
            } else if isSymbol("[") {
                advance()
                let specifier: NSExpression.IndexSpecifier
                if let position = consumeKeyword([
                    "FIRST": NSExpression.IndexSpecifier.first, "LAST": .last, "SIZE": .size,
                ]) {
                    specifier = position
                } else {
                    try enter()
                    defer { leave() }
                    specifier = .expression(try parseExpression())
                }
                try expectSymbol("]", "to close an index")
                expression = try checked(NSExpression(node: .index(expression, specifier)))
            } else {
                return expression
            }
        }
    }

    private mutating func parsePrimary() throws -> NSExpression {
        let token = current
        switch token.kind {
        case .string(let text):
            advance()
            return NSExpression(forConstantValue: text)
        case .integer(let value):
            advance()
            return NSExpression(forConstantValue: Int(value))
        case .double(let value):
            advance()
            return NSExpression(forConstantValue: value)
        case .variable(let name):
            advance()
            if isSymbol(":=") { throw error("variable assignment ':=' is not supported") }
            return NSExpression(forVariable: name)
        case .collectionOperator(let name):
            advance()
            return NSExpression(forKeyPath: name)
        case .placeholder(let letters):
            advance()
            return try placeholder(letters, at: token.position)
        case .symbol("("):
            advance()
            try enter()
            defer { leave() }
            let inner = try parseExpression()
            try expectSymbol(")", "to close '('")
            return inner
        case .symbol("{"):
            advance()
            return Self.aggregate(try parseExpressionList(closedBy: "}", "to close '{'"))
        case .identifier(let word, let escaped):
            advance()
            if escaped { return NSExpression(forKeyPath: word) }
            return try identifier(word, at: token.position)
        case .end:
            throw error("expected an expression, found the end of the format")
        default:
            throw error("expected an expression, found \(describe(token))")
        }
    }

    /// An aggregate of constants becomes a constant array, as an array argument is.
    static func aggregate(_ elements: [NSExpression]) -> NSExpression {
        var values: [Any] = []
        for element in elements {
            guard case .constant(let value) = element.node, let value else {
                return NSExpression(forAggregate: elements)
            }
            values.append(value)
        }
        return NSExpression(forConstantValue: values)
    }

    /// `NAME(...)`: the `(` after `name`, what `body` parses one level deeper, the `)`.
    private mutating func parseParenthesized(
        _ name: String, _ body: (inout Self) throws -> NSExpression
    ) throws -> NSExpression {
        try expectSymbol("(", "after \(name)")
        try enter()
        defer { leave() }
        let expression = try body(&self)
        try expectSymbol(")", "to close \(name)")
        return expression
    }

    private mutating func identifier(_ word: String, at position: Int) throws -> NSExpression {
        switch word.uppercased() {
        case "TRUE", "YES": return NSExpression(forConstantValue: true)
        case "FALSE", "NO": return NSExpression(forConstantValue: false)
        case "NULL", "NIL": return NSExpression(forConstantValue: nil)
        case "SELF": return NSExpression.expressionForEvaluatedObject()
        case "ANYKEY": return NSExpression.expressionForAnyKey()
        case "SUBQUERY":
            return try parseParenthesized("SUBQUERY") { parser in
                let collection = try parser.parseExpression()
                try parser.expectSymbol(",", "after the SUBQUERY collection")
                guard case .variable(let name) = parser.current.kind else {
                    throw parser.error("SUBQUERY needs a $variable")
                }
                parser.advance()
                try parser.expectSymbol(",", "after the SUBQUERY variable")
                let predicate = try parser.parseOr()
                return NSExpression(forSubquery: collection, usingIteratorVariable: name, predicate: predicate)
            }
        case "TERNARY":
            return try parseParenthesized("TERNARY") { parser in
                let predicate = try parser.parseOr()
                try parser.expectSymbol(",", "after the TERNARY condition")
                let yes = try parser.parseExpression()
                try parser.expectSymbol(",", "after the TERNARY true expression")
                let no = try parser.parseExpression()
                return NSExpression(forConditional: predicate, trueExpression: yes, falseExpression: no)
            }
        case "FUNCTION":
            try expectSymbol("(", "after FUNCTION")
            let arguments = try parseExpressionList(closedBy: ")", "to close the argument list")
            if arguments.count >= 2 { try refuseInTemplate(arguments[1]) }
            guard arguments.count >= 2, case .constant(let selector as String) = arguments[1].node else {
                throw error("FUNCTION needs a receiver and a selector name string", at: position)
            }
            return NSExpression(
                forFunction: arguments[0], selectorName: selector, arguments: Array(arguments.dropFirst(2)))
        case "CAST":
            try expectSymbol("(", "after CAST")
            let arguments = try parseExpressionList(closedBy: ")", "to close the argument list")
            guard arguments.count == 2 else { throw error("CAST takes a value and a type name", at: position) }
            // A cast of constant arguments folds into a constant: the tree depends on them.
            for argument in arguments { try refuseInTemplate(argument) }
            // A cast of constants is a constant: that is how dates, data and UUIDs print and re-parse.
            if case .constant(let value) = arguments[0].node, case .constant(let type) = arguments[1].node {
                do {
                    return NSExpression(forConstantValue: try ExpressionFunctions.cast(value, to: type))
                } catch let failure as PredicateLanguageError {
                    throw error(failure.message, at: position)
                }
            }
            return NSExpression(node: .function("castObject:toType:", arguments))
        default: break
        }
        if ExpressionFunctions.reservedWords.contains(word.uppercased()) {
            throw error("'\(word)' is a reserved word; write #\(word) to use it as a key", at: position)
        }
        // A function call: `name(args)` or Apple's selector form `name:(args)`, `add:to:(a, b)`.
        var selector = word
        var lookahead = index
        while case .symbol(":") = tokens[lookahead].kind {
            selector += ":"
            lookahead += 1
            if case .identifier(let part, false) = tokens[lookahead].kind,
                case .symbol(":") = tokens[lookahead + 1].kind
            {
                selector += part
                lookahead += 1
            }
        }
        if case .symbol("(") = tokens[lookahead].kind {
            let name = ExpressionFunctions.canonicalName(selector)
            guard let name else { throw error("unknown function '\(selector)'", at: position) }
            index = lookahead
            advance()
            return NSExpression(
                node: .function(name, try parseExpressionList(closedBy: ")", "to close the argument list")))
        }
        return NSExpression(forKeyPath: word)
    }

    /// A comma-separated, possibly empty list of expressions up to and including `closer`
    /// (an aggregate's `}`, an argument list's `)`).
    private mutating func parseExpressionList(closedBy closer: String, _ place: String) throws -> [NSExpression] {
        try enter()
        defer { leave() }
        var elements: [NSExpression] = []
        if !isSymbol(closer) {
            elements.append(try parseExpression())
            while isSymbol(",") {
                advance()
                elements.append(try parseExpression())
            }
        }
        try expectSymbol(closer, place)
        return elements
    }
}
