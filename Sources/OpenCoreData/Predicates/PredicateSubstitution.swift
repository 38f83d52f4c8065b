// Rebuilding predicate and expression trees with `$VARIABLE`s replaced: what
// `withSubstitutionVariables(_:)` does, and how a cached format template binds a call's
// arguments (its placeholders are markers in variable form, PredicateTemplate.swift).
// Trees are immutable, so a subtree without a replaced variable is kept, not copied.
import Foundation

/// Replaces variables in predicate and expression trees.
struct PredicateSubstitution {
    /// The expression that replaces the variable named so, or nil to keep it.
    let replacement: (String) -> NSExpression?
    /// Whether an aggregate rebuilt around a replaced variable becomes a constant array
    /// when its elements are constants, as the parser makes `{1, 2}` one.
    let foldsAggregates: Bool

    /// `predicate` with every `$VARIABLE` in `variables` replaced by its value:
    /// `withSubstitutionVariables(_:)`.
    static func substitute(_ predicate: NSPredicate, _ variables: [String: Any]) -> NSPredicate {
        let substitution = PredicateSubstitution(
            replacement: { name in variables[name].map(NSExpression.wrap) }, foldsAggregates: false)
        return substitution.substitute(predicate, bound: [])
    }

    /// `predicate` with its variables replaced, except the names in `bound` (SUBQUERY
    /// iteration variables in scope).
    func substitute(_ predicate: NSPredicate, bound: Set<String>) -> NSPredicate {
        // A tree too tall to evaluate stays as it is; evaluating it reports the nesting error.
        guard predicate.depth <= PredicateCompiler.maximumDepth else { return predicate }
        if let comparison = predicate as? NSComparisonPredicate {
            let left = substitute(comparison.leftExpression, bound: bound)
            let right = substitute(comparison.rightExpression, bound: bound)
            if left === comparison.leftExpression && right === comparison.rightExpression { return predicate }
            return NSComparisonPredicate(
                leftExpression: left, rightExpression: right, modifier: comparison.comparisonPredicateModifier,
                type: comparison.predicateOperatorType, options: comparison.options)
        }
        if let compound = predicate as? NSCompoundPredicate {
            let subpredicates = compound.subpredicates.map { substitute($0, bound: bound) }
            if Self.same(subpredicates, compound.subpredicates) { return predicate }
            return NSCompoundPredicate(type: compound.compoundPredicateType, subpredicates: subpredicates)
        }
        if case .parsed(let tree) = predicate.content {
            let substituted = substitute(tree, bound: bound)
            return substituted === tree ? predicate : NSPredicate(content: .parsed(substituted))
        }
        return predicate
    }

    /// `expression` with its variables replaced, except the names in `bound`.
    func substitute(_ expression: NSExpression, bound: Set<String>) -> NSExpression {
        func recurse(_ inner: NSExpression) -> NSExpression { substitute(inner, bound: bound) }
        func all(_ list: [NSExpression]) -> [NSExpression]? {
            let substituted = list.map(recurse)
            return Self.same(substituted, list) ? nil : substituted
        }
        func rebuilt(_ node: NSExpression.Node) -> NSExpression { NSExpression(node: node) }
        switch expression.node {
        case .variable(let name):
            guard !bound.contains(name), let value = replacement(name) else { return expression }
            return value
        case .member(let base, let path):
            let newBase = recurse(base)
            return newBase === base ? expression : rebuilt(.member(newBase, path))
        case .function(let name, let arguments):
            guard let newArguments = all(arguments) else { return expression }
            return rebuilt(.function(name, newArguments))
        case .selector(let target, let name, let arguments):
            let newTarget = recurse(target)
            let newArguments = all(arguments)
            if newTarget === target && newArguments == nil { return expression }
            return rebuilt(.selector(newTarget, name, newArguments ?? arguments))
        case .index(let base, .expression(let index)):
            let newBase = recurse(base)
            let newIndex = recurse(index)
            if newBase === base && newIndex === index { return expression }
            return rebuilt(.index(newBase, .expression(newIndex)))
        case .index(let base, let specifier):
            let newBase = recurse(base)
            return newBase === base ? expression : rebuilt(.index(newBase, specifier))
        case .aggregate(let elements):
            guard let newElements = all(elements) else { return expression }
            return foldsAggregates ? PredicateParser.aggregate(newElements) : rebuilt(.aggregate(newElements))
        case .subquery(let collection, let name, let predicate):
            let newCollection = recurse(collection)
            let newPredicate = substitute(predicate, bound: bound.union([name]))
            if newCollection === collection && newPredicate === predicate { return expression }
            return rebuilt(.subquery(newCollection, name, newPredicate))
        case .union(let left, let right), .intersect(let left, let right), .minus(let left, let right):
            let newLeft = recurse(left)
            let newRight = recurse(right)
            if newLeft === left && newRight === right { return expression }
            switch expression.node {
            case .union: return rebuilt(.union(newLeft, newRight))
            case .intersect: return rebuilt(.intersect(newLeft, newRight))
            default: return rebuilt(.minus(newLeft, newRight))
            }
        case .conditional(let predicate, let yes, let no):
            let newPredicate = substitute(predicate, bound: bound)
            let newYes = recurse(yes)
            let newNo = recurse(no)
            if newPredicate === predicate && newYes === yes && newNo === no { return expression }
            return rebuilt(.conditional(newPredicate, newYes, newNo))
        case .block(let block, let arguments):
            guard let newArguments = all(arguments) else { return expression }
            return rebuilt(.block(block, newArguments))
        default: return expression
        }
    }

    /// Whether two lists hold the same instances, in order.
    private static func same<Element: AnyObject>(_ first: [Element], _ second: [Element]) -> Bool {
        first.count == second.count && zip(first, second).allSatisfy { $0 === $1 }
    }
}
