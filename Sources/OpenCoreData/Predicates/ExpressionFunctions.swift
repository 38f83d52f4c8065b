// The functions of `NSExpression(forFunction:arguments:)`: statistics over a
// collection, arithmetic, math, string case, dates, bit operations, CAST, and the
// FUNCTION(receiver, 'selector') forms that make sense without an Objective-C runtime.
import Foundation

/// A type that answers `FUNCTION(object, 'name', arguments...)` in predicates, in place of
/// the Objective-C method call Foundation makes.
public protocol PredicateFunctionReceiver {
    /// The result of the named function with the argument values.
    ///
    /// - Throws: any error; it surfaces from the evaluation.
    func predicateFunction(_ name: String, arguments: [Any?]) throws -> Any?
}

/// Built-in functions by selector name.
enum ExpressionFunctions {
    /// Words that are keywords of the grammar and need `#` to be keys.
    static let reservedWords: Set<String> = [
        "AND", "OR", "NOT", "IN", "ALL", "ANY", "SOME", "NONE", "LIKE", "MATCHES", "CONTAINS", "BEGINSWITH",
        "ENDSWITH", "BETWEEN", "NULL", "NIL", "SELF", "TRUE", "YES", "FALSE", "NO", "FIRST", "LAST", "SIZE",
        "ANYKEY", "SUBQUERY", "FUNCTION", "CAST", "TERNARY", "TRUEPREDICATE", "FALSEPREDICATE", "UNION",
        "INTERSECT", "MINUS",
    ]

    /// Selector names of the built-in functions, with their number of arguments.
    static let arities: [String: Int] = [
        "sum:": 1, "count:": 1, "min:": 1, "max:": 1, "average:": 1, "median:": 1, "mode:": 1, "stddev:": 1,
        "add:to:": 2, "from:subtract:": 2, "multiply:by:": 2, "divide:by:": 2, "modulus:by:": 2,
        "sqrt:": 1, "log:": 1, "ln:": 1, "raise:toPower:": 2, "exp:": 1, "floor:": 1, "ceiling:": 1, "abs:": 1,
        "trunc:": 1, "uppercase:": 1, "lowercase:": 1, "random": 0, "random:": 1, "now": 0,
        "bitwiseAnd:with:": 2, "bitwiseOr:with:": 2, "bitwiseXor:with:": 2, "leftshift:by:": 2,
        "rightshift:by:": 2, "onesComplement:": 1, "noindex:": 1, "castObject:toType:": 2,
        "objectFrom:withIndex:": 2, "length:": 1,
    ]

    /// The selector for a name as written in a format (`sum`, `sum:`, `SUM`), nil when unknown.
    static func canonicalName(_ written: String) -> String? {
        let lowered = written.lowercased()
        for name in arities.keys where name.lowercased() == lowered { return name }
        let bare = lowered.hasSuffix(":") ? lowered : lowered + ":"
        for name in arities.keys where name.lowercased() == bare { return name }
        return nil
    }

    /// Applies the function `name` to argument values.
    ///
    /// - Throws: `PredicateLanguageError` for an unknown function, a wrong argument count or type.
    static func apply(_ name: String, _ arguments: [Any?]) throws -> Any? {
        guard let arity = arities[name] else {
            throw PredicateLanguageError(.unsupported, "unknown function '\(name)'")
        }
        guard arguments.count == arity else {
            throw PredicateLanguageError.typeMismatch("\(name) takes \(arity) argument(s), got \(arguments.count)")
        }
        switch name {
        case "sum:", "count:", "min:", "max:", "average:", "median:", "mode:", "stddev:":
            let elements = collectionElements(arguments[0]) ?? (arguments[0] == nil ? [] : [arguments[0]])
            return try Aggregates.apply(String(name.dropLast()), to: elements)
        case "add:to:", "from:subtract:", "multiply:by:", "divide:by:", "modulus:by:", "raise:toPower:":
            return try arithmetic(name, arguments[0], arguments[1])
        case "sqrt:", "log:", "ln:", "exp:", "floor:", "ceiling:", "abs:", "trunc:", "random:":
            return try math(name, arguments[0])
        case "uppercase:", "lowercase:":
            guard let text = try string(arguments[0], name) else { return nil }
            return name == "uppercase:" ? text.uppercased() : text.lowercased()
        case "length:":
            guard let text = try string(arguments[0], name) else { return nil }
            return text.count
        case "random": return Double.random(in: 0..<1)
        case "now": return Date()
        case "noindex:": return arguments[0]
        case "castObject:toType:": return try cast(arguments[0], to: arguments[1])
        case "objectFrom:withIndex:": return try element(of: arguments[0], at: arguments[1])
        default: return try bitwise(name, arguments)
        }
    }

