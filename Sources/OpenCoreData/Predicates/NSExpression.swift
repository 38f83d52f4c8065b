// NSExpression: the operands of comparison predicates and the computed columns of
// dictionary fetches. One class with an internal node, as Foundation's class cluster
// exposes one type; `expressionType` tells which kind an instance is.
import Foundation

/// An expression used in a comparison predicate or a fetch's property description.
///
/// ```swift
/// let total = NSExpression(format: "price * quantity")
/// let value = total.expressionValue(with: ["price": 2.5, "quantity": 4], context: nil)  // 10.0
/// ```
open class NSExpression: NSObject, @unchecked Sendable {
    /// The kinds of expression, with Foundation's raw values.
    public enum ExpressionType: UInt, Sendable {
        /// A fixed value.
        case constantValue
        /// The object being evaluated (`SELF`).
        case evaluatedObject
        /// A `$VARIABLE`.
        case variable
        /// A key path read from the evaluated object.
        case keyPath
        /// A function of arguments (`add:to:`, `sum:`, `FUNCTION(...)`, ...).
        case function
        /// The union of two collections.
        case unionSet
        /// The intersection of two collections.
        case intersectSet
        /// The elements of one collection not in another.
        case minusSet
        /// `SUBQUERY(collection, $variable, predicate)`.
        case subquery = 13
        /// A literal collection of expressions, `{a, b}`.
        case aggregate
        /// Any key of a dictionary.
        case anyKey
        /// A closure.
        case block = 19
        /// `TERNARY(predicate, a, b)`.
        case conditional
    }

    /// The closure type of block expressions: the evaluated object, the argument values, the context.
    public typealias ExpressionBlock = (Any?, [Any], NSMutableDictionary?) -> Any

    /// What the position `[...]` after an expression selects.
    enum IndexSpecifier {
        case expression(NSExpression)
        case first
        case last
        case size
    }

    /// The expression's structure.
    enum Node {
        case constant(Any?)
        case evaluatedObject
        case variable(String)
        case keyPath(String)
        case member(NSExpression, String)
        case function(String, [NSExpression])
        case selector(NSExpression, String, [NSExpression])
        case index(NSExpression, IndexSpecifier)
        case aggregate([NSExpression])
        case subquery(NSExpression, String, NSPredicate)
        case union(NSExpression, NSExpression)
        case intersect(NSExpression, NSExpression)
        case minus(NSExpression, NSExpression)
        case conditional(NSPredicate, NSExpression, NSExpression)
        case anyKey
        case block(ExpressionBlock, [NSExpression])
        case invalid(PredicateLanguageError)
    }

    let node: Node
    /// The height of the tree below this node; code that walks trees refuses ones taller than
    /// `PredicateCompiler.maximumDepth` instead of recursing into them.
    let depth: Int

    init(node: Node) {
        self.node = node
        depth = 1 + Self.childDepth(node)
    }

    private static func childDepth(_ node: Node) -> Int {
        switch node {
        case .constant, .evaluatedObject, .variable, .keyPath, .anyKey, .invalid: 0
        case .member(let base, _): base.depth
        case .function(_, let arguments), .aggregate(let arguments), .block(_, let arguments):
            arguments.map(\.depth).max() ?? 0
        case .selector(let target, _, let arguments): max(target.depth, arguments.map(\.depth).max() ?? 0)
        case .index(let base, .expression(let index)): max(base.depth, index.depth)
        case .index(let base, _): base.depth
        case .subquery(let collection, _, let predicate): max(collection.depth, predicate.depth)
        case .union(let left, let right), .intersect(let left, let right), .minus(let left, let right):
            max(left.depth, right.depth)
        case .conditional(let predicate, let yes, let no): max(predicate.depth, yes.depth, no.depth)
        }
    }

    /// An expression whose value is `value` (nil for `NULL`).
    public convenience init(forConstantValue value: Any?) {
        self.init(node: .constant(unwrapOptional(value)))
    }

    /// An expression that reads `keyPath` (dotted keys, collection operators) from the evaluated object.
    public convenience init(forKeyPath keyPath: String) {
        self.init(node: .keyPath(keyPath))
    }

    /// An expression for the variable `$name`, bound by substitution variables or `SUBQUERY`.
    public convenience init(forVariable name: String) {
        self.init(node: .variable(name))
    }

