// A regular-expression matcher with guaranteed linear work, for MATCHES: the pattern
// compiles to a small instruction list that a Pike VM runs over the text's Unicode
// scalars, all threads in lockstep — O(text × program) time and O(program) memory,
// whatever the pattern (no backtracking, so `(a+)+b` cannot blow up). It covers the
// ICU syntax predicates use: literals and escapes, `.`, classes with ranges and
// negation, `\d \w \s \D \W \S \b \B \p{..}`, groups, alternation, `* + ? {m,n}`
// (lazy forms), `^ $`. Patterns using anything else (back-references, look-around,
// possessive quantifiers, inline flags, nested class operations) are reported as
// unsupported, and MATCHES falls back to ICU with its guards.
import Foundation

/// A compiled pattern for whole-string matching in linear time.
struct RegularExpressionMachine {
    /// The largest program accepted (repetition counts expand into copies).
    static let maximumProgramSize = 20_000

    /// Why a pattern could not be compiled.
    enum CompileFailure: Error {
        /// The pattern uses a feature this matcher does not implement.
        case unsupported(String)
        /// The pattern is malformed.
        case invalid(String)
    }

    private enum ScalarTest {
        case scalar(Unicode.Scalar)
        case any
        case set(ranges: [ClosedRange<UInt32>], classes: [ClassName], negated: Bool)

        func matches(_ scalar: Unicode.Scalar, caseInsensitive: Bool) -> Bool {
            guard caseInsensitive else { return test(scalar) }
            if case .set(let ranges, let classes, let negated) = self {
                // Case-insensitive membership first, negation after: [^a] must reject "A" too.
                let inside = ([scalar] + variants(of: scalar)).contains { candidate in
                    ranges.contains { $0.contains(candidate.value) } || classes.contains { $0.contains(candidate) }
                }
                return inside != negated
            }
            return test(scalar) || variants(of: scalar).contains { test($0) }
        }

        private func variants(of scalar: Unicode.Scalar) -> [Unicode.Scalar] {
            let lower = scalar.properties.lowercaseMapping.unicodeScalars
            let upper = scalar.properties.uppercaseMapping.unicodeScalars
            var result: [Unicode.Scalar] = []
            if lower.count == 1, let first = lower.first, first != scalar { result.append(first) }
            if upper.count == 1, let first = upper.first, first != scalar { result.append(first) }
            return result
        }

        private func test(_ scalar: Unicode.Scalar) -> Bool {
            switch self {
            case .scalar(let expected): return scalar == expected
            case .any: return scalar != "\n" && scalar != "\r" && scalar != "\u{2028}" && scalar != "\u{2029}"
            case .set(let ranges, let classes, let negated):
                let inside = ranges.contains { $0.contains(scalar.value) } || classes.contains { $0.contains(scalar) }
                return inside != negated
            }
        }
    }

    fileprivate enum ClassName {
        case digit(Bool)
        case word(Bool)
        case space(Bool)
        case category(Set<Unicode.GeneralCategory>, Bool)

        func contains(_ scalar: Unicode.Scalar) -> Bool {
            switch self {
            case .digit(let negated): return (scalar.properties.generalCategory == .decimalNumber) != negated
            case .word(let negated): return RegularExpressionMachine.isWord(scalar) != negated
            case .space(let negated): return scalar.properties.isWhitespace != negated
            case .category(let categories, let negated):
                return categories.contains(scalar.properties.generalCategory) != negated
            }
        }
    }

    private enum Instruction {
        case test(ScalarTest)
        case split(Int, Int)
        case jump(Int)
        case lineStart
        case lineEnd
        case wordBoundary(Bool)
        case accept
    }

    private indirect enum Node {
        case test(ScalarTest)
        case sequence([Node])
        case alternation([Node])
        case repetition(Node, minimum: Int, maximum: Int?)
        case lineStart
        case lineEnd
        case wordBoundary(Bool)
    }

    private let program: [Instruction]
    private let caseInsensitive: Bool

    /// Compiles `pattern`.
    ///
    /// - Throws: `CompileFailure.unsupported` for features outside the covered syntax,
    ///   `.invalid` for malformed patterns.
    init(_ pattern: String, caseInsensitive: Bool) throws {
        var parser = Parser(scalars: Array(pattern.unicodeScalars))
        let node = try parser.parseAlternation(depth: 0)
        guard parser.index == parser.scalars.count else { throw CompileFailure.invalid("unbalanced ')'") }
        var program: [Instruction] = []
        try Self.emit(node, into: &program)
        program.append(.accept)
        self.program = program
        self.caseInsensitive = caseInsensitive
    }

