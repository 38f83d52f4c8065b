// LIKE wildcards and MATCHES regular expressions, each compiled once per pattern.
// LIKE runs in O(text × pattern) at worst (one backtrack point, the last `*`).
// MATCHES bounds its work by refusing patterns and texts past fixed sizes, and
// patterns that nest quantifiers (the shape of catastrophic backtracking).
import Foundation

/// A compiled LIKE pattern: `*` any run, `?` one character, `\` escapes the next.
///
/// Literal characters fold as the options ask and match whole clusters of the folded
/// text (`FoldedString`); `?` is one cluster of the text.
struct LikePattern {
    enum Element: Equatable {
        case literal([UInt32])
        case anyCharacter
        case anyRun
    }

    let elements: [Element]
    let options: StringComparisonOptions

    init(_ pattern: String, options: StringComparisonOptions) {
        var elements: [Element] = []
        var escaping = false
        func literal(_ character: Character) {
            var scalars: [UInt32] = []
            if case .literal(let run) = elements.last {
                scalars = run
                elements.removeLast()
            }
            options.appendFolded(character, to: &scalars)
            if !scalars.isEmpty { elements.append(.literal(scalars)) }
        }
        for character in pattern {
            if escaping {
                literal(character)
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else if character == "*" {
                if elements.last != .anyRun { elements.append(.anyRun) }
            } else if character == "?" {
                elements.append(.anyCharacter)
            } else {
                literal(character)
            }
        }
        if escaping { literal("\\") }
        self.elements = elements
        self.options = options
    }

    /// Whether the whole of `text` matches.
    func matches(_ text: String) -> Bool { matches(FoldedString(text, options: options)) }

    /// Whether the whole of `text` matches. A literal run matches whole clusters and so
    /// has one width from a given start; hence the leftmost match of each part between
    /// stars ends earliest, and backtracking to the last star alone is complete.
    ///
    /// Complexity: O(text × pattern) scalars.
    func matches(_ text: FoldedString) -> Bool {
        let end = text.scalars.count
        var offset = 0
        var elementIndex = 0
        var starElement = -1
        var starOffset = 0
        while offset < end {
            if elementIndex < elements.count {
                switch elements[elementIndex] {
                case .anyRun:
                    starElement = elementIndex
                    starOffset = offset
                    elementIndex += 1
                    continue
                case .anyCharacter:
                    elementIndex += 1
                    offset = text.nextBoundary(after: offset)
                    continue
                case .literal(let run) where text.hasRun(run, at: offset):
                    elementIndex += 1
                    offset += run.count
                    continue
                default: break
                }
            }
            guard starElement >= 0 else { return false }
            elementIndex = starElement + 1
            starOffset = text.nextBoundary(after: starOffset)
            offset = starOffset
        }
        while elementIndex < elements.count, elements[elementIndex] == .anyRun { elementIndex += 1 }
        return elementIndex == elements.count
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
