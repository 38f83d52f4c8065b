// Equality and hashing of predicates and expressions: structural, with constants
// compared by value (30 == 30.0, as the evaluator compares them). A compound of one
// subpredicate equals that subpredicate, and an empty AND/OR equals TRUE/FALSEPREDICATE,
// because that is how predicateFormat prints and re-parses them.
import Foundation

/// Structural equality of predicate trees.
enum PredicateEquality {
    /// The canonical form: a format predicate's tree, single-operand compounds unwrapped.
    static func normalize(_ predicate: NSPredicate) -> NSPredicate {
        let resolved = predicate.resolved
        if let compound = resolved as? NSCompoundPredicate, compound.compoundPredicateType != .not {
            if compound.subpredicates.count == 1 { return normalize(compound.subpredicates[0]) }
            if compound.subpredicates.isEmpty { return NSPredicate(value: compound.compoundPredicateType == .and) }
        }
        return resolved
    }

    static func equal(_ first: NSPredicate, _ second: NSPredicate) -> Bool {
        if first.depth > PredicateCompiler.maximumDepth || second.depth > PredicateCompiler.maximumDepth {
            return first === second
        }
        let a = normalize(first)
        let b = normalize(second)
        if a === b { return true }
        if let a = a as? NSComparisonPredicate {
            guard let b = b as? NSComparisonPredicate else { return false }
            return a.comparisonPredicateModifier == b.comparisonPredicateModifier
                && a.predicateOperatorType == b.predicateOperatorType && a.options == b.options
                && equal(a.leftExpression, b.leftExpression) && equal(a.rightExpression, b.rightExpression)
        }
        if let a = a as? NSCompoundPredicate {
            guard let b = b as? NSCompoundPredicate else { return false }
            return a.compoundPredicateType == b.compoundPredicateType && a.subpredicates.count == b.subpredicates.count
                && zip(a.subpredicates, b.subpredicates).allSatisfy { equal($0, $1) }
        }
        switch (a.content, b.content) {
        case (.value(let x), .value(let y)): return x == y
        case (.invalid(let x, let xFormat), .invalid(let y, let yFormat)): return x == y && xFormat == yFormat
        default: return false
        }
    }

    static func equal(_ a: NSExpression, _ b: NSExpression) -> Bool {
        if a === b { return true }
        if a.depth > PredicateCompiler.maximumDepth || b.depth > PredicateCompiler.maximumDepth { return false }
        switch (a.node, b.node) {
        case (.constant(let x), .constant(let y)):
            return PredicateValue(x).isEqual(to: PredicateValue(y), options: StringComparisonOptions([]))
        case (.evaluatedObject, .evaluatedObject), (.anyKey, .anyKey): return true
        case (.variable(let x), .variable(let y)): return x == y
        case (.keyPath(let x), .keyPath(let y)): return x == y
        case (.member(let x, let xPath), .member(let y, let yPath)): return xPath == yPath && equal(x, y)
        case (.function(let x, let xArguments), .function(let y, let yArguments)):
            return x == y && equal(xArguments, yArguments)
        case (.selector(let x, let xName, let xArguments), .selector(let y, let yName, let yArguments)):
            return xName == yName && equal(x, y) && equal(xArguments, yArguments)
        case (.index(let x, let xIndex), .index(let y, let yIndex)):
            guard equal(x, y) else { return false }
            switch (xIndex, yIndex) {
            case (.first, .first), (.last, .last), (.size, .size): return true
            case (.expression(let i), .expression(let j)): return equal(i, j)
            default: return false
            }
        case (.aggregate(let x), .aggregate(let y)): return equal(x, y)
        case (.subquery(let x, let xName, let xPredicate), .subquery(let y, let yName, let yPredicate)):
            return xName == yName && equal(x, y) && equal(xPredicate, yPredicate)
        case (.union(let x1, let x2), .union(let y1, let y2)), (.intersect(let x1, let x2), .intersect(let y1, let y2)),
            (.minus(let x1, let x2), .minus(let y1, let y2)):
            return equal(x1, y1) && equal(x2, y2)
        case (.conditional(let x, let x1, let x2), .conditional(let y, let y1, let y2)):
            return equal(x, y) && equal(x1, y1) && equal(x2, y2)
        case (.invalid(let x), .invalid(let y)): return x == y
        default: return false
        }
    }

    private static func equal(_ a: [NSExpression], _ b: [NSExpression]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { equal($0, $1) }
    }

    /// `NSPredicate.hash`, consistent with `equal`.
    static func hashValue(_ predicate: NSPredicate) -> Int {
        var hasher = Hasher()
        hash(predicate, into: &hasher)
        return hasher.finalize()
    }

    /// `NSExpression.hash`, consistent with `equal`.
    static func hashValue(_ expression: NSExpression) -> Int {
        var hasher = Hasher()
        hash(expression, into: &hasher)
        return hasher.finalize()
    }

    static func hash(_ predicate: NSPredicate, into hasher: inout Hasher) {
        guard predicate.depth <= PredicateCompiler.maximumDepth else {
            hasher.combine(ObjectIdentifier(predicate))
            return
        }
        let p = normalize(predicate)
        if let comparison = p as? NSComparisonPredicate {
            hasher.combine(1)
            hasher.combine(comparison.predicateOperatorType.rawValue)
            hasher.combine(comparison.comparisonPredicateModifier.rawValue)
            hasher.combine(comparison.options.rawValue)
            hash(comparison.leftExpression, into: &hasher)
            hash(comparison.rightExpression, into: &hasher)
        } else if let compound = p as? NSCompoundPredicate {
            hasher.combine(2)
            hasher.combine(compound.compoundPredicateType.rawValue)
            for subpredicate in compound.subpredicates { hash(subpredicate, into: &hasher) }
        } else {
            switch p.content {
            case .value(let value): hasher.combine(value)
            case .invalid(_, let format): hasher.combine(format)
            default: hasher.combine(ObjectIdentifier(p))
            }
        }
    }

    static func hash(_ expression: NSExpression, into hasher: inout Hasher) {
        guard expression.depth <= PredicateCompiler.maximumDepth else {
            hasher.combine(ObjectIdentifier(expression))
            return
        }
        hasher.combine(expression.expressionType.rawValue)
        switch expression.node {
        case .constant(let value):
            switch PredicateValue(value) {
            case .string(let text): hasher.combine(text)
            case .date(let date): hasher.combine(date)
            case let number where number.isNumber: hasher.combine(number.doubleValue)
            default: break
            }
        case .variable(let name), .keyPath(let name): hasher.combine(name)
        case .member(let base, let path):
            hasher.combine(path)
            hash(base, into: &hasher)
        case .function(let name, let arguments):
            hasher.combine(name)
            for argument in arguments { hash(argument, into: &hasher) }
        case .subquery(let collection, let name, let predicate):
            hasher.combine(name)
            hash(collection, into: &hasher)
            hash(predicate, into: &hasher)
        default: break
        }
    }
}