    /// The most text length × program size one match may cost; beyond it the text does not match.
    static let workBudget = 100_000_000

    /// Whether the whole of `text` matches; false when the match would exceed `workBudget`.
    func matches(_ text: String) -> Bool {
        let scalars = Array(text.unicodeScalars)
        guard scalars.count.multipliedReportingOverflow(by: program.count).partialValue <= Self.workBudget,
            scalars.count <= Self.workBudget
        else { return false }
        var current = ThreadList(capacity: program.count)
        var next = ThreadList(capacity: program.count)
        addThread(0, to: &current, at: 0, in: scalars)
        for position in scalars.indices {
            if current.isEmpty { return false }
            let scalar = scalars[position]
            next.clear()
            for pc in current.members {
                if case .test(let test) = program[pc], test.matches(scalar, caseInsensitive: caseInsensitive) {
                    addThread(pc + 1, to: &next, at: position + 1, in: scalars)
                }
            }
            swap(&current, &next)
        }
        return current.members.contains { if case .accept = program[$0] { true } else { false } }
    }

    /// Adds `start` and every instruction reachable from it without consuming a scalar.
    private func addThread(_ start: Int, to list: inout ThreadList, at position: Int, in scalars: [Unicode.Scalar]) {
        var stack = [start]
        while let pc = stack.popLast() {
            guard pc < program.count, list.insert(pc) else { continue }
            switch program[pc] {
            case .jump(let target): stack.append(target)
            case .split(let first, let second):
                stack.append(second)
                stack.append(first)
            case .lineStart: if position == 0 { stack.append(pc + 1) }
            case .lineEnd: if position == scalars.count { stack.append(pc + 1) }
            case .wordBoundary(let wanted):
                let before = position > 0 && Self.isWord(scalars[position - 1])
                let after = position < scalars.count && Self.isWord(scalars[position])
                if (before != after) == wanted { stack.append(pc + 1) }
            case .test, .accept: break
            }
        }
    }

    fileprivate static func isWord(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "_" || scalar.properties.isAlphabetic || scalar.properties.generalCategory == .decimalNumber
            || scalar.properties.generalCategory == .nonspacingMark
    }

    /// A set of program counters with O(1) insert and clear, in insertion order.
    private struct ThreadList {
        var members: [Int] = []
        var present: [Bool]

        init(capacity: Int) { present = Array(repeating: false, count: capacity) }

        var isEmpty: Bool { members.isEmpty }

        mutating func insert(_ pc: Int) -> Bool {
            guard !present[pc] else { return false }
            present[pc] = true
            members.append(pc)
            return true
        }

        mutating func clear() {
            for pc in members { present[pc] = false }
            members.removeAll(keepingCapacity: true)
        }
    }

    // MARK: Code generation

    private static func emit(_ node: Node, into program: inout [Instruction]) throws {
        guard program.count < maximumProgramSize else {
            throw CompileFailure.unsupported("the pattern expands past \(maximumProgramSize) instructions")
        }
        switch node {
        case .test(let test): program.append(.test(test))
        case .lineStart: program.append(.lineStart)
        case .lineEnd: program.append(.lineEnd)
        case .wordBoundary(let wanted): program.append(.wordBoundary(wanted))
        case .sequence(let nodes):
            for inner in nodes { try emit(inner, into: &program) }
        case .alternation(let branches):
            // split L1, next; L1: branch; jump end; next: split ... ; last branch
            var jumps: [Int] = []
            for (offset, branch) in branches.enumerated() {
                if offset < branches.count - 1 {
                    let split = program.count
                    program.append(.split(split + 1, 0))
                    try emit(branch, into: &program)
                    jumps.append(program.count)
                    program.append(.jump(0))
                    program[split] = .split(split + 1, program.count)
                } else {
                    try emit(branch, into: &program)
                }
            }
            for jump in jumps { program[jump] = .jump(program.count) }
        case .repetition(let inner, let minimum, let maximum):
            for _ in 0..<minimum { try emit(inner, into: &program) }
            if let maximum {
                var exits: [Int] = []
                for _ in minimum..<max(minimum, maximum) {
                    exits.append(program.count)
                    program.append(.split(program.count + 1, 0))
                    try emit(inner, into: &program)
                }
                for exit in exits { program[exit] = .split(exit + 1, program.count) }
            } else {
                let loop = program.count
                program.append(.split(loop + 1, 0))
                try emit(inner, into: &program)
                program.append(.jump(loop))
                program[loop] = .split(loop + 1, program.count)
            }
        }
    }

