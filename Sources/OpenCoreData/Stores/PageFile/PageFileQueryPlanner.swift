// Query planning (SPEC.md §3.5): the sargable conjuncts of a predicate — `==`, `<`,
// `<=`, `>`, `>=`, BETWEEN, IN, and BEGINSWITH on strings without [c]/[d] — on a prefix
// of an index's elements (attributes or composite elements) become key ranges of that index. The planner only narrows
// the candidates: every candidate row is still checked against the whole predicate by
// the compiled evaluator, so a plan may over-approximate but never miss a row.
import Foundation
import StorageEngine

/// How to find the candidate rows of one entity.
struct PageFilePlan {
    /// The index to scan.
    let index: PageFileIndex
    /// Key ranges `lower <= key < upper` (nil: unbounded) of the index tree, unless the
    /// plan is a list of `points`.
    private let keyRanges: [(lower: [UInt8]?, upper: [UInt8]?)]
    /// The points of an `IN` list (behind an equal prefix of a composite index), in key
    /// order without repeats: each names the index entries whose keys begin with it. Held
    /// in one buffer, not as a pair of key arrays per point.
    let points: KeyPrefixes?
    /// Whether the index entries in `ranges` are exactly the matching rows (every conjunct
    /// used, exact encodings), so a count needs no row.
    let isExact: Bool

    init(index: PageFileIndex, ranges: [(lower: [UInt8]?, upper: [UInt8]?)], isExact: Bool) {
        self.index = index
        keyRanges = ranges
        points = nil
        self.isExact = isExact
    }

    init(index: PageFileIndex, points: KeyPrefixes, isExact: Bool) {
        self.index = index
        keyRanges = []
        self.points = points
        self.isExact = isExact
    }

    /// The key ranges of the index tree the plan reads, `lower <= key < upper` (nil:
    /// unbounded): a point's range is the keys beginning with it.
    var ranges: [(lower: [UInt8]?, upper: [UInt8]?)] {
        guard let points else { return keyRanges }
        return (0..<points.count).map { position in
            let point = points[position]
            return (point, PageFileKey.successor(ofPrefix: point))
        }
    }

    /// Visits the entries of `tree` (the tree of ``index``) in the plan's ranges, or
    /// beginning with its points, in order; stops when `body` returns false.
    func scan(_ tree: Tree, _ body: (_ key: UnsafeRawBufferPointer) throws -> Bool) throws {
        if let points {
            try tree.scan(prefixes: points) { _, key, _ in try body(key) }
        } else {
            try tree.scan(ranges: keyRanges) { _, key, _ in try body(key) }
        }
    }
}

enum PageFileQueryPlanner {
    /// One sargable condition on an attribute or composite element.
    private enum Term {
        /// Equal to one of the points: in key order, without repeats.
        case points(KeyPrefixes)
        case range(lower: [UInt8]?, upper: [UInt8]?)
    }

    private struct SlotTerm {
        let field: StoreKeyField
        let term: Term
        let isExact: Bool
    }

    /// The best plan for `predicate` over the indexes of `info`'s entity, or nil for a full
    /// scan: for a predicate a cached template bound, from the plan recipe of its template
    /// (PageFilePlanCache.swift), else as ``plan(_:layout:indexes:)`` makes it. Both give
    /// the same plan.
    static func plan(_ predicate: NSPredicate?, info: PageFileCatalog.EntityInfo) -> PageFilePlan? {
        guard let predicate else { return nil }
        let layout = info.entity.layout
        if let binding = predicate.binding,
            let plan = plan(
                info.planCache.recipe(for: binding.template, layout: layout), binding: binding, indexes: info.indexes)
        {
            return plan
        }
        return plan(predicate, layout: layout, indexes: info.indexes)
    }

    /// The best plan for `predicate` over `indexes`, or nil for a full scan, made from the
    /// predicate's tree.
    static func plan(_ predicate: NSPredicate?, layout: EntityLayout, indexes: [PageFileIndex]) -> PageFilePlan? {
        guard let predicate, let tree = tree(of: predicate) else { return nil }
        let conjuncts = flatten(tree)
        var terms: [SlotTerm] = []
        var allSargable = true
        for conjunct in conjuncts {
            if let resolved = resolve(conjunct, layout: layout, isConstant: isConstant),
                let term = term(resolved, constant: resolved.constant)
            {
                terms.append(term)
            } else {
                allSargable = false
            }
        }
        return choose(terms, allSargable: allSargable, indexes: indexes)
    }

