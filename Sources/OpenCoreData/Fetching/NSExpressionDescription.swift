// A computed property of dictionary fetch results.
import Foundation

/// A named expression in `propertiesToFetch` of a dictionary fetch: an aggregate or
/// another computed value.
///
/// ```swift
/// let average = NSExpressionDescription()
/// average.name = "averageAge"
/// average.expression = NSExpression(forFunction: "average:", arguments: [NSExpression(forKeyPath: "age")])
/// average.expressionResultType = .doubleAttributeType
/// ```
open class NSExpressionDescription: NSPropertyDescription, @unchecked Sendable {
    /// The expression computing the value.
    open var expression: NSExpression?
    /// The type of the computed value.
    open var expressionResultType: NSAttributeType = .undefinedAttributeType

    /// Creates an empty description.
    public override init() {
        super.init()
    }
}
