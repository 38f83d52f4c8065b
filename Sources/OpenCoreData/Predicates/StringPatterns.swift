// LIKE wildcards and MATCHES regular expressions, each compiled once per pattern.
// LIKE runs in O(text × pattern) at worst (one backtrack point, the last `*`).
// MATCHES bounds its work by refusing patterns and texts past fixed sizes, and
// patterns that nest quantifiers (the shape of catastrophic backtracking).
import Foundation

/// A compiled LIKE pattern: `*` any run, `?` one character, `\` escapes the next.
struct LikePattern {
    enum Element: Equatable {
        case literal(Character)
        case anyCharacter
        case anyRun
    }

    let elements: [Element]

    init(_ pattern: String) {
        var elements: [Element] = []
        var escaping = false
        for character in pattern {
            if escaping {
                elements.append(.literal(character))
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else if character == "*" {
                if elements.last != .anyRun { elements.append(.anyRun) }
            } else if character == "?" {
                elements.append(.anyCharacter)
            } else {
                elements.append(.literal(character))
            }
        }
        if escaping { elements.append(.literal("\\")) }
        self.elements = elements
    }

    /// Whether the whole of `text` matches.
    func matches(_ text: String) -> Bool {
        let characters = Array(text)
        var textIndex = 0
        var patternIndex = 0
        var starPattern = -1
        var starText = 0
        while textIndex < characters.count {
            if patternIndex < elements.count {
                switch elements[patternIndex] {
                case .anyRun:
                    starPattern = patternIndex
                    starText = textIndex
                    patternIndex += 1
                    continue
                case .anyCharacter:
                    patternIndex += 1
                    textIndex += 1
                    continue
                case .literal(let character) where character == characters[textIndex]:
                    patternIndex += 1
                    textIndex += 1
                    continue
                default: break
                }
            }
            guard starPattern >= 0 else { return false }
            patternIndex = starPattern + 1
            starText += 1
            textIndex = starText
        }
        while patternIndex < elements.count, elements[patternIndex] == .anyRun { patternIndex += 1 }
        return patternIndex == elements.count
    }
}

/// A compiled MATCHES pattern: the whole string must match (ICU syntax, as Foundation).
///
/// Patterns run on `RegularExpressionMachine` (linear time, no backtracking). Patterns using
/// features it lacks (back-references, look-around, ...) run on ICU, guarded by size limits
/// and by refusing nested quantifiers, the shape of catastrophic backtracking.
struct RegularExpressionPattern {
    /// Longest accepted pattern, in characters.
    static let maximumPatternLength = 1_000
    /// Longest text matched; longer texts do not match (bounded work).
    static let maximumTextLength = 100_000

    private let machine: RegularExpressionMachine?
    private let expression: NSRegularExpression?

    /// - Throws: `PredicateLanguageError.invalidRegularExpression` for a bad, oversized or nested-quantifier pattern.
    init(_ pattern: String, caseInsensitive: Bool) throws {
        guard pattern.count <= Self.maximumPatternLength else {
            throw PredicateLanguageError(
                .invalidRegularExpression, "MATCHES pattern longer than \(Self.maximumPatternLength) characters")
        }
        if let machine = try? RegularExpressionMachine(pattern, caseInsensitive: caseInsensitive) {
            self.machine = machine
            expression = nil
            return
        }
        machine = nil
        if Self.nestsQuantifiers(pattern) {
            throw PredicateLanguageError(
                .invalidRegularExpression,
                "MATCHES pattern '\(pattern)' repeats a group that itself repeats (unbounded backtracking); rewrite it")
        }
        do {
            expression = try NSRegularExpression(
                pattern: "^(?:" + pattern + ")$", options: caseInsensitive ? [.caseInsensitive] : [])
        } catch {
            throw PredicateLanguageError(
                .invalidRegularExpression, "MATCHES pattern '\(pattern)' is not a valid regular expression")
        }
    }

    func matches(_ text: String) -> Bool {
        if let machine { return machine.matches(text) }
        guard let expression, text.utf16.count <= Self.maximumTextLength else { return false }
        let range = NSRange(location: 0, length: text.utf16.count)
        return expression.firstMatch(in: text, options: [.anchored], range: range) != nil
    }

    /// Whether a quantified group contains a quantifier, e.g. `(a+)+` or `(a|aa)*`-like nesting.
    static func nestsQuantifiers(_ pattern: String) -> Bool {
        var stack: [Bool] = []  // per open group: contains a quantifier or alternation
        var escaping = false
        var inClass = false
        var previousClosedGroupQuantified: Bool?
        for character in pattern {
            if escaping {
                escaping = false
                previousClosedGroupQuantified = nil
                continue
            }
            switch character {
            case "\\": escaping = true
            case "[": inClass = true
            case "]": inClass = false
            case "(" where !inClass:
                stack.append(false)
                previousClosedGroupQuantified = nil
            case ")" where !inClass:
                let inner = stack.popLast() ?? false
                previousClosedGroupQuantified = inner
                if inner, !stack.isEmpty { stack[stack.count - 1] = true }
                continue
            case "*", "+", "?", "{", "|":
                guard !inClass else { break }
                if previousClosedGroupQuantified == true && character != "|" && character != "?" { return true }
                if !stack.isEmpty { stack[stack.count - 1] = true }
            default: break
            }
            previousClosedGroupQuantified = nil
        }
        return false
    }
}
