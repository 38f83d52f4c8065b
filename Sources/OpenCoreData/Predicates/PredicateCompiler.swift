// Compiles predicate and expression trees once into closures. With a KeyValueSchema,
// key paths resolve to slot indexes at compile time (an unknown key is a compile
// error); evaluation then reads `KeyValueSlotReadable` records by index. Without one,
// keys are read through `KeyValueReadable`, dictionaries and collections.
import Foundation

/// What a compiled program evaluates against: the object, its record view when it is a
/// record of the compiled schema (checked once per object), and the variables in scope.
struct EvaluationScope {
    /// The evaluated object when it is not a record of the compiled schema.
    private let other: Any?
    /// The evaluated object when it is a record of the compiled schema (checked once per object).
    let record: (any KeyValueSlotReadable)?
    var variables: [String: Any]

    init(object: Any?, schema: (any KeyValueSchema)?, variables: [String: Any]) {
        if let schema, let record = object as? any KeyValueSlotReadable, slotsMatch(record.keyValueSchema, schema) {
            self.record = record
            other = nil
        } else {
            record = nil
            other = object
        }
        self.variables = variables
    }

    /// A scope for a record (no cast needed); read by slot when its schema is the compiled one.
    init(record: any KeyValueSlotReadable, schema: (any KeyValueSchema)?, variables: [String: Any]) {
        if let schema, slotsMatch(record.keyValueSchema, schema) {
            self.record = record
            other = nil
        } else {
            self.record = nil
            other = record
        }
        self.variables = variables
    }

    /// The evaluated object, `SELF`.
    var object: Any? {
        if let record { return record }
        return other
    }

    /// A scope for a nested object (a SUBQUERY element): read generically, variables kept.
    func nested(object: Any?) -> EvaluationScope {
        EvaluationScope(object: object, schema: nil, variables: variables)
    }
}

typealias PredicateProgram = (EvaluationScope) throws -> Bool
typealias ExpressionProgram = (EvaluationScope) throws -> Any?

/// Turns predicate and expression trees into programs.
struct PredicateCompiler {
    /// The deepest tree compiled; trees built in code may nest deeper than the parser allows.
    static let maximumDepth = 200

    let schema: (any KeyValueSchema)?
    private var depth = 0

    init(schema: (any KeyValueSchema)?) {
        self.schema = schema
    }

    private func refuse() throws {
        throw PredicateLanguageError(.nestingTooDeep, "the predicate nests deeper than \(Self.maximumDepth) levels")
    }

    private mutating func enter() throws {
        depth += 1
        if depth > Self.maximumDepth {
            throw PredicateLanguageError(.nestingTooDeep, "the predicate nests deeper than \(Self.maximumDepth) levels")
        }
    }

    // MARK: Predicates

    mutating func compile(_ predicate: NSPredicate) throws -> PredicateProgram {
        if depth == 0, predicate.depth > Self.maximumDepth { try refuse() }
        try enter()
        defer { depth -= 1 }
        if let comparison = predicate as? NSComparisonPredicate { return try compileComparison(comparison) }
        if let compound = predicate as? NSCompoundPredicate { return try compileCompound(compound) }
        switch predicate.content {
        case .value(let value): return { _ in value }
        case .block(let block): return { scope in block(scope.object, scope.variables) }
        case .parsed(let tree): return try compile(tree)
        case .invalid(let error, _): throw error
        case .subclass:
            throw PredicateLanguageError(
                .unsupported, "a predicate of class \(type(of: predicate)) cannot be evaluated")
        }
    }

    private mutating func compileCompound(_ compound: NSCompoundPredicate) throws -> PredicateProgram {
        var programs: [PredicateProgram] = []
        for subpredicate in compound.subpredicates { programs.append(try compile(subpredicate)) }
        switch compound.compoundPredicateType {
        case .not:
            guard let operand = programs.first else {
                throw PredicateLanguageError(.unsupported, "NOT needs a subpredicate")
            }
            return { scope in try !operand(scope) }
        case .and:
            return Self.chain(programs[...], and: true)
        case .or:
            return Self.chain(programs[...], and: false)
        }
    }

    /// AND/OR of `programs` as a balanced tree of pairs, evaluated left to right: calling a
    /// captured closure costs no reference counting, where iterating an array of closures
    /// retains each one per call; balancing keeps a 100,000-clause OR at 17 levels of calls.
    private static func chain(_ programs: ArraySlice<PredicateProgram>, and: Bool) -> PredicateProgram {
        guard let first = programs.first else { return { _ in and } }
        if programs.count == 1 { return first }
        let middle = programs.startIndex + programs.count / 2
        let left = chain(programs[..<middle], and: and)
        let right = chain(programs[middle...], and: and)
        if and { return { scope in try left(scope) && right(scope) } }
        return { scope in try left(scope) || right(scope) }
    }

