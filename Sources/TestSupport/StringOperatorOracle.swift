// A deliberately plain model of the string operators (README "Predicate semantics"),
// written apart from the evaluator so that tests and the fuzzer can check every
// evaluation path against it: a string is its grapheme clusters, each folded alone
// (canonical decomposition, Foundation's case and/or diacritic folding, canonical
// composition); clusters that fold to nothing drop out. A pattern is the concatenation
// of its folded clusters, and matches a run of whole clusters of the subject. No ASCII
// shortcuts, no Knuth-Morris-Pratt, no single-backtrack LIKE: every search here tries
// every start and end.
import Foundation
import OpenCoreData

/// The expected answer of `subject op[options] pattern` for the string operators.
public enum StringOperatorOracle {
    /// The folded clusters of `text`.
    public static func clusters(_ text: String, options: OpenCoreData.NSComparisonPredicate.Options) -> [[Unicode
        .Scalar]]
    {
        var compareOptions: String.CompareOptions = []
        if options.contains(.caseInsensitive) { compareOptions.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { compareOptions.insert(.diacriticInsensitive) }
        return text.compactMap { character in
            let folded = String(character).decomposedStringWithCanonicalMapping
                .folding(options: compareOptions, locale: nil).precomposedStringWithCanonicalMapping
            return folded.isEmpty ? nil : Array(folded.unicodeScalars)
        }
    }

    /// The answer for `==`, `!=`, BEGINSWITH, ENDSWITH, CONTAINS, LIKE or IN (`pattern`
    /// alone in the collection); nil for an operator this model does not cover.
    public static func evaluate(
        _ operation: OpenCoreData.NSComparisonPredicate.Operator, subject: String, pattern: String,
        options: OpenCoreData.NSComparisonPredicate.Options
    ) -> Bool? {
        let text = clusters(subject, options: options)
        let wanted = Array(clusters(pattern, options: options).joined())
        /// Whether the clusters `start..<end` fold to exactly `scalars`.
        func spans(_ start: Int, _ end: Int, _ scalars: [Unicode.Scalar]) -> Bool {
            Array(text[start..<end].joined()) == scalars
        }
        switch operation {
        case .equalTo, .in: return Array(text.joined()) == wanted
        case .notEqualTo: return Array(text.joined()) != wanted
        case .beginsWith:
            return !wanted.isEmpty && (0...text.count).contains { spans(0, $0, wanted) }
        case .endsWith:
            return !wanted.isEmpty && (0...text.count).contains { spans($0, text.count, wanted) }
        case .contains:
            return !wanted.isEmpty
                && (0...text.count).contains { start in (start...text.count).contains { spans(start, $0, wanted) } }
        case .like: return like(text, pattern: pattern, options: options)
        default: return nil
        }
    }

    private enum LikeToken {
        case literal([Unicode.Scalar])
        case one
        case any
    }

    /// LIKE by recursion over every way to split the subject's clusters among the tokens.
    private static func like(
        _ text: [[Unicode.Scalar]], pattern: String, options: OpenCoreData.NSComparisonPredicate.Options
    )
        -> Bool
    {
        var tokens: [LikeToken] = []
        var escaping = false
        func literal(_ character: Character) {
            let scalars = Array(clusters(String(character), options: options).joined())
            if case .literal(let run) = tokens.last {
                tokens[tokens.count - 1] = .literal(run + scalars)
            } else {
                tokens.append(.literal(scalars))
            }
        }
        for character in pattern {
            if escaping {
                literal(character)
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else if character == "*" {
                tokens.append(.any)
            } else if character == "?" {
                tokens.append(.one)
            } else {
                literal(character)
            }
        }
        if escaping { literal("\\") }
        var known: [Int: Bool] = [:]
        func match(_ cluster: Int, _ token: Int) -> Bool {
            let key = cluster * (tokens.count + 1) + token
            if let answer = known[key] { return answer }
            let answer: Bool
            if token == tokens.count {
                answer = cluster == text.count
            } else {
                switch tokens[token] {
                case .any: answer = (cluster...text.count).contains { match($0, token + 1) }
                case .one: answer = cluster < text.count && match(cluster + 1, token + 1)
                case .literal(let run):
                    answer = (cluster...text.count).contains {
                        Array(text[cluster..<$0].joined()) == run && match($0, token + 1)
                    }
                }
            }
            known[key] = answer
            return answer
        }
        return match(0, 0)
    }
}
