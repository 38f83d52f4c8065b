// Keeping the blob tree consistent with the rows: verify() checks that every blob is
// referenced by exactly one row and every reference has its blob (SPEC.md §3.8 X4), and a
// migration drops blobs no row refers to any more and inlines those of attributes that
// can no longer hold one.
import Foundation
import StorageEngine

extension PageFileStore {
    /// The property names by slot of each entity, from the stored metadata (nil when unreadable).
    static func storedSchema(_ meta: Tree) -> [String: [String]]? {
        guard let bytes = try? meta.value(forKey: metadataKey), bytes.first == metadataFormatVersion,
            let plist = try? PropertyListSerialization.propertyList(from: Data(bytes.dropFirst()), format: nil),
            let metadata = plist as? [String: Any]
        else { return nil }
        return metadata[schemaKey] as? [String: [String]]
    }

    /// Notes the blob references of one decoded row of `entityName` in `references` (blob
    /// prefix → rows referring to it); a reference the schema cannot name is a problem.
    static func noteBlobReferences(
        _ values: [StoreValue], primaryKey: Int64, entityName: String, schema: [String: [String]]?,
        into references: inout [[UInt8]: Int], report: inout PageFileVerificationReport
    ) {
        for (slot, value) in values.enumerated() {
            guard case .unresolved = value else { continue }
            guard let names = schema?[entityName], slot < names.count else {
                report.problems.append(
                    "rows.\(entityName): row \(primaryKey) has an external value in slot \(slot), "
                        + "which the stored schema does not name")
                continue
            }
            references[blobPrefix(primaryKey, names[slot]), default: 0] += 1
        }
    }

    /// Checks every blob (header, chunks, length, checksum) against `references`.
    static func verifyBlobs(
        _ transaction: ReadTransaction, references: [[UInt8]: Int], into report: inout PageFileVerificationReport
    ) {
        var unseen = references
        var orphans = 0
        var damaged: [String] = []
        do {
            if let tree = try transaction.tree(named: blobTreeName) {
                var current: (prefix: [UInt8], header: (length: Int, checksum: UInt64)?, next: UInt32, bytes: [UInt8])?
                func finish() {
                    guard let blob = current else { return }
                    if unseen.removeValue(forKey: blob.prefix) == nil { orphans += 1 }
                    guard let header = blob.header else {
                        damaged.append("\(describe(blob.prefix)) has no valid header")
                        return
                    }
                    if blob.bytes.count != header.length || StorageChecksum.xxh64(blob.bytes) != header.checksum {
                        damaged.append("\(describe(blob.prefix)) has wrong length or checksum")
                    }
                }
                try tree.scan { key, value in
                    // primary key (K1, its length in its first byte), name, 0x00, chunk.
                    let keyLength = key.first.map { ($0 >= 0x80 ? Int($0 - 0x80) : Int(0x7F - $0)) + 2 } ?? 0
                    guard keyLength >= 2, key.count >= keyLength + 1 + 4, key[key.count - 5] == 0 else {
                        damaged.append("a blob key is \(key.count) bytes")
                        return true
                    }
                    let prefix = Array(key[..<(key.count - 4)])
                    let chunk = key[(key.count - 4)...].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                    if current?.prefix != prefix {
                        finish()
                        current = (prefix, nil, 0, [])
                    }
                    guard var blob = current else { return true }
                    if chunk != blob.next {
                        damaged.append("\(describe(prefix)) lacks chunk \(blob.next)")
                        blob.next = chunk
                    }
                    if chunk == 0 {
                        blob.header = parseBlobHeader(Array(value))
                    } else {
                        blob.bytes.append(contentsOf: value)
                    }
                    blob.next = chunk &+ 1
                    current = blob
                    return true
                }
                finish()
            }
        } catch {
            report.problems.append("\(blobTreeName): damaged, not trusted: \(error)")
            return
        }
        if orphans > 0 { report.problems.append("\(blobTreeName): \(orphans) blobs without a row referring to them") }
        for problem in damaged.prefix(10) { report.problems.append("\(blobTreeName): \(problem)") }
        let missing = unseen.keys.sorted { $0.lexicographicallyPrecedes($1) }
        for prefix in missing.prefix(10) {
            report.problems.append("\(blobTreeName): \(describe(prefix)) is referenced but missing")
        }
        let shared = references.filter { $0.value > 1 }.count
        if shared > 0 { report.problems.append("\(blobTreeName): \(shared) blobs referenced by more than one row") }
    }

    /// "row K's 'name'" for a blob prefix.
    private static func describe(_ prefix: [UInt8]) -> String {
        // K1 starts with its header byte, which gives the key's length (SPEC.md §3.4).
        guard let header = prefix.first else { return "a blob" }
        let length = (header >= 0x80 ? Int(header - 0x80) : Int(0x7F - header)) + 2
        guard prefix.count > length else { return "a blob" }
        let key = prefix.withUnsafeBytes { PageFileKey.rowKey(UnsafeRawBufferPointer(rebasing: $0[0..<length])) } ?? 0
        let name = String(decoding: prefix[length..<(prefix.count - 1)], as: UTF8.self)
        return "the blob of row \(key)'s '\(name)'"
    }
}