    private mutating func compileComparison(_ comparison: NSComparisonPredicate) throws -> PredicateProgram {
        let left = try compile(comparison.leftExpression)
        let operation = ComparisonOperation(type: comparison.predicateOperatorType, options: comparison.options)
        if comparison.predicateOperatorType == .customSelector {
            throw PredicateLanguageError(.unsupported, "custom selector comparisons need an Objective-C runtime")
        }
        let test: (Any?, EvaluationScope) throws -> Bool
        if case .constant(let constant) = comparison.rightExpression.node {
            let prepared = try operation.prepared(right: constant)
            if comparison.comparisonPredicateModifier == .direct {
                if case .anyKey = comparison.leftExpression.node {
                } else if case .keyPath(let path) = comparison.leftExpression.node, let slot = singleSlot(path) {
                    // The commonest clause, `attribute op constant`, fused: read the slot, compare.
                    return { scope in
                        if let value = scope.record?.readValue(atSlot: slot) { return try prepared(value) }
                        return try prepared(try left(scope))
                    }
                } else {
                    return { scope in try prepared(try left(scope)) }
                }
            }
            test = { value, _ in try prepared(value) }
        } else {
            let right = try compile(comparison.rightExpression)
            test = { value, scope in try operation.evaluate(value, try right(scope)) }
        }
        var modifier = comparison.comparisonPredicateModifier
        if case .anyKey = comparison.leftExpression.node, modifier == .direct { modifier = .any }
        switch modifier {
        case .direct:
            return { scope in try test(try left(scope), scope) }
        case .any:
            return { scope in
                for element in Self.elements(try left(scope)) where try test(element, scope) { return true }
                return false
            }
        case .all:
            return { scope in
                for element in Self.elements(try left(scope)) where try !test(element, scope) { return false }
                return true
            }
        }
    }

    /// The elements ANY/ALL range over: a collection's, none for nil, else the value alone.
    static func elements(_ value: Any?) -> [Any?] {
        if let elements = collectionElements(value) { return elements }
        return unwrapOptional(value) == nil ? [] : [value]
    }

    // MARK: Expressions

    mutating func compile(_ expression: NSExpression) throws -> ExpressionProgram {
        if depth == 0, expression.depth > Self.maximumDepth { try refuse() }
        try enter()
        defer { depth -= 1 }
        switch expression.node {
        case .constant(let value):
            return { _ in value }
        case .evaluatedObject:
            return { scope in scope.object }
        case .variable(let name):
            return { scope in
                guard let value = scope.variables[name] else {
                    throw PredicateLanguageError(.missingVariable(name), "no value for the variable $\(name)")
                }
                return value
            }
        case .keyPath(let path):
            return try compileKeyPath(path)
        case .member(let base, let path):
            let program = try compile(base)
            let components = Self.components(path)
            return { scope in try KeyValuePath.value(of: try program(scope), path: components[...]) }
        case .function(let name, let arguments):
            return try compileFunction(name, arguments)
        case .selector(let target, let name, let arguments):
            let receiver = try compile(target)
            let programs = try compileAll(arguments)
            return { scope in
                try ExpressionFunctions.call(try receiver(scope), name, try programs.map { try $0(scope) })
            }
        case .index(let base, let specifier):
            return try compileIndex(base, specifier)
        case .aggregate(let elements):
            let programs = try compileAll(elements)
            return { scope in try programs.map { try $0(scope) } as [Any?] }
        case .subquery(let collection, let variable, let predicate):
            let source = try compile(collection)
            var nested = PredicateCompiler(schema: nil)
            nested.depth = depth
            let test = try nested.compile(predicate)
            return { scope in
                var matches: [Any?] = []
                for element in Self.elements(try source(scope)) {
                    var inner = scope.nested(object: element)
                    inner.variables[variable] = element ?? NSNull()
                    if try test(inner) { matches.append(element) }
                }
                return matches
            }
        case .union(let left, let right), .intersect(let left, let right), .minus(let left, let right):
            return try compileSetOperation(expression.node, try compile(left), try compile(right))
        case .conditional(let predicate, let yes, let no):
            let condition = try compile(predicate)
            let whenTrue = try compile(yes)
            let whenFalse = try compile(no)
            return { scope in try condition(scope) ? try whenTrue(scope) : try whenFalse(scope) }
        case .anyKey:
            return { scope in
                guard let object = unwrapOptional(scope.object), let dictionary = dictionaryValue(object) else {
                    throw PredicateLanguageError.typeMismatch("ANYKEY needs a dictionary")
                }
                return Array(dictionary.values)
            }
        case .block(let block, let arguments):
            let programs = try compileAll(arguments)
            return { scope in
                let values = try programs.map { try $0(scope) ?? NSNull() }
                let context = NSMutableDictionary()
                for (key, value) in scope.variables { context[key] = value }
                return block(scope.object, values, context)
            }
        case .invalid(let error):
            throw error
        }
    }

    private mutating func compileAll(_ expressions: [NSExpression]) throws -> [ExpressionProgram] {
        var programs: [ExpressionProgram] = []
        for expression in expressions { programs.append(try compile(expression)) }
        return programs
    }

    /// The slot of a one-key path in the schema, when there is a schema and the key is in it.
    private func singleSlot(_ path: String) -> Int? {
        guard let schema, !path.contains("."), !path.hasPrefix("@") else { return nil }
        return schema.slot(forKey: path)?.index
    }

