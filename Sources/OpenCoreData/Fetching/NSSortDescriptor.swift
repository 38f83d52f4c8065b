// NSSortDescriptor: a key path, a direction, and how to compare — a comparator
// closure, or on Linux a `Comparison` standing for the selectors Core Data's stores
// support (compare:, caseInsensitiveCompare:, localized...). nil sorts first
// ascending, as Core Data's SQLite store orders NULL. Sorting is stable.
import Foundation

/// Describes how to order objects by the value of a key path.
///
/// ```swift
/// let byName = NSSortDescriptor(key: "lastName", ascending: true, comparison: .localizedCaseInsensitiveCompare)
/// let people = try rows.sortedThrowing(using: [byName, NSSortDescriptor(key: "age", ascending: false)])
/// ```
open class NSSortDescriptor: NSObject, @unchecked Sendable {
    /// The comparison selectors of Foundation, as values (no Objective-C selectors on Linux).
    public enum Comparison: Sendable, Hashable {
        /// `compare:` — numbers by value, strings by Unicode order, dates chronologically.
        case compare
        /// `caseInsensitiveCompare:`
        case caseInsensitiveCompare
        /// `localizedCompare:`
        case localizedCompare
        /// `localizedCaseInsensitiveCompare:`
        case localizedCaseInsensitiveCompare
        /// `localizedStandardCompare:` — Finder-like, numbers inside strings by value.
        case localizedStandardCompare

        /// The Objective-C selector name this stands for, e.g. `"localizedCompare:"`.
        public var selectorName: String {
            switch self {
            case .compare: "compare:"
            case .caseInsensitiveCompare: "caseInsensitiveCompare:"
            case .localizedCompare: "localizedCompare:"
            case .localizedCaseInsensitiveCompare: "localizedCaseInsensitiveCompare:"
            case .localizedStandardCompare: "localizedStandardCompare:"
            }
        }

        /// The comparison for a selector name such as `"caseInsensitiveCompare:"`, nil when unknown.
        public init?(selectorName: String) {
            let all: [Comparison] = [
                .compare, .caseInsensitiveCompare, .localizedCompare, .localizedCaseInsensitiveCompare,
                .localizedStandardCompare,
            ]
            guard let match = all.first(where: { $0.selectorName == selectorName }) else { return nil }
            self = match
        }
    }

    /// The key path the descriptor compares; nil compares the objects themselves.
    public let key: String?
    /// Whether smaller values come first.
    public let ascending: Bool
    /// The selector-equivalent comparison (`.compare` unless given; ignored when a comparator is set).
    public let comparison: Comparison
    /// The closure comparing two non-nil values, when the descriptor was made with one.
    public let comparator: Comparator?

    /// A descriptor ordering by `key` with `compare:`.
    public init(key: String?, ascending: Bool) {
        self.key = key
        self.ascending = ascending
        comparison = .compare
        comparator = nil
    }

    /// A descriptor ordering by `key` with `comparison` — the Linux form of `init(key:ascending:selector:)`.
    public init(key: String?, ascending: Bool, comparison: Comparison) {
        self.key = key
        self.ascending = ascending
        self.comparison = comparison
        comparator = nil
    }

    /// A descriptor ordering by `key` with `comparator`, which sees only non-nil values (nil sorts first).
    public init(key: String?, ascending: Bool, comparator: @escaping Comparator) {
        self.key = key
        self.ascending = ascending
        comparison = .compare
        self.comparator = comparator
    }

    /// The Objective-C selector name of the comparison; nil when a comparator is used.
    open var selectorName: String? { comparator == nil ? comparison.selectorName : nil }

    /// The same descriptor with the opposite direction.
    open var reversedSortDescriptor: NSSortDescriptor {
        if let comparator { return NSSortDescriptor(key: key, ascending: !ascending, comparator: comparator) }
        return NSSortDescriptor(key: key, ascending: !ascending, comparison: comparison)
    }

    /// The order of two objects by this descriptor; `.orderedSame` when a key cannot be read
    /// or the values cannot be compared (use `CompiledSortDescriptors` for the error).
    open func compare(_ object1: Any, to object2: Any) -> ComparisonResult {
        guard let compiled = try? CompiledSortDescriptors([self]) else { return .orderedSame }
        return (try? compiled.compare(object1, object2)) ?? .orderedSame
    }

    /// Compiles `descriptors` into one ordering, keys resolved once (to slots for a `schema`).
    ///
    /// - Throws: `KeyValueCodingError.unknownKey` for a key the schema lacks.
    public static func compiled(_ descriptors: [NSSortDescriptor], for schema: (any KeyValueSchema)? = nil) throws
        -> CompiledSortDescriptors
    {
        try CompiledSortDescriptors(descriptors, schema: schema)
    }

    /// The key, direction and comparison, for debugging.
    open override var description: String {
        "(\(key ?? "SELF"), \(ascending ? "ascending" : "descending"), \(selectorName ?? "comparator"))"
    }

