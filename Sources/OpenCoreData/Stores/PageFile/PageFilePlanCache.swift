// Query plans by predicate shape. An app fetches with a few format strings and new
// arguments per call (`NSPredicate(format: "id == %lld", id)`); each predicate a cached
// template bound (PredicateTemplate.swift) holds that template, so the template's tree
// names the predicate's shape. What the planner derives from the shape alone is kept per
// entity (the catalog's EntityInfo: one model, one set of indexes) under the template's
// identity, and a fetch rebuilds its index ranges from its bound constants only:
//
//   1. the recipe is made from the template's tree: each AND conjunct resolved as the
//      planner resolves it in a bound tree (PageFileQueryPlanner.resolve), a placeholder's
//      marker counting as the constant bound in its place;
//   2. a template is not planned from its recipe when an argument could change a
//      conjunct's shape: a `%K` placeholder (a key path, not a constant), or a marker
//      anywhere but as a whole side of a comparison (inside an aggregate, a function);
//   3. the entry holds the template's tree, so its identity is never reused by another
//      template while the entry lives, and a predicate holds its template while it lives;
//   4. the terms, exactness and index choice are computed per fetch from the bound
//      constants by the planner's own code, so a recipe's plan is the tree's plan.
//
// Bounded: emptied when full.
import Foundation
import Synchronization

/// What the planner derives from one predicate template's shape for one entity.
struct PageFilePlanRecipe: @unchecked Sendable {
    /// Where a conjunct's constant comes from.
    enum Constant {
        /// The expression bound for the argument of this ordinal.
        case argument(Int)
        /// A constant written in the format.
        case literal(NSExpression)
    }

    /// One AND conjunct of the template.
    enum Conjunct {
        /// A comparison of no indexable attribute, whatever its arguments.
        case unsargable
        /// A comparison of an indexable attribute with the constant `constant` gives.
        case sargable(PageFileQueryPlanner.ResolvedComparison, Constant)
    }

    /// The template's tree, held so its identity names this recipe's template alone.
    let template: NSPredicate
    /// The entity layout the conjuncts were resolved in (slots): a model not yet frozen
    /// makes a new one per use, and a recipe is used only with its own.
    let layout: EntityLayout
    /// The template's conjuncts; nil when the template's plan is made from each bound tree
    /// (rule 2 above).
    let conjuncts: [Conjunct]?

    /// The recipe of `template` over `layout`.
    init(_ template: PredicateTemplate, layout: EntityLayout) {
        self.template = template.tree
        self.layout = layout
        conjuncts = Self.conjuncts(of: template, layout: layout)
    }

    private static func conjuncts(of template: PredicateTemplate, layout: EntityLayout) -> [Conjunct]? {
        if template.placeholders.contains(where: { $0.letters == "K" }) { return nil }
        var conjuncts: [Conjunct] = []
        var pending = [template.tree]
        // In the order the planner flattens a bound tree: depth first, left to right.
        while let node = pending.popLast() {
            if case .parsed = node.content { return nil }
            if let compound = node as? NSCompoundPredicate, compound.compoundPredicateType == .and {
                pending.append(contentsOf: compound.subpredicates.reversed())
                continue
            }
            let resolved = PageFileQueryPlanner.resolve(node, layout: layout) {
                PageFileQueryPlanner.isConstant($0) || PredicateTemplate.isMarker($0)
            }
            // No argument makes such a conjunct a term: a marker is a constant in any bound
            // tree, and the resolution looked at nothing else an argument changes.
            guard let resolved else {
                conjuncts.append(.unsargable)
                continue
            }
            switch resolved.constant.node {
            case .constant:
                conjuncts.append(.sargable(resolved, .literal(resolved.constant)))
            case .variable(let name) where PredicateTemplate.isMarker(resolved.constant):
                guard let ordinal = Int(name.dropFirst()) else { return nil }
                conjuncts.append(.sargable(resolved, .argument(ordinal)))
            case .aggregate(let elements):
                // Binding folds an aggregate around a marker into a constant array.
                guard elements.allSatisfy(PageFileQueryPlanner.isConstant) else { return nil }
                conjuncts.append(.sargable(resolved, .literal(resolved.constant)))
            default:
                // Binding keeps the node's kind (a function, a key path, a `$VARIABLE`), which
                // the planner takes for no constant; a marker inside it may not stay one.
                guard !mayHoldMarker(resolved.constant) else { return nil }
                conjuncts.append(.unsargable)
            }
        }
        return conjuncts
    }

    /// Whether `expression` may hold a placeholder's marker: anything but a key path or a
    /// `$VARIABLE` (a marker's name starts with `%`, which no format can spell) may.
    private static func mayHoldMarker(_ expression: NSExpression) -> Bool {
        switch expression.node {
        case .keyPath: false
        case .variable: PredicateTemplate.isMarker(expression)
        default: true
        }
    }
}

/// The plan recipes of one entity's predicate templates (see the rules at the top).
final class PageFilePlanCache: Sendable {
    private let recipes = Mutex<[ObjectIdentifier: PageFilePlanRecipe]>([:])
    /// Templates kept at most per entity.
    static let limit = 64

    /// The recipe of `template` over `layout` (the entity's), made on first use.
    func recipe(for template: PredicateTemplate, layout: EntityLayout) -> PageFilePlanRecipe {
        let key = ObjectIdentifier(template.tree)
        if let cached = recipes.withLock({ $0[key] }), cached.template === template.tree, cached.layout === layout {
            return cached
        }
        let recipe = PageFilePlanRecipe(template, layout: layout)
        recipes.withLock { recipes in
            if recipes.count >= Self.limit { recipes.removeAll(keepingCapacity: true) }
            recipes[key] = recipe
        }
        return recipe
    }

    /// The number of recipes kept (for tests).
    var count: Int { recipes.withLock { $0.count } }
}
