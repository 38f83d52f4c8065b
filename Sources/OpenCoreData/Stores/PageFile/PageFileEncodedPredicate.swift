// The commonest scan predicates — AND, OR and NOT of `attribute op constant` — run
// straight on a row's encoded bytes: comparisons, BETWEEN and IN of integers, booleans,
// numbers and dates, and ==, !=, BEGINSWITH, ENDSWITH, CONTAINS and LIKE of strings,
// read the slot's bytes (`PageFileEncodedClause`) without boxing a value in `Any`; any
// other clause, or a value those tests do not read, decodes its one slot and runs the
// operator's prepared test, the very closure the compiled predicate runs. So the answer
// (and any error) is the compiled predicate's, clause by clause and in the same order.
import Foundation

/// A predicate compiled for the encoded rows of one entity: a class, so a scan that reaches
/// it once per row copies one reference, not its node tree and clause table.
final class PageFileEncodedPredicate {
    private indirect enum Node {
        case constant(Bool)
        case not(Node)
        case all([Node])
        case any([Node])
        /// The clause at this position of `clauses`: an index, so evaluating a row copies
        /// (and retains) none of the clause's closures or tables.
        case clause(Int)
    }

    /// `attribute op constant`.
    private struct Clause {
        let slot: Int
        let attribute: NSAttributeDescription
        /// The operator's prepared test of the attribute's value (`ComparisonOperation.prepared`).
        let test: (Any?) throws -> Bool
        /// The form of `test` on the slot's encoded bytes, when the shape has one.
        let encoded: PageFileEncodedClause?
    }

    private let root: Node
    private let clauses: [Clause]
    /// The tables the clauses' encoded tests reach unretained.
    private let keepers: [AnyObject]
    /// The one clause when the predicate is a single clause (the commonest scan), tested
    /// without walking the tree.
    private let onlyClause: Int?
    /// The highest slot any clause reads (-1 for none): a scan walks each row's slots only
    /// this far (SPEC.md §3.5 Q3a).
    let lastSlot: Int
    /// The string test of the one clause, when the predicate is a single string clause with
    /// an encoded test (`firstName CONTAINS[c] %@`): a scan asks it directly
    /// (``evaluateOnlyString(_:)``). Reached unretained: `keepers` holds it.
    private let onlyString: Unmanaged<PageFileEncodedStringClause>?

    /// `predicate` for rows of `layout`; nil when it has a part this form does not cover
    /// (relationships, key paths, functions, non-constant right sides, modifiers).
    init?(_ predicate: NSPredicate, layout: EntityLayout) {
        var clauses: [Clause] = []
        var keepers: [AnyObject] = []
        guard predicate.depth <= PredicateCompiler.maximumDepth,
            let root = Self.node(predicate, layout: layout, clauses: &clauses, keepers: &keepers)
        else { return nil }
        self.root = root
        self.clauses = clauses
        self.keepers = keepers
        if case .clause(let index) = root { onlyClause = index } else { onlyClause = nil }
        lastSlot = clauses.map(\.slot).max() ?? -1
        onlyString = onlyClause.flatMap { clauses[$0].encoded?.stringTest }
    }

    private static func node(
        _ predicate: NSPredicate, layout: EntityLayout, clauses: inout [Clause], keepers: inout [AnyObject]
    ) -> Node? {
        if let comparison = predicate as? NSComparisonPredicate {
            guard let found = clause(comparison, layout: layout, keepers: &keepers) else { return nil }
            clauses.append(found)
            return .clause(clauses.count - 1)
        }
        if let compound = predicate as? NSCompoundPredicate {
            var nodes: [Node] = []
            for subpredicate in compound.subpredicates {
                guard let node = node(subpredicate, layout: layout, clauses: &clauses, keepers: &keepers) else {
                    return nil
                }
                nodes.append(node)
            }
            switch compound.compoundPredicateType {
            case .not: return nodes.first.map { .not($0) }
            case .and: return .all(nodes)
            case .or: return .any(nodes)
            }
        }
        switch predicate.content {
        case .value(let value): return .constant(value)
        case .parsed(let tree): return node(tree, layout: layout, clauses: &clauses, keepers: &keepers)
        case .block, .invalid, .subclass: return nil
        }
    }

    private static func clause(_ comparison: NSComparisonPredicate, layout: EntityLayout, keepers: inout [AnyObject])
        -> Clause?
    {
        guard comparison.comparisonPredicateModifier == .direct,
            comparison.predicateOperatorType != .customSelector,
            case .keyPath(let key) = comparison.leftExpression.node,
            case .constant(let constant) = comparison.rightExpression.node,
            let slot = layout.slotsByName[key], slot < layout.attributeBySlot.count,
            let attribute = layout.attributeBySlot[slot]
        else { return nil }
        let operation = ComparisonOperation(
            type: comparison.predicateOperatorType, options: comparison.options)
        guard let test = try? operation.prepared(right: constant) else { return nil }
        let encoded = PageFileEncodedClause(
            attribute: attribute, operation: operation, constant: constant, keepers: &keepers)
        return Clause(slot: slot, attribute: attribute, test: test, encoded: encoded)
    }

