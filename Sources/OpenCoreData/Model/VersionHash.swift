// Stable digests for version hashes: the same description always gives the same
// bytes, on every platform and run. Not cryptographic; it detects model changes.
import Foundation

enum VersionHash {
    /// 32 bytes from four independently seeded 64-bit FNV-1a passes over the components.
    static func digest(_ components: [String]) -> Data {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        for seed in 0..<4 as Range<UInt64> {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325 ^ (seed &* 0x9E37_79B9_7F4A_7C15)
            for component in components {
                for byte in component.utf8 {
                    hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
                }
                // A separator byte that cannot occur in UTF-8 keeps ["ab","c"] apart from ["a","bc"].
                hash = (hash ^ 0xFF) &* 0x100_0000_01b3
            }
            for shift in stride(from: 0, to: 64, by: 8) {
                bytes.append(UInt8(truncatingIfNeeded: hash >> UInt64(shift)))
            }
        }
        return Data(bytes)
    }
}