    /// The plan of `recipe` with the constants of `binding`: the terms ``plan(_:layout:indexes:)``
    /// makes of the bound tree, without walking it. Nil when the recipe cannot tell (the
    /// caller then plans from the tree).
    private static func plan(_ recipe: PageFilePlanRecipe, binding: PredicateBinding, indexes: [PageFileIndex])
        -> PageFilePlan??
    {
        guard let conjuncts = recipe.conjuncts else { return nil }
        var terms: [SlotTerm] = []
        terms.reserveCapacity(conjuncts.count)
        var allSargable = true
        for conjunct in conjuncts {
            guard case .sargable(let resolved, let source) = conjunct else {
                allSargable = false
                continue
            }
            let constant: NSExpression
            switch source {
            case .argument(let ordinal):
                guard ordinal < binding.arguments.count else { return nil }
                constant = binding.arguments[ordinal]
            case .literal(let expression):
                constant = expression
            }
            if let term = term(resolved, constant: constant) {
                terms.append(term)
            } else {
                allSargable = false
            }
        }
        return .some(choose(terms, allSargable: allSargable, indexes: indexes))
    }

    /// The best index plan for `terms` over `indexes` (`allSargable`: every conjunct gave a
    /// term), or nil for a full scan.
    private static func choose(_ terms: [SlotTerm], allSargable: Bool, indexes: [PageFileIndex]) -> PageFilePlan? {
        guard !terms.isEmpty else { return nil }
        var best: (plan: PageFilePlan, score: Int)?
        for index in indexes where !index.isUnique && index.isOrdered {
            var prefix: [UInt8] = []
            var used = 0
            var score = 0
            var exact = allSargable
            var ranges: [(lower: [UInt8]?, upper: [UInt8]?)] = []
            var points: KeyPrefixes?
            var finished = false
            for field in index.fields {
                let slotTerms = terms.filter { $0.field == field }
                guard !slotTerms.isEmpty else { break }
                if let point = slotTerms.first(where: {
                    if case .points(let p) = $0.term { p.count == 1 } else { false }
                }),
                    case .points(let values) = point.term
                {
                    let only = values[0]
                    prefix += only
                    used += slotTerms.count == 1 ? 1 : 0
                    exact = exact && point.isExact && slotTerms.count == 1
                    score += 2
                    continue
                }
                // Several conditions on the last used element: intersect the ranges, or use the IN points.
                if let pointsTerm = slotTerms.first(where: { if case .points = $0.term { true } else { false } }),
                    case .points(let values) = pointsTerm.term
                {
                    points = values.prefixed(by: prefix)
                    exact = exact && pointsTerm.isExact && slotTerms.count == 1
                    used += 1
                    score += 1
                } else {
                    var lower: [UInt8]? = nil
                    var upper: [UInt8]? = nil
                    for slotTerm in slotTerms {
                        guard case .range(let l, let u) = slotTerm.term else { continue }
                        if let l, lower.map({ $0.lexicographicallyPrecedes(l) }) ?? true { lower = l }
                        if let u, upper.map({ u.lexicographicallyPrecedes($0) }) ?? true { upper = u }
                        exact = exact && slotTerm.isExact
                        used += 1
                    }
                    let low = prefix + (lower ?? [])
                    let high = upper.map { prefix + $0 } ?? PageFileKey.successor(ofPrefix: prefix)
                    ranges = [(low.isEmpty ? nil : low, high)]
                    score += 1
                }
                finished = true
                break
            }
            if !finished {
                guard !prefix.isEmpty else { continue }
                ranges = [(prefix, PageFileKey.successor(ofPrefix: prefix))]
            }
            exact = exact && used == terms.count
            if score > (best?.score ?? -1) {
                let plan =
                    points.map { PageFilePlan(index: index, points: $0, isExact: exact) }
                    ?? PageFilePlan(index: index, ranges: ranges, isExact: exact)
                best = (plan, score)
            }
        }
        return best?.plan
    }

    /// The predicate tree of `predicate` (a parsed format's root), nil for block and constant predicates.
    private static func tree(of predicate: NSPredicate) -> NSPredicate? {
        switch predicate.content {
        case .parsed(let tree): return tree
        case .subclass: return predicate
        default: return nil
        }
    }

    private static func flatten(_ predicate: NSPredicate) -> [NSPredicate] {
        let node = tree(of: predicate) ?? predicate
        if let compound = node as? NSCompoundPredicate, compound.compoundPredicateType == .and {
            return compound.subpredicates.flatMap(flatten)
        }
        return [node]
    }

