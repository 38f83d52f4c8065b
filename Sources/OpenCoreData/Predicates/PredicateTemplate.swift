// A predicate format parsed once, its placeholders left open. An app builds its
// predicates from a few format strings with new arguments per call (`NSPredicate(format:
// "id == %lld", id)`): the format's tree is parsed once with a marker for each
// placeholder (a variable named `%0`, `%1`, ..., which no format can spell), and each call
// binds its arguments into that tree, copying only the nodes above a placeholder.
//
// Binding gives exactly the tree a parse with the same arguments gives, because:
//   1. each argument becomes its expression through the parser's own `boundPlaceholder`;
//   2. an aggregate around a placeholder folds into a constant array as the parser folds
//      one (`PredicateParser.aggregate`), with the bound elements;
//   3. the parser refuses to build a template where it shapes the tree by an argument's
//      value (`-%d`, `%K.key`, `CAST(%@, ...)`, `FUNCTION(x, %@)`);
//   4. a call the template cannot bind exactly is parsed instead: fewer arguments than
//      placeholders, an argument its placeholder refuses (the parse reports the error), or
//      an `NSExpression` argument to `%@` (it may nest deeper than the bound allows).
import Foundation

/// A parsed predicate format whose placeholders are bound per call.
struct PredicateTemplate: Sendable {
    /// One placeholder of the format, by argument ordinal.
    struct Placeholder: Sendable, Equatable {
        /// The letters after `%`: `@`, `K`, `d`, `lld`, `f`, ...
        let letters: String
        /// Its character offset in the format.
        let position: Int
    }

    /// Thrown while building a template where a placeholder's argument shapes the tree.
    struct Refusal: Error {}

    /// The parsed tree, a marker variable where each placeholder stands.
    let tree: NSPredicate
    /// The placeholders, the first argument's first.
    let placeholders: [Placeholder]
    /// The marker variable names, by ordinal.
    private let markerNames: [String]

    init(tree: NSPredicate, placeholders: [Placeholder]) {
        self.tree = tree
        self.placeholders = placeholders
        markerNames = placeholders.indices.map(Self.markerName)
    }

    /// The name of the marker variable standing for argument `ordinal`.
    static func markerName(_ ordinal: Int) -> String { "%\(ordinal)" }

    /// Whether `expression` is a placeholder's marker.
    static func isMarker(_ expression: NSExpression) -> Bool {
        if case .variable(let name) = expression.node { return name.utf8.first == UInt8(ascii: "%") }
        return false
    }

    /// The tree with `arguments` bound, as a parse of the format with them gives it; nil
    /// when the call must be parsed instead (see the rules at the top of this file).
    func bind(_ arguments: [Any]) -> NSPredicate? { binding(of: arguments)?.tree }

    /// The tree with `arguments` bound and what it was bound from (its template and the
    /// expression each placeholder became); nil when the call must be parsed instead.
    func binding(of arguments: [Any]) -> (tree: NSPredicate, binding: PredicateBinding)? {
        guard arguments.count >= placeholders.count else { return nil }
        if placeholders.isEmpty { return (tree, PredicateBinding(template: self, arguments: [])) }
        var bound: [NSExpression] = []
        bound.reserveCapacity(placeholders.count)
        for (ordinal, placeholder) in placeholders.enumerated() {
            let argument = unwrapOptional(arguments[ordinal])
            if placeholder.letters == "@", PredicateParser.expressionArgument(argument) != nil { return nil }
            guard
                let expression = try? PredicateParser.boundPlaceholder(
                    placeholder.letters, argument, at: placeholder.position)
            else { return nil }
            bound.append(expression)
        }
        let names = markerNames
        let substitution = PredicateSubstitution(
            replacement: { name in names.firstIndex(of: name).map { bound[$0] } }, foldsAggregates: true)
        return (substitution.substitute(tree, bound: []), PredicateBinding(template: self, arguments: bound))
    }
}

/// What a format predicate was bound from: its cached template and the expression each
/// placeholder became. The predicate holds it, so the template's tree lives as long as the
/// predicate does and its identity names the predicate's shape: a store may key what it
/// derives from the shape alone (a query plan) by it (PageFilePlanCache.swift).
struct PredicateBinding: Sendable {
    /// The template the predicate was bound from.
    let template: PredicateTemplate
    /// The expression that replaced each placeholder's marker, by argument ordinal.
    let arguments: [NSExpression]
}