    private static func string(_ value: Any?, _ name: String) throws -> String? {
        switch PredicateValue(value) {
        case .null: return nil
        case .string(let text): return text
        case let other: throw PredicateLanguageError.typeMismatch("\(name) needs a string, not a \(other.kindName)")
        }
    }

    private static func number(_ value: Any?, _ name: String) throws -> PredicateValue? {
        let classified = PredicateValue(value)
        if case .null = classified { return nil }
        guard classified.isNumber else {
            throw PredicateLanguageError.typeMismatch("\(name) needs a number, not a \(classified.kindName)")
        }
        return classified
    }

    /// `+ - * / %` and `**`: exact on integers while they fit, else Double; dates shift by seconds.
    static func arithmetic(_ name: String, _ left: Any?, _ right: Any?) throws -> Any? {
        let leftValue = PredicateValue(left)
        let rightValue = PredicateValue(right)
        if case .date(let date) = leftValue, let seconds = rightValue.doubleValue {
            if name == "add:to:" { return date.addingTimeInterval(seconds) }
            if name == "from:subtract:" { return date.addingTimeInterval(-seconds) }
        }
        if case .date(let date) = rightValue, let seconds = leftValue.doubleValue, name == "add:to:" {
            return date.addingTimeInterval(seconds)
        }
        if case .date(let a) = leftValue, case .date(let b) = rightValue, name == "from:subtract:" {
            return a.timeIntervalSince(b)
        }
        guard let a = try number(left, name), let b = try number(right, name) else { return nil }
        if case .integer(let x) = a, case .integer(let y) = b {
            let result: (Int64, Bool)?
            switch name {
            case "add:to:": result = x.addingReportingOverflow(y)
            case "from:subtract:": result = x.subtractingReportingOverflow(y)
            case "multiply:by:": result = x.multipliedReportingOverflow(by: y)
            case "modulus:by:":
                guard y != 0 else { throw PredicateLanguageError.typeMismatch("modulus by zero") }
                result = x.remainderReportingOverflow(dividingBy: y)
            default: result = nil
            }
            if let (value, overflow) = result, !overflow { return Int(value) }
        }
        let x = a.doubleValue ?? .nan
        let y = b.doubleValue ?? .nan
        switch name {
        case "add:to:": return x + y
        case "from:subtract:": return x - y
        case "multiply:by:": return x * y
        case "divide:by:": return x / y
        case "modulus:by:": return x.truncatingRemainder(dividingBy: y)
        default: return pow(x, y)
        }
    }

    private static func math(_ name: String, _ argument: Any?) throws -> Any? {
        guard let value = try number(argument, name) else { return nil }
        if case .integer(let integer) = value {
            switch name {
            case "abs:": return integer == .min ? Double(integer).magnitude : Int(abs(integer))
            case "floor:", "ceiling:", "trunc:": return Int(integer)
            case "random:": return integer > 0 ? Int(Int64.random(in: 0..<integer)) : 0
            default: break
            }
        }
        let x = value.doubleValue ?? .nan
        switch name {
        case "sqrt:": return x.squareRoot()
        case "log:": return log10(x)
        case "ln:": return Foundation.log(x)
        case "exp:": return Foundation.exp(x)
        case "floor:": return x.rounded(.down)
        case "ceiling:": return x.rounded(.up)
        case "abs:": return x.magnitude
        case "trunc:": return x.rounded(.towardZero)
        default: return x > 0 && x.isFinite ? Double.random(in: 0..<x) : 0.0
        }
    }

    private static func bitwise(_ name: String, _ arguments: [Any?]) throws -> Any? {
        var integers: [Int64] = []
        for argument in arguments {
            guard let value = try number(argument, name) else { return nil }
            guard case .integer(let integer) = value else {
                throw PredicateLanguageError.typeMismatch("\(name) needs integers")
            }
            integers.append(integer)
        }
        switch (name, integers.count) {
        case ("onesComplement:", 1): return Int(~integers[0])
        case ("bitwiseAnd:with:", 2): return Int(integers[0] & integers[1])
        case ("bitwiseOr:with:", 2): return Int(integers[0] | integers[1])
        case ("bitwiseXor:with:", 2): return Int(integers[0] ^ integers[1])
        case ("leftshift:by:", 2): return Int(integers[0] << min(max(integers[1], 0), 64))
        case ("rightshift:by:", 2): return Int(integers[0] >> min(max(integers[1], 0), 64))
        default: throw PredicateLanguageError(.unsupported, "unknown function '\(name)'")
        }
    }

