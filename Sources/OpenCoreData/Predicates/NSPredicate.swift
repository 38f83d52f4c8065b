// NSPredicate: the format-string language, constant and block predicates, evaluation,
// substitution variables. `NSPredicate(format:)` never throws, as in Core Data: a
// malformed format yields a predicate that carries its parse error, evaluates to
// false and makes a fetch throw (the fetch path calls `validate()` / `compiled(for:)`).
import Foundation
import Synchronization

/// A logical condition used to constrain a search or to filter values.
///
/// ```swift
/// let adults = NSPredicate(format: "age >= %d AND firstName BEGINSWITH[c] %@", 18, "j")
/// adults.evaluate(with: ["age": 30, "firstName": "John"])  // true
/// let people = [["age": 30], ["age": 12]].filtered(using: NSPredicate(format: "age > 18"))
/// ```
open class NSPredicate: NSObject, @unchecked Sendable {
    /// The closure type of block predicates: the evaluated object and the substitution variables.
    public typealias PredicateBlock = (Any?, [String: Any]?) -> Bool

    enum Content {
        case value(Bool)
        case block(PredicateBlock)
        case parsed(NSPredicate)
        case invalid(PredicateLanguageError, format: String)
        case subclass
    }

    let content: Content
    /// The height of the tree below this predicate (see `NSExpression.depth`).
    let depth: Int
    /// For a format predicate a cached template bound, that template and the bound
    /// arguments: held so the template's identity names this predicate's shape while it lives.
    let binding: PredicateBinding?
    private let compiledCache = Mutex<CompiledPredicate?>(nil)

    init(content: Content, depth: Int = 1, binding: PredicateBinding? = nil) {
        self.content = content
        self.binding = binding
        if case .parsed(let tree) = content {
            self.depth = tree.depth
        } else {
            self.depth = depth
        }
    }

    /// A predicate parsed from `predicateFormat`, `%@`-style placeholders filled from `arguments`.
    ///
    /// Arguments may be strings, numbers, `Bool`, `Date`/`NSDate`, `Data`, `UUID`, `URL`, arrays,
    /// sets, managed objects and object IDs; `%K` takes a key path string. A malformed format
    /// does not trap: the predicate carries the error (`validationError`) and evaluates to false.
    public convenience init(format predicateFormat: String, _ arguments: Any...) {
        self.init(format: predicateFormat, argumentArray: arguments)
    }

    /// A predicate parsed from `predicateFormat` with its arguments in an array.
    public convenience init(format predicateFormat: String, argumentArray arguments: [Any]?) {
        do {
            let parsed = try PredicateParser.parseBoundPredicate(predicateFormat, arguments: arguments ?? [])
            self.init(content: .parsed(parsed.tree), binding: parsed.binding)
        } catch let error as PredicateLanguageError {
            self.init(content: .invalid(error, format: predicateFormat))
        } catch {
            self.init(content: .invalid(PredicateLanguageError(.unsupported, "\(error)"), format: predicateFormat))
        }
    }

    /// A predicate parsed from user-supplied text, throwing at once when it is malformed.
    ///
    /// - Throws: `PredicateLanguageError` with `.malformedFormat(position:)` or `.missingArgument(position:)`.
    public convenience init(validatingFormat predicateFormat: String, _ arguments: Any...) throws {
        try self.init(validatingFormat: predicateFormat, argumentArray: arguments)
    }

    /// A predicate parsed from user-supplied text with arguments in an array, throwing when malformed.
    public convenience init(validatingFormat predicateFormat: String, argumentArray arguments: [Any]?) throws {
        self.init(content: .parsed(try PredicateParser.parsePredicate(predicateFormat, arguments: arguments ?? [])))
    }

    /// A predicate that always evaluates to `value` (`TRUEPREDICATE` / `FALSEPREDICATE`).
    public convenience init(value: Bool) {
        self.init(content: .value(value))
    }

    /// A predicate evaluated by a closure, given the object and the substitution variables.
    public convenience init(block: @escaping PredicateBlock) {
        self.init(content: .block(block))
    }

    /// The predicate this one stands for: the parsed tree of a format predicate, else itself.
    var resolved: NSPredicate {
        if case .parsed(let tree) = content { return tree.resolved }
        return self
    }

    /// The `NSComparisonPredicate` or `NSCompoundPredicate` (or constant predicate) this one stands for.
    ///
    /// Foundation's `NSPredicate(format:)` returns an instance of the subclass; a Swift initializer
    /// cannot, so a format predicate wraps its parsed tree. Cast this instead of the predicate:
    /// `NSPredicate(format: "a > 1").structuredPredicate as? NSComparisonPredicate`.
    public var structuredPredicate: NSPredicate { resolved }

    /// The parse error of a predicate made from a malformed format string; nil when it parsed.
    public var validationError: PredicateLanguageError? {
        switch content {
        case .invalid(let error, _): error
        case .parsed(let tree): tree.validationError
        default: nil
        }
    }

    /// Throws the parse error of a predicate made from a malformed format; the fetch path calls this.
    public func validate() throws {
        if let validationError { throw validationError }
    }