    /// Whether the row `bytes`, whose slots start at `offsets`, matches.
    ///
    /// - Throws: the predicate's evaluation error; `NSFileReadCorruptFileError` for a damaged value.
    func evaluate(_ bytes: UnsafeRawBufferPointer, offsets: [Int], codec: PageFileRowCodec) throws -> Bool {
        try offsets.withUnsafeBufferPointer { try evaluate(bytes, offsets: $0, codec: codec) }
    }

    /// Whether the row `bytes`, whose slots start at `offsets` (a scan's ``PageFileRowSlots``), matches.
    ///
    /// - Throws: the predicate's evaluation error; `NSFileReadCorruptFileError` for a damaged value.
    @inline(__always)
    func evaluate(_ bytes: UnsafeRawBufferPointer, offsets: UnsafeBufferPointer<Int>, codec: PageFileRowCodec)
        throws -> Bool
    {
        if let onlyClause { return try evaluateClause(onlyClause, bytes, offsets, codec) }
        return try evaluate(root, bytes, offsets, codec)
    }

    /// Whether the predicate is a single string clause, answered by
    /// ``evaluateOnlyString(_:)`` where it can be.
    var isOnlyString: Bool { onlyString != nil }

    /// The answer of a single string clause (``isOnlyString``) for the row `bytes`, straight
    /// from its string test on the row (``PageFileEncodedStringClause/evaluate(row:slot:)``);
    /// nil when the predicate is not one, or the row lacks the slot, stops the quick walk to
    /// it, or holds a value that needs the decoded test.
    @inline(__always)
    func evaluateOnlyString(_ bytes: UnsafeRawBufferPointer) -> Bool? {
        guard let onlyString else { return nil }
        return onlyString._withUnsafeGuaranteedRef { $0.evaluate(row: bytes, slot: lastSlot) }
    }

    /// Whether the row `bytes` matches, for a scan: a lone string clause answers from the
    /// bytes straight (``evaluateOnlyString(_:)``); any other predicate, or a row that
    /// clause leaves open, is walked into `slots` through ``lastSlot`` and evaluated on them.
    ///
    /// - Throws: the predicate's evaluation error; `NSFileReadCorruptFileError` for a damaged row.
    @inline(__always)
    func evaluate(row bytes: UnsafeRawBufferPointer, slots: PageFileRowSlots, codec: PageFileRowCodec) throws -> Bool {
        if let answer = evaluateOnlyString(bytes) { return answer }
        try slots.walk(bytes, through: lastSlot)
        return try evaluate(bytes, offsets: slots.offsets, codec: codec)
    }

    private func evaluate(
        _ node: Node, _ bytes: UnsafeRawBufferPointer, _ offsets: UnsafeBufferPointer<Int>, _ codec: PageFileRowCodec
    ) throws -> Bool {
        switch node {
        case .constant(let value): return value
        case .not(let operand): return try !evaluate(operand, bytes, offsets, codec)
        case .all(let operands):
            for operand in operands where try !evaluate(operand, bytes, offsets, codec) { return false }
            return true
        case .any(let operands):
            for operand in operands where try evaluate(operand, bytes, offsets, codec) { return true }
            return false
        case .clause(let index): return try evaluateClause(index, bytes, offsets, codec)
        }
    }

    @inline(__always)
    private func evaluateClause(
        _ index: Int, _ bytes: UnsafeRawBufferPointer, _ offsets: UnsafeBufferPointer<Int>, _ codec: PageFileRowCodec
    ) throws -> Bool {
        let slot = clauses[index].slot
        // A row written before the entity gained this attribute holds no slot for it: nil.
        guard slot < offsets.count else { return try clauses[index].test(nil) }
        let offset = offsets[slot]
        if let found = clauses[index].encoded?.evaluate(bytes, at: offset) { return found }
        return try decodedTest(index, bytes, offset, codec)
    }

    /// The clause's prepared test on its slot's decoded value: out of line, so the encoded
    /// tests above stay small where every row runs them.
    @inline(never)
    private func decodedTest(_ index: Int, _ bytes: UnsafeRawBufferPointer, _ offset: Int, _ codec: PageFileRowCodec)
        throws -> Bool
    {
        let value = try codec.decodeValue(bytes, at: offset, declaredEntity: nil)
        return try clauses[index].test(clauses[index].attribute.attributeValue(value))
    }
}