    /// `CAST(value, 'Type')` for NSString, NSNumber, NSDate, NSDecimalNumber, NSData, NSUUID, NSURL.
    static func cast(_ value: Any?, to type: Any?) throws -> Any? {
        guard case .string(let typeName) = PredicateValue(type) else {
            throw PredicateLanguageError.typeMismatch("CAST needs a type name string")
        }
        let classified = PredicateValue(value)
        if case .null = classified { return nil }
        switch typeName {
        case "NSString", "String":
            switch classified {
            case .string(let text): return text
            case .integer(let number): return String(number)
            case .double(let number): return String(number)
            case .decimal(let number): return "\(number)"
            case .date(let date): return "\(date.timeIntervalSinceReferenceDate)"
            case .uuid(let uuid): return uuid.uuidString
            case .url(let url): return url.absoluteString
            default: return "\(value ?? "")"
            }
        case "NSNumber", "NSDecimalNumber":
            switch classified {
            case .integer, .double: return value
            case .decimal(let number):
                return typeName == "NSNumber" ? NSDecimalNumber(decimal: number).doubleValue : number
            case .string(let text):
                if typeName == "NSDecimalNumber" { return Decimal(string: text) }
                return Int(text) ?? Double(text)
            case .date(let date): return date.timeIntervalSinceReferenceDate
            default: break
            }
        case "NSDate", "Date":
            switch classified {
            case .date(let date): return date
            case .string(let text):
                guard let seconds = Double(text) else { break }
                return Date(timeIntervalSinceReferenceDate: seconds)
            default:
                if let seconds = classified.doubleValue { return Date(timeIntervalSinceReferenceDate: seconds) }
            }
        case "NSData", "Data":
            if case .data(let data) = classified { return data }
            if case .string(let text) = classified, let data = Data(base64Encoded: text) { return data }
        case "NSUUID", "UUID":
            if case .uuid(let uuid) = classified { return uuid }
            if case .string(let text) = classified, let uuid = UUID(uuidString: text) { return uuid }
        case "NSURL", "URL":
            if case .url(let url) = classified { return url }
            if case .string(let text) = classified, let url = URL(string: text) { return url }
        default:
            throw PredicateLanguageError(.unsupported, "CAST to '\(typeName)' is not supported")
        }
        throw PredicateLanguageError.typeMismatch("cannot CAST a \(classified.kindName) to \(typeName)")
    }

    /// `collection[index]`: arrays and ordered sets by position; dictionaries by key.
    static func element(of collection: Any?, at index: Any?) throws -> Any? {
        guard let collection = unwrapOptional(collection) else { return nil }
        if let dictionary = dictionaryValue(collection), let key = index as? AnyHashable {
            return dictionary[key]
        }
        guard let elements = collectionElements(collection) else {
            throw PredicateLanguageError.typeMismatch("only arrays, ordered sets and dictionaries can be indexed")
        }
        guard case .integer(let position) = PredicateValue(index) else {
            throw PredicateLanguageError.typeMismatch("an index must be an integer")
        }
        guard position >= 0, position < elements.count else {
            throw PredicateLanguageError.typeMismatch("index \(position) is beyond the \(elements.count) elements")
        }
        return elements[Int(position)]
    }

    /// `FUNCTION(receiver, 'selector', arguments...)`.
    static func call(_ receiver: Any?, _ selector: String, _ arguments: [Any?]) throws -> Any? {
        if let target = unwrapOptional(receiver) as? any PredicateFunctionReceiver {
            return try target.predicateFunction(selector, arguments: arguments)
        }
        let value = PredicateValue(receiver)
        switch (selector, value) {
        case (_, .null): return nil
        case ("valueForKey:", _), ("valueForKeyPath:", _):
            // Key-value coding by name, the form of Core Data's inferred mapping models
            // (`FUNCTION($source, "valueForKey:", "name")`).
            guard let key = arguments.first as? String else {
                throw PredicateLanguageError.typeMismatch("\(selector) takes a key string")
            }
            return try KeyValuePath.value(of: receiver, path: key.split(separator: ".").map(String.init)[...])
        case ("uppercaseString", .string(let text)): return text.uppercased()
        case ("lowercaseString", .string(let text)): return text.lowercased()
        case ("length", .string(let text)): return text.count
        case ("stringValue", _), ("description", _): return try cast(receiver, to: "NSString")
        case ("intValue", _), ("integerValue", _), ("longLongValue", _):
            guard let number = try cast(receiver, to: "NSNumber") else { return nil }
            return PredicateValue(number).doubleValue.map { Int(exactly: $0.rounded(.towardZero)) ?? 0 }
        case ("doubleValue", _), ("floatValue", _):
            guard let number = try cast(receiver, to: "NSNumber") else { return nil }
            return PredicateValue(number).doubleValue
        default:
            if let name = canonicalName(selector) { return try apply(name, [receiver] + arguments) }
            throw PredicateLanguageError(
                .unsupported, "FUNCTION selector '\(selector)' is not available for a \(value.kindName)")
        }
    }
}
