// Opening a store to read it without the app: its type from its metadata, its model from
// the model record it carries (or a model file), read-only so nothing is created or
// changed. A default store another process owns cannot be opened beside it; the
// inspector then reads a snapshot: a copy of its files taken twice in a row until both
// copies agree byte for byte (no write landed in between), opened read-only.
import Foundation
import OpenCoreData

/// A store opened for reading, and where its files were read from.
final class OpenedStore {
    let url: URL
    let type: String
    let model: NSManagedObjectModel
    let coordinator: NSPersistentStoreCoordinator
    let context: NSManagedObjectContext
    /// Set when the store was read from a snapshot copy (removed at deinit).
    let snapshotDirectory: URL?

    init(
        url: URL, type: String, model: NSManagedObjectModel, coordinator: NSPersistentStoreCoordinator,
        snapshotDirectory: URL?
    ) {
        self.url = url
        self.type = type
        self.model = model
        self.coordinator = coordinator
        self.snapshotDirectory = snapshotDirectory
        context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
    }

    deinit {
        if let snapshotDirectory { try? FileManager.default.removeItem(at: snapshotDirectory) }
    }
}

enum StoreOpening {
    /// The existing store file at `path`: refused, before anything is opened, when it is
    /// missing or a directory (opening would leave files beside it).
    static func existingFile(_ path: String) throws(InspectorError) -> URL {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw .failure("\(path): no such file")
        }
        guard !isDirectory.boolValue else { throw .failure("\(path) is a directory, not a store file") }
        return URL(fileURLWithPath: path)
    }

    static var readOptions: [AnyHashable: Any] {
        [
            NSReadOnlyPersistentStoreOption: true as NSNumber, NSPersistentHistoryTrackingKey: true as NSNumber,
            NSPersistentStoreTimeoutOption: 1 as NSNumber,
        ]
    }

    /// Opens the store at `path` read-only with its recorded model (or the model file at
    /// `modelPath`), from a snapshot when another process owns it.
    static func open(_ path: String, modelPath: String?) throws(InspectorError) -> OpenedStore {
        let url = try existingFile(path)
        do {
            return try open(url, as: url, modelPath: modelPath, snapshotDirectory: nil)
        } catch let error as NSError where error.code == NSPersistentStoreTimeoutError {
            let (copy, directory) = try snapshot(of: url)
            do {
                return try open(copy, as: url, modelPath: modelPath, snapshotDirectory: directory)
            } catch {
                try? FileManager.default.removeItem(at: directory)
                throw .failure("\(path): \(describe(error))")
            }
        } catch let error as InspectorError {
            throw error
        } catch {
            throw .failure("\(path): \(describe(error))")
        }
    }

    private static func open(_ file: URL, as url: URL, modelPath: String?, snapshotDirectory: URL?) throws
        -> OpenedStore
    {
        let (type, metadata) = try typeAndMetadata(of: file)
        let model: NSManagedObjectModel
        if let modelPath {
            model = try NSManagedObjectModel(validatingContentsOf: URL(fileURLWithPath: modelPath))
        } else if let recorded = try NSManagedObjectModel.recordedModel(inStoreMetadata: metadata) {
            model = recorded
        } else {
            throw InspectorError.failure(
                "\(url.path) records no model (it was written before stores recorded theirs): "
                    + "give the app's model with --model PATH.xcdatamodeld")
        }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: file, options: readOptions)
        return OpenedStore(
            url: url, type: type, model: model, coordinator: coordinator, snapshotDirectory: snapshotDirectory)
    }

    /// The store type whose metadata the file holds: the default store's, else the
    /// binary store's; the default store's error when neither reads it.
    static func typeAndMetadata(of file: URL) throws -> (String, [String: Any]) {
        do {
            let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(
                ofType: NSSQLiteStoreType, at: file, options: readOptions)
            return (NSSQLiteStoreType, metadata)
        } catch let error as NSError {
            if error.code == NSPersistentStoreTimeoutError { throw error }
            guard
                let metadata = try? NSPersistentStoreCoordinator.metadataForPersistentStore(
                    ofType: NSBinaryStoreType, at: file, options: readOptions)
            else { throw error }
            return (NSBinaryStoreType, metadata)
        }
    }

    /// A consistent copy of the default store at `url` (its page file and log) in a new
    /// temporary directory: copies are taken until two in a row agree byte for byte.
    static func snapshot(of url: URL) throws(InspectorError) -> (URL, URL) {
        let sources = [url, URL(fileURLWithPath: url.path + "-wal")]
        func read() -> [Data?] { sources.map { try? Data(contentsOf: $0, options: .uncached) } }
        var previous = read()
        for _ in 0..<50 {
            let current = read()
            if current == previous {
                let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                    "opencoredata-store-\(UUID().uuidString)")
                do {
                    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                    let copy = directory.appendingPathComponent(url.lastPathComponent)
                    for (source, data) in zip(sources, current) {
                        guard let data else { continue }
                        let name = source.lastPathComponent.replacingOccurrences(
                            of: url.lastPathComponent, with: copy.lastPathComponent)
                        try data.write(to: directory.appendingPathComponent(name))
                    }
                    return (copy, directory)
                } catch {
                    try? FileManager.default.removeItem(at: directory)
                    throw .failure("could not copy \(url.path) for a snapshot read: \(error.localizedDescription)")
                }
            }
            previous = current
            usleep(20_000)
        }
        throw .failure("\(url.path) changed during every copy for a snapshot read: try again when it is quieter")
    }

    static func describe(_ error: Error) -> String {
        let nsError = error as NSError
        if nsError.domain == NSCocoaErrorDomain { return "\(nsError.localizedDescription) (error \(nsError.code))" }
        return "\(error)"
    }
}
