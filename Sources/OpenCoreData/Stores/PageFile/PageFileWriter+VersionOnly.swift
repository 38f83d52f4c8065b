// Updates that change no byte of a row but its version. Core Data counts an object whose
// only change is a to-many as updated (a company gaining an employee): its version rises
// and optimistic locking checks it. In the default store such a to-many is derived from
// its inverse to-ones (SPEC.md §3.2 R1) and not in the row, so the stored row bytes stay
// as they are but the leading version varint: the save reads that varint to check the
// version and writes the row back with it raised, decoding and encoding nothing. The
// result is the row that update(_:changes:) writes for the same update
// (VersionOnlyUpdateTests compares the two).
import StorageEngine

extension PageFileWriter {
    /// Whether `update` changes only slots that leave its row's bytes as stored but the
    /// version: to-manys derived from their inverse to-ones that no index reads (an update
    /// of no slot too).
    func raisesVersionOnly(_ update: StoreRowUpdate, info: PageFileCatalog.EntityInfo) -> Bool {
        let derived = info.derivedSlots
        return update.changes.allSatisfy { derived.contains($0.slot) }
    }

    /// The version of the stored row of `objectID`, read without decoding the row; nil
    /// when there is none.
    ///
    /// - Throws: `NSFileReadCorruptFileError` for a damaged version.
    mutating func storedVersion(of objectID: NSManagedObjectID, info: PageFileCatalog.EntityInfo) throws -> Int64? {
        let tree = try rowTree(info)
        return try PageFileKey.withPrimary(objectID.key) { key in
            try tree.withValue(forKey: key) { bytes in
                var reader = StoreByteReader(row: bytes)
                return try PageFileRowCodec.version(&reader)
            }
        }
    }

    /// Writes the stored row of `objectID` back with its version one higher, through the
    /// row tree's editor (updates are in place); returns the new version, nil when there
    /// is no row.
    ///
    /// - Throws: `NSFileReadCorruptFileError` for a damaged version.
    mutating func raiseVersion(of objectID: NSManagedObjectID, info: PageFileCatalog.EntityInfo) throws -> Int64? {
        let editor = try rowEditor(info)
        guard try PageFileKey.withPrimary(objectID.key, { try editor.seek($0) }) else { return nil }
        // The writer's reused buffer: nothing allocated per row.
        var buffer = StoreByteWriter()
        swap(&buffer, &rowBuffer)
        defer { swap(&buffer, &rowBuffer) }
        buffer.bytes.removeAll(keepingCapacity: true)
        let version = try editor.withValue { bytes in
            var reader = StoreByteReader(row: bytes)
            let version = try PageFileRowCodec.version(&reader) + 1
            buffer.varint(UInt64(version))
            buffer.bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[reader.offset...]))
            return version
        }
        try buffer.bytes.withUnsafeBytes { try editor.replaceValue($0) }
        return version
    }
}