    /// The format string of the predicate; `NSPredicate(format:)` of it gives an equal predicate.
    open var predicateFormat: String {
        PredicateFormatter.format(self)
    }

    /// The predicate's format string.
    open override var description: String { predicateFormat }

    /// Whether `object` satisfies the predicate; false when evaluation fails (malformed format,
    /// unknown key, type mismatch). Use `evaluateThrowing(with:substitutionVariables:)` for the error.
    open func evaluate(with object: Any?) -> Bool {
        (try? evaluateThrowing(with: object, substitutionVariables: nil)) ?? false
    }

    /// Whether `object` satisfies the predicate with `$VARIABLE`s bound from `bindings`; false on failure.
    open func evaluate(with object: Any?, substitutionVariables bindings: [String: Any]?) -> Bool {
        (try? evaluateThrowing(with: object, substitutionVariables: bindings)) ?? false
    }

    /// Whether `object` satisfies the predicate, throwing instead of answering false on failure.
    ///
    /// - Throws: the parse error of a malformed predicate, `KeyValueCodingError.unknownKey`,
    ///   or `PredicateLanguageError` (type mismatch, missing variable, nesting too deep).
    public func evaluateThrowing(with object: Any?, substitutionVariables bindings: [String: Any]? = nil) throws
        -> Bool
    {
        let compiled = try compiledCache.withLock { cache in
            if let cache { return cache }
            let program = try self.compiled(for: nil)
            cache = program
            return program
        }
        return try compiled.evaluate(with: object, substitutionVariables: bindings)
    }

    /// Compiles the predicate once into an evaluator; with a `schema`, keys resolve to slots now.
    ///
    /// - Throws: the parse error of a malformed predicate; with a schema, `KeyValueCodingError.unknownKey`
    ///   for a key the schema lacks; `PredicateLanguageError.nestingTooDeep` past the depth bound.
    /// - Complexity: O(size of the predicate).
    public func compiled(for schema: (any KeyValueSchema)? = nil) throws -> CompiledPredicate {
        var compiler = PredicateCompiler(schema: schema)
        return CompiledPredicate(program: try compiler.compile(self), schema: schema)
    }

    /// A copy with every `$VARIABLE` in `variables` replaced by its value.
    open func withSubstitutionVariables(_ variables: [String: Any]) -> Self {
        guard let copy = PredicateSubstitution.substitute(self, variables) as? Self else { return self }
        return copy
    }

    /// Does nothing: predicates are always evaluable here (Foundation's secure-coding gate).
    open func allowEvaluation() {}

    /// Structural equality; constants compare by value (README "Predicate semantics").
    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSPredicate else { return false }
        return PredicateEquality.equal(self, other)
    }

    /// A hash consistent with `isEqual(_:)`.
    open override var hash: Int {
        PredicateEquality.hashValue(self)
    }
}

/// A predicate compiled once: evaluate it over many objects without re-resolving keys.
///
/// Obtain one from `NSPredicate.compiled(for:)`. Evaluation of a predicate compiled for a
/// `KeyValueSchema` reads `KeyValueSlotReadable` records of that schema by slot index.
public struct CompiledPredicate: @unchecked Sendable {
    let program: PredicateProgram
    let schema: (any KeyValueSchema)?

    /// Whether `object` satisfies the predicate.
    ///
    /// - Throws: `KeyValueCodingError.unknownKey`, `PredicateLanguageError` on a type mismatch or missing variable.
    public func evaluate(with object: Any?, substitutionVariables: [String: Any]? = nil) throws -> Bool {
        try program(EvaluationScope(object: object, schema: schema, variables: substitutionVariables ?? [:]))
    }

    /// Whether `record` satisfies the predicate; the fast entry point for the object layer's
    /// fetch loop (no dynamic cast of the record; slots are read when its schema is the compiled one).
    ///
    /// - Throws: `KeyValueCodingError.unknownKey`, `PredicateLanguageError` on a type mismatch or missing variable.
    public func evaluate(record: any KeyValueSlotReadable, substitutionVariables: [String: Any]? = nil) throws -> Bool {
        try program(EvaluationScope(record: record, schema: schema, variables: substitutionVariables ?? [:]))
    }
}

extension Sequence {
    /// The elements that satisfy `predicate`, in order: Foundation's `filtered(using:)` for Swift sequences.
    ///
    /// Elements for which evaluation fails are left out, as `evaluate(with:)` answers false for them.
    /// - Complexity: O(n) evaluations of a predicate compiled once.
    public func filtered(using predicate: NSPredicate) -> [Element] {
        guard let compiled = try? predicate.compiled() else { return [] }
        return filter { (try? compiled.evaluate(with: $0)) ?? false }
    }

    /// The elements that satisfy `predicate`, throwing the first evaluation error.
    public func filteredThrowing(using predicate: NSPredicate) throws -> [Element] {
        let compiled = try predicate.compiled()
        return try filter { try compiled.evaluate(with: $0) }
    }
}