    /// A conjunct's comparison of an indexable attribute with what may be constants, in
    /// `attribute operator constant` order: what of a term its shape decides.
    struct ResolvedComparison {
        let field: StoreKeyField
        let type: NSAttributeType
        let operatorType: NSComparisonPredicate.Operator
        /// The side compared with the attribute, from the conjunct it was resolved from.
        let constant: NSExpression
    }

    /// Whether `expression` is a constant, for a conjunct read in a bound tree.
    static func isConstant(_ expression: NSExpression) -> Bool {
        if case .constant = expression.node { return true }
        return false
    }

    /// The comparison `predicate` makes of an indexable attribute, nil when it is no such
    /// comparison. `isConstant` tells which expressions are constants: a template's
    /// placeholder markers are, as the constants bound in their place will be.
    static func resolve(
        _ predicate: NSPredicate, layout: EntityLayout, isConstant: (NSExpression) -> Bool
    ) -> ResolvedComparison? {
        guard let comparison = predicate as? NSComparisonPredicate, comparison.comparisonPredicateModifier == .direct
        else { return nil }
        var operatorType = comparison.predicateOperatorType
        var keyExpression = comparison.leftExpression
        var constantExpression = comparison.rightExpression
        if case .keyPath = constantExpression.node, isConstant(keyExpression) {
            swap(&keyExpression, &constantExpression)
            switch operatorType {
            case .lessThan: operatorType = .greaterThan
            case .lessThanOrEqualTo: operatorType = .greaterThanOrEqualTo
            case .greaterThan: operatorType = .lessThan
            case .greaterThanOrEqualTo: operatorType = .lessThanOrEqualTo
            case .equalTo: break
            default: return nil
            }
        }
        // An attribute, or an element of a composite attribute (`location.latitude`).
        guard case .keyPath(let key) = keyExpression.node, let (field, attribute) = layout.keyField(named: key)
        else { return nil }
        let type = attribute.attributeType
        guard PageFileKey.isOrderable(type) else { return nil }
        if type == .stringAttributeType, !comparison.options.subtracting(.normalized).isEmpty { return nil }
        switch operatorType {
        case .equalTo, .in, .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo, .between: break
        case .beginsWith where type == .stringAttributeType: break
        default: return nil
        }
        return ResolvedComparison(field: field, type: type, operatorType: operatorType, constant: constantExpression)
    }

    /// The term of `comparison` with `constantExpression` compared with its attribute.
    private static func term(_ comparison: ResolvedComparison, constant constantExpression: NSExpression) -> SlotTerm? {
        let field = comparison.field
        let type = comparison.type
        let operatorType = comparison.operatorType
        let exactType = type != .stringAttributeType && type != .integer64AttributeType
        // 64-bit integers beyond 2^53 share Float64 keys, but never with an integer constant
        // within ±2^53 (exact as a Float64; rounding keeps the order), so their terms against
        // such constants (a fetch by an integer id) are exact as well.
        func isExact(_ values: [Any?]) -> Bool {
            exactType || (type == .integer64AttributeType && values.allSatisfy { $0.map(isExactInteger) ?? false })
        }
        // nil compares equal only to nil; a constant of another kind gives up on the index.
        func encode(_ value: Any?) -> [UInt8]? {
            guard let value else { return [PageFileKey.nullTag] }
            return encodeConstant(value, for: type)
        }
        switch operatorType {
        case .equalTo:
            guard let constant = constants(constantExpression, count: 1)?.first else { return nil }
            guard let bytes = encode(constant) else { return nil }
            return SlotTerm(
                field: field, term: .points(KeyPrefixes([bytes])),
                isExact: isExact([constant]) || type == .stringAttributeType)
        case .in:
            if let numbers = numberPoints(constantExpression, type: type) {
                return SlotTerm(field: field, term: .points(numbers.points), isExact: numbers.isExact)
            }
            guard let elements = constants(constantExpression, count: nil) else { return nil }
            var points: [[UInt8]] = []
            for element in elements {
                guard let bytes = encode(element) else { return nil }
                points.append(bytes)
            }
            if points.isEmpty { return nil }
            return SlotTerm(
                field: field, term: .points(KeyPrefixes(sortedDistinct(points))),
                isExact: isExact(elements) || type == .stringAttributeType)
        case .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo:
            guard let constant = constants(constantExpression, count: 1)?.first, let value = constant,
                let bytes = encodeConstant(value, for: type)
            else { return nil }
            let tag = [bytes[0]]
            let exact = isExact([value])
            switch operatorType {
            case .lessThan: return SlotTerm(field: field, term: .range(lower: tag, upper: bytes), isExact: exact)
            case .lessThanOrEqualTo:
                return SlotTerm(
                    field: field, term: .range(lower: tag, upper: PageFileKey.successor(ofPrefix: bytes)),
                    isExact: exact)
            case .greaterThan:
                return SlotTerm(
                    field: field,
                    term: .range(
                        lower: PageFileKey.successor(ofPrefix: bytes), upper: PageFileKey.successor(ofPrefix: tag)),
                    isExact: exact)
            default:
                return SlotTerm(
                    field: field, term: .range(lower: bytes, upper: PageFileKey.successor(ofPrefix: tag)),
                    isExact: exact)
            }
        case .between:
            guard let bounds = constants(constantExpression, count: 2), let low = bounds[0], let high = bounds[1],
                let lowBytes = encodeConstant(low, for: type), let highBytes = encodeConstant(high, for: type)
            else { return nil }
            return SlotTerm(
                field: field, term: .range(lower: lowBytes, upper: PageFileKey.successor(ofPrefix: highBytes)),
                isExact: isExact([low, high]))
        case .beginsWith:
            guard type == .stringAttributeType, let constant = constants(constantExpression, count: 1)?.first,
                let prefix = constant as? String, !prefix.isEmpty, !PageFileKey.isTruncated(prefix),
                prefix.unicodeScalars.allSatisfy({ $0.isASCII })
            else { return nil }
            var bytes: [UInt8] = []
            PageFileKey.appendString(prefix, terminated: false, to: &bytes)
            return SlotTerm(
                field: field, term: .range(lower: bytes, upper: PageFileKey.successor(ofPrefix: bytes)), isExact: false)
        default:
            return nil
        }
    }

