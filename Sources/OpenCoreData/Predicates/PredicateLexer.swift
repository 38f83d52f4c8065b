// Splits a predicate format string into tokens. Positions count Unicode scalars from
// 0, so an error can point at the offending character. Keywords are recognized by the
// parser (case-insensitively); `#word` marks a word as a key, never a keyword, and
// `#"any text"` is a key that is no word (OpenCoreData's extension, so that keys `%K`
// brought print and parse back).
import Foundation

/// One token of a format string.
struct PredicateToken: Sendable {
    enum Kind: Equatable, Sendable {
        /// A bare word; `escaped` when written `#word` or `#"quoted"`.
        case identifier(String, escaped: Bool)
        /// A collection operator such as `@count`.
        case collectionOperator(String)
        /// `$name`
        case variable(String)
        case string(String)
        case integer(Int64)
        case double(Double)
        /// `%@`, `%K`, `%d`, ... (the letter(s) after `%`).
        case placeholder(String)
        /// Punctuation and symbolic operators: `(`, `==`, `&&`, `**`, ...
        case symbol(String)
        case end
    }

    let kind: Kind
    let position: Int
}

/// The tokenizer: one pass, no backtracking, every error with its position.
struct PredicateLexer {
    private let scalars: [Unicode.Scalar]
    private var index = 0

    init(_ text: String) {
        scalars = Array(text.unicodeScalars)
    }

    private static let symbols: [String] = [
        "==", "!=", "<>", "<=", "=<", ">=", "=>", "&&", "||", "**", ":=",
        "=", "<", ">", "!", "(", ")", "{", "}", "[", "]", ",", ".", "+", "-", "*", "/", ":",
    ]

    /// All tokens of the text, ending with `.end`.
    ///
    /// - Throws: `PredicateLanguageError.malformedFormat` at the first character that starts no token.
    mutating func tokenize() throws -> [PredicateToken] {
        var tokens: [PredicateToken] = []
        while true {
            skipWhitespace()
            let start = index
            guard let scalar = peek() else {
                tokens.append(PredicateToken(kind: .end, position: start))
                return tokens
            }
            let kind: PredicateToken.Kind
            if scalar == "\"" || scalar == "'" {
                kind = .string(try lexString(quote: scalar))
            } else if ("0"..."9").contains(scalar) {
                kind = try lexNumber()
            } else if isIdentifierStart(scalar) {
                kind = .identifier(lexWord(), escaped: false)
            } else if scalar == "#" {
                index += 1
                if let next = peek(), next == "\"" || next == "'" {
                    // `#"first name"`: a key that is no word, as predicateFormat prints what `%K` brought.
                    kind = .identifier(try lexString(quote: next), escaped: true)
                } else {
                    guard let next = peek(), isIdentifierStart(next) else {
                        throw malformed(start, "'#' must be followed by a key or a quoted key")
                    }
                    kind = .identifier(lexWord(), escaped: true)
                }
            } else if scalar == "$" {
                index += 1
                guard let next = peek(), isIdentifierStart(next) else {
                    throw malformed(start, "'$' must be followed by a variable name")
                }
                kind = .variable(lexWord())
            } else if scalar == "@" {
                index += 1
                guard let next = peek(), isIdentifierStart(next) else {
                    throw malformed(start, "'@' must be followed by a collection operator name")
                }
                kind = .collectionOperator("@" + lexWord())
            } else if scalar == "%" {
                kind = .placeholder(try lexPlaceholder())
            } else if let symbol = Self.symbols.first(where: matches) {
                index += symbol.unicodeScalars.count
                kind = .symbol(symbol)
            } else {
                throw malformed(start, "unexpected character '\(scalar)'")
            }
            tokens.append(PredicateToken(kind: kind, position: start))
        }
    }

    private func peek(_ offset: Int = 0) -> Unicode.Scalar? {
        let position = index + offset
        return position < scalars.count ? scalars[position] : nil
    }

    private func matches(_ symbol: String) -> Bool {
        var offset = 0
        for scalar in symbol.unicodeScalars {
            guard peek(offset) == scalar else { return false }
            offset += 1
        }
        return true
    }

    // ASCII answers first: Unicode property lookups cost more than lexing the rest of a
    // typical format string. The ASCII sets are the properties' own (White_Space: 9-13 and
    // space; Alphabetic: the letters; decimal numbers: the digits).

    private mutating func skipWhitespace() {
        while let scalar = peek(), Self.isWhitespace(scalar) { index += 1 }
    }

