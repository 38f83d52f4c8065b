// Object ID URIs as this library writes them — `x-coredata://STORE/Entity/pKEY`, every
// character a letter, digit, `-`, `_` or `.` — split by hand: URL's component accessors
// (host, path) re-parse the string and cost more than the rest of a fetch by ID. Any other
// text takes the URL path, so the answers are the same.
import Foundation

/// The three parts of a plain object ID URI; nil for anything that needs URL's parser.
struct PlainObjectURI {
    private static let prefix = Array("x-coredata://".utf8)

    let host: String
    let entity: String
    /// The last component, `p` and the key.
    let key: String

    init?(_ text: String) {
        var text = text
        guard
            let parts = text.withUTF8({ bytes -> [String]? in
                let prefix = Self.prefix
                guard let base = bytes.baseAddress, bytes.count > prefix.count, memcmp(base, prefix, prefix.count) == 0
                else {
                    return nil
                }
                var parts: [String] = []
                parts.reserveCapacity(3)
                var start = prefix.count
                // Dot segments ("." and "..") are URL's to interpret.
                var onlyDots = true
                for index in start...bytes.count {
                    let byte = index < bytes.count ? bytes[index] : UInt8(ascii: "/")
                    switch byte {
                    case UInt8(ascii: "/"):
                        guard index > start, !onlyDots, parts.count < 3 else { return nil }
                        parts.append(
                            String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self))
                        start = index + 1
                        onlyDots = true
                    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                        onlyDots = false
                    case UInt8(ascii: "."):
                        continue
                    default:
                        return nil
                    }
                }
                return parts
            }),
            parts.count == 3
        else { return nil }
        host = parts[0]
        entity = parts[1]
        key = parts[2]
    }
}