    /// Equal key, direction and comparison; descriptors with comparators equal only themselves.
    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSSortDescriptor else { return false }
        if self === other { return true }
        return key == other.key && ascending == other.ascending && comparator == nil && other.comparator == nil
            && comparison == other.comparison
    }

    /// A hash consistent with `isEqual(_:)`.
    open override var hash: Int {
        var hasher = Hasher()
        hasher.combine(key)
        hasher.combine(ascending)
        hasher.combine(comparison)
        return hasher.finalize()
    }
}

/// Sort descriptors compiled once: keys resolved, values extracted once per element.
public struct CompiledSortDescriptors: @unchecked Sendable {
    private struct Step {
        let read: ExpressionProgram
        let ascending: Bool
        let comparison: NSSortDescriptor.Comparison
        let comparator: Comparator?
    }

    private let steps: [Step]
    private let schema: (any KeyValueSchema)?

    /// Compiles `descriptors`; with a `schema`, key paths resolve to slots now.
    ///
    /// - Throws: `KeyValueCodingError.unknownKey` for a key the schema lacks.
    public init(_ descriptors: [NSSortDescriptor], schema: (any KeyValueSchema)? = nil) throws {
        var compiler = PredicateCompiler(schema: schema)
        var steps: [Step] = []
        for descriptor in descriptors {
            let expression =
                descriptor.key.map { NSExpression(forKeyPath: $0) } ?? NSExpression.expressionForEvaluatedObject()
            steps.append(
                Step(
                    read: try compiler.compile(expression), ascending: descriptor.ascending,
                    comparison: descriptor.comparison, comparator: descriptor.comparator))
        }
        self.steps = steps
        self.schema = schema
    }

    /// A key value ready for comparison: the classified value, and the raw one for comparators.
    private struct Key {
        let raw: Any?
        let value: PredicateValue
    }

    private func read(_ scope: EvaluationScope, into keys: inout [Key]) throws {
        for step in steps {
            let raw = try step.read(scope)
            keys.append(Key(raw: step.comparator == nil ? nil : unwrapOptional(raw), value: PredicateValue(raw)))
        }
    }

    private func keys(of object: Any?) throws -> [Key] {
        var keys: [Key] = []
        try read(EvaluationScope(object: object, schema: schema, variables: [:]), into: &keys)
        return keys
    }

    /// The order of two objects: the first descriptor that tells them apart decides.
    ///
    /// - Throws: `KeyValueCodingError.unknownKey`, `PredicateLanguageError.typeMismatch` for values with no order.
    public func compare(_ first: Any?, _ second: Any?) throws -> ComparisonResult {
        let a = try keys(of: first)
        let b = try keys(of: second)
        return try compare(a, 0, b, 0)
    }

    private func compare(_ first: [Key], _ firstBase: Int, _ second: [Key], _ secondBase: Int) throws
        -> ComparisonResult
    {
        for index in steps.indices {
            let step = steps[index]
            let order = try Self.order(first[firstBase + index], second[secondBase + index], step)
            if order != .orderedSame {
                return step.ascending ? order : (order == .orderedAscending ? .orderedDescending : .orderedAscending)
            }
        }
        return .orderedSame
    }

    private static func order(_ first: Key, _ second: Key, _ step: Step) throws -> ComparisonResult {
        switch (first.value, second.value) {
        case (.null, .null): return .orderedSame
        case (.null, _): return .orderedAscending
        case (_, .null): return .orderedDescending
        case (.integer(let a), .integer(let b)):
            return a == b ? .orderedSame : (a < b ? .orderedAscending : .orderedDescending)
        default: break
        }
        if let comparator = step.comparator, let a = first.raw, let b = second.raw { return comparator(a, b) }
        if case .string(let a) = first.value, case .string(let b) = second.value {
            switch step.comparison {
            case .compare: return a == b ? .orderedSame : (a < b ? .orderedAscending : .orderedDescending)
            case .caseInsensitiveCompare: return a.caseInsensitiveCompare(b)
            case .localizedCompare: return a.localizedCompare(b)
            case .localizedCaseInsensitiveCompare: return a.localizedCaseInsensitiveCompare(b)
            case .localizedStandardCompare: return a.localizedStandardCompare(b)
            }
        }
        if case .collection = first.value {
            throw PredicateLanguageError.typeMismatch("cannot sort by a to-many key path (its value is a collection)")
        }
        return try first.value.order(against: second.value, options: StringComparisonOptions([])) ?? .orderedSame
    }

    /// `elements` in order, stable (ties keep their original order).
    ///
    /// - Throws: `KeyValueCodingError.unknownKey`, `PredicateLanguageError.typeMismatch`.
    /// - Complexity: O(n log n) comparisons; each key is read once per element.
    public func sort<Element>(_ elements: [Element]) throws -> [Element] {
        try sort(elements) { EvaluationScope(object: $0, schema: schema, variables: [:]) }
    }