    private static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        guard scalar.isASCII else { return scalar.properties.isWhitespace }
        return scalar == " " || (9...13).contains(scalar.value)
    }

    private func isIdentifierStart(_ scalar: Unicode.Scalar) -> Bool {
        guard scalar.isASCII else { return scalar.properties.isAlphabetic }
        return scalar == "_" || ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
    }

    private func isIdentifierPart(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII { return isIdentifierStart(scalar) || ("0"..."9").contains(scalar) }
        return isIdentifierStart(scalar) || scalar.properties.generalCategory == .decimalNumber
    }

    private mutating func lexWord() -> String {
        var word = String.UnicodeScalarView()
        while let scalar = peek(), isIdentifierPart(scalar) {
            word.append(scalar)
            index += 1
        }
        return String(word)
    }

    private mutating func lexString(quote: Unicode.Scalar) throws -> String {
        let start = index
        index += 1
        var text = String.UnicodeScalarView()
        while true {
            guard let scalar = peek() else { throw malformed(start, "unterminated string literal") }
            index += 1
            if scalar == quote { return String(text) }
            if scalar == "%" && peek() == "%" {
                // `%%` is a literal percent sign, as in printf formats; a lone `%` is kept too.
                index += 1
                text.append("%")
                continue
            }
            guard scalar == "\\" else {
                text.append(scalar)
                continue
            }
            guard let escaped = peek() else { throw malformed(start, "unterminated string literal") }
            index += 1
            switch escaped {
            case "n": text.append("\n")
            case "t": text.append("\t")
            case "r": text.append("\r")
            case "0": text.append("\0")
            case "\\", "\"", "'": text.append(escaped)
            case "u":
                var value: UInt32 = 0
                for _ in 0..<4 {
                    guard let digit = peek(), let number = hexValue(digit) else {
                        throw malformed(index, "\\u needs four hexadecimal digits")
                    }
                    value = value * 16 + number
                    index += 1
                }
                guard let unicode = Unicode.Scalar(value) else { throw malformed(index, "invalid \\u escape") }
                text.append(unicode)
            default:
                // Unknown escapes keep their backslash, so LIKE patterns can escape `*` and `?`.
                text.append("\\")
                text.append(escaped)
            }
        }
    }

    private func hexValue(_ scalar: Unicode.Scalar) -> UInt32? {
        switch scalar {
        case "0"..."9": scalar.value - 48
        case "a"..."f": scalar.value - 87
        case "A"..."F": scalar.value - 55
        default: nil
        }
    }

    private mutating func lexNumber() throws -> PredicateToken.Kind {
        let start = index
        if peek() == "0", let prefix = peek(1), let radix = ["x": 16, "X": 16, "o": 8, "O": 8, "b": 2, "B": 2][prefix] {
            index += 2
            var digits = ""
            while let scalar = peek(), let value = hexValue(scalar), value < radix {
                digits.unicodeScalars.append(scalar)
                index += 1
            }
            if let scalar = peek(), isIdentifierPart(scalar) {
                throw malformed(index, "invalid digit '\(scalar)' in a base-\(radix) number")
            }
            guard !digits.isEmpty else { throw malformed(start, "a number needs digits after its prefix") }
            if let value = Int64(digits, radix: radix) { return .integer(value) }
            if let value = UInt64(digits, radix: radix) { return .double(Double(value)) }
            throw malformed(start, "number too large")
        }
        var text = ""
        var isFloat = false
        func digits() {
            while let scalar = peek(), ("0"..."9").contains(scalar) {
                text.unicodeScalars.append(scalar)
                index += 1
            }
        }
        digits()
        if peek() == ".", let next = peek(1), ("0"..."9").contains(next) {
            isFloat = true
            text += "."
            index += 1
            digits()
        }
        if let e = peek(), e == "e" || e == "E" {
            var offset = 1
            if let sign = peek(1), sign == "+" || sign == "-" { offset = 2 }
            if let digit = peek(offset), ("0"..."9").contains(digit) {
                isFloat = true
                for _ in 0..<offset {
                    if let scalar = peek() { text.unicodeScalars.append(scalar) }
                    index += 1
                }
                digits()
            }
        }
        if let scalar = peek(), isIdentifierStart(scalar) {
            throw malformed(index, "unexpected '\(scalar)' after a number")
        }
        if !isFloat, let value = Int64(text) { return .integer(value) }
        guard let value = Double(text) else { throw malformed(start, "invalid number '\(text)'") }
        return .double(value)
    }

    private mutating func lexPlaceholder() throws -> String {
        let start = index
        index += 1
        var letters = ""
        while let scalar = peek(), scalar == "l" || scalar == "h" || scalar == "q" {
            letters.unicodeScalars.append(scalar)
            index += 1
        }
        guard let scalar = peek() else { throw malformed(start, "'%' at the end of the format") }
        index += 1
        letters.unicodeScalars.append(scalar)
        let known: Set<String> = [
            "@", "K", "d", "i", "u", "ld", "li", "lu", "lld", "lli", "llu", "hd", "hi", "hu", "qd", "qi", "qu",
            "f", "lf", "e", "g", "x", "X", "o", "c", "%",
        ]
        guard known.contains(letters) else { throw malformed(start, "unknown format specifier '%\(letters)'") }
        return letters
    }

    private func malformed(_ position: Int, _ reason: String) -> PredicateLanguageError {
        PredicateLanguageError(
            .malformedFormat(position: position), reason
        )
    }
}