    /// An expression applying a built-in function such as `"sum:"`, `"add:to:"` or `"uppercase:"`.
    ///
    /// - Parameters:
    ///   - name: The function's name with its argument labels, as in a format string.
    ///   - arguments: `NSExpression`s; other values are taken as constants.
    public convenience init(forFunction name: String, arguments: [Any]) {
        self.init(node: .function(name, arguments.map(NSExpression.wrap)))
    }

    /// `FUNCTION(target, selectorName, arguments...)`: a named operation on `target`'s value.
    ///
    /// Without an Objective-C runtime, the target must conform to `PredicateFunctionReceiver`
    /// or the selector must be one of the built-in string and number methods (README).
    public convenience init(forFunction target: NSExpression, selectorName: String, arguments: [Any]?) {
        self.init(node: .selector(target, selectorName, (arguments ?? []).map(NSExpression.wrap)))
    }

    /// A literal collection, `{a, b, c}`.
    public convenience init(forAggregate subexpressions: [Any]) {
        self.init(node: .aggregate(subexpressions.map(NSExpression.wrap)))
    }

    /// The elements of both collections, without repeats.
    public convenience init(forUnionSet left: NSExpression, with right: NSExpression) {
        self.init(node: .union(left, right))
    }

    /// The elements present in both collections.
    public convenience init(forIntersectSet left: NSExpression, with right: NSExpression) {
        self.init(node: .intersect(left, right))
    }

    /// The elements of `left` not present in `right`.
    public convenience init(forMinusSet left: NSExpression, with right: NSExpression) {
        self.init(node: .minus(left, right))
    }

    /// `SUBQUERY(expression, $variable, predicate)`: the elements of a collection for which `predicate` holds.
    public convenience init(
        forSubquery expression: NSExpression, usingIteratorVariable variable: String, predicate: NSPredicate
    ) {
        self.init(node: .subquery(expression, variable, predicate))
    }

    /// `TERNARY(predicate, trueExpression, falseExpression)`.
    public convenience init(
        forConditional predicate: NSPredicate, trueExpression: NSExpression, falseExpression: NSExpression
    ) {
        self.init(node: .conditional(predicate, trueExpression, falseExpression))
    }

    /// An expression computed by `block` from the evaluated object and the values of `arguments`.
    public convenience init(block: @escaping ExpressionBlock, arguments: [NSExpression]?) {
        self.init(node: .block(block, arguments ?? []))
    }

    /// Parses an expression from a format string such as `"price * quantity"`.
    ///
    /// Does not throw, as in Foundation: a malformed format gives an expression whose
    /// evaluation fails with the parse error (see `validate()`).
    public convenience init(format: String, _ arguments: Any...) {
        self.init(format: format, argumentArray: arguments)
    }

    /// Parses an expression from a format string with `%@`/`%K`/`%d` arguments in an array.
    public convenience init(format: String, argumentArray arguments: [Any]) {
        do {
            let parsed = try PredicateParser.parseExpression(format, arguments: arguments)
            self.init(node: parsed.node)
        } catch let error as PredicateLanguageError {
            self.init(node: .invalid(error))
        } catch {
            self.init(node: .invalid(PredicateLanguageError(.unsupported, "\(error)")))
        }
    }

    /// The expression for the evaluated object itself, `SELF`.
    open class func expressionForEvaluatedObject() -> NSExpression {
        NSExpression(node: .evaluatedObject)
    }

    /// The expression matching any key of a dictionary.
    open class func expressionForAnyKey() -> NSExpression {
        NSExpression(node: .anyKey)
    }

    static func wrap(_ value: Any) -> NSExpression {
        if let expression = value as? NSExpression { return expression }
        return NSExpression(forConstantValue: value)
    }

    /// Which kind of expression this is.
    open var expressionType: ExpressionType {
        switch node {
        case .constant, .invalid: .constantValue
        case .evaluatedObject: .evaluatedObject
        case .variable: .variable
        case .keyPath, .member: .keyPath
        case .function, .selector, .index: .function
        case .aggregate: .aggregate
        case .subquery: .subquery
        case .union: .unionSet
        case .intersect: .intersectSet
        case .minus: .minusSet
        case .conditional: .conditional
        case .anyKey: .anyKey
        case .block: .block
        }
    }