    static func components(_ path: String) -> [String] {
        path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    /// Resolves the leading keys of `path` against the schema (to-one steps included).
    private func compileKeyPath(_ path: String) throws -> ExpressionProgram {
        let components = Self.components(path)
        guard let schema else {
            if components.count == 1 {
                let key = components[0]
                return { scope in
                    if let readable = scope.object as? any KeyValueReadable {
                        return try readable.readValue(forKey: key)
                    }
                    return try KeyValuePath.value(of: scope.object, path: components[...])
                }
            }
            return { scope in try KeyValuePath.value(of: scope.object, path: components[...]) }
        }
        var steps: [(schema: any KeyValueSchema, slot: Int)] = []
        var current: (any KeyValueSchema)? = schema
        for component in components {
            guard let stepSchema = current, !component.hasPrefix("@") else { break }
            guard let slot = stepSchema.slot(forKey: component) else {
                throw KeyValueCodingError.unknownKey(component, in: stepSchema.schemaName)
            }
            steps.append((stepSchema, slot.index))
            if case .toOne(let destination) = slot.kind { current = destination } else { current = nil }
        }
        guard let first = steps.first else {
            return { scope in try KeyValuePath.value(of: scope.object, path: components[...]) }
        }
        let rest = components[steps.count...]
        if steps.count == 1 && rest.isEmpty {
            let slot = first.slot
            return { scope in
                // Optional chaining reads the record in place; `if let` would copy (retain) it.
                if let value = scope.record?.readValue(atSlot: slot) { return value }
                return try KeyValuePath.value(of: scope.object, path: components[...])
            }
        }
        return { scope in
            guard let record = scope.record else {
                return try KeyValuePath.value(of: scope.object, path: components[...])
            }
            var value = record.readValue(atSlot: first.slot)
            for (offset, step) in steps.enumerated().dropFirst() {
                guard let object = unwrapOptional(value) else { return nil }
                guard let next = object as? any KeyValueSlotReadable, slotsMatch(next.keyValueSchema, step.schema)
                else {
                    return try KeyValuePath.value(of: object, path: components[offset...])
                }
                value = next.readValue(atSlot: step.slot)
            }
            return rest.isEmpty ? value : try KeyValuePath.value(of: value, path: rest)
        }
    }

    private mutating func compileFunction(_ name: String, _ arguments: [NSExpression]) throws -> ExpressionProgram {
        guard let arity = ExpressionFunctions.arities[name] else {
            throw PredicateLanguageError(.unsupported, "unknown function '\(name)'")
        }
        guard arity == arguments.count else {
            throw PredicateLanguageError.typeMismatch("\(name) takes \(arity) argument(s), got \(arguments.count)")
        }
        let programs = try compileAll(arguments)
        if programs.count == 2, ["add:to:", "from:subtract:", "multiply:by:", "divide:by:"].contains(name) {
            let (left, right) = (programs[0], programs[1])
            return { scope in try ExpressionFunctions.arithmetic(name, try left(scope), try right(scope)) }
        }
        return { scope in try ExpressionFunctions.apply(name, try programs.map { try $0(scope) }) }
    }

    private mutating func compileIndex(_ base: NSExpression, _ specifier: NSExpression.IndexSpecifier) throws
        -> ExpressionProgram
    {
        let collection = try compile(base)
        switch specifier {
        case .first, .last, .size:
            return { scope in
                let value = unwrapOptional(try collection(scope))
                guard let value else { return nil }
                if case .size = specifier, let dictionary = dictionaryValue(value) { return dictionary.count }
                guard let elements = collectionElements(value) else {
                    throw PredicateLanguageError.typeMismatch("FIRST, LAST and SIZE need a collection")
                }
                switch specifier {
                case .first: return elements.first ?? nil
                case .last: return elements.last ?? nil
                default: return elements.count
                }
            }
        case .expression(let index):
            let position = try compile(index)
            return { scope in try ExpressionFunctions.element(of: try collection(scope), at: try position(scope)) }
        }
    }

    private func compileSetOperation(
        _ node: NSExpression.Node, _ left: @escaping ExpressionProgram, _ right: @escaping ExpressionProgram
    ) throws -> ExpressionProgram {
        let kind: Int
        switch node {
        case .union: kind = 0
        case .intersect: kind = 1
        default: kind = 2
        }
        return { scope in
            let leftValue = try left(scope)
            let rightValue = try right(scope)
            guard let first = collectionElements(leftValue), let second = collectionElements(rightValue) else {
                throw PredicateLanguageError.typeMismatch("UNION, INTERSECT and MINUS need collections")
            }
            let firstValues = first.compactMap { unwrapOptional($0) }
            let secondValues = second.compactMap { unwrapOptional($0) }
            if kind == 0 { return Aggregates.distinct(firstValues + secondValues) }
            let members = PredicateValueSet(secondValues.lazy.map { PredicateValue($0) })
            let kept = firstValues.filter { value in
                let found = members.contains(PredicateValue(value))
                return kind == 1 ? found : !found
            }
            return Aggregates.distinct(kept)
        }
    }
}