    /// The index points of an `IN` list given as `[NSNumber]` (an app's `IN %@` with an
    /// array of ids) against a number attribute, and whether they are exact: each number
    /// read once, without boxing the list's elements in `Any`s and casting each three times.
    /// The same points and exactness as the general path, in key order without repeats:
    /// the numbers are sorted, cheaper than their keys and in the same order (SPEC.md §3.4
    /// K2), and each key is written into one buffer. Nil, for that path, for any other list,
    /// an element of another class, or one the general path refuses (NaN, an integer
    /// beyond ±2^53).
    private static func numberPoints(_ expression: NSExpression, type: NSAttributeType)
        -> (points: KeyPrefixes, isExact: Bool)?
    {
        guard type != .stringAttributeType, type != .dateAttributeType, case .constant(let value) = expression.node,
            let value, ObjectIdentifier(Swift.type(of: value)) == ObjectIdentifier([NSNumber].self),
            let numbers = value as? [NSNumber], !numbers.isEmpty
        else { return nil }
        let limit: Int64 = 1 << 53
        var keys: [Double] = []
        keys.reserveCapacity(numbers.count)
        var integersOnly = true
        for number in numbers {
            guard ObjectIdentifier(Swift.type(of: number)) == ObjectIdentifier(NSNumber.self) else { return nil }
            let key: Double
            switch numberValue(number) {
            case .integer(let integer):
                guard integer.magnitude < limit else { return nil }
                key = Double(integer)
            case .double(let double):
                guard !double.isNaN else { return nil }
                key = double
                integersOnly = false
            default:
                return nil
            }
            keys.append(key)
        }
        keys.sort()
        var points = KeyPrefixes()
        points.reserveCapacity(keys.count, bytesEach: 9)
        // Each key written in place; equal keys (a repeated number, 0 and -0) kept once.
        for key in keys {
            points.appendUnlessRepeated { PageFileKey.appendNumber(key, to: &$0) }
        }
        return (points, type != .integer64AttributeType || integersOnly)
    }

    /// `points` in key order without repeats: sorted once, compared as bytes.
    private static func sortedDistinct(_ points: [[UInt8]]) -> [[UInt8]] {
        let sorted = points.sorted { left, right in
            left.withUnsafeBufferPointer { left in
                right.withUnsafeBufferPointer { right in
                    guard let leftBytes = left.baseAddress, let rightBytes = right.baseAddress else {
                        return left.count < right.count
                    }
                    let order = memcmp(leftBytes, rightBytes, min(left.count, right.count))
                    return order != 0 ? order < 0 : left.count < right.count
                }
            }
        }
        var distinct: [[UInt8]] = []
        distinct.reserveCapacity(sorted.count)
        for point in sorted where distinct.last != point { distinct.append(point) }
        return distinct
    }

