// Random `subject op[options] pattern` cases over awkward Unicode — NULs, CR LF,
// combining marks, ligatures and case mappings that change length (ß → ss, ﬀ → ff,
// İ → i̇), Hangul, emoji — and the evaluation paths they must agree on: a constant
// right side, a substitution variable, a compiled predicate read by slot (constant and
// variable), key-value evaluation of a dictionary, and `StringOperatorOracle`. The
// fuzzer adds fetches from real stores (`opencoredata-fuzz predicate-strings`).
import Foundation
import OpenCoreData

/// One string comparison and the answers of every in-memory evaluation path.
public struct StringOperatorCase: CustomStringConvertible {
    /// The string searched (the stored value).
    public let subject: String
    /// The string searched for (the predicate's constant or variable).
    public let pattern: String
    /// The string operator compared with.
    public let operation: OpenCoreData.NSComparisonPredicate.Operator
    /// `[c]`, `[d]`, `[n]` and their combinations.
    public let options: OpenCoreData.NSComparisonPredicate.Options

    /// A case comparing `subject` with `pattern` by `operation` under `options`.
    public init(
        subject: String, pattern: String, operation: OpenCoreData.NSComparisonPredicate.Operator,
        options: OpenCoreData.NSComparisonPredicate.Options
    ) {
        self.subject = subject
        self.pattern = pattern
        self.operation = operation
        self.options = options
    }

    /// The operators generated: every string operator and the equalities.
    public static let operations: [OpenCoreData.NSComparisonPredicate.Operator] = [
        .equalTo, .notEqualTo, .beginsWith, .endsWith, .contains, .like, .matches, .in,
    ]

    /// The option sets generated (`[l]` is left out: it folds by the current locale).
    public static let optionSets: [OpenCoreData.NSComparisonPredicate.Options] = [
        [], .caseInsensitive, .diacriticInsensitive, [.caseInsensitive, .diacriticInsensitive], .normalized,
        [.caseInsensitive, .normalized], [.caseInsensitive, .diacriticInsensitive, .normalized],
    ]

    /// Pieces that fold, decompose, combine or split awkwardly.
    public static let pieces = [
        "a", "A", "s", "S", "ss", "SS", "ß", "ẞ", "f", "F", "ff", "FF", "ﬀ", "ﬁ", "ﬃ", "i", "I", "İ", "ı", "i\u{307}",
        "e", "E", "é", "É", "e\u{301}", "E\u{301}", "\u{301}", "\u{308}", "\u{345}", "ΐ", "ι", "Σ", "σ", "ς", "ŉ",
        "ʼn", "ǰ", "j\u{30C}", "\u{212A}", "k", "\u{212B}", "å", "Å", "Ω", "ω", "\u{2126}", "가", "\u{1100}\u{1161}",
        "\u{11A8}", "\r", "\n", "\r\n", "\0", "\0\0", " ", "*", "?", "\\", "%", "'", "\"", "🚀", "👍🏽", "🇫🇷",
        "\u{200D}", "ǅ", "Ǆ", "ǆ", "ﬆ", "ø", "Ø", "æ", "Æ", "œ", "ᾳ", "ᾼ", "Ꭰ", "ꭰ", "\u{1C80}", "\u{0640}", "ـ",
    ]

    /// A random scalar from the blocks where folding happens, or anywhere.
    static func randomScalar(_ random: inout SeededRandom) -> String {
        let ranges: [ClosedRange<UInt32>] = [
            0...0x7F, 0x80...0x24F, 0x300...0x36F, 0x370...0x3FF, 0x400...0x52F, 0x1E00...0x1FFF, 0xFB00...0xFB4F,
            0xAC00...0xAC40, 0x1100...0x11FF, 0x10400...0x1044F, 0...0x10FFFF,
        ]
        let range = random.pick(ranges)
        let value = UInt32(random.int(in: Int(range.lowerBound)...Int(range.upperBound)))
        return Unicode.Scalar(value).map { String($0) } ?? "\u{FFFD}"
    }

    static func randomText(_ random: inout SeededRandom, maximumPieces: Int) -> String {
        var text = ""
        for _ in 0..<random.int(in: 0...maximumPieces) {
            text += random.chance(0.8) ? random.pick(pieces) : randomScalar(&random)
        }
        return text
    }

    /// A random case: often the pattern is cut from the subject (at a scalar, so possibly
    /// inside a cluster) and recased or folded, so that matches are common.
    public static func random(_ random: inout SeededRandom) -> StringOperatorCase {
        let subject = randomText(&random, maximumPieces: 7)
        var pattern: String
        let scalars = Array(subject.unicodeScalars)
        if random.chance(0.6), !scalars.isEmpty {
            let start = random.int(in: 0...(scalars.count - 1))
            let end = random.int(in: start...scalars.count)
            var view = String.UnicodeScalarView()
            view.append(contentsOf: scalars[start..<end])
            pattern = String(view)
            switch random.int(in: 0...4) {
            case 0: pattern = pattern.uppercased()
            case 1: pattern = pattern.lowercased()
            case 2: pattern = pattern.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
            case 3: pattern = pattern.decomposedStringWithCanonicalMapping
            default: break
            }
        } else {
            pattern = randomText(&random, maximumPieces: 3)
        }
        let operation = random.pick(operations)
        if operation == .like {
            pattern = String(pattern.map { random.chance(0.25) ? random.pick(["*", "?"]) : $0 })
        } else if operation == .matches {
            let literal = NSRegularExpression.escapedPattern(for: pattern)
            pattern = random.chance(0.5) ? ".*" + literal + ".*" : literal
        }
        return StringOperatorCase(
            subject: subject, pattern: pattern, operation: operation, options: random.pick(optionSets))
    }

