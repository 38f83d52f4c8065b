// PLACEHOLDER owned by the predicate work (issue 3): replaced wholesale by the real
// NSExpression. Only what the object layer needs to compile exists here.
import Foundation

/// An expression used in a comparison predicate or a fetch's property description.
open class NSExpression: NSObject, @unchecked Sendable {
    /// The key path this expression reads, for key-path expressions.
    public let keyPath: String

    /// An expression that reads `keyPath` from the evaluated object.
    public init(forKeyPath keyPath: String) {
        self.keyPath = keyPath
    }
}
