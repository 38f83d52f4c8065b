// The binary store file (SPEC.md §4): the whole store in one checksummed image,
// replaced atomically on every save.
//
//   OFFSET  SIZE  FIELD
//      0      8   magic "OCDBIN\r\n" (4F 43 44 42 49 4E 0D 0A)
//      8      2   format version (2: row format 2)
//     10      2   flags (0; unknown bits are refused)
//     12      4   reserved (0)
//     16      8   body length B
//     24      B   body:
//                   metadata (StoreMetadataCoding.swift, a dictionary value)
//                   z  next primary key
//                   v  entity count E, E × (v length, UTF-8 entity name)
//                   v  row count R, R × (v entity number, z key, v length, row bytes:
//                      PageFileRowCodec, the default store's row encoding, SPEC.md §3.2)
//                   v  history current sequence, v purged sequence,
//                   v  record count H, H × (v length, history record bytes)
//   24+B      8   XXH64 (seed 0) of bytes [0, 24+B)
//
// The file size is exactly 32 + B. History records have sequences purged+1 ... current
// in order (dense), so sequences are not stored per record.
import Foundation
import StorageEngine

/// Reads, writes and checks binary store files.
enum BinaryStoreFile {
    static let magic: [UInt8] = [0x4F, 0x43, 0x44, 0x42, 0x49, 0x4E, 0x0D, 0x0A]
    static let formatVersion: UInt16 = 2
    static let headerSize = 24
    static let trailerSize = 8
    /// The Cocoa code of a damaged or foreign file (`NSFileReadCorruptFileError`).
    static let corruptFileError = 259

    /// The decoded contents of a file.
    struct Image {
        var metadata: [String: Any]
        var nextKey: Int64
        var rows: [StoreRow]
        var journal: InMemoryHistoryJournal
    }

    // MARK: Encoding

    /// The file's bytes for the given store state; entity numbers follow `model.entities`.
    static func encode(
        metadata: [String: Any], nextKey: Int64, rowsByEntity: [ObjectIdentifier: [Int64: StoreRow]],
        journal: InMemoryHistoryJournal, model: NSManagedObjectModel
    ) throws -> [UInt8] {
        let entities = model.entities
        var numbers: [ObjectIdentifier: Int] = [:]
        for (index, entity) in entities.enumerated() { numbers[ObjectIdentifier(entity)] = index }
        let entityNumber: (NSEntityDescription) -> Int = { numbers[ObjectIdentifier($0)] ?? 0 }
        var body = StoreByteWriter()
        try StoreMetadataCoding.encode(metadata, into: &body)
        body.signed(nextKey)
        body.varint(entities.count)
        for entity in entities { body.string(entity.name ?? "") }
        let rowCount = rowsByEntity.values.reduce(0) { $0 + $1.count }
        body.varint(rowCount)
        // Entity then key order: equal stores give equal files.
        for entity in entities {
            guard let rows = rowsByEntity[ObjectIdentifier(entity)] else { continue }
            for key in rows.keys.sorted() {
                guard let row = rows[key] else { continue }
                body.varint(entityNumber(entity))
                body.signed(key)
                body.lengthPrefixed(
                    PageFileRowCodec.encode(values: row.values, version: row.version, layout: entity.layout))
            }
        }
        body.varint(UInt64(max(journal.currentSequence, 0)))
        body.varint(UInt64(max(journal.purgedSequence, 0)))
        body.varint(journal.records.count)
        for record in journal.records { body.lengthPrefixed(record.bytes) }

        var file = StoreByteWriter()
        file.bytes.reserveCapacity(headerSize + body.bytes.count + trailerSize)
        file.bytes.append(contentsOf: magic)
        file.bytes.append(contentsOf: [UInt8(formatVersion & 0xFF), UInt8(formatVersion >> 8), 0, 0, 0, 0, 0, 0])
        file.fixed64(UInt64(body.bytes.count))
        file.bytes.append(contentsOf: body.bytes)
        file.fixed64(StorageChecksum.xxh64(file.bytes))
        return file.bytes
    }

    // MARK: Decoding

