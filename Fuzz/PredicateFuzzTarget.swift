// Fuzz targets for the predicate language: random and mutated format strings with
// random arguments must parse or give an error, evaluate or throw — never trap or
// hang; what parses must print a format that re-parses to an equal predicate.
import Foundation
import OpenCoreData
import TestSupport

extension FuzzTarget {
    /// Parser, printer and evaluator over generated and mutated formats.
    static let predicateLanguage = FuzzTarget(
        name: "predicate", summary: "NSPredicate(format:) parse/print/evaluate on random and mutated formats"
    ) { random in
        var generator = PredicateFuzzGenerator(random: random)
        var format = generator.predicate(random.int(in: 0...4))
        if random.chance(0.6) { format = generator.mutate(format) }
        let arguments = (0..<random.int(in: 0...3)).map { _ in generator.argument() }
        random = generator.random
        let start = DispatchTime.now().uptimeNanoseconds
        let predicate = NSPredicate(format: format, argumentArray: arguments)
        if predicate.validationError == nil {
            let printed = predicate.predicateFormat
            let reparsed = NSPredicate(format: printed)
            if reparsed.validationError == nil, reparsed != predicate, !printed.contains("BLOCK") {
                throw FuzzFailure(
                    description: "round trip changed \(format.debugDescription) -> \(printed.debugDescription)")
            }
            for sample in PredicateFuzzGenerator.samples {
                _ = try? predicate.evaluateThrowing(with: sample, substitutionVariables: ["v": 1, "x": "a"])
                _ = predicate.evaluate(with: sample)
            }
        } else {
            _ = predicate.evaluate(with: PredicateFuzzGenerator.samples[0])
        }
        _ = NSExpression(format: format, argumentArray: arguments).expressionValue(with: nil, context: nil)
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        if elapsed > 2 {
            throw FuzzFailure(description: "took \(elapsed) s on \(format.debugDescription)")
        }
    }
}

/// Random format strings, mutations and arguments for the predicate fuzz target.
struct PredicateFuzzGenerator {
    var random: SeededRandom

    nonisolated(unsafe) static let samples: [Any?] = [
        nil, 3, "abc", Date(timeIntervalSinceReferenceDate: 0), [1, 2, 3], Set(["a"]),
        ["a": 2, "b": "x", "tags": ["a", "b"], "sub": ["a": 1, "items": [["a": 1], ["a": 3]]], "items": [["a": 5]]],
        NSDictionary(dictionary: ["a": NSNumber(value: 1.5), "b": NSString(string: "é")]),
    ]

    static let fragments = [
        "a", "b", "tags", "sub.a", "items", "SELF", "$v", "$x", "==", "!=", "<", ">=", "=<", "<>", "BETWEEN", "IN",
        "CONTAINS", "LIKE", "MATCHES", "BEGINSWITH", "ENDSWITH", "AND", "OR", "NOT", "&&", "||", "!", "ANY", "ALL",
        "NONE", "SOME", "(", ")", "{", "}", "[", "]", ",", ".", "@count", "@sum", "@avg", "[c]", "[cd]", "%@", "%K",
        "%d", "%f", "%%", "'", "\"", "\\", "*", "?", "+", "-", "**", "/", "0x", "0b2", "1e", "1.5", "-0", "nil",
        "YES", "TRUEPREDICATE", "SUBQUERY(", "FUNCTION(", "TERNARY(", "CAST(", "FIRST", "LAST", "SIZE", "#", ":=",
        "UNION", "MINUS", "sum(", "now()", "é", "\u{0}", " ", "  ", "9223372036854775807", "[0]", "[-1]", "[99]",
    ]

    mutating func expression(_ depth: Int) -> String {
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

    mutating func predicate(_ depth: Int) -> String {
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
    mutating func mutate(_ format: String) -> String {
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

    mutating func argument() -> Any {
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
