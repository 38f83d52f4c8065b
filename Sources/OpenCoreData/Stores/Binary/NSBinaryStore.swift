// NSBinaryStoreType: the in-memory store's rows, fetches and history, loaded whole
// from one checksummed file on open and written whole, atomically, after every save
// (BinaryStoreFile.swift). Fetch semantics are the in-memory store's by construction:
// this class adds only loading and writing.
import Foundation
import StorageEngine

/// Option (internal, for tests): the `StorageFileSystem` a file-backed store (binary or
/// default) uses instead of the real one, so crash and fault tests can run on the
/// simulated file system. A default store on it should have a path of its own: stores
/// of one process share an engine handle by path.
let storeFileSystemOption = "OpenCoreDataStorageFileSystem"

/// The binary store (`NSBinaryStoreType`): the whole object graph in one checksummed
/// file, loaded on open and replaced atomically on each save.
///
/// Suits small stores that are read whole; every save rewrites the file, so save cost
/// grows with the store. A damaged or foreign file is refused with
/// `NSFileReadCorruptFileError` (259).
public final class NSBinaryStore: NSInMemoryStore, @unchecked Sendable {
    private var fileSystem: any StorageFileSystem = POSIXFileSystem()

    /// `NSBinaryStoreType`.
    public override var type: String { NSBinaryStoreType }

    private var path: String { url?.path ?? "" }

    /// The metadata of the binary store file at `url`, read without loading its rows.
    ///
    /// - Throws: `NSFileReadCorruptFileError` (259) for a damaged or foreign file;
    ///   `NSPersistentStoreOpenError` when there is no file.
    public override class func metadataForPersistentStore(with url: URL) throws -> [String: Any] {
        let fileSystem = POSIXFileSystem()
        let bytes: [UInt8]?
        do {
            bytes = try BinaryStoreFile.read(path: url.path, fileSystem: fileSystem)
        } catch let error as StorageError {
            throw CoreDataError.make(
                NSPersistentStoreOpenError, "cannot read the binary store \(url.path): \(error)",
                userInfo: [NSUnderlyingErrorKey: error])
        }
        guard let bytes else {
            throw CoreDataError.make(NSPersistentStoreOpenError, "there is no binary store at \(url.path)")
        }
        return try BinaryStoreFile.decodeMetadata(bytes, path: url.path)
    }

    /// Loads the file at the store's URL, or creates it. With
    /// `NSReadOnlyPersistentStoreOption` the file is only read (a store on a read-only file
    /// system loads), and a missing file is an error.
    ///
    /// - Throws: `NSPersistentStoreOpenError` without a file URL or on an I/O error;
    ///   `NSFileReadCorruptFileError` (259) for a damaged or foreign file;
    ///   `NSPersistentStoreIncompatibleVersionHashError` (134100) when the file was saved
    ///   with a different model and automatic migration was not requested (or the store is
    ///   read-only); with it, the migration's errors (134140, 134110, 134111);
    ///   `NSFileReadNoSuchFileError` (260) for a read-only store with no file.
    public override func loadMetadata() throws {
        if let custom = options?[storeFileSystemOption] as? any StorageFileSystem { fileSystem = custom }
        guard let url, url.isFileURL else {
            throw CoreDataError.make(NSPersistentStoreOpenError, "the binary store needs a file URL")
        }
        // /dev/null: a file in memory (Core Data's in-memory recipe), never the device.
        if url.path == "/dev/null" { fileSystem = SimulatedFileSystem() }
        guard let model = persistentStoreCoordinator?.managedObjectModel else {
            throw CoreDataError.make(NSPersistentStoreOpenError, "the binary store was created without a coordinator")
        }
        let bytes: [UInt8]?
        do {
            bytes = try BinaryStoreFile.read(path: path, fileSystem: fileSystem)
        } catch let error as StorageError {
            throw CoreDataError.make(
                NSPersistentStoreOpenError, "cannot read the binary store \(path): \(error)",
                userInfo: [NSUnderlyingErrorKey: error])
        }
        guard let bytes else {
            guard !isReadOnly else {
                throw CoreDataError.make(
                    NSFileReadNoSuchFileError,
                    "there is no binary store at \(path): a store added with NSReadOnlyPersistentStoreOption is not "
                        + "created; check the URL", userInfo: [NSFilePathErrorKey: path])
            }
            try super.loadMetadata()
            try writeFile(failure: NSPersistentStoreOpenError)
            return
        }
        let stored = try BinaryStoreFile.decodeMetadata(bytes, path: path)
        if let type = stored[NSStoreTypeKey] as? String, type != NSBinaryStoreType {
            throw CoreDataError.make(
                NSPersistentStoreTypeMismatchError, "\(path) holds a store of type '\(type)', not a binary store")
        }
        guard let uuid = stored[NSStoreUUIDKey] as? String, !uuid.isEmpty else {
            throw CoreDataError.make(
                BinaryStoreFile.corruptFileError, "\(path) is not a usable binary store file: it has no store UUID")
        }
        // Object IDs decoded below carry the store's identifier in their URIs.
        identifier = uuid
        let image: BinaryStoreFile.Image
        if model.isConfiguration(withName: configurationName, compatibleWithStoreMetadata: stored) {
            image = try BinaryStoreFile.decode(bytes, path: path, store: self, model: model) { _ in }
        } else if migratesAutomatically, !isReadOnly {
            image = try migrateImage(bytes, metadata: stored, to: model, path: path) { migrated in
                do {
                    try BinaryStoreFile.write(migrated, path: path, fileSystem: fileSystem)
                } catch {
                    throw CoreDataError.make(
                        NSPersistentStoreSaveError, "cannot write the migrated binary store \(path): \(error)",
                        userInfo: [NSUnderlyingErrorKey: error])
                }
            }
        } else {
            throw incompatibility(stored, model: model)
        }
        metadata = image.metadata
        nextKey = max(image.nextKey, 1)
        var table: [ObjectIdentifier: [Int64: StoreRow]] = [:]
        for row in image.rows {
            table[ObjectIdentifier(row.objectID.entity), default: [:]][row.objectID.key] = row
            if row.objectID.key >= nextKey { nextKey = row.objectID.key + 1 }
        }
        rowsByEntity = table
        historyJournal = image.journal
    }

