// The binary store's file as the coordinator's replace and destroy calls see it: a
// replacement is written beside the file and renamed over it (SPEC.md §4 B2).
import Foundation
import StorageEngine

extension NSBinaryStore: FileBackedStore {
    static func replaceStore(at destination: URL, with source: URL, fileSystem: any StorageFileSystem) throws {
        guard let bytes = try BinaryStoreFile.read(path: source.path, fileSystem: fileSystem) else {
            throw CoreDataError.make(NSFileReadNoSuchFileError, "there is no binary store at \(source.path)")
        }
        _ = try BinaryStoreFile.decodeMetadata(bytes, path: source.path)
        try BinaryStoreFile.write(bytes, path: destination.path, fileSystem: fileSystem)
    }

    static func destroyStore(at url: URL, fileSystem: any StorageFileSystem) throws {
        for path in [url.path, url.path + "-new"] { try fileSystem.removeFile(atPath: path) }
        try fileSystem.synchronizeDirectory(atPath: BinaryStoreFile.directory(of: url.path))
    }
}
