// The comparison rules of the predicate language (README "Predicate semantics"):
// nil equals only nil and fails every ordering; numbers compare by value across
// widths and Bool; string options apply only when both sides are strings; values of
// different kinds are unequal, and ordering them is a type mismatch.
import Foundation

/// The string options of a comparison, as the evaluator applies them.
struct StringComparisonOptions: Equatable {
    var caseInsensitive = false
    var diacriticInsensitive = false
    var localeSensitive = false

    init(_ options: NSComparisonPredicate.Options) {
        caseInsensitive = options.contains(.caseInsensitive)
        diacriticInsensitive = options.contains(.diacriticInsensitive)
        localeSensitive = options.contains(.localeSensitive)
    }

    var folds: Bool { caseInsensitive || diacriticInsensitive }
}

extension PredicateValue {
    /// Equality as `==` means it (`isEqual:`), with string options for two strings.
    func isEqual(to other: PredicateValue, options: StringComparisonOptions) -> Bool {
        switch (self, other) {
        case (.null, .null): return true
        case (.null, _), (_, .null): return false
        case (.string(let left), .string(let right)):
            guard options.folds else { return left == right }
            return FoldedString(left, options: options).scalars == FoldedString(right, options: options).scalars
        case (.date(let left), .date(let right)): return left == right
        case (.data(let left), .data(let right)): return left == right
        case (.uuid(let left), .uuid(let right)): return left == right
        case (.url(let left), .url(let right)): return left == right
        case (.collection(let left, let leftOrdered), .collection(let right, let rightOrdered)):
            guard left.count == right.count else { return false }
            if leftOrdered && rightOrdered {
                return zip(left, right).allSatisfy {
                    PredicateValue($0).isEqual(to: PredicateValue($1), options: options)
                }
            }
            var unmatched = right.map { PredicateValue($0) }
            for element in left {
                let value = PredicateValue(element)
                guard let index = unmatched.firstIndex(where: { value.isEqual(to: $0, options: options) }) else {
                    return false
                }
                unmatched.remove(at: index)
            }
            return true
        case (.dictionary(let left), .dictionary(let right)):
            guard left.count == right.count else { return false }
            return left.allSatisfy { key, value in
                guard let match = right[key] else { return false }
                return PredicateValue(value).isEqual(to: PredicateValue(match), options: options)
            }
        case (.object(let left), .object(let right)):
            if let left = left as? any PredicateIdentifiable, let right = right as? any PredicateIdentifiable {
                return left.predicateIdentity == right.predicateIdentity
            }
            if let left = left as? NSObject, let right = right as? NSObject { return left.isEqual(right) }
            if type(of: left) is AnyClass, type(of: right) is AnyClass, (left as AnyObject) === (right as AnyObject) {
                return true
            }
            if let left = left as? AnyHashable, let right = right as? AnyHashable { return left == right }
            return false
        default:
            if isNumber && other.isNumber { return compareNumbers(self, other) == .orderedSame }
            return false
        }
    }

    /// The order of two values, or nil when either is nil (nil fails every ordering).
    ///
    /// - Throws: `PredicateLanguageError.typeMismatch` for values of kinds that have no order between them.
    func order(against other: PredicateValue, options: StringComparisonOptions) throws -> ComparisonResult? {
        switch (self, other) {
        case (.null, _), (_, .null): return nil
        case (.string(let left), .string(let right)):
            if options.localeSensitive {
                return options.caseInsensitive
                    ? left.localizedCaseInsensitiveCompare(right) : left.localizedCompare(right)
            }
            let foldedLeft = options.fold(left)
            let foldedRight = options.fold(right)
            return foldedLeft == foldedRight
                ? .orderedSame : (foldedLeft < foldedRight ? .orderedAscending : .orderedDescending)
        case (.date(let left), .date(let right)):
            return left == right ? .orderedSame : (left < right ? .orderedAscending : .orderedDescending)
        case (.uuid(let left), .uuid(let right)):
            let l = left.uuidString
            let r = right.uuidString
            return l == r ? .orderedSame : (l < r ? .orderedAscending : .orderedDescending)
        default:
            if isNumber && other.isNumber { return compareNumbers(self, other) }
            throw PredicateLanguageError.typeMismatch("cannot order a \(kindName) against a \(other.kindName)")
        }
    }
}

/// Compares two numbers of any representation by value.
func compareNumbers(_ left: PredicateValue, _ right: PredicateValue) -> ComparisonResult {
    func order<T: Comparable>(_ a: T, _ b: T) -> ComparisonResult {
        a == b ? .orderedSame : (a < b ? .orderedAscending : .orderedDescending)
    }
    switch (left, right) {
    case (.integer(let a), .integer(let b)): return order(a, b)
    case (.decimal(let a), .decimal(let b)): return order(a, b)
    case (.decimal(let a), .integer(let b)): return order(a, Decimal(b))
    case (.integer(let a), .decimal(let b)): return order(Decimal(a), b)
    default:
        let a = left.doubleValue ?? .nan
        let b = right.doubleValue ?? .nan
        if a.isNaN || b.isNaN {
            return a.isNaN && b.isNaN ? .orderedSame : (a.isNaN ? .orderedAscending : .orderedDescending)
        }
        return order(a, b)
    }
}

/// A hashable stand-in for values whose equality is exact (no string options): equal keys
/// exactly when `isEqual(to:options: [])` is true. Lets distinct unions, set operations and
/// IN lists run in linear time; values without a key (objects, collections) compare pairwise.
enum PredicateHashKey: Hashable {
    case null
    case integer(Int64)
    case double(Double)
    case string(String)
    case date(Date)
    case data(Data)
    case uuid(UUID)
    case url(URL)

    init?(_ value: PredicateValue) {
        switch value {
        case .null: self = .null
        case .integer(let number): self = .integer(number)
        case .double(let number):
            if let integer = Int64(exactly: number) { self = .integer(integer) } else { self = .double(number) }
        case .decimal(let number):
            let double = NSDecimalNumber(decimal: number).doubleValue
            guard Decimal(double) == number else { return nil }
            if let integer = Int64(exactly: double) { self = .integer(integer) } else { self = .double(double) }
        case .string(let text): self = .string(text)
        case .date(let date): self = .date(date)
        case .data(let data): self = .data(data)
        case .uuid(let uuid): self = .uuid(uuid)
        case .url(let url): self = .url(url)
        case .collection, .dictionary, .object: return nil
        }
    }
}

/// Membership by predicate equality (no string options) in linear time where values hash.
struct PredicateValueSet {
    private var keys: Set<PredicateHashKey> = []
    private var others: [PredicateValue] = []

    init<S: Sequence>(_ values: S) where S.Element == PredicateValue {
        for value in values { insert(value) }
    }

    /// Adds `value`; false when an equal value is already present.
    @discardableResult
    mutating func insert(_ value: PredicateValue) -> Bool {
        if let key = PredicateHashKey(value) { return keys.insert(key).inserted }
        if contains(value) { return false }
        others.append(value)
        return true
    }

    func contains(_ value: PredicateValue) -> Bool {
        if let key = PredicateHashKey(value) { return keys.contains(key) }
        return others.contains { $0.isEqual(to: value, options: StringComparisonOptions([])) }
    }
}
