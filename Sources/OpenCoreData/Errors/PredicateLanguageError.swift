// The errors of the predicate language: a format string that does not parse, and an
// evaluation that cannot proceed (a type mismatch, a missing variable, nesting past
// the bound). Unknown keys surface as `KeyValueCodingError.unknownKey`.
import Foundation

/// An error parsing or evaluating a predicate or an expression.
///
/// `NSPredicate(format:)` does not throw, as in Core Data; a malformed format yields a
/// predicate that carries this error in `validationError`, evaluates to false, and makes
/// a fetch throw it. Bridged to `NSError` in `NSCocoaErrorDomain`: format errors use
/// `NSFormattingError` (2048), evaluation errors `NSCoreDataError` (134060).
public struct PredicateLanguageError: Error, Equatable, Hashable, CustomStringConvertible, CustomNSError {
    /// What went wrong.
    public enum Kind: Equatable, Hashable, Sendable {
        /// The format string is malformed at `position` (a character offset from 0).
        case malformedFormat(position: Int)
        /// The format string references more `%` arguments than were passed.
        case missingArgument(position: Int)
        /// An operand has a type the operator or function does not accept.
        case typeMismatch
        /// A `$VARIABLE` has no value in the substitution variables.
        case missingVariable(String)
        /// The predicate or expression nests deeper than the evaluator allows.
        case nestingTooDeep
        /// A `MATCHES` pattern is not a valid regular expression.
        case invalidRegularExpression
        /// The construct cannot be evaluated (e.g. an unknown function name).
        case unsupported
    }

    /// What went wrong.
    public let kind: Kind
    /// A sentence for people, naming the offending part.
    public let message: String

    /// Creates an error of `kind` explained by `message`.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The character offset in the format string, for format errors.
    public var position: Int? {
        switch kind {
        case .malformedFormat(let position), .missingArgument(let position): position
        default: nil
        }
    }

    /// The message.
    public var description: String { message }

    /// `NSCocoaErrorDomain`, as Core Data's errors.
    public static var errorDomain: String { NSCocoaErrorDomain }

    /// `NSFormattingError` for format strings, `NSCoreDataError` for evaluation.
    public var errorCode: Int {
        switch kind {
        case .malformedFormat, .missingArgument: CocoaError.formatting.rawValue
        default: NSCoreDataError
        }
    }

    /// The message under `NSLocalizedDescriptionKey`.
    public var errorUserInfo: [String: Any] { [NSLocalizedDescriptionKey: message] }

    static func typeMismatch(_ message: String) -> PredicateLanguageError {
        PredicateLanguageError(.typeMismatch, message)
    }
}
