// The default store's files as the coordinator's replace and destroy calls see them
// (SPEC.md §3.3 M6): a closed store is replaced by a copy of another atomically, and
// destroyed by removing its files.
import Foundation
import StorageEngine

extension PageFileStore: FileBackedStore {
    static func checkClosed(_ url: URL, _ what: String) throws {
        guard !PageFileSharedDatabase.isOpen(url) else {
            throw CoreDataError.make(
                NSPersistentStoreOperationError,
                "cannot \(what) the store at \(url.path): it is open in this process (remove it from its coordinator "
                    + "first)")
        }
    }

    static func replaceStore(at destination: URL, with source: URL, fileSystem: any StorageFileSystem) throws {
        try checkClosed(destination, "replace")
        try checkClosed(source, "copy")
        guard fileSystem.fileExists(atPath: source.path) else {
            throw CoreDataError.make(NSFileReadNoSuchFileError, "there is no store at \(source.path)")
        }
        // A clean close leaves the source's page file holding the whole store. The open waits
        // as the replacement's lock does (`PageFileStoreFiles.exclusiveWait`): a child process
        // started a moment ago may still hold copies of this process's lock descriptions.
        var options = Database.Options()
        options.createIfMissing = false
        options.fileSystem = fileSystem
        do {
            try openEngine(at: source, options: options, timeout: PageFileStoreFiles.exclusiveWait).close()
        } catch {
            throw translate(error, opening: source)
        }
        let target = PageFileStoreFiles.migrationPath(of: destination.path)
        for file in PageFileStoreFiles.files(of: target) { try fileSystem.removeFile(atPath: file) }
        do {
            try PageFileStoreFiles.copyPageFile(source.path, to: target, fileSystem: fileSystem)
            try PageFileStoreFiles.replace(destination.path, with: target, fileSystem: fileSystem)
        } catch {
            try? fileSystem.removeFile(atPath: target)
            throw error
        }
    }

    static func destroyStore(at url: URL, fileSystem: any StorageFileSystem) throws {
        try checkClosed(url, "destroy")
        try PageFileStoreFiles.remove(url.path, fileSystem: fileSystem)
    }
}
