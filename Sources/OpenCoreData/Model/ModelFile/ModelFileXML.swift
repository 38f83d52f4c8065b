// A strict reader for the XML that Xcode writes into a model's `contents` file.
//
// Why not Foundation's XMLParser: on Linux it lives in FoundationXML, which loads
// libxml2 at run time, so every program linking OpenCoreData would need libxml2
// installed to read a model; its line numbers also come from a callback that is off by
// one element on some inputs. Model files use a small subset of XML, read here whole:
//
//   document  = BOM? misc* element misc*
//   misc      = whitespace | <?...?> | <!--...--> | <!DOCTYPE ...> (no internal subset)
//   element   = "<" name (S attribute)* S? ("/>" | ">" content "</" name S? ">")
//   attribute = name S? "=" S? ('"' value '"' | "'" value "'")
//   content   = (whitespace | comment | element)*   (text is an error: models have none)
//   value     = characters and the references &lt; &gt; &amp; &quot; &apos; &#N; &#xN;
//
// Encoding UTF-8 only. Every error names the line and the element being read; nothing
// here traps on any input, and nesting is bounded.
import Foundation

/// One element of a model file: its name, attributes in document order, child
/// elements, and the line its start tag begins on.
struct ModelFileElement: Sendable {
    let name: String
    let attributes: [(name: String, value: String)]
    var children: [ModelFileElement]
    let line: Int
}

/// Reads a model file's XML into a tree of ``ModelFileElement``.
struct ModelFileXMLReader {
    /// Deeper nesting is refused: model files nest five levels deep.
    static let maximumDepth = 64

    private let bytes: [UInt8]
    private let file: URL
    private var offset = 0
    private var line = 1

    private init(_ data: Data, file: URL) {
        self.bytes = [UInt8](data)
        self.file = file
    }

    /// The root element of `data`, read from `file` (named in errors).
    ///
    /// - Throws: ``ModelFileError`` naming the line and element of the first problem.
    static func read(_ data: Data, file: URL) throws(ModelFileError) -> ModelFileElement {
        var reader = ModelFileXMLReader(data, file: file)
        return try reader.document()
    }

    // MARK: Document

    private mutating func document() throws(ModelFileError) -> ModelFileElement {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { offset = 3 }
        try miscellany(element: nil)
        guard peek() == UInt8(ascii: "<") else {
            throw error(atEnd() ? "the file holds no XML element" : "expected an XML element", element: nil)
        }
        let root = try element()
        try miscellany(element: nil)
        guard atEnd() else { throw error("unexpected content after the root element", element: root.name) }
        return root
    }

    /// Skips whitespace, comments, processing instructions and a DOCTYPE.
    private mutating func miscellany(element: String?) throws(ModelFileError) {
        while true {
            skipWhitespace()
            if starts(with: "<?") {
                let start = offset
                try skip(past: "?>", what: "processing instruction", element: element)
                try checkDeclaration(from: start)
            } else if starts(with: "<!--") {
                try skip(past: "-->", what: "comment", element: element)
            } else if starts(with: "<!DOCTYPE") {
                let start = line
                while let byte = peek(), byte != UInt8(ascii: ">") {
                    if byte == UInt8(ascii: "[") {
                        throw error("a DOCTYPE with an internal subset is not supported", element: element, line: start)
                    }
                    advance()
                }
                guard peek() != nil else { throw error("the DOCTYPE is not closed", element: element, line: start) }
                advance()
            } else {
                return
            }
        }
    }

    /// Refuses an XML declaration naming an encoding other than UTF-8.
    private func checkDeclaration(from start: Int) throws(ModelFileError) {
        guard let text = String(validating: bytes[start..<offset], as: UTF8.self), text.hasPrefix("<?xml ") else {
            return
        }
        if let range = text.range(of: "encoding=") {
            let value = text[range.upperBound...].dropFirst().prefix { $0 != "\"" && $0 != "'" }
            if value.uppercased() != "UTF-8" {
                throw error("the encoding '\(value)' is not supported (model files are UTF-8)", element: nil)
            }
        }
    }

    // MARK: Elements

    private mutating func element() throws(ModelFileError) -> ModelFileElement {
        // An explicit stack: a hostile file cannot exhaust the call stack.
        var stack: [ModelFileElement] = []
        while true {
            let startLine = line
            advance()  // "<"
            let name = try self.name(element: stack.last?.name)
            var attributes: [(name: String, value: String)] = []
            var selfClosing = false
            while true {
                let hadSpace = skipWhitespace()
                guard let byte = peek(), byte != UInt8(ascii: "<") else {
                    throw error("the start tag is not closed", element: name, line: startLine)
                }
                if byte == UInt8(ascii: "/") {
                    advance()
                    guard peek() == UInt8(ascii: ">") else { throw error("expected '>' after '/'", element: name) }
                    advance()
                    selfClosing = true
                    break
                }
                if byte == UInt8(ascii: ">") {
                    advance()
                    break
                }
                guard hadSpace else { throw error("expected whitespace before an attribute", element: name) }
                let attribute = try self.attribute(element: name)
                if attributes.contains(where: { $0.name == attribute.name }) {
                    throw error("the attribute '\(attribute.name)' appears twice", element: name)
                }
                attributes.append(attribute)
            }
            let node = ModelFileElement(name: name, attributes: attributes, children: [], line: startLine)
            if selfClosing {
                if let done = attach(node, to: &stack) { return done }
            } else {
                guard stack.count < ModelFileXMLReader.maximumDepth else {
                    throw error("elements nest more than \(ModelFileXMLReader.maximumDepth) levels deep", element: name)
                }
                stack.append(node)
            }
            // Content up to the next start tag, closing tags along the way.
            while let open = stack.last {
                try content(element: open.name)
                guard starts(with: "</") else { break }
                offset += 2
                let closing = try self.name(element: open.name)
                skipWhitespace()
                guard closing == open.name, peek() == UInt8(ascii: ">") else {
                    throw error(
                        "expected '</\(open.name)>' to close the element opened at line \(open.line)",
                        element: open.name)
                }
                advance()
                let finished = stack.removeLast()
                if let done = attach(finished, to: &stack) { return done }
            }
        }
    }

