// PLACEHOLDER owned by the predicate work (issue 3): replaced wholesale by the real
// NSPredicate with the format-string language. Only the block and constant forms
// exist here so the object layer can compile and test fetches meanwhile.
import Foundation

/// A logical condition used to constrain a search or to filter values.
open class NSPredicate: NSObject, @unchecked Sendable {
    private let block: (Any?, [String: Any]?) -> Bool

    /// A predicate evaluated by a closure.
    public init(block: @escaping (Any?, [String: Any]?) -> Bool) {
        self.block = block
    }

    /// A predicate that always evaluates to `value`.
    public convenience init(value: Bool) {
        self.init(block: { _, _ in value })
    }

    /// Evaluates the predicate against `object`.
    open func evaluate(with object: Any?) -> Bool {
        block(object, nil)
    }
}
