// A catalog entry (SPEC.md §2.2): the catalog is a B+tree whose keys are tree names
// (UTF-8) and whose values are these 16 bytes.
//
//   offset size field
//        0    8 root page (0 = empty tree)
//        8    8 entry count

/// One named tree's root and entry count, as the catalog stores them.
struct CatalogEntry: Equatable {
    static let rootOffset = 0
    static let countOffset = 8
    static let size = 16

    var root: UInt64
    var count: UInt64

    init(root: UInt64, count: UInt64) {
        self.root = root
        self.count = count
    }

    /// Decodes a catalog value; nil when it is not ``size`` bytes.
    init?(decoding bytes: [UInt8]) {
        guard bytes.count == Self.size else { return nil }
        root = get64(bytes, Self.rootOffset)
        count = get64(bytes, Self.countOffset)
    }

    /// Calls `body` with the stored form, built on the stack (a commit writes one per
    /// changed tree).
    func withEncoded<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var fields = (root.littleEndian, count.littleEndian)
        return try withUnsafeBytes(of: &fields) { try body($0) }
    }

    /// The stored form.
    var encoded: [UInt8] {
        var bytes = [UInt8](repeating: 0, count: Self.size)
        put64(&bytes, Self.rootOffset, root)
        put64(&bytes, Self.countOffset, count)
        return bytes
    }
}