    private func incompatibility(_ metadata: [String: Any], model: NSManagedObjectModel) -> NSError {
        let stored = metadata[NSStoreModelVersionHashesKey] as? [String: Data] ?? [:]
        let current = model.entityVersionHashesByName
        let differing = Set(stored.keys).union(current.keys).filter { stored[$0] != current[$0] }.sorted()
        return CoreDataError.make(
            NSPersistentStoreIncompatibleVersionHashError,
            "the model is not compatible with the binary store at \(path) (entities that differ: "
                + "\(differing.joined(separator: ", "))) and automatic migration was not requested",
            userInfo: ["NSStoreModelVersionHashesKey": stored])
    }

    /// Saves like the in-memory store, then replaces the file; if writing fails the
    /// rows go back to their state before the save, so memory and file agree.
    public override func save(_ request: StoreSaveRequest) throws -> StoreSaveResult {
        let rows = rowsByEntity
        let journal = historyJournal
        let result = try super.save(request)
        do {
            try writeFile(failure: NSPersistentStoreSaveError)
        } catch {
            rowsByEntity = rows
            historyJournal = journal
            throw error
        }
        return result
    }

    override func historyJournalDidChange() throws {
        try writeFile(failure: NSPersistentStoreSaveError)
    }

    /// The model's identity entries, encoded once per store (every save writes them).
    private var cachedIdentity: [String: Any]?

    private func identityMetadata(of model: NSManagedObjectModel) throws -> [String: Any] {
        if let cachedIdentity { return cachedIdentity }
        let identity = try model.storeIdentityMetadata()
        cachedIdentity = identity
        return identity
    }

    private func writeFile(failure code: Int) throws {
        guard let model = persistentStoreCoordinator?.managedObjectModel else {
            throw CoreDataError.make(code, "the binary store lost its coordinator")
        }
        // The keys a reopen checks are always written, whatever `setMetadata` left.
        var saved = metadata ?? [:]
        saved[NSStoreTypeKey] = type
        saved[NSStoreUUIDKey] = identifier
        saved.merge(try identityMetadata(of: model)) { _, identity in identity }
        let bytes = try BinaryStoreFile.encode(
            metadata: saved, nextKey: nextKey, rowsByEntity: rowsByEntity, journal: historyJournal,
            model: model)
        do {
            try BinaryStoreFile.write(bytes, path: path, fileSystem: fileSystem)
        } catch {
            throw CoreDataError.make(
                code, "cannot write the binary store \(path): \(error)", userInfo: [NSUnderlyingErrorKey: error])
        }
    }
}