    /// Checks the header, size and checksum of `bytes` and calls `body` with a reader at
    /// the file's body.
    ///
    /// - Throws: `NSFileReadCorruptFileError` (259) naming the problem, or `body`'s error.
    static func withBody<Result>(
        _ bytes: [UInt8], path: String, _ body: (inout StoreByteReader) throws -> Result
    ) throws -> Result {
        func corrupt(_ problem: String) -> NSError {
            CoreDataError.make(corruptFileError, "\(path) is not a usable binary store file: \(problem)")
        }
        guard bytes.count >= magic.count, Array(bytes[0..<magic.count]) == magic else {
            throw corrupt("it does not start with the binary store magic (a foreign or empty file)")
        }
        guard bytes.count >= headerSize + trailerSize else {
            throw corrupt("it is truncated to \(bytes.count) bytes")
        }
        return try bytes.withUnsafeBytes { raw in
            var header = StoreByteReader(raw, from: magic.count, what: path, errorCode: corruptFileError)
            let version = UInt16(try header.byte()) | UInt16(try header.byte()) << 8
            guard version == formatVersion else {
                throw corrupt("its format version is \(version); this library reads version \(formatVersion)")
            }
            let flags = UInt16(try header.byte()) | UInt16(try header.byte()) << 8
            guard flags == 0 else { throw corrupt("it has unknown flags \(flags)") }
            try header.skip(4)
            let bodyLength = try header.fixed64()
            guard bodyLength == UInt64(bytes.count - headerSize - trailerSize) else {
                throw corrupt(
                    "its header promises \(bodyLength) body bytes but the file holds \(bytes.count) bytes in all")
            }
            let end = bytes.count - trailerSize
            var trailer = StoreByteReader(raw, from: end, what: path, errorCode: corruptFileError)
            guard try trailer.fixed64() == StorageChecksum.xxh64(Array(bytes[..<end])) else {
                throw corrupt("its checksum does not match (the file is damaged)")
            }
            var reader = StoreByteReader(
                UnsafeRawBufferPointer(rebasing: raw[headerSize..<end]), what: path, errorCode: corruptFileError)
            return try body(&reader)
        }
    }

    /// The metadata of a file, checked but without its rows.
    static func decodeMetadata(_ bytes: [UInt8], path: String) throws -> [String: Any] {
        try withBody(bytes, path: path) { try StoreMetadataCoding.decode(from: &$0) }
    }

    /// The whole file; `prepare` sees the metadata first and may refuse it (a model check)
    /// before rows are decoded against `model`.
    static func decode(
        _ bytes: [UInt8], path: String, store: NSPersistentStore, model: NSManagedObjectModel,
        prepare: ([String: Any]) throws -> Void
    ) throws -> Image {
        try withBody(bytes, path: path) { reader in
            try decodeBody(&reader, path: path, store: store, model: model, prepare: prepare)
        }
    }

