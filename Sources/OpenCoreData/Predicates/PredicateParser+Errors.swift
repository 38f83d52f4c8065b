// The parser's errors: each names its position in the format, and the whole-format
// parse rewrites it to quote the format near that position.
import Foundation

extension PredicateParser {
    /// Runs `parse`, rewriting its error to name the format and show where it went wrong:
    /// `Unable to parse the format string "age >> 3" at position 5 (near ">> 3"): ...`.
    static func explained<T>(_ format: String, _ parse: () throws -> T) throws -> T {
        do {
            return try parse()
        } catch let error as PredicateLanguageError {
            guard let position = error.position else { throw error }
            let scalars = Array(format.unicodeScalars)
            func text(_ slice: ArraySlice<Unicode.Scalar>) -> String {
                var view = String.UnicodeScalarView()
                view.append(contentsOf: slice)
                return String(view)
            }
            let shown = scalars.count <= 120 ? format : text(scalars.prefix(117)) + "..."
            let start = min(position, scalars.count)
            let near =
                start < scalars.count
                ? " (near \"" + text(scalars[start..<min(scalars.count, start + 20)]) + "\")" : " (at the end)"
            throw PredicateLanguageError(
                error.kind,
                "Unable to parse the format string \"\(shown)\" at position \(position)\(near): \(error.message)")
        }
    }

    /// How an error message names `token`.
    func describe(_ token: PredicateToken) -> String {
        switch token.kind {
        case .identifier(let word, _): "'\(word)'"
        case .collectionOperator(let name): "'\(name)'"
        case .variable(let name): "'$\(name)'"
        case .string(let text): "string \"\(text)\""
        case .integer(let value): "number \(value)"
        case .double(let value): "number \(value)"
        case .placeholder(let letters): "'%\(letters)'"
        case .symbol(let symbol): "'\(symbol)'"
        case .end: "end of the format"
        }
    }

    /// A malformed-format error at `position`, or at the current token.
    func error(_ reason: String, at position: Int? = nil) -> PredicateLanguageError {
        Self.malformed(reason, at: position ?? current.position)
    }

    /// A malformed-format error at `position` (a character offset from 0).
    static func malformed(_ reason: String, at position: Int) -> PredicateLanguageError {
        PredicateLanguageError(.malformedFormat(position: position), reason)
    }
}