    /// The constant values of `expression`: one constant, or a collection (array, set, `{...}`).
    private static func constants(_ expression: NSExpression, count: Int?) -> [Any?]? {
        var values: [Any?]
        switch expression.node {
        case .constant(let value):
            if count == 1 {
                values = [value]
            } else if let array = value as? [Any] {
                values = array
            } else if let set = value as? Set<AnyHashable> {
                values = Array(set)
            } else {
                return nil
            }
        case .aggregate(let elements):
            values = []
            for element in elements {
                guard case .constant(let value) = element.node else { return nil }
                values.append(value)
            }
        default:
            return nil
        }
        if let count, values.count != count { return nil }
        return values
    }

    /// The index form of a predicate constant compared with an attribute of `type`; nil when
    /// the constant is of another kind (it then matches no row, or the planner gives up).
    static func encodeConstant(_ value: Any, for type: NSAttributeType) -> [UInt8]? {
        var bytes: [UInt8] = []
        switch type {
        case .stringAttributeType:
            guard let string = value as? String, !PageFileKey.isTruncated(string) else { return nil }
            PageFileKey.appendString(string, terminated: true, to: &bytes)
        case .dateAttributeType:
            guard let date = value as? Date else { return nil }
            PageFileKey.appendNumber(date.timeIntervalSinceReferenceDate, to: &bytes)
        default:
            guard let number = exactDouble(value), !number.isNaN else { return nil }
            PageFileKey.appendNumber(number, to: &bytes)
        }
        return bytes
    }

    /// Whether `value` is an integer constant (not a floating-point one) within ±2^53.
    private static func isExactInteger(_ value: Any) -> Bool {
        let limit: Int64 = 1 << 53
        if let integer = plainInteger(value) { return integer.magnitude < limit }
        if let number = bridgedNumber(value) {
            guard case .integer(let integer) = number else { return false }
            return integer.magnitude < limit
        }
        switch value {
        case is Bool, is Int32, is Int16, is Int8: return true
        case let number as Int: return Int64(number).magnitude < limit
        case let number as Int64: return number.magnitude < limit
        case let number as UInt: return number < UInt(limit)
        default: return false
        }
    }

    /// An `NSNumber` constant (an app's `IN %@` list of ids) as the integer or double the
    /// evaluator compares it as (PredicateValue), read once without the cascade of bridging
    /// casts a Swift number's cases would cost it; nil for any other value (a Swift number
    /// is never bridged here: its dynamic type is not NSNumber).
    private static func bridgedNumber(_ value: Any) -> PredicateValue? {
        // Exactly NSNumber (not NSDecimalNumber, which keeps its own cases).
        guard ObjectIdentifier(Swift.type(of: value)) == ObjectIdentifier(NSNumber.self),
            let number = value as? NSNumber
        else { return nil }
        return numberValue(number)
    }

    /// `number` as the integer or double the evaluator compares it as.
    private static func numberValue(_ number: NSNumber) -> PredicateValue {
        let integer = number.int64Value
        let double = number.doubleValue
        return Double(integer) == double ? .integer(integer) : .double(double)
    }

    /// An `Int` or `Int64` constant (what `%d` and `%lld` bring), recognized by its exact
    /// type before the cascade of casts below: each cast that fails costs a runtime
    /// search. The cascade answers the same for these two types.
    private static func plainInteger(_ value: Any) -> Int64? {
        let type = ObjectIdentifier(Swift.type(of: value))
        if type == ObjectIdentifier(Int.self), let number = value as? Int { return Int64(number) }
        if type == ObjectIdentifier(Int64.self), let number = value as? Int64 { return number }
        return nil
    }

    /// A number constant as a Float64 when the conversion is exact for integers (|n| < 2^53).
    private static func exactDouble(_ value: Any) -> Double? {
        let limit: Int64 = 1 << 53
        if let integer = plainInteger(value) { return integer.magnitude < limit ? Double(integer) : nil }
        if let number = bridgedNumber(value) {
            switch number {
            case .integer(let integer): return integer.magnitude < limit ? Double(integer) : nil
            case .double(let double): return double
            default: return nil
            }
        }
        switch value {
        case let flag as Bool: return flag ? 1 : 0
        case let number as Int: return Int64(number).magnitude < limit ? Double(number) : nil
        case let number as Int64: return number.magnitude < limit ? Double(number) : nil
        case let number as Int32: return Double(number)
        case let number as Int16: return Double(number)
        case let number as Int8: return Double(number)
        case let number as UInt: return number < UInt(limit) ? Double(number) : nil
        case let number as Double: return number
        case let number as Float: return Double(number)
        default: return nil
        }
    }
}
