// Object ID URIs as this library writes them — `x-coredata://STORE/Entity/pKEY`, every
// character a letter, digit, `-`, `_` or `.` — split by hand: URL's component accessors
// (host, path) re-parse the string and cost more than the rest of a fetch by ID. Any other
// text takes the URL path, so the answers are the same.
import Foundation

/// The three parts of a plain object ID URI; nil for anything that needs URL's parser.
struct PlainObjectURI {
    private static let prefix = "x-coredata://"

    let host: String
    let entity: String
    /// The last component, `p` and the key.
    let key: String

    init?(_ text: String) {
        var text = text
        guard
            let parts = text.withUTF8({ bytes -> [String]? in
                let prefix = Self.prefix.utf8
                guard bytes.count > prefix.count, bytes.starts(with: prefix) else { return nil }
                var parts: [String] = []
                var start = prefix.count
                for index in start...bytes.count {
                    let byte = index < bytes.count ? bytes[index] : UInt8(ascii: "/")
                    switch byte {
                    case UInt8(ascii: "/"):
                        guard index > start, parts.count < 3 else { return nil }
                        parts.append(
                            String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self))
                        start = index + 1
                    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
                        continue
                    default:
                        return nil
                    }
                }
                return parts
            }),
            // Dot segments are URL's to interpret.
            parts.count == 3, !parts.contains(where: { $0.allSatisfy { $0 == "." } })
        else { return nil }
        host = parts[0]
        entity = parts[1]
        key = parts[2]
    }
}
