// The operators of comparison predicates over classified values. `prepared(right:)`
// does the per-predicate work once when the right side is a constant: classifying
// it, folding its case and diacritics, compiling LIKE and MATCHES patterns, hashing
// IN lists — so per-object work is the left value only.
import Foundation

/// One operator with its string options.
struct ComparisonOperation {
    let type: NSComparisonPredicate.Operator
    let options: StringComparisonOptions
    let rawOptions: NSComparisonPredicate.Options

    init(type: NSComparisonPredicate.Operator, options: NSComparisonPredicate.Options) {
        self.type = type
        self.rawOptions = options
        self.options = StringComparisonOptions(options)
    }

    /// The operator as error messages name it: the format-string spelling.
    private var name: String {
        type == .customSelector ? "a custom selector" : PredicateFormatter.operatorName(type)
    }

    /// Compares two raw values.
    func evaluate(_ left: Any?, _ right: Any?) throws -> Bool {
        try evaluate(PredicateValue(left), PredicateValue(right))
    }

    /// Compares two classified values.
    func evaluate(_ left: PredicateValue, _ right: PredicateValue) throws -> Bool {
        switch type {
        case .equalTo: return left.isEqual(to: right, options: options)
        case .notEqualTo: return !left.isEqual(to: right, options: options)
        case .lessThan: return try left.order(against: right, options: options) == .orderedAscending
        case .lessThanOrEqualTo:
            guard let order = try left.order(against: right, options: options) else { return false }
            return order != .orderedDescending
        case .greaterThan: return try left.order(against: right, options: options) == .orderedDescending
        case .greaterThanOrEqualTo:
            guard let order = try left.order(against: right, options: options) else { return false }
            return order != .orderedAscending
        case .between:
            guard case .collection(let bounds, _) = right, bounds.count == 2 else {
                if case .null = right { return false }
                throw PredicateLanguageError.typeMismatch("BETWEEN needs a collection of two bounds, {low, high}")
            }
            return try between(left, PredicateValue(bounds[0]), PredicateValue(bounds[1]))
        case .in: return try membership(element: left, container: right)
        case .contains: return try membership(element: right, container: left)
        case .beginsWith, .endsWith, .like, .matches:
            guard let (subject, pattern) = try strings(left, right) else { return false }
            switch type {
            case .beginsWith: return StringSearch(.isPrefix, pattern: pattern, options: options).matches(subject)
            case .endsWith: return StringSearch(.isSuffix, pattern: pattern, options: options).matches(subject)
            case .like: return LikePattern(pattern, options: options).matches(subject)
            default:
                let expression = try RegularExpressionPattern(
                    options.diacriticInsensitive ? options.fold(pattern) : pattern,
                    caseInsensitive: options.caseInsensitive)
                return expression.matches(options.diacriticInsensitive ? options.fold(subject) : subject)
            }
        case .customSelector:
            throw PredicateLanguageError(.unsupported, "custom selector comparisons need an Objective-C runtime")
        }
    }

    private func between(_ value: PredicateValue, _ low: PredicateValue, _ high: PredicateValue) throws -> Bool {
        guard let lower = try value.order(against: low, options: options), lower != .orderedAscending else {
            return false
        }
        guard let upper = try value.order(against: high, options: options) else { return false }
        return upper != .orderedDescending
    }

    /// The two strings of a string operator; nil when either is nil.
    private func strings(_ left: PredicateValue, _ right: PredicateValue) throws -> (String, String)? {
        switch (left, right) {
        case (.null, _), (_, .null): return nil
        case (.string(let subject), .string(let pattern)): return (subject, pattern)
        default:
            let offender = left.kindName == "string" ? right : left
            throw PredicateLanguageError.typeMismatch("\(name) needs strings, not a \(offender.kindName)")
        }
    }

    /// IN / CONTAINS: membership for collections and dictionaries (their values), substring for strings.
    private func membership(element: PredicateValue, container: PredicateValue) throws -> Bool {
        switch container {
        case .null: return false
        case .collection(let elements, _):
            return elements.contains { PredicateValue($0).isEqual(to: element, options: options) }
        case .dictionary(let dictionary):
            return dictionary.values.contains { PredicateValue($0).isEqual(to: element, options: options) }
        case .string(let text):
            switch element {
            case .null: return false
            case .string(let part): return StringSearch(.isContained, pattern: part, options: options).matches(text)
            default:
                throw PredicateLanguageError.typeMismatch(
                    "\(name) on a string needs a string, not a \(element.kindName)")
            }
        default:
            throw PredicateLanguageError.typeMismatch(
                "\(name) needs a collection or a string, not a \(container.kindName)")
        }
    }

