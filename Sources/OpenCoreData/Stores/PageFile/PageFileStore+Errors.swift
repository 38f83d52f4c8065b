// Engine errors translated into the store errors a Core Data user handles: each one with
// Core Data's code and a message that says what to do (the engine's own option names
// replaced by the store options a user sets).
import Foundation
import StorageEngine

extension PageFileStore {
    static func translate(_ error: Error, opening url: URL) -> Error {
        guard let storage = error as? StorageError else { return error }
        switch storage.code {
        case .corrupt:
            // The engine names its own option; a store takes it as a store option.
            let recovery =
                storage.message.contains("Options.recoverToOlderState")
                ? ". For a store: add it with PageFileStoreRecoverToOlderStateOption: true to open it as of its "
                    + "previous checkpoint, losing the saves after it" : ""
            return CoreDataError.make(
                NSFileReadCorruptFileError,
                "the store at \(url.path) is damaged or is not a store: \(storage.message)\(recovery)",
                userInfo: [NSFilePathErrorKey: url.path])
        case .readOnly:
            return CoreDataError.make(
                NSPersistentStoreOpenError,
                "the store at \(url.path) cannot be opened for writing: \(storage.message). To read it, add it with "
                    + "NSReadOnlyPersistentStoreOption: true", userInfo: [NSFilePathErrorKey: url.path])
        case .unsupportedFormat:
            return CoreDataError.make(
                NSPersistentStoreInvalidTypeError,
                "the file at \(url.path) is not a store this version reads: \(storage.message)")
        case .busy:
            // The engine names its own option; a store user sets the store option instead.
            let message = storage.message.replacingOccurrences(
                of: "Options.multiProcess",
                with: "PageFileStoreMultiProcessOption: true in the store's options (NSPersistentStoreDescription"
                    + ".setOption(true as NSNumber, forKey: PageFileStoreMultiProcessOption))")
            return CoreDataError.make(
                NSPersistentStoreTimeoutError, "the store at \(url.path) is busy: \(message)")
        default:
            return CoreDataError.make(NSPersistentStoreOpenError, "the store at \(url.path): \(storage)")
        }
    }

    /// A store error for an engine failure during a read or a save.
    func translate(_ error: Error, _ code: Int = NSPersistentStoreOperationError) -> Error {
        guard let storage = error as? StorageError else { return error }
        let path = url?.path ?? "?"
        if storage.code == .corrupt {
            return CoreDataError.make(
                NSFileReadCorruptFileError, "the store at \(path) is damaged: \(storage.message)",
                userInfo: [NSFilePathErrorKey: path])
        }
        return CoreDataError.make(code, "the store at \(path): \(storage)")
    }
}