    private static func decodeBody(
        _ reader: inout StoreByteReader, path: String, store: NSPersistentStore, model: NSManagedObjectModel,
        prepare: ([String: Any]) throws -> Void
    ) throws -> Image {
        let metadata = try StoreMetadataCoding.decode(from: &reader)
        try prepare(metadata)
        let nextKey = try reader.signed()
        // The store hands out keys from here and after every row's key (`key + 1`): a
        // forged value near Int64.max must be refused, not trap.
        guard nextKey <= StoreCounterLimit.maximum else {
            throw reader.damaged("its next primary key \(nextKey) is out of range")
        }
        let entityCount = try reader.count(atMost: reader.remaining)
        var entities: [NSEntityDescription] = []
        entities.reserveCapacity(entityCount)
        for _ in 0..<entityCount {
            let name = try reader.string()
            guard let entity = model.entitiesByName[name] else {
                throw reader.damaged("it names entity '\(name)', which the model does not have")
            }
            entities.append(entity)
        }
        let makeID: (Int, Int64) throws -> NSManagedObjectID = { number, key in
            guard number < entities.count else {
                throw CoreDataError.make(
                    corruptFileError, "\(path) is damaged: entity number \(number) of an object ID is out of range")
            }
            return store.newObjectID(for: entities[number], key: key)
        }
        let rowCodec = PageFileRowCodec(
            entityNamed: { model.entitiesByName[$0] }, makeObjectID: { store.newObjectID(for: $0, key: $1) })
        // Each row takes at least four bytes.
        let rowCount = try reader.count(atMost: reader.remaining / 4)
        var rows: [StoreRow] = []
        rows.reserveCapacity(rowCount)
        for _ in 0..<rowCount {
            let number = try reader.count(atMost: entities.count)
            let key = try reader.signed()
            guard key <= StoreCounterLimit.maximum else {
                throw reader.damaged("a row's primary key \(key) is out of range")
            }
            let id = try makeID(number, key)
            guard !id.entity.isAbstract else {
                throw reader.damaged("a row of abstract entity \(id.entity.name ?? "")")
            }
            let bytes = try reader.lengthPrefixed()
            let decoded: (version: Int64, values: [StoreValue])
            do {
                decoded = try rowCodec.decode(bytes, entity: id.entity)
            } catch {
                throw reader.damaged("the row of \(id) is damaged: \((error as NSError).localizedDescription)")
            }
            rows.append(StoreRow(objectID: id, version: decoded.version, values: decoded.values))
        }
        let current = try reader.varint()
        let purged = try reader.varint()
        let recordCount = try reader.count(atMost: reader.remaining)
        // A save appends at `current + 1`: a forged sequence near Int64.max must not trap.
        guard current <= UInt64(StoreCounterLimit.maximum) else {
            throw reader.damaged("its history sequence \(current) is out of range")
        }
        guard purged <= current, current - purged == UInt64(recordCount) else {
            throw reader.damaged("history sequences \(purged)...\(current) do not match \(recordCount) records")
        }
        var records: [(sequence: Int64, bytes: [UInt8])] = []
        records.reserveCapacity(recordCount)
        for index in 0..<recordCount {
            records.append((Int64(purged) + Int64(index) + 1, Array(try reader.lengthPrefixed())))
        }
        guard reader.isAtEnd else { throw reader.damaged("\(reader.remaining) unexpected bytes after the history") }
        let journal = InMemoryHistoryJournal(
            records: records, currentSequence: Int64(current), purgedSequence: Int64(purged))
        return Image(metadata: metadata, nextKey: nextKey, rows: rows, journal: journal)
    }

    // MARK: Files

    /// The bytes of the file at `path`, or nil when there is none.
    static func read(path: String, fileSystem: any StorageFileSystem) throws -> [UInt8]? {
        guard fileSystem.fileExists(atPath: path) else { return nil }
        // Read-only, so a store on a read-only file system (or one this process may not
        // write) loads; only a save needs to write, and writes a new file anyway.
        let file = try fileSystem.openFileReadOnly(atPath: path)
        defer { file.close() }
        let size = try file.size()
        guard size <= UInt64(Int.max / 2) else {
            throw CoreDataError.make(corruptFileError, "\(path) is too large (\(size) bytes) to be a binary store")
        }
        var bytes = [UInt8](repeating: 0, count: Int(size))
        let count = try bytes.withUnsafeMutableBytes { try file.read(into: $0, at: 0) }
        guard count == bytes.count else {
            throw CoreDataError.make(corruptFileError, "\(path) changed while it was read (\(count) of \(size) bytes)")
        }
        return bytes
    }

    /// Replaces the file at `path` with `bytes` atomically: write a temporary file in the
    /// same directory, sync it, rename it over `path`, sync the directory. A crash at any
    /// point leaves the old file or the new one, each complete.
    static func write(_ bytes: [UInt8], path: String, fileSystem: any StorageFileSystem) throws {
        let temporary = path + "-new"
        let file = try fileSystem.openFile(atPath: temporary, create: true)
        do {
            try file.truncate(to: 0)
            try bytes.withUnsafeBytes { try file.write($0, at: 0) }
            try file.synchronize(.full)
        } catch {
            file.close()
            throw error
        }
        file.close()
        try fileSystem.renameFile(atPath: temporary, toPath: path)
        try fileSystem.synchronizeDirectory(atPath: directory(of: path))
    }

    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
