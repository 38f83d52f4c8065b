// PLACEHOLDER owned by the predicate work (issue 3): replaced wholesale by the real
// NSSortDescriptor with comparators and the selector-equivalent comparisons.
import Foundation

/// Describes how to order objects by the value of a key.
open class NSSortDescriptor: NSObject, @unchecked Sendable {
    /// The key path the descriptor compares.
    public let key: String?
    /// Whether smaller values come first.
    public let ascending: Bool

    /// A descriptor ordering by `key`.
    public init(key: String?, ascending: Bool) {
        self.key = key
        self.ascending = ascending
    }
}
