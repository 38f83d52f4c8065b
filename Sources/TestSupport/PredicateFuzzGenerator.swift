// Random predicate format strings for the fuzzer and the round-trip property test:
// generated formats (every operator, modifiers, arithmetic, functions, subqueries,
// TERNARY), mutations of them, and random format arguments.
import Foundation

/// Random format strings, mutations and arguments for the predicate fuzz target.
public struct PredicateFuzzGenerator {
    /// The seeded source of every choice: one seed, one sequence of cases.
    public var random: SeededRandom

    /// A generator drawing from `random`.
    public init(random: SeededRandom) { self.random = random }

    /// Objects to evaluate predicates on: nil, scalars, collections, dictionaries.
    nonisolated(unsafe) public static let samples: [Any?] = [
        nil, 3, "abc", Date(timeIntervalSinceReferenceDate: 0), [1, 2, 3], Set(["a"]),
        ["a": 2, "b": "x", "tags": ["a", "b"], "sub": ["a": 1, "items": [["a": 1], ["a": 3]]], "items": [["a": 5]]],
        NSDictionary(dictionary: ["a": NSNumber(value: 1.5), "b": NSString(string: "é")]),
    ]

    /// Pieces the mutator inserts.
    public static let fragments = [
        "a", "b", "tags", "sub.a", "items", "SELF", "$v", "$x", "==", "!=", "<", ">=", "=<", "<>", "BETWEEN", "IN",
        "CONTAINS", "LIKE", "MATCHES", "BEGINSWITH", "ENDSWITH", "AND", "OR", "NOT", "&&", "||", "!", "ANY", "ALL",
        "NONE", "SOME", "(", ")", "{", "}", "[", "]", ",", ".", "@count", "@sum", "@avg", "[c]", "[cd]", "%@", "%K",
        "%d", "%f", "%%", "'", "\"", "\\", "*", "?", "+", "-", "**", "/", "0x", "0b2", "1e", "1.5", "-0", "nil",
        "YES", "TRUEPREDICATE", "SUBQUERY(", "FUNCTION(", "TERNARY(", "CAST(", "FIRST", "LAST", "SIZE", "#", ":=",
        "UNION", "MINUS", "sum(", "now()", "é", "\u{0}", " ", "  ", "9223372036854775807", "[0]", "[-1]", "[99]",
    ]

    /// A random expression nested up to `depth` levels.
    public mutating func expression(_ depth: Int) -> String {
        switch depth <= 0 ? random.int(in: 0...3) : random.int(in: 0...9) {
        case 0: return random.pick(["a", "b", "tags", "sub.a", "items", "SELF", "$v", "#in"])
        case 1: return String(random.int(in: -5...5))
        case 2:
            return random.pick(["'a*'", "\"b?\"", "'é'", "'\\u0041'", "''", "1.5e2", "0x10", "nil", "YES", "%@", "%d"])
        case 3: return random.pick(["{1, 2}", "{}", "{'a', 'b'}", "CAST(0, 'NSDate')", "now()"])
        case 4:
            return expression(depth - 1) + random.pick([" + ", " - ", " * ", " / ", " ** "]) + expression(depth - 1)
        case 5: return "(" + expression(depth - 1) + ")"
        case 6: return random.pick(["sum", "max", "count", "abs", "sqrt"]) + "(" + expression(depth - 1) + ")"
        case 7:
            return random.pick(["a", "tags", "items"])
                + random.pick(["[FIRST]", "[LAST]", "[SIZE]", "[1]", ".@count", ".@avg.a"])
        case 8: return "SUBQUERY(items, $i, $i.a > " + expression(depth - 1) + ").@count"
        default:
            return "TERNARY(" + predicate(depth - 1) + ", " + expression(depth - 1) + ", " + expression(depth - 1) + ")"
        }
    }

    /// A random predicate nested up to `depth` levels.
    public mutating func predicate(_ depth: Int) -> String {
        switch depth <= 0 ? 0 : random.int(in: 0...4) {
        case 0:
            let modifier = random.chance(0.8) ? "" : random.pick(["ANY ", "ALL ", "NONE "])
            let op = random.pick([
                "==", "!=", "<", "<=", ">", ">=", "BETWEEN", "IN", "CONTAINS", "BEGINSWITH", "LIKE", "MATCHES",
            ])
            let options = random.chance(0.2) ? random.pick(["[c]", "[cd]", "[n]"]) : ""
            return modifier + expression(depth - 1) + " " + op + options + " " + expression(depth - 1)
        case 1: return predicate(depth - 1) + " AND " + predicate(depth - 1)
        case 2: return predicate(depth - 1) + " OR " + predicate(depth - 1)
        case 3: return "NOT (" + predicate(depth - 1) + ")"
        default: return random.pick(["TRUEPREDICATE", "FALSEPREDICATE"])
        }
    }

