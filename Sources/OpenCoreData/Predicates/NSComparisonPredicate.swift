// NSComparisonPredicate: two expressions, an operator, a modifier and string options.
import Foundation

/// A predicate comparing two expressions, e.g. `age > 30` or `ANY projects.title CONTAINS[c] "ios"`.
open class NSComparisonPredicate: NSPredicate, @unchecked Sendable {
    /// How the left expression is applied when it yields a collection.
    public enum Modifier: UInt, Sendable {
        /// Compare the value as is.
        case direct
        /// Every element must satisfy the comparison (true for an empty collection).
        case all
        /// Some element must satisfy the comparison (false for an empty collection).
        case any
    }

    /// The comparison, with Foundation's raw values.
    public enum Operator: UInt, Sendable {
        /// `<`
        case lessThan
        /// `<=`
        case lessThanOrEqualTo
        /// `>`
        case greaterThan
        /// `>=`
        case greaterThanOrEqualTo
        /// `==`
        case equalTo
        /// `!=`
        case notEqualTo
        /// `MATCHES`: the whole string matches a regular expression.
        case matches
        /// `LIKE`: `*` and `?` wildcards.
        case like
        /// `BEGINSWITH`
        case beginsWith
        /// `ENDSWITH`
        case endsWith
        /// `IN`: membership in a collection, or substring of a string.
        case `in`
        /// A custom selector; not available without an Objective-C runtime (evaluates as an error).
        case customSelector
        /// `CONTAINS`: membership for collections, substring for strings.
        case contains = 99
        /// `BETWEEN {low, high}`, inclusive.
        case between
    }

    /// String comparison options: `[c]`, `[d]`, `[n]`, `[l]`.
    public struct Options: OptionSet, Sendable, Hashable {
        /// The option bits, with Foundation's values.
        public let rawValue: UInt
        /// Creates options from their raw value.
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// `[c]`: ignore case.
        public static let caseInsensitive = Options(rawValue: 1)
        /// `[d]`: ignore diacritics.
        public static let diacriticInsensitive = Options(rawValue: 2)
        /// `[n]`: operands are already normalized; compared as is.
        public static let normalized = Options(rawValue: 4)
        /// `[l]`: order strings by the current locale.
        public static let localeSensitive = Options(rawValue: 8)
    }

    /// The left operand.
    public let leftExpression: NSExpression
    /// The right operand.
    public let rightExpression: NSExpression
    /// Direct, ANY or ALL.
    public let comparisonPredicateModifier: Modifier
    /// The operator.
    public let predicateOperatorType: Operator
    /// String options.
    public let options: Options

    /// A comparison of `left` and `right` by `type`, applied per `modifier`, with string `options`.
    public init(
        leftExpression left: NSExpression, rightExpression right: NSExpression, modifier: Modifier,
        type: Operator, options: Options = []
    ) {
        leftExpression = left
        rightExpression = right
        comparisonPredicateModifier = modifier
        predicateOperatorType = type
        self.options = options
        super.init(content: .subclass, depth: 1 + max(left.depth, right.depth))
    }

    /// The selector of a custom-selector predicate; always nil here (no Objective-C runtime).
    public var customSelector: String? { nil }
}
