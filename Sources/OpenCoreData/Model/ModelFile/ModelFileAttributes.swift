// Reading one element's XML attributes by name, strictly: a model file is read whole
// or not at all, so an attribute this reader does not know is an error that names it,
// never a setting silently dropped. Attributes that only Xcode's editor and code
// generator use are read and ignored by name.
import Foundation

/// Where a model file element is: for errors found after the element was read.
struct ModelFilePosition: Sendable {
    let file: URL
    let line: Int
    let element: String

    func error(_ message: String) -> ModelFileError {
        ModelFileError(fileURL: file, line: line, element: element, message: message)
    }
}

/// The attributes of one element; ``finish()`` reports any attribute left unread.
struct ModelFileAttributes {
    let element: ModelFileElement
    let position: ModelFilePosition
    private var consumed: Set<String> = []

    init(_ element: ModelFileElement, file: URL) {
        self.element = element
        self.position = ModelFilePosition(file: file, line: element.line, element: element.name)
    }

    /// The value of `name`, if present.
    mutating func string(_ name: String) -> String? {
        consumed.insert(name)
        return element.attributes.first { $0.name == name }?.value
    }

    /// The value of `name`; an error when it is missing or empty.
    mutating func required(_ name: String) throws(ModelFileError) -> String {
        guard let value = string(name), !value.isEmpty else {
            throw error("the attribute '\(name)' is missing")
        }
        return value
    }

    /// The Boolean `name` ("YES" or "NO"), if present.
    mutating func flag(_ name: String) throws(ModelFileError) -> Bool? {
        guard let value = string(name) else { return nil }
        switch value {
        case "YES": return true
        case "NO": return false
        default: throw error("the attribute '\(name)' is '\(value)', not YES or NO")
        }
    }

    /// The non-negative integer `name`, if present.
    mutating func count(_ name: String) throws(ModelFileError) -> Int? {
        guard let value = string(name) else { return nil }
        guard let number = Int(value), number >= 0 else {
            throw error("the attribute '\(name)' is '\(value)', not a whole number")
        }
        return number
    }

    /// The number `name` (a time interval), if present.
    mutating func number(_ name: String) throws(ModelFileError) -> Double? {
        guard let value = string(name) else { return nil }
        guard let number = Double(value), number.isFinite else {
            throw error("the attribute '\(name)' is '\(value)', not a number")
        }
        return number
    }

    /// Marks editor-only attributes as read.
    mutating func ignore(_ names: String...) {
        consumed.formUnion(names)
    }

    /// Throws for the first attribute nobody read.
    func finish() throws(ModelFileError) {
        if let unknown = element.attributes.first(where: { !consumed.contains($0.name) }) {
            throw error("unknown attribute '\(unknown.name)'")
        }
    }

    /// Throws when the element has child elements (it should be empty).
    func requireNoChildren() throws(ModelFileError) {
        if let child = element.children.first {
            throw ModelFileError(
                fileURL: position.file, line: child.line, element: child.name,
                message: "unexpected element inside <\(element.name)>")
        }
    }

    func error(_ message: String) -> ModelFileError { position.error(message) }
}

extension ModelFileElement {
    /// An error for an element that does not belong where it is.
    func unexpected(in parent: String, file: URL) -> ModelFileError {
        ModelFileError(fileURL: file, line: line, element: name, message: "unknown element inside <\(parent)>")
    }
}