    /// Inserts, deletes, replaces or duplicates pieces of `format`.
    public mutating func mutate(_ format: String) -> String {
        var scalars = Array(format.unicodeScalars)
        for _ in 0..<random.int(in: 1...4) {
            let position = scalars.isEmpty ? 0 : random.int(in: 0...scalars.count)
            switch random.int(in: 0...3) {
            case 0: scalars.insert(contentsOf: random.pick(Self.fragments).unicodeScalars, at: position)
            case 1: if position < scalars.count { scalars.remove(at: position) }
            case 2:
                if position < scalars.count, let scalar = Unicode.Scalar(UInt32(random.int(in: 0...0x7F))) {
                    scalars[position] = scalar
                }
            default:
                let end = min(scalars.count, position + random.int(in: 0...8))
                scalars.insert(contentsOf: scalars[position..<end], at: end)
            }
        }
        var text = String.UnicodeScalarView()
        text.append(contentsOf: scalars)
        return String(text)
    }

    /// A random format argument.
    public mutating func argument() -> Any {
        switch random.int(in: 0...11) {
        case 0: return random.int(in: -100...100)
        case 1: return random.pick(["a", "b.c", "", "%@", "'", "sub.a", "@count"])
        case 2: return Double(random.int(in: -100...100)) / 4
        case 3: return random.chance(0.5)
        case 4: return Date(timeIntervalSinceReferenceDate: Double(random.int(in: 0...1000)))
        case 5: return [1, 2, 3]
        case 6: return Set(["a", "b"])
        case 7: return Data(random.bytes(random.int(in: 0...4)))
        case 8: return UUID()
        case 9: return NSNumber(value: random.int(in: 0...3))
        case 10: return Int16(random.int(in: -3...3))
        default: return Optional<String>.none as Any
        }
    }
}

extension PredicateFuzzGenerator {
    /// Keys `%K` may bring that are not words: spaces, dots, digits first, punctuation,
    /// reserved words, operator-like and empty components.
    public static let awkwardKeys = [
        "first name", "a.b", "a..b", ".a", "a.", "@count", "@", "@1", "1abc", "a-b", "é", "SELF", "size", "#", "$x",
        "'", "\"", " ", "\0", "a b.c d", "FIRST", "in", "ANY", "a.@count", "@sum.a", "a.@avg", "%@", "%K", "(", "日本",
        "a\nb", "tab\t", "\\", "x.#y", "a.SELF", "nil", "YES", "a:b", "a[0]",
    ]

    /// A format with `%K` and `%@` placeholders and arguments that fit them, stressing the
    /// printer: long operator chains, deep NOT and parentheses, awkward keys.
    public mutating func stressFormat() -> (format: String, arguments: [Any]) {
        func count(_ limit: Int) -> Int { random.chance(0.5) ? random.int(in: 1...limit) : random.int(in: 1...8) }
        let key = { (generator: inout PredicateFuzzGenerator) in generator.random.pick(["a", "b", "sub.a", "tags"]) }
        switch random.int(in: 0...9) {
        case 0:
            var chain = key(&self)
            for _ in 0..<count(260) { chain += random.pick([" + ", " - ", " * ", " / "]) + key(&self) }
            return (chain + " == 1", [])
        case 1:
            var chain = "{1, 2}"
            for _ in 0..<count(260) { chain += random.pick([" UNION ", " INTERSECT ", " MINUS "]) + "tags" }
            return (chain + " CONTAINS 1", [])
        case 2:
            let chain = (0...count(70)).map { _ in key(&self) }.joined(separator: " ** ")
            return (chain + " > 1", [])
        case 3:
            return (String(repeating: random.pick(["NOT ", "!", "NOT("]), count: count(70)) + "a == 1", [])
        case 4:
            let depth = count(70)
            if random.chance(0.5) {
                return (String(repeating: "(", count: depth) + "a" + String(repeating: ")", count: depth) + " == 1", [])
            }
            return (String(repeating: "(", count: depth) + "a == 1" + String(repeating: ")", count: depth), [])
        case 5:
            let first = random.pick(Self.awkwardKeys)
            let last = (1..<random.int(in: 1...3)).reduce(first) { _, _ in random.pick(Self.awkwardKeys) }
            let op = random.pick(["==", "<", "CONTAINS[c]", "IN", "BEGINSWITH"])
            let format = random.chance(0.3) ? "%K.%K \(op) %@" : "%K \(op) %@"
            let arguments: [Any] = format.hasPrefix("%K.%K") ? [first, last] : [first]
            return (format, arguments + [argument()])
        case 6:
            return (String(repeating: "-", count: count(70)) + "a == 1", [])
        case 7:
            var text = "a == 0"
            for index in 0..<count(70) {
                let joiner = random.pick([" AND ", " OR ", " && ", " || "])
                text = random.chance(0.5) ? "(\(text))\(joiner)b == \(index)" : "b == \(index)\(joiner)(\(text))"
            }
            return (text, [])
        case 8:
            let suffixes = (0..<count(250)).map { _ in random.pick(["[0]", "[FIRST]", "[LAST]", ".a", ".@count"]) }
            return ("tags" + suffixes.joined() + " == 1", [])
        default:
            var expression = key(&self)
            for _ in 0..<count(70) {
                expression = random.pick(["abs(", "sum(", "TERNARY(a == 1, ", "-("]) + expression + ")"
                if expression.hasPrefix("TERNARY") { expression = String(expression.dropLast()) + ", 0)" }
            }
            return (expression + " == 1", [])
        }
    }
}