    /// The value of a constant expression.
    open var constantValue: Any? {
        if case .constant(let value) = node { return value }
        return nil
    }

    /// The key path of a key-path expression (`""` for other kinds).
    open var keyPath: String {
        switch node {
        case .keyPath(let path), .member(_, let path): path
        default: ""
        }
    }

    /// The variable name of a variable or subquery expression (`""` for other kinds).
    open var variable: String {
        switch node {
        case .variable(let name), .subquery(_, let name, _): name
        default: ""
        }
    }

    /// The function or selector name of a function expression (`""` for other kinds).
    open var function: String {
        switch node {
        case .function(let name, _), .selector(_, let name, _): name
        case .index: "objectFrom:withIndex:"
        case .member: "valueForKeyPath:"
        default: ""
        }
    }

    /// The arguments of a function expression.
    open var arguments: [NSExpression]? {
        switch node {
        case .function(_, let arguments), .selector(_, _, let arguments), .block(_, let arguments): arguments
        case .index(_, .expression(let index)): [index]
        default: nil
        }
    }

    /// The receiver of a `FUNCTION(...)`, an index or a key path on a non-`SELF` base.
    open var operand: NSExpression? {
        switch node {
        case .selector(let target, _, _), .index(let target, _), .member(let target, _): target
        default: nil
        }
    }

    /// The collection of a subquery, or the subexpressions of an aggregate.
    open var collection: Any? {
        switch node {
        case .subquery(let collection, _, _): collection
        case .aggregate(let elements): elements
        default: nil
        }
    }

    /// The predicate of a subquery or conditional expression.
    open var predicate: NSPredicate? {
        switch node {
        case .subquery(_, _, let predicate), .conditional(let predicate, _, _): predicate
        default: nil
        }
    }

    /// The left side of a set expression.
    open var leftExpression: NSExpression? {
        switch node {
        case .union(let left, _), .intersect(let left, _), .minus(let left, _): left
        default: nil
        }
    }

    /// The right side of a set expression.
    open var rightExpression: NSExpression? {
        switch node {
        case .union(_, let right), .intersect(_, let right), .minus(_, let right): right
        default: nil
        }
    }

    /// The expression a conditional yields when its predicate holds.
    open var trueExpression: NSExpression? {
        if case .conditional(_, let expression, _) = node { return expression }
        return nil
    }

    /// The expression a conditional yields when its predicate does not hold.
    open var falseExpression: NSExpression? {
        if case .conditional(_, _, let expression) = node { return expression }
        return nil
    }

    /// The closure of a block expression.
    open var expressionBlock: ExpressionBlock? {
        if case .block(let block, _) = node { return block }
        return nil
    }

    /// The parse error of an expression made from a malformed format string, nil otherwise.
    public var validationError: PredicateLanguageError? {
        if case .invalid(let error) = node { return error }
        return nil
    }

    /// The value of the expression for `object`, with variables from `context`; nil when evaluation fails.
    ///
    /// Foundation raises an exception where this returns nil; use `value(with:variables:)` to get the error.
    open func expressionValue(with object: Any?, context: NSMutableDictionary?) -> Any? {
        var variables: [String: Any] = [:]
        if let context {
            for (key, value) in context {
                if let key = key as? String { variables[key] = value }
            }
        }
        return try? value(with: object, variables: variables)
    }

    /// The value of the expression for `object`.
    ///
    /// - Throws: the parse error of a malformed expression, `KeyValueCodingError.unknownKey`,
    ///   or a `PredicateLanguageError` (type mismatch, missing variable, ...).
    public func value(with object: Any?, variables: [String: Any] = [:]) throws -> Any? {
        var compiler = PredicateCompiler(schema: nil)
        let program = try compiler.compile(self)
        return try program(EvaluationScope(object: object, schema: nil, variables: variables))
    }

    /// Does nothing: expressions are always evaluable here (Foundation's secure-coding gate).
    open func allowEvaluation() {}

    /// The format string of the expression, as `NSPredicate.predicateFormat` prints it.
    open override var description: String {
        PredicateFormatter.format(self)
    }

    /// Structural equality; constants compare by value (README "Predicate semantics").
    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSExpression else { return false }
        return PredicateEquality.equal(self, other)
    }

    /// A hash consistent with `isEqual(_:)`.
    open override var hash: Int {
        PredicateEquality.hashValue(self)
    }
}
