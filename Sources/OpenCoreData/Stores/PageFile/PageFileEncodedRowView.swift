// A scanned row as the compiled predicate reads it, still in its encoded bytes: an
// attribute slot is decoded when the predicate reads it, so a scan decodes in full only
// the rows it returns. Anything else (relationships, reads by key) goes through a
// `StoreRowView` of the fully decoded row, so results are the evaluator's on every path.
import Foundation

/// One reusable record per scan: ``reset(bytes:primaryKey:)`` points it at the next row.
final class PageFileEncodedRowView: KeyValueSlotReadable {
    private let entity: NSEntityDescription
    private let layout: EntityLayout
    private let codec: PageFileRowCodec
    /// The full row, for the reads this view does not answer from the bytes.
    private let decodeRow: (UnsafeRawBufferPointer, Int64) throws -> StoreRow
    private let makeView: (StoreRow) -> StoreRowView
    /// Valid only while the scan's callback for this row runs.
    private var bytes = UnsafeRawBufferPointer(start: nil, count: 0)
    private var primaryKey: Int64 = 0
    private var offsets: [Int] = []
    private var fullView: StoreRowView?
    /// The first error reading this row: readValue cannot throw, so the scan rethrows it.
    private(set) var failure: Error?

    init(
        entity: NSEntityDescription, codec: PageFileRowCodec,
        decodeRow: @escaping (UnsafeRawBufferPointer, Int64) throws -> StoreRow,
        makeView: @escaping (StoreRow) -> StoreRowView
    ) {
        self.entity = entity
        self.layout = entity.layout
        self.codec = codec
        self.decodeRow = decodeRow
        self.makeView = makeView
    }

    /// Points the view at the row `bytes` of `primaryKey`, checking its structure.
    ///
    /// - Throws: `NSFileReadCorruptFileError` when the row's structure is damaged.
    func reset(bytes: UnsafeRawBufferPointer, primaryKey: Int64) throws {
        self.bytes = bytes
        self.primaryKey = primaryKey
        fullView = nil
        failure = nil
        try PageFileRowCodec.slotOffsets(bytes, into: &offsets)
    }

    var keyValueSchema: any KeyValueSchema { layout }

    func readValue(atSlot slot: Int) -> Any? {
        guard slot < layout.attributeBySlot.count, let attribute = layout.attributeBySlot[slot] else {
            return view()?.readValue(atSlot: slot)
        }
        // A row written before the entity gained this attribute holds no slot for it: null.
        guard slot < offsets.count else { return nil }
        do {
            return attribute.attributeValue(try codec.decodeValue(bytes, at: offsets[slot], declaredEntity: nil))
        } catch {
            if failure == nil { failure = error }
            return nil
        }
    }

    func readValue(forKey key: String) throws -> Any? {
        guard let view = view() else {
            if let failure { throw failure }
            return nil
        }
        return try view.readValue(forKey: key)
    }

    private func view() -> StoreRowView? {
        if let fullView { return fullView }
        do {
            let view = makeView(try decodeRow(bytes, primaryKey))
            fullView = view
            return view
        } catch {
            if failure == nil { failure = error }
            return nil
        }
    }

    /// Whether `predicate` reads rows only through what this view answers as a
    /// `StoreRowView` would: key paths from the entity's properties, constants, variables
    /// and functions of them. `SELF`, subqueries, blocks and selectors see the record
    /// itself, so predicates using them take the decoded path.
    static func canEvaluate(_ predicate: NSPredicate, layout: EntityLayout) -> Bool {
        guard predicate.depth <= PredicateCompiler.maximumDepth else { return false }
        return accepts(predicate, layout: layout)
    }

    private static func accepts(_ predicate: NSPredicate, layout: EntityLayout) -> Bool {
        if let comparison = predicate as? NSComparisonPredicate {
            return comparison.predicateOperatorType != .customSelector
                && accepts(comparison.leftExpression, layout: layout)
                && accepts(comparison.rightExpression, layout: layout)
        }
        if let compound = predicate as? NSCompoundPredicate {
            return compound.subpredicates.allSatisfy { accepts($0, layout: layout) }
        }
        switch predicate.content {
        case .value: return true
        case .parsed(let tree): return accepts(tree, layout: layout)
        case .block, .invalid, .subclass: return false
        }
    }

    private static func accepts(_ expression: NSExpression, layout: EntityLayout) -> Bool {
        switch expression.node {
        case .constant, .variable: return true
        case .keyPath(let path):
            guard let first = path.split(separator: ".", maxSplits: 1).first, !first.hasPrefix("@") else {
                return false
            }
            return layout.slotsByName[String(first)] != nil
        case .member(let base, _): return accepts(base, layout: layout)
        case .function(_, let arguments), .aggregate(let arguments):
            return arguments.allSatisfy { accepts($0, layout: layout) }
        case .index(let base, let specifier):
            if case .expression(let position) = specifier, !accepts(position, layout: layout) { return false }
            return accepts(base, layout: layout)
        case .union(let left, let right), .intersect(let left, let right), .minus(let left, let right):
            return accepts(left, layout: layout) && accepts(right, layout: layout)
        case .conditional(let condition, let yes, let no):
            return accepts(condition, layout: layout) && accepts(yes, layout: layout) && accepts(no, layout: layout)
        case .evaluatedObject, .selector, .subquery, .anyKey, .block, .invalid: return false
        }
    }
}
