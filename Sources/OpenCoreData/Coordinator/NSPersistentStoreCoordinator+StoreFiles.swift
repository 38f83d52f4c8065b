// Store files as a whole, the coordinator's calls Core Data recommends over moving store
// files by hand: replace a store with a copy of another (after a migration into a new
// file), destroy a store. Each store type that keeps files does it the safe way for its
// files (FileBackedStore); the in-memory store has none.
import Foundation
import StorageEngine

/// A store type whose data lives in files the coordinator can replace and destroy.
protocol FileBackedStore: NSPersistentStore {
    /// Replaces the closed store at `destination` with a copy of the closed store at
    /// `source`, atomically.
    static func replaceStore(at destination: URL, with source: URL, fileSystem: any StorageFileSystem) throws
    /// Removes the closed store at `url`.
    static func destroyStore(at url: URL, fileSystem: any StorageFileSystem) throws
}

extension NSPersistentStoreCoordinator {
    /// Replaces the store at `destinationURL` with a copy of the store at `sourceURL`, both
    /// of `storeType`; the source stays as it is.
    ///
    /// Neither store may be open in this process. The replacement is atomic: after a crash,
    /// `destinationURL` holds its old store or the copy, each complete.
    ///
    /// - Throws: `NSPersistentStoreInvalidTypeError` for an unknown type or one without
    ///   files; `NSPersistentStoreOperationError` when a store is open;
    ///   `NSFileReadNoSuchFileError` when there is no source store; the file system's error.
    public func replacePersistentStore(
        at destinationURL: URL, destinationOptions: [AnyHashable: Any]? = nil,
        withPersistentStoreFrom sourceURL: URL, sourceOptions: [AnyHashable: Any]? = nil, ofType storeType: String
    ) throws {
        let type = try fileBackedStoreClass(storeType, "replace")
        let fileSystem = Self.fileSystem(destinationOptions)
        do {
            try type.replaceStore(at: destinationURL, with: sourceURL, fileSystem: fileSystem)
        } catch let error as StorageError {
            throw CoreDataError.make(
                NSPersistentStoreOperationError, "cannot replace the store at \(destinationURL.path): \(error)",
                userInfo: [NSUnderlyingErrorKey: error])
        }
    }

    /// Destroys the store of `storeType` at `url`: its files are removed (the in-memory
    /// store has none).
    ///
    /// - Throws: `NSPersistentStoreInvalidTypeError` for an unknown type;
    ///   `NSPersistentStoreOperationError` when the store is open in this process.
    public func destroyPersistentStore(at url: URL, ofType storeType: String, options: [AnyHashable: Any]? = nil) throws
    {
        if storeType == NSInMemoryStoreType {
            _ = try NSPersistentStoreCoordinator.storeClass(for: storeType)
            return
        }
        let type = try fileBackedStoreClass(storeType, "destroy")
        do {
            try type.destroyStore(at: url, fileSystem: Self.fileSystem(options))
        } catch let error as StorageError {
            throw CoreDataError.make(
                NSPersistentStoreOperationError, "cannot destroy the store at \(url.path): \(error)",
                userInfo: [NSUnderlyingErrorKey: error])
        }
    }

    /// Copies `store` into a new store of `storeType` at `url`, adds it and removes `store`
    /// (Core Data's name for ``migratePersistentStore(_:to:options:type:)``).
    ///
    /// - Throws: as ``migratePersistentStore(_:to:options:type:)``.
    @discardableResult
    public func migratePersistentStore(
        _ store: NSPersistentStore, to url: URL, options: [AnyHashable: Any]? = nil, withType storeType: String
    ) throws -> NSPersistentStore {
        try migratePersistentStore(store, to: url, options: options, type: storeType)
    }

    private func fileBackedStoreClass(_ storeType: String, _ what: String) throws -> any FileBackedStore.Type {
        let type = try NSPersistentStoreCoordinator.storeClass(for: storeType)
        guard let fileBacked = type as? any FileBackedStore.Type else {
            throw CoreDataError.make(
                NSPersistentStoreInvalidTypeError, "cannot \(what) a store of type '\(storeType)': it has no files")
        }
        return fileBacked
    }

    static func fileSystem(_ options: [AnyHashable: Any]?) -> any StorageFileSystem {
        options?[storeFileSystemOption] as? any StorageFileSystem ?? POSIXFileSystem()
    }
}