    // MARK: Parsing

    private struct Parser {
        let scalars: [Unicode.Scalar]
        var index = 0

        static let maximumDepth = 64

        var current: Unicode.Scalar? { index < scalars.count ? scalars[index] : nil }

        mutating func parseAlternation(depth: Int) throws -> Node {
            guard depth < Self.maximumDepth else { throw CompileFailure.unsupported("groups nest too deeply") }
            var branches = [try parseSequence(depth: depth)]
            while current == "|" {
                index += 1
                branches.append(try parseSequence(depth: depth))
            }
            return branches.count == 1 ? branches[0] : .alternation(branches)
        }

        mutating func parseSequence(depth: Int) throws -> Node {
            var nodes: [Node] = []
            while let scalar = current, scalar != "|", scalar != ")" {
                var atom = try parseAtom(depth: depth)
                atom = try parseQuantifiers(atom)
                nodes.append(atom)
            }
            return .sequence(nodes)
        }

        mutating func parseQuantifiers(_ atom: Node) throws -> Node {
            var node = atom
            while let scalar = current {
                let bounds: (Int, Int?)
                switch scalar {
                case "*": bounds = (0, nil)
                case "+": bounds = (1, nil)
                case "?": bounds = (0, 1)
                case "{":
                    guard let parsed = try parseBraces() else { return node }
                    bounds = parsed
                default: return node
                }
                index += 1
                if case .lineStart = node { throw CompileFailure.invalid("nothing to repeat") }
                if current == "?" {
                    index += 1  // lazy: the same set of whole-string matches
                } else if current == "+" {
                    throw CompileFailure.unsupported("possessive quantifiers")
                }
                node = .repetition(node, minimum: bounds.0, maximum: bounds.1)
            }
            return node
        }

        /// `{n}`, `{n,}`, `{n,m}` at the current `{`; leaves the index on the closing `}`.
        mutating func parseBraces() throws -> (Int, Int?)? {
            var probe = index + 1
            func number() -> Int? {
                var value = 0
                var digits = 0
                while probe < scalars.count, let digit = Int(String(scalars[probe])), scalars[probe].isASCII {
                    value = min(value * 10 + digit, 100_000)
                    digits += 1
                    probe += 1
                }
                return digits > 0 ? value : nil
            }
            guard let minimum = number() else { return nil }
            var maximum: Int? = minimum
            if probe < scalars.count, scalars[probe] == "," {
                probe += 1
                maximum = number()
            }
            guard probe < scalars.count, scalars[probe] == "}" else { return nil }
            if let maximum, maximum < minimum {
                throw CompileFailure.invalid("{\(minimum),\(maximum)} is out of order")
            }
            index = probe
            return (minimum, maximum)
        }

        mutating func parseAtom(depth: Int) throws -> Node {
            guard let scalar = current else { throw CompileFailure.invalid("unexpected end") }
            index += 1
            switch scalar {
            case "(":
                if current == "?" {
                    index += 1
                    if current == ":" {
                        index += 1
                    } else if current == "<", index + 1 < scalars.count, scalars[index + 1] != "=",
                        scalars[index + 1] != "!"
                    {
                        while let name = current, name != ">" { index += 1 }
                        index += 1
                    } else {
                        throw CompileFailure.unsupported("look-around and inline flags")
                    }
                }
                let inner = try parseAlternation(depth: depth + 1)
                guard current == ")" else { throw CompileFailure.invalid("missing ')'") }
                index += 1
                return inner
            case ".": return .test(.any)
            case "^": return .lineStart
            case "$": return .lineEnd
            case "[": return .test(try parseClass())
            case "\\": return try parseEscape(inClass: false).node
            case "*", "+", "?": throw CompileFailure.invalid("nothing to repeat")
            case "{":
                index -= 1
                if try parseBraces() != nil { throw CompileFailure.invalid("nothing to repeat") }
                index += 1
                return .test(.scalar("{"))
            default: return .test(.scalar(scalar))
            }
        }

