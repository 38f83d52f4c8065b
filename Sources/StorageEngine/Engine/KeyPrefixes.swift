// Many key prefixes in one buffer: an IN list's index points (`id IN {3, 17, 40, ...}`)
// as the planner makes them and ``Tree/scan(prefixes:_:)`` walks them. Each prefix names
// the entries whose keys begin with it, the range `prefix <= key < successor(prefix)`,
// without a successor key made per point: thousands of points cost two arrays, not three
// small ones each.
//
//   bytes   [p0 bytes][p1 bytes][p2 bytes]...      back to back
//   ends    [end of p0, end of p1, end of p2, ...] offsets in `bytes`; p(i) starts at ends[i-1] (0 for i = 0)

/// Key prefixes held back to back in one buffer, each naming the entries whose keys begin
/// with it.
///
/// ```swift
/// var points = KeyPrefixes()
/// points.append([0x10, 0x03])
/// points.append([0x10, 0x11])
/// try tree.scan(prefixes: points) { point, key, value in
///     print(point, Array(key))
///     return true
/// }
/// ```
public struct KeyPrefixes: Sendable, Equatable {
    /// The prefixes' bytes, back to back.
    public private(set) var bytes: [UInt8] = []
    /// Where each prefix ends in ``bytes``; the next one starts there.
    public private(set) var ends: [Int] = []

    /// No prefixes.
    public init() {}

    /// The prefixes of `keys`, in their order.
    public init(_ keys: [[UInt8]]) {
        ends.reserveCapacity(keys.count)
        for key in keys { append(key) }
    }

    /// The number of prefixes.
    public var count: Int { ends.count }

    /// Whether there are no prefixes.
    public var isEmpty: Bool { ends.isEmpty }

    /// The bytes of the prefix at `position`, which must be below ``count``.
    public subscript(position: Int) -> [UInt8] { Array(bytes[bounds(of: position)]) }

    /// Where the prefix at `position` lies in ``bytes``.
    public func bounds(of position: Int) -> Range<Int> {
        (position == 0 ? 0 : ends[position - 1])..<ends[position]
    }

    /// Reserves room for `prefixes` more prefixes of `bytesEach` bytes each.
    public mutating func reserveCapacity(_ prefixes: Int, bytesEach: Int) {
        ends.reserveCapacity(ends.count + prefixes)
        bytes.reserveCapacity(bytes.count + prefixes * bytesEach)
    }

    /// Appends `key` as the last prefix.
    public mutating func append(_ key: [UInt8]) {
        bytes.append(contentsOf: key)
        ends.append(bytes.count)
    }

    /// Appends `key` as the last prefix unless it equals the last one: prefixes appended
    /// in order stay distinct. Returns whether it was appended.
    @discardableResult
    public mutating func appendUnlessRepeated(_ key: [UInt8]) -> Bool {
        appendUnlessRepeated { $0.append(contentsOf: key) }
    }

    /// Appends what `write` appends to the buffer as the last prefix, written in place (no
    /// array per prefix), unless it equals the last one, which it is then taken back.
    /// Returns whether it was appended.
    @discardableResult
    public mutating func appendUnlessRepeated(_ write: (inout [UInt8]) -> Void) -> Bool {
        let start = bytes.count
        write(&bytes)
        let length = bytes.count - start
        if let previousEnd = ends.last {
            let previousStart = ends.count > 1 ? ends[ends.count - 2] : 0
            if previousEnd - previousStart == length {
                let repeated = bytes.withUnsafeBufferPointer { all in
                    (0..<length).allSatisfy { all[previousStart + $0] == all[start + $0] }
                }
                if repeated {
                    bytes.removeLast(length)
                    return false
                }
            }
        }
        ends.append(bytes.count)
        return true
    }

    /// The same prefixes, each preceded by `head` (a composite index's leading elements).
    public func prefixed(by head: [UInt8]) -> KeyPrefixes {
        guard !head.isEmpty else { return self }
        var result = KeyPrefixes()
        result.reserveCapacity(count, bytesEach: head.count + (count == 0 ? 0 : bytes.count / count))
        for position in 0..<count {
            result.bytes.append(contentsOf: head)
            result.bytes.append(contentsOf: bytes[bounds(of: position)])
            result.ends.append(result.bytes.count)
        }
        return result
    }
}
