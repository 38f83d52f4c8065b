// A model version named for a staged migration: the model itself, a model file, a model
// found by name in a bundle, or the model of a bundle whose entity hashes are given —
// each with the version checksum it must have. Resolution happens when a migration needs
// the model; a model that cannot be found, or whose checksum differs, is Core Data's
// NSManagedObjectModelReferenceNotFoundError (134504).
import Foundation

/// A reference to one version of a managed object model, with its version checksum.
///
/// ```swift
/// let v2 = NSManagedObjectModelReference(name: "Company 2", in: Bundle.main, versionChecksum: checksumV2)
/// ```
open class NSManagedObjectModelReference: NSObject, @unchecked Sendable {
    private enum Source {
        case model(NSManagedObjectModel)
        case file(URL)
        case name(String, Bundle?)
        case hashes([AnyHashable: Any], Bundle?)
    }

    private let source: Source
    private let lock = NSLock()
    private var resolved: NSManagedObjectModel?
    /// The version checksum the model must have (`NSManagedObjectModel.versionChecksum`).
    public let versionChecksum: String

    /// A reference to `model`.
    public init(model: NSManagedObjectModel, versionChecksum: String) {
        source = .model(model)
        self.versionChecksum = versionChecksum
        super.init()
    }

    /// A reference to the model in the file at `fileURL` (`.xcdatamodeld` or `.xcdatamodel`).
    public init(fileURL: URL, versionChecksum: String) {
        source = .file(fileURL)
        self.versionChecksum = versionChecksum
        super.init()
    }

    /// A reference to the model named `modelName` in `bundle` (nil: where
    /// `NSPersistentContainer(name:)` looks): a model file of that name, or a version of
    /// that name inside one of the bundle's `.xcdatamodeld` packages.
    public init(name modelName: String, in bundle: Bundle?, versionChecksum: String) {
        source = .name(modelName, bundle)
        self.versionChecksum = versionChecksum
        super.init()
    }

    /// A reference to the model version in `bundle` whose entity version hashes are
    /// `entityVersionHashes` (`[entity name: Data]`).
    public init(entityVersionHashes: [AnyHashable: Any], in bundle: Bundle?, versionChecksum: String) {
        source = .hashes(entityVersionHashes, bundle)
        self.versionChecksum = versionChecksum
        super.init()
    }

    /// The model, resolved; an empty model when it cannot be found (a migration using the
    /// reference then fails with 134504).
    open var resolvedModel: NSManagedObjectModel {
        (try? resolve()) ?? NSManagedObjectModel()
    }

    /// The model, found once.
    ///
    /// - Throws: `NSManagedObjectModelReferenceNotFoundError` (134504) when no model is found
    ///   or its version checksum is not ``versionChecksum``.
    func resolve() throws -> NSManagedObjectModel {
        if let resolved = lock.withLock({ resolved }) { return resolved }
        let model = try find()
        guard model.versionChecksum == versionChecksum else {
            throw CoreDataError.make(
                NSManagedObjectModelReferenceNotFoundError,
                "the model \(describe) has version checksum \(model.versionChecksum), not \(versionChecksum)")
        }
        lock.withLock { resolved = model }
        return model
    }

    private var describe: String {
        switch source {
        case .model: "given"
        case .file(let url): "at \(url.path)"
        case .name(let name, _): "named '\(name)'"
        case .hashes: "with the given entity version hashes"
        }
    }

    private func find() throws -> NSManagedObjectModel {
        func notFound(_ detail: String) -> NSError {
            CoreDataError.make(
                NSManagedObjectModelReferenceNotFoundError,
                "no model \(describe) with version checksum \(versionChecksum): \(detail)")
        }
        switch source {
        case .model(let model):
            return model
        case .file(let url):
            do {
                return try NSManagedObjectModel(validatingContentsOf: url)
            } catch {
                throw notFound((error as NSError).localizedDescription)
            }
        case .name(let name, let bundle):
            for url in candidates(in: bundle) where url.deletingPathExtension().lastPathComponent == name {
                if let model = NSManagedObjectModel(contentsOf: url) { return model }
            }
            throw notFound("no model file or version of that name")
        case .hashes(let hashes, let bundle):
            let wanted = hashes.reduce(into: [String: Data]()) { result, entry in
                if let name = entry.key.base as? String, let hash = entry.value as? Data { result[name] = hash }
            }
            for url in candidates(in: bundle) {
                if let model = NSManagedObjectModel(contentsOf: url), model.entityVersionHashesByName == wanted {
                    return model
                }
            }
            throw notFound("no model version in the bundle has those hashes")
        }
    }

    /// Every model file and package version in `bundle`'s resources (or the places
    /// `NSPersistentContainer(name:)` searches).
    private func candidates(in bundle: Bundle?) -> [URL] {
        let directories = bundle.map { [$0.resourceURL ?? $0.bundleURL] } ?? ModelFileLocator.searchDirectories()
        var result: [URL] = []
        for directory in directories {
            for url in ModelFileLocator.models(in: directory) {
                result.append(url)
                if url.pathExtension == "xcdatamodeld" { result += ModelFileLocator.versions(ofPackage: url) }
            }
        }
        return result
    }
}
