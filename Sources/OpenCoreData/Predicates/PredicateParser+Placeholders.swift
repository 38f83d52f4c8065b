// Placeholders (`%@`, `%K`, `%d`, ...): each takes the next argument. A parse that binds
// arguments turns each into its expression here; a parse that builds a template
// (PredicateTemplate.swift) leaves a marker in its place, and binding the template later
// makes the same expression through `boundPlaceholder`, so both give one tree.
import Foundation

extension PredicateParser {
    /// The expression of the placeholder `%letters` at `position`, from the next argument
    /// (a template marker when building a template).
    ///
    /// - Throws: `.missingArgument` past the last argument; `.malformedFormat` for `%%` or an
    ///   argument the placeholder does not take.
    mutating func placeholder(_ letters: String, at position: Int) throws -> NSExpression {
        if letters == "%" {
            throw error("'%%' (a literal percent sign) can only appear inside a string", at: position)
        }
        let ordinal = argumentIndex
        if buildsTemplate {
            argumentIndex += 1
            // A parse that backs up at '(' meets the same placeholder again, as the same ordinal.
            let placeholder = PredicateTemplate.Placeholder(letters: letters, position: position)
            if ordinal < placeholders.count {
                placeholders[ordinal] = placeholder
            } else {
                placeholders.append(placeholder)
            }
            return NSExpression(forVariable: PredicateTemplate.markerName(ordinal))
        }
        guard ordinal < arguments.count else {
            throw PredicateLanguageError(.missingArgument(position: position), "no argument for '%\(letters)'")
        }
        argumentIndex += 1
        return try Self.boundPlaceholder(letters, unwrapOptional(arguments[ordinal]), at: position)
    }

    /// The expression the placeholder `%letters` at `position` makes of `argument`.
    ///
    /// - Throws: `.malformedFormat` when the placeholder does not take the argument (`%K`
    ///   without a key path string, a number placeholder without a number).
    static func boundPlaceholder(_ letters: String, _ argument: Any?, at position: Int) throws -> NSExpression {
        switch letters {
        case "K":
            guard let key = argument as? String ?? (argument as? NSString).map({ String(describing: $0) }), !key.isEmpty
            else {
                throw malformed("'%K' needs a key path string argument", at: position)
            }
            return NSExpression(forKeyPath: key)
        case "@":
            if let expression = expressionArgument(argument) { return expression }
            return NSExpression(forConstantValue: argument)
        case "c":
            guard let argument else { return NSExpression(forConstantValue: nil) }
            return NSExpression(forConstantValue: "\(argument)")
        default:
            let value = PredicateValue(argument)
            guard value.isNumber || argument == nil else {
                throw malformed("'%\(letters)' needs a number argument, got a \(value.kindName)", at: position)
            }
            let isFloatingPoint = letters == "f" || letters == "lf" || letters == "e" || letters == "g"
            if isFloatingPoint, let double = value.doubleValue {
                return NSExpression(forConstantValue: double)
            }
            return NSExpression(forConstantValue: argument)
        }
    }

    /// `argument` when it is an expression, nil otherwise. The argument's type is checked
    /// first: a cast of an array (an `IN %@` list of thousands of ids) to a class would try
    /// bridging it to `NSArray`, boxing every element, only to fail.
    static func expressionArgument(_ argument: Any?) -> NSExpression? {
        guard let argument, Swift.type(of: argument) is NSExpression.Type else { return nil }
        return argument as? NSExpression
    }

    /// Gives up building a template when `expression` is a placeholder's marker at a place
    /// where the parser shapes the tree by the argument's value (negating a number,
    /// joining a `%K` key path, folding a CAST, reading a FUNCTION's selector).
    func refuseInTemplate(_ expression: NSExpression) throws {
        if buildsTemplate, PredicateTemplate.isMarker(expression) { throw PredicateTemplate.Refusal() }
    }
}
