// The commonest scan predicates — AND, OR and NOT of `attribute op constant` — run
// straight on a row's encoded bytes: comparisons, BETWEEN and IN of integers, booleans,
// numbers and dates, and ==, !=, BEGINSWITH, ENDSWITH, CONTAINS and LIKE of strings,
// read the slot's bytes (`PageFileEncodedClause`) without boxing a value in `Any`; any
// other clause, or a value those tests do not read, decodes its one slot and runs the
// operator's prepared test, the very closure the compiled predicate runs. So the answer
// (and any error) is the compiled predicate's, clause by clause and in the same order.
import Foundation

/// A predicate compiled for the encoded rows of one entity.
struct PageFileEncodedPredicate {
    private indirect enum Node {
        case constant(Bool)
        case not(Node)
        case all([Node])
        case any([Node])
        case clause(Clause)
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

    /// `predicate` for rows of `layout`; nil when it has a part this form does not cover
    /// (relationships, key paths, functions, non-constant right sides, modifiers).
    init?(_ predicate: NSPredicate, layout: EntityLayout) {
        guard predicate.depth <= PredicateCompiler.maximumDepth,
            let root = Self.node(predicate, layout: layout)
        else { return nil }
        self.root = root
    }

    private static func node(_ predicate: NSPredicate, layout: EntityLayout) -> Node? {
        if let comparison = predicate as? NSComparisonPredicate { return clause(comparison, layout: layout) }
        if let compound = predicate as? NSCompoundPredicate {
            var nodes: [Node] = []
            for subpredicate in compound.subpredicates {
                guard let node = node(subpredicate, layout: layout) else { return nil }
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
        case .parsed(let tree): return node(tree, layout: layout)
        case .block, .invalid, .subclass: return nil
        }
    }

    private static func clause(_ comparison: NSComparisonPredicate, layout: EntityLayout) -> Node? {
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
        let encoded = PageFileEncodedClause(attribute: attribute, operation: operation, constant: constant)
        return .clause(Clause(slot: slot, attribute: attribute, test: test, encoded: encoded))
    }

    /// Whether the row `bytes`, whose slots start at `offsets`, matches.
    ///
    /// - Throws: the predicate's evaluation error; `NSFileReadCorruptFileError` for a damaged value.
    func evaluate(_ bytes: UnsafeRawBufferPointer, offsets: [Int], codec: PageFileRowCodec) throws -> Bool {
        try evaluate(root, bytes, offsets, codec)
    }

    private func evaluate(_ node: Node, _ bytes: UnsafeRawBufferPointer, _ offsets: [Int], _ codec: PageFileRowCodec)
        throws -> Bool
    {
        switch node {
        case .constant(let value): return value
        case .not(let operand): return try !evaluate(operand, bytes, offsets, codec)
        case .all(let operands):
            for operand in operands where try !evaluate(operand, bytes, offsets, codec) { return false }
            return true
        case .any(let operands):
            for operand in operands where try evaluate(operand, bytes, offsets, codec) { return true }
            return false
        case .clause(let clause):
            // A row written before the entity gained this attribute holds no slot for it: nil.
            guard clause.slot < offsets.count else { return try clause.test(nil) }
            let offset = offsets[clause.slot]
            if let found = clause.encoded?.evaluate(bytes, at: offset) { return found }
            let value = try codec.decodeValue(bytes, at: offset, declaredEntity: nil)
            return try clause.test(clause.attribute.attributeValue(value))
        }
    }
}