    /// The operator and options as a format string writes them.
    public var operatorText: String {
        var options = ""
        if self.options.contains(.caseInsensitive) { options += "c" }
        if self.options.contains(.diacriticInsensitive) { options += "d" }
        if self.options.contains(.normalized) { options += "n" }
        if self.options.contains(.localeSensitive) { options += "l" }
        return Self.operatorNames[operation, default: "?"] + (options.isEmpty ? "" : "[" + options + "]")
    }

    private static let operatorNames: [OpenCoreData.NSComparisonPredicate.Operator: String] = [
        .equalTo: "==", .notEqualTo: "!=", .beginsWith: "BEGINSWITH", .endsWith: "ENDSWITH", .contains: "CONTAINS",
        .like: "LIKE", .matches: "MATCHES", .in: "IN",
    ]

    /// The right side as a format argument: IN takes a collection holding the pattern.
    public var argument: Any { operation == .in ? [pattern] : pattern }

    /// `key op %@` (or `$pattern` for `variable`) as a predicate.
    public func predicate(key: String, variable: Bool = false) -> OpenCoreData.NSPredicate {
        variable
            ? OpenCoreData.NSPredicate(format: "\(key) \(operatorText) $pattern")
            : OpenCoreData.NSPredicate(format: "\(key) \(operatorText) %@", argumentArray: [argument])
    }

    /// The comparison as a predicate writes it, strings escaped.
    public var description: String {
        "\(subject.debugDescription) \(operatorText) \(pattern.debugDescription)"
    }

    /// The oracle's answer; nil for MATCHES (only the paths' agreement is checked).
    public var expected: Bool? {
        StringOperatorOracle.evaluate(operation, subject: subject, pattern: pattern, options: options)
    }

    /// Every in-memory path's answer, by name.
    public func answers() -> [(path: String, answer: Result<Bool, any Error>)] {
        let variables: [String: Any] = ["pattern": argument]
        let record = StringRecord(payload: subject)
        return [
            ("constant", Result { try predicate(key: "SELF").evaluateThrowing(with: subject) }),
            (
                "variable",
                Result {
                    try predicate(key: "SELF", variable: true).evaluateThrowing(
                        with: subject, substitutionVariables: variables)
                }
            ),
            ("key-value", Result { try predicate(key: "payload").evaluateThrowing(with: ["payload": subject]) }),
            (
                "compiled",
                Result { try predicate(key: "payload").compiled(for: record.schema).evaluate(record: record) }
            ),
            (
                "compiled variable",
                Result {
                    try predicate(key: "payload", variable: true).compiled(for: record.schema)
                        .evaluate(record: record, substitutionVariables: variables)
                }
            ),
        ]
    }

    /// A description of the first path whose answer differs from the oracle's, or that
    /// threw; for MATCHES (no oracle), of any disagreement between the paths. Nil when all agree.
    public func disagreement() -> String? {
        disagreement(with: answers())
    }

    /// `disagreement()` for `answers` (the in-memory paths' and any others).
    public func disagreement(with answers: [(path: String, answer: Result<Bool, any Error>)]) -> String? {
        func text(_ answer: Result<Bool, any Error>) -> String {
            switch answer {
            case .success(let value): String(value)
            case .failure(let error): "threw \(error)"
            }
        }
        let listed = answers.map { "\($0.path) \(text($0.answer))" }.joined(separator: ", ")
        if let expected {
            guard answers.allSatisfy({ (try? $0.answer.get()) == expected }) else {
                return "\(self): expected \(expected); \(listed)"
            }
            return nil
        }
        let values = Set(answers.map { try? $0.answer.get() })
        return values.count > 1 ? "\(self): the paths disagree; \(listed)" : nil
    }
}

/// The compiled paths' schema: one string slot, `payload`.
final class StringRecordSchema: KeyValueSchema, Sendable {
    static let shared = StringRecordSchema()
    let schemaName = "StringRecord"

    func slot(forKey key: String) -> KeyValueSlot? {
        key == "payload" ? KeyValueSlot(index: 0, kind: .attribute) : nil
    }
}

/// A record of `StringRecordSchema`.
final class StringRecord: KeyValueSlotReadable {
    let payload: String
    var schema: StringRecordSchema { StringRecordSchema.shared }
    var keyValueSchema: any KeyValueSchema { schema }

    init(payload: String) { self.payload = payload }

    func readValue(atSlot slot: Int) -> Any? { slot == 0 ? payload : nil }

    func readValue(forKey key: String) throws -> Any? {
        guard key == "payload" else { throw KeyValueCodingError.unknownKey(key, in: "StringRecord") }
        return payload
    }
}