    /// A test of left values against the constant `right`, with the constant's work done once.
    func prepared(right constant: Any?) throws -> (Any?) throws -> Bool {
        let right = PredicateValue(constant)
        switch (type, right) {
        case (.equalTo, .string(let text)), (.notEqualTo, .string(let text)):
            let wanted = type == .equalTo
            let ascii = ASCIIStringMatcher(pattern: text, options: options)
            let folded = options.folds ? FoldedString(text, options: options).scalars : []
            func equals(_ subject: String) -> Bool {
                options.folds ? FoldedString(subject, options: options).scalars == folded : subject == text
            }
            return { value in
                if let subject = FastValue.string(value) {
                    if let equal = ascii?.equals(subject) { return equal == wanted }
                    return equals(subject) == wanted
                }
                if case .string(let subject) = PredicateValue(value) { return equals(subject) == wanted }
                return !wanted
            }
        case (.equalTo, .integer(let number)), (.notEqualTo, .integer(let number)):
            let wanted = type == .equalTo
            return { value in
                if let subject = FastValue.integer(value) { return (subject == number) == wanted }
                let left = PredicateValue(value)
                if case .integer(let subject) = left { return (subject == number) == wanted }
                return left.isEqual(to: right, options: options) == wanted
            }
        case (.lessThan, .integer), (.lessThanOrEqualTo, .integer), (.greaterThan, .integer),
            (.greaterThanOrEqualTo, .integer), (.lessThan, .double), (.lessThanOrEqualTo, .double),
            (.greaterThan, .double), (.greaterThanOrEqualTo, .double):
            // Numbers against a numeric constant: compare without the general ordering dispatch.
            let bound = right.doubleValue ?? .nan
            let type = type
            return { value in
                if let number = FastValue.number(value), !bound.isNaN {
                    switch type {
                    case .lessThan: return number < bound
                    case .lessThanOrEqualTo: return number <= bound
                    case .greaterThan: return number > bound
                    default: return number >= bound
                    }
                }
                let left = PredicateValue(value)
                let number: Double
                switch left {
                case .integer(let integer) where integer.magnitude < 1 << 53: number = Double(integer)
                case .double(let double): number = double
                case .null: return false
                default: return try evaluate(left, right)
                }
                if number.isNaN || bound.isNaN { return try evaluate(left, right) }
                switch type {
                case .lessThan: return number < bound
                case .lessThanOrEqualTo: return number <= bound
                case .greaterThan: return number > bound
                default: return number >= bound
                }
            }
        case (.like, .string(let pattern)):
            let compiled = LikePattern(pattern, options: options)
            return { value in
                switch PredicateValue(value) {
                case .null: return false
                case .string(let subject): return compiled.matches(subject)
                case let other: throw PredicateLanguageError.typeMismatch("LIKE needs strings, not a \(other.kindName)")
                }
            }
        case (.matches, .string(let pattern)):
            let fold = options.diacriticInsensitive
            let compiled = try RegularExpressionPattern(
                fold ? options.fold(pattern) : pattern, caseInsensitive: options.caseInsensitive)
            return { value in
                switch PredicateValue(value) {
                case .null: return false
                case .string(let subject): return compiled.matches(fold ? options.fold(subject) : subject)
                case let other:
                    throw PredicateLanguageError.typeMismatch("MATCHES needs strings, not a \(other.kindName)")
                }
            }
        case (.beginsWith, .string(let part)), (.endsWith, .string(let part)):
            let search = StringSearch(type == .beginsWith ? .isPrefix : .isSuffix, pattern: part, options: options)
            return { value in
                if let subject = FastValue.string(value) { return search.matches(subject) }
                switch PredicateValue(value) {
                case .null: return false
                case .string(let subject): return search.matches(subject)
                case let other:
                    throw PredicateLanguageError.typeMismatch("\(name) needs strings, not a \(other.kindName)")
                }
            }
        case (.contains, .string(let part)):
            // A substring test when the left side is a string; collections take the general path.
            let search = StringSearch(.isContained, pattern: part, options: options)
            return { value in
                if let subject = FastValue.string(value) { return search.matches(subject) }
                return try evaluate(PredicateValue(value), right)
            }
        case (.in, .collection(let elements, _)):
            let members = elements.map { PredicateValue($0) }
            if !options.folds {
                let set = PredicateValueSet(members)
                return { value in set.contains(PredicateValue(value)) }
            }
            return { value in
                let left = PredicateValue(value)
                return members.contains { $0.isEqual(to: left, options: options) }
            }
        case (.between, .collection(let bounds, _)) where bounds.count == 2:
            let low = PredicateValue(bounds[0])
            let high = PredicateValue(bounds[1])
            return { value in try between(PredicateValue(value), low, high) }
        default:
            return { value in try evaluate(PredicateValue(value), right) }
        }
    }
}
