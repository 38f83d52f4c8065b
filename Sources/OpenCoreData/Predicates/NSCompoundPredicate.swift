// NSCompoundPredicate: AND, OR and NOT over subpredicates.
import Foundation

/// A predicate combining others with AND, OR or NOT.
///
/// ```swift
/// let both = NSCompoundPredicate(andPredicateWithSubpredicates: [
///     NSPredicate(format: "age > %d", 18), NSPredicate(format: "isActive == YES"),
/// ])
/// ```
open class NSCompoundPredicate: NSPredicate, @unchecked Sendable {
    /// The logical connective, with Foundation's raw values.
    public enum LogicalType: UInt, Sendable {
        /// Negates its single subpredicate.
        case not = 0
        /// True when all subpredicates are (true for none).
        case and = 1
        /// True when any subpredicate is (false for none).
        case or = 2
    }

    /// The connective.
    public let compoundPredicateType: LogicalType
    /// The combined predicates.
    public let subpredicates: [NSPredicate]

    /// Combines `subpredicates` with `type`; NOT uses the first subpredicate.
    public init(type: LogicalType, subpredicates: [NSPredicate]) {
        compoundPredicateType = type
        self.subpredicates = subpredicates
        super.init(content: .subclass, depth: 1 + (subpredicates.map(\.depth).max() ?? 0))
    }

    /// True when every subpredicate is true.
    public convenience init(andPredicateWithSubpredicates subpredicates: [NSPredicate]) {
        self.init(type: .and, subpredicates: subpredicates)
    }

    /// True when any subpredicate is true.
    public convenience init(orPredicateWithSubpredicates subpredicates: [NSPredicate]) {
        self.init(type: .or, subpredicates: subpredicates)
    }

    /// True when `predicate` is false.
    public convenience init(notPredicateWithSubpredicate predicate: NSPredicate) {
        self.init(type: .not, subpredicates: [predicate])
    }
}