        mutating func parseEscape(inClass: Bool) throws -> (node: Node, scalar: Unicode.Scalar?, className: ClassName?)
        {
            guard let scalar = current else { throw CompileFailure.invalid("trailing backslash") }
            index += 1
            func literal(_ value: Unicode.Scalar) -> (Node, Unicode.Scalar?, ClassName?) {
                (.test(.scalar(value)), value, nil)
            }
            func named(_ name: ClassName) -> (Node, Unicode.Scalar?, ClassName?) {
                (.test(.set(ranges: [], classes: [name], negated: false)), nil, name)
            }
            switch scalar {
            case "d": return named(.digit(false))
            case "D": return named(.digit(true))
            case "w": return named(.word(false))
            case "W": return named(.word(true))
            case "s": return named(.space(false))
            case "S": return named(.space(true))
            case "b" where !inClass: return (.wordBoundary(true), nil, nil)
            case "B" where !inClass: return (.wordBoundary(false), nil, nil)
            case "n": return literal("\n")
            case "t": return literal("\t")
            case "r": return literal("\r")
            case "f": return literal("\u{0C}")
            case "v": return literal("\u{0B}")
            case "a": return literal("\u{07}")
            case "e": return literal("\u{1B}")
            case "u", "x":
                let count = scalar == "u" ? 4 : 2
                var value: UInt32 = 0
                if scalar == "x", current == "{" {
                    index += 1
                    while let digit = current, digit != "}" {
                        guard let nibble = UInt32(String(digit), radix: 16), value < 0x11_0000 else {
                            throw CompileFailure.invalid("bad \\x{...}")
                        }
                        value = value &* 16 &+ nibble
                        index += 1
                    }
                    index += 1
                } else {
                    for _ in 0..<count {
                        guard let digit = current, let nibble = UInt32(String(digit), radix: 16) else {
                            throw CompileFailure.invalid("bad \\\(scalar) escape")
                        }
                        value = value * 16 + nibble
                        index += 1
                    }
                }
                guard let result = Unicode.Scalar(value) else { throw CompileFailure.invalid("bad code point") }
                return literal(result)
            case "p", "P":
                guard current == "{" else { throw CompileFailure.unsupported("\\p without braces") }
                index += 1
                var name = ""
                while let letter = current, letter != "}" {
                    name.unicodeScalars.append(letter)
                    index += 1
                }
                index += 1
                guard let categories = Self.categories[name] else { throw CompileFailure.unsupported("\\p{\(name)}") }
                return named(.category(categories, scalar == "P"))
            default:
                if scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) {
                    throw CompileFailure.unsupported("the escape \\\(scalar)")
                }
                return literal(scalar)
            }
        }

        static let categories: [String: Set<Unicode.GeneralCategory>] = [
            "L": [.uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter],
            "Lu": [.uppercaseLetter], "Ll": [.lowercaseLetter], "Lt": [.titlecaseLetter],
            "N": [.decimalNumber, .letterNumber, .otherNumber], "Nd": [.decimalNumber],
            "P": [
                .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation, .initialPunctuation,
                .finalPunctuation, .otherPunctuation,
            ],
            "S": [.mathSymbol, .currencySymbol, .modifierSymbol, .otherSymbol], "Sm": [.mathSymbol],
            "Sc": [.currencySymbol],
            "Z": [.spaceSeparator, .lineSeparator, .paragraphSeparator], "Zs": [.spaceSeparator],
            "M": [.nonspacingMark, .spacingMark, .enclosingMark], "Mn": [.nonspacingMark],
        ]

        mutating func parseClass() throws -> ScalarTest {
            var negated = false
            if current == "^" {
                negated = true
                index += 1
            }
            var ranges: [ClosedRange<UInt32>] = []
            var classes: [ClassName] = []
            var first = true
            while true {
                guard let scalar = current else { throw CompileFailure.invalid("missing ']'") }
                if scalar == "]" && !first {
                    index += 1
                    break
                }
                first = false
                if scalar == "[" || (scalar == "&" && index + 1 < scalars.count && scalars[index + 1] == "&") {
                    throw CompileFailure.unsupported("nested classes and class operations")
                }
                index += 1
                var low: Unicode.Scalar
                if scalar == "\\" {
                    let escape = try parseEscape(inClass: true)
                    if let name = escape.className {
                        classes.append(name)
                        continue
                    }
                    guard let value = escape.scalar else { throw CompileFailure.unsupported("escape in a class") }
                    low = value
                } else {
                    low = scalar
                }
                if current == "-", index + 1 < scalars.count, scalars[index + 1] != "]" {
                    index += 1
                    guard var high = current else { throw CompileFailure.invalid("missing ']'") }
                    index += 1
                    if high == "\\" {
                        guard let value = try parseEscape(inClass: true).scalar else {
                            throw CompileFailure.invalid("bad range end")
                        }
                        high = value
                    }
                    guard low.value <= high.value else { throw CompileFailure.invalid("range out of order") }
                    ranges.append(low.value...high.value)
                } else {
                    ranges.append(low.value...low.value)
                }
            }
            return .set(ranges: ranges, classes: classes, negated: negated)
        }
    }
}
