// predicateFormat: prints trees back into the format language so that parsing the
// output gives an equal predicate. Values without a literal form print as CAST
// (dates as seconds since the reference date, data as base64, UUIDs, URLs, decimals).
import Foundation

/// Prints predicates and expressions as format strings.
enum PredicateFormatter {
    static func format(_ predicate: NSPredicate) -> String {
        guard predicate.depth <= PredicateCompiler.maximumDepth else {
            return "<predicate nested deeper than \(PredicateCompiler.maximumDepth) levels>"
        }
        if let comparison = predicate as? NSComparisonPredicate { return format(comparison) }
        if let compound = predicate as? NSCompoundPredicate { return format(compound) }
        switch predicate.content {
        case .value(let value): return value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .block: return "BLOCKPREDICATE(\(ObjectIdentifier(predicate)))"
        case .parsed(let tree): return format(tree)
        case .invalid(_, let format): return format
        case .subclass: return "\(type(of: predicate))"
        }
    }

    private static func format(_ comparison: NSComparisonPredicate) -> String {
        var text = ""
        switch comparison.comparisonPredicateModifier {
        case .direct: break
        case .any: text = "ANY "
        case .all: text = "ALL "
        }
        text += format(comparison.leftExpression) + " " + operatorName(comparison.predicateOperatorType)
        let options = comparison.options
        if !options.isEmpty {
            text += "["
            if options.contains(.caseInsensitive) { text += "c" }
            if options.contains(.diacriticInsensitive) { text += "d" }
            if options.contains(.normalized) { text += "n" }
            if options.contains(.localeSensitive) { text += "l" }
            text += "]"
        }
        return text + " " + format(comparison.rightExpression)
    }

    static func operatorName(_ type: NSComparisonPredicate.Operator) -> String {
        switch type {
        case .lessThan: "<"
        case .lessThanOrEqualTo: "<="
        case .greaterThan: ">"
        case .greaterThanOrEqualTo: ">="
        case .equalTo: "=="
        case .notEqualTo: "!="
        case .matches: "MATCHES"
        case .like: "LIKE"
        case .beginsWith: "BEGINSWITH"
        case .endsWith: "ENDSWITH"
        case .in: "IN"
        case .customSelector: "CUSTOMSELECTOR"
        case .contains: "CONTAINS"
        case .between: "BETWEEN"
        }
    }

    // Parentheses only where the grammar needs them: each pair is a nesting level the
    // parser counts, so a chain of NOTs or operators must print no deeper than it parsed.
    private static func format(_ compound: NSCompoundPredicate) -> String {
        /// A subpredicate of AND or OR: parenthesized when it is itself an AND or OR that
        /// would otherwise merge into the chain (same type) or bind looser (OR inside AND).
        func operand(_ predicate: NSPredicate) -> String {
            if let inner = predicate.resolved as? NSCompoundPredicate, inner.compoundPredicateType != .not,
                inner.subpredicates.count > 1,
                inner.compoundPredicateType == compound.compoundPredicateType || inner.compoundPredicateType == .or
            {
                return "(" + format(inner) + ")"
            }
            return format(predicate)
        }
        switch compound.compoundPredicateType {
        case .not:
            guard let first = compound.subpredicates.first else { return "NOT TRUEPREDICATE" }
            let inner = first.resolved
            if let operand = inner as? NSCompoundPredicate, operand.compoundPredicateType != .not,
                operand.subpredicates.count > 1
            {
                return "NOT (" + format(operand) + ")"
            }
            return "NOT " + format(inner)
        case .and:
            if compound.subpredicates.isEmpty { return "TRUEPREDICATE" }
            return compound.subpredicates.map(operand).joined(separator: " AND ")
        case .or:
            if compound.subpredicates.isEmpty { return "FALSEPREDICATE" }
            return compound.subpredicates.map(operand).joined(separator: " OR ")
        }
    }

    private static let infix: [String: String] = [
        "add:to:": "+", "from:subtract:": "-", "multiply:by:": "*", "divide:by:": "/", "raise:toPower:": "**",
    ]

    /// How tightly an expression's printed form binds, loosest first (the parser's levels).
    private enum Precedence: Int, Comparable {
        case set = 1
        case additive
        case multiplicative
        case power
        case primary

        static func < (left: Precedence, right: Precedence) -> Bool { left.rawValue < right.rawValue }

        init(_ expression: NSExpression) {
            switch expression.node {
            case .union, .intersect, .minus: self = .set
            case .function(let name, let arguments) where arguments.count == 2:
                switch name {
                case "add:to:", "from:subtract:": self = .additive
                case "multiply:by:", "divide:by:": self = .multiplicative
                case "raise:toPower:": self = .power
                default: self = .primary
                }
            default: self = .primary
            }
        }
    }

