// Folding one grapheme cluster as the string options ask: canonical decomposition,
// Foundation's case and/or diacritic folding, canonical composition. ASCII folds in
// place; other clusters go through Foundation once and are remembered, since text
// repeats its clusters and Foundation's normalization and folding cost microseconds a
// call. Single scalars are remembered by value (cheap to hash), longer clusters by
// string.
import Foundation
import Synchronization

extension StringComparisonOptions {
    /// `string` with case and/or diacritics folded as the options ask, cluster by cluster
    /// (see `FoldedString`); unchanged when the options fold nothing.
    func fold(_ string: String) -> String {
        guard folds else { return string }
        // ASCII has no diacritics and one case mapping: skip Foundation's folding.
        if !localeSensitive, string.utf8.allSatisfy({ $0 < 0x80 }) {
            return caseInsensitive ? string.lowercased() : string
        }
        return FoldedString(string, options: self).string
    }

    /// Appends the scalars `character` folds to.
    func appendFolded(_ character: Character, to scalars: inout [UInt32]) {
        appendFolded(character.unicodeScalars[...], to: &scalars)
    }

    /// Appends the scalars the cluster `cluster` (one character's scalars) folds to.
    func appendFolded(_ cluster: Substring.UnicodeScalarView, to scalars: inout [UInt32]) {
        // A locale may fold ASCII too (Turkish lowercases I to ı), and can change between calls.
        guard !localeSensitive else {
            scalars.append(contentsOf: ClusterFolding.compute(String(cluster), self))
            return
        }
        guard let first = cluster.first else { return }
        let single = cluster.index(after: cluster.startIndex) == cluster.endIndex
        if first.isASCII, single {
            let byte = UInt8(first.value)
            scalars.append(UInt32(caseInsensitive ? ASCIIStringMatcher.lowercased(byte) : byte))
            return
        }
        if first == "\r", cluster.last == "\n", cluster.count == 2 {
            scalars.append(0x0D)
            scalars.append(0x0A)
            return
        }
        let options: UInt32 = (caseInsensitive ? 1 : 0) | (diacriticInsensitive ? 2 : 0)
        if single {
            let key = first.value | options << 21
            if let known = ClusterFolding.scalars.withLock({ $0[key] }) {
                scalars.append(contentsOf: known)
                return
            }
            let folded = ClusterFolding.compute(String(cluster), self)
            ClusterFolding.remember(folded, forScalar: key)
            scalars.append(contentsOf: folded)
            return
        }
        let key = ClusterFolding.Key(cluster: String(cluster), options: options)
        if let known = ClusterFolding.clusters.withLock({ $0[key] }) {
            scalars.append(contentsOf: known)
            return
        }
        let folded = ClusterFolding.compute(key.cluster, self)
        ClusterFolding.remember(folded, for: key)
        scalars.append(contentsOf: folded)
    }
}

/// The remembered folds of non-ASCII clusters.
enum ClusterFolding {
    struct Key: Hashable {
        /// Hashed and compared by canonical equivalence, as `String` is: equivalent clusters fold alike.
        let cluster: String
        let options: UInt32
    }

    /// Bounds memory on text with many distinct clusters; a table is emptied when full.
    static let capacity = 8_192
    /// Single-scalar clusters, by scalar value with the options in bits 21 and 22.
    static let scalars = Mutex<[UInt32: [UInt32]]>([:])
    /// Clusters of several scalars.
    static let clusters = Mutex<[Key: [UInt32]]>([:])

    static func remember(_ folded: [UInt32], forScalar key: UInt32) {
        scalars.withLock { table in
            if table.count >= capacity { table.removeAll(keepingCapacity: true) }
            table[key] = folded
        }
    }

    static func remember(_ folded: [UInt32], for key: Key) {
        clusters.withLock { table in
            if table.count >= capacity { table.removeAll(keepingCapacity: true) }
            table[key] = folded
        }
    }

    /// The fold of `cluster` through Foundation.
    static func compute(_ cluster: String, _ options: StringComparisonOptions) -> [UInt32] {
        var text = cluster.decomposedStringWithCanonicalMapping
        if options.folds {
            var compareOptions: String.CompareOptions = []
            if options.caseInsensitive { compareOptions.insert(.caseInsensitive) }
            if options.diacriticInsensitive { compareOptions.insert(.diacriticInsensitive) }
            text = text.folding(options: compareOptions, locale: options.localeSensitive ? .current : nil)
        }
        return text.precomposedStringWithCanonicalMapping.unicodeScalars.map(\.value)
    }
}