    /// Records of the compiled schema in order, stable; the object layer's fast entry point.
    public func sort<Record: KeyValueSlotReadable>(records: [Record]) throws -> [Record] {
        try sort(records) { EvaluationScope(record: $0, schema: schema, variables: [:]) }
    }

    /// `elements` in order, each read through the scope `scope` gives it.
    private func sort<Element>(_ elements: [Element], scope: (Element) -> EvaluationScope) throws -> [Element] {
        guard !steps.isEmpty, elements.count > 1 else { return elements }
        var keys: [Key] = []
        keys.reserveCapacity(elements.count * steps.count)
        for element in elements {
            try read(scope(element), into: &keys)
        }
        return try sort(elements, keys: keys)
    }

    private func sort<Element>(_ elements: [Element], keys: [Key]) throws -> [Element] {
        var comparers: [(Int, Int) throws -> ComparisonResult] = []
        for index in steps.indices {
            comparers.append(column(index, of: keys, count: elements.count))
        }
        let compare = Self.lexicographic(comparers[...])
        var order = Array(elements.indices)
        try order.sort { left, right in
            let result = try compare(left, right)
            return result == .orderedSame ? left < right : result == .orderedAscending
        }
        return order.map { elements[$0] }
    }

    /// A comparer of element positions for descriptor `step`: over a typed column of integers
    /// or strings when every key is one (or nil), else over the classified keys.
    private func column(_ step: Int, of keys: [Key], count: Int) -> (Int, Int) throws -> ComparisonResult {
        let width = steps.count
        let descriptor = steps[step]
        let ascending = descriptor.ascending
        func directed(_ order: ComparisonResult) -> ComparisonResult {
            ascending
                ? order
                : (order == .orderedAscending
                    ? .orderedDescending : (order == .orderedSame ? .orderedSame : .orderedAscending))
        }
        if descriptor.comparator == nil && descriptor.comparison == .compare {
            var integers: [Int64] = []
            var strings: [String] = []
            var present: [Bool] = []
            var isIntegers = true
            var isStrings = true
            present.reserveCapacity(count)
            for position in 0..<count {
                switch keys[position * width + step].value {
                case .null:
                    present.append(false)
                    if isIntegers { integers.append(0) }
                    if isStrings { strings.append("") }
                case .integer(let value) where isIntegers:
                    present.append(true)
                    integers.append(value)
                    isStrings = false
                    strings = []
                case .string(let value) where isStrings:
                    present.append(true)
                    strings.append(value)
                    isIntegers = false
                    integers = []
                default:
                    isIntegers = false
                    isStrings = false
                }
                if !isIntegers && !isStrings { break }
            }
            if isStrings && !isIntegers {
                // Strings sort by rank: the distinct values are ordered once, rows compare integers.
                var ranks: [String: Int64] = [:]
                for position in 0..<count where present[position] { ranks[strings[position]] = 0 }
                for (rank, text) in ranks.keys.sorted().enumerated() { ranks[text] = Int64(rank) }
                integers = (0..<count).map { present[$0] ? ranks[strings[$0]] ?? 0 : 0 }
                isIntegers = true
            }
            if isIntegers {
                return { left, right in
                    let (a, b) = (present[left], present[right])
                    guard a && b else {
                        return directed(a == b ? .orderedSame : (a ? .orderedDescending : .orderedAscending))
                    }
                    let (x, y) = (integers[left], integers[right])
                    return directed(x == y ? .orderedSame : (x < y ? .orderedAscending : .orderedDescending))
                }
            }
        }
        return { left, right in
            directed(try Self.order(keys[left * width + step], keys[right * width + step], descriptor))
        }
    }

    /// The first comparer that tells two positions apart decides; nested pairs, so calls retain nothing.
    private static func lexicographic(_ comparers: ArraySlice<(Int, Int) throws -> ComparisonResult>)
        -> (Int, Int) throws -> ComparisonResult
    {
        guard let first = comparers.first else { return { _, _ in .orderedSame } }
        if comparers.count == 1 { return first }
        let rest = lexicographic(comparers.dropFirst())
        return { left, right in
            let order = try first(left, right)
            return order == .orderedSame ? try rest(left, right) : order
        }
    }
}

extension Sequence {
    /// The elements ordered by `sortDescriptors`, stable; Foundation's `sortedArray(using:)`.
    ///
    /// When a key cannot be read or two values cannot be compared, the elements come back in
    /// their original order; use `sortedThrowing(using:)` to get the error instead.
    public func sorted(using sortDescriptors: [NSSortDescriptor]) -> [Element] {
        let elements = Array(self)
        return (try? sortedThrowing(using: sortDescriptors)) ?? elements
    }

    /// The elements ordered by `sortDescriptors`, stable, throwing unreadable keys and type mismatches.
    public func sortedThrowing(using sortDescriptors: [NSSortDescriptor]) throws -> [Element] {
        try CompiledSortDescriptors(sortDescriptors).sort(Array(self))
    }
}