    static func format(_ expression: NSExpression) -> String {
        guard expression.depth <= PredicateCompiler.maximumDepth else {
            return "<expression nested deeper than \(PredicateCompiler.maximumDepth) levels>"
        }
        switch expression.node {
        case .constant(let value): return formatConstant(value)
        case .evaluatedObject: return "SELF"
        case .variable(let name): return "$" + name
        case .keyPath(let path): return formatKeyPath(path)
        case .member(let base, let path): return postfixBase(base) + "." + formatKeyPath(path)
        case .function(let name, let arguments):
            if let symbol = infix[name], arguments.count == 2 {
                return binary(expression, arguments[0], symbol, arguments[1])
            }
            if name == "castObject:toType:" { return "CAST(" + arguments.map(format).joined(separator: ", ") + ")" }
            return name + "(" + arguments.map(format).joined(separator: ", ") + ")"
        case .selector(let target, let name, let arguments):
            return "FUNCTION("
                + ([format(target), formatConstant(name)] + arguments.map(format)).joined(separator: ", ") + ")"
        case .index(let base, let specifier):
            let index: String
            switch specifier {
            case .first: index = "FIRST"
            case .last: index = "LAST"
            case .size: index = "SIZE"
            case .expression(let position): index = format(position)
            }
            return postfixBase(base) + "[" + index + "]"
        case .aggregate(let elements): return "{" + elements.map(format).joined(separator: ", ") + "}"
        case .subquery(let collection, let variable, let predicate):
            return "SUBQUERY(" + format(collection) + ", $" + variable + ", " + format(predicate) + ")"
        case .union(let left, let right): return binary(expression, left, "UNION", right)
        case .intersect(let left, let right): return binary(expression, left, "INTERSECT", right)
        case .minus(let left, let right): return binary(expression, left, "MINUS", right)
        case .conditional(let predicate, let yes, let no):
            return "TERNARY(" + format(predicate) + ", " + format(yes) + ", " + format(no) + ")"
        case .anyKey: return "ANYKEY"
        case .block(_, let arguments): return "BLOCK(" + arguments.map(format).joined(separator: ", ") + ")"
        case .invalid(let error): return "<invalid expression: \(error.message)>"
        }
    }

    /// `left symbol right`, each side parenthesized only when it binds looser than the
    /// operator, or as loosely on the side the operator does not group toward (`**`
    /// groups to the right, the others to the left).
    private static func binary(
        _ expression: NSExpression, _ left: NSExpression, _ symbol: String, _ right: NSExpression
    )
        -> String
    {
        let precedence = Precedence(expression)
        let rightAssociative = precedence == .power
        func side(_ operand: NSExpression, grouping: Bool) -> String {
            let inner = Precedence(operand)
            let text = format(operand)
            return inner < precedence || (inner == precedence && !grouping) ? "(" + text + ")" : text
        }
        return side(left, grouping: !rightAssociative) + " " + symbol + " " + side(right, grouping: rightAssociative)
    }

    /// The base of `.key` or `[index]`: parenthesized unless it is a primary that does not
    /// start with a sign or a digit (`-1.a` would read as `-(1.a)`, `1.a` as a number).
    private static func postfixBase(_ expression: NSExpression) -> String {
        let text = format(expression)
        if Precedence(expression) < .primary { return "(" + text + ")" }
        if case .constant = expression.node, let first = text.unicodeScalars.first,
            first == "-" || ("0"..."9").contains(first)
        {
            return "(" + text + ")"
        }
        return text
    }

    /// A key path: words as they are, reserved words as `#word`, any other key (spaces,
    /// punctuation, empty, a leading digit: what `%K` may bring) as `#"quoted"`.
    private static func formatKeyPath(_ path: String) -> String {
        PredicateCompiler.components(path).map { component in
            if component.hasPrefix("@"), isIdentifier(String(component.dropFirst())) { return component }
            if !isIdentifier(component) { return "#" + quote(component) }
            if ExpressionFunctions.reservedWords.contains(component.uppercased()) { return "#" + component }
            return component
        }.joined(separator: ".")
    }

    private static func isIdentifier(_ word: String) -> Bool {
        guard let first = word.unicodeScalars.first, first == "_" || first.properties.isAlphabetic else { return false }
        return word.unicodeScalars.allSatisfy {
            $0 == "_" || $0.properties.isAlphabetic || $0.properties.generalCategory == .decimalNumber
        }
    }

    /// A constant as a literal that parses back to an equal value.
    static func formatConstant(_ value: Any?) -> String {
        guard let value = unwrapOptional(value) else { return "nil" }
        if let flag = value as? Bool { return flag ? "YES" : "NO" }
        if let text = value as? String { return quote(text) }
        switch PredicateValue(value) {
        case .null: return "nil"
        case .integer(let number): return String(number)
        case .double(let number):
            if number.isFinite { return "\(number)" }
            return "CAST(" + quote(number.isNaN ? "nan" : (number < 0 ? "-inf" : "inf")) + ", \"NSNumber\")"
        case .decimal(let number): return "CAST(" + quote("\(number)") + ", \"NSDecimalNumber\")"
        case .string(let text): return quote(text)
        case .date(let date): return "CAST(\(date.timeIntervalSinceReferenceDate), \"NSDate\")"
        case .data(let data): return "CAST(" + quote(data.base64EncodedString()) + ", \"NSData\")"
        case .uuid(let uuid): return "CAST(" + quote(uuid.uuidString) + ", \"NSUUID\")"
        case .url(let url): return "CAST(" + quote(url.absoluteString) + ", \"NSURL\")"
        case .collection(let elements, _): return "{" + elements.map(formatConstant).joined(separator: ", ") + "}"
        case .dictionary(let dictionary): return quote("\(dictionary)")
        case .object(let object): return "\(object)"
        }
    }

    static func quote(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            case "\0": result += "\\0"
            case "%": result += "%%"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    result += String(format: "\\u%04X", scalar.value)
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }
}