    /// Adds a finished element to its parent; returns it when it is the root.
    private func attach(_ node: ModelFileElement, to stack: inout [ModelFileElement]) -> ModelFileElement? {
        guard !stack.isEmpty else { return node }
        stack[stack.count - 1].children.append(node)
        return nil
    }

    /// Skips whitespace and comments inside `element`; stops at the next tag.
    private mutating func content(element: String) throws(ModelFileError) {
        while true {
            skipWhitespace()
            guard let byte = peek() else { throw error("the element is not closed", element: element) }
            if starts(with: "<!--") {
                try skip(past: "-->", what: "comment", element: element)
            } else if byte == UInt8(ascii: "<") {
                if starts(with: "<!") || starts(with: "<?") {
                    throw error("unexpected markup inside an element", element: element)
                }
                return
            } else {
                throw error("unexpected text inside an element (model files hold only elements)", element: element)
            }
        }
    }

    private mutating func attribute(element: String) throws(ModelFileError) -> (name: String, value: String) {
        let name = try self.name(element: element)
        skipWhitespace()
        guard peek() == UInt8(ascii: "=") else {
            throw error("expected '=' after the attribute '\(name)'", element: element)
        }
        advance()
        skipWhitespace()
        guard let quote = peek(), quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else {
            throw error("the value of the attribute '\(name)' is not quoted", element: element)
        }
        advance()
        var value: [UInt8] = []
        while true {
            guard let byte = peek() else { throw error("the value of '\(name)' is not closed", element: element) }
            advance()
            switch byte {
            case quote:
                guard let text = String(validating: value, as: UTF8.self) else {
                    throw error("the value of '\(name)' is not valid UTF-8", element: element)
                }
                return (name, text)
            case UInt8(ascii: "<"):
                throw error("'<' inside the value of '\(name)'", element: element)
            case UInt8(ascii: "&"):
                value.append(contentsOf: try reference(element: element))
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"):
                // Attribute-value normalization (XML 1.0 §3.3.3): literal line breaks and
                // tabs read as spaces; Xcode writes them as character references.
                value.append(UInt8(ascii: " "))
            default:
                value.append(byte)
            }
        }
    }

    /// The UTF-8 bytes of the reference after "&".
    private mutating func reference(element: String) throws(ModelFileError) -> [UInt8] {
        var name: [UInt8] = []
        while let byte = peek(), byte != UInt8(ascii: ";") {
            guard name.count < 12 else { break }
            name.append(byte)
            advance()
        }
        guard peek() == UInt8(ascii: ";"), let text = String(validating: name, as: UTF8.self) else {
            throw error("an '&' that does not start a reference (write &amp;)", element: element)
        }
        advance()
        switch text {
        case "lt": return [UInt8(ascii: "<")]
        case "gt": return [UInt8(ascii: ">")]
        case "amp": return [UInt8(ascii: "&")]
        case "quot": return [UInt8(ascii: "\"")]
        case "apos": return [UInt8(ascii: "'")]
        default:
            var digits = Substring(text)
            var radix = 10
            guard digits.first == "#" else { throw error("unknown entity '&\(text);'", element: element) }
            digits = digits.dropFirst()
            if digits.first == "x" {
                radix = 16
                digits = digits.dropFirst()
            }
            guard let code = UInt32(digits, radix: radix), let scalar = Unicode.Scalar(code), code != 0 else {
                throw error("invalid character reference '&\(text);'", element: element)
            }
            return Array(String(Character(scalar)).utf8)
        }
    }

    private mutating func name(element: String?) throws(ModelFileError) -> String {
        let start = offset
        while let byte = peek(), Self.isNameByte(byte) { advance() }
        guard offset > start, let name = String(validating: bytes[start..<offset], as: UTF8.self),
            let first = name.unicodeScalars.first, !("0"..."9").contains(first), first != "-", first != "."
        else {
            throw error("expected a name", element: element)
        }
        return name
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: ":"), UInt8(ascii: "-"),
            UInt8(ascii: "."), 0x80...0xFF:
            true
        default: false
        }
    }

    // MARK: Bytes

    private func peek() -> UInt8? { offset < bytes.count ? bytes[offset] : nil }

    private func atEnd() -> Bool { offset >= bytes.count }

    private mutating func advance() {
        if bytes[offset] == UInt8(ascii: "\n") { line += 1 }
        offset += 1
    }

    private func starts(with text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard offset + count <= bytes.count else { return false }
        return text.withUTF8Buffer { prefix in prefix.elementsEqual(bytes[offset..<offset + count]) }
    }

    @discardableResult
    private mutating func skipWhitespace() -> Bool {
        let start = offset
        while let byte = peek(),
            byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
                || byte == UInt8(ascii: "\t")
        {
            advance()
        }
        return offset > start
    }

    private mutating func skip(past terminator: StaticString, what: String, element: String?) throws(ModelFileError) {
        let start = line
        while !atEnd() {
            if starts(with: terminator) {
                offset += terminator.utf8CodeUnitCount
                return
            }
            advance()
        }
        throw error("the \(what) is not closed", element: element, line: start)
    }

    private func error(_ message: String, element: String?, line: Int? = nil) -> ModelFileError {
        ModelFileError(fileURL: file, line: line ?? self.line, element: element, message: message)
    }
}
