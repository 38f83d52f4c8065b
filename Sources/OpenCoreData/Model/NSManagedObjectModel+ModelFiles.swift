// Models from Xcode's model files: a `.xcdatamodeld` package or a `.xcdatamodel`,
// read from their XML at run time (there is no model compiler on Linux).
import Foundation

extension NSManagedObjectModel {
    /// The model in the file at `url`, or nil when it cannot be read (the reason is
    /// written to standard error; ``init(validatingContentsOf:)`` throws it instead).
    ///
    /// `url` is a `.xcdatamodeld` package (its current version, the one its
    /// `.xccurrentversion` names), a `.xcdatamodel` folder, or a `contents` file.
    ///
    /// ```swift
    /// let url = URL(fileURLWithPath: "Resources/Company.xcdatamodeld")
    /// guard let model = NSManagedObjectModel(contentsOf: url) else { fatalError("no model") }
    /// ```
    public convenience init?(contentsOf url: URL) {
        self.init()
        do {
            try load(url)
        } catch {
            ModelFileLog.write("NSManagedObjectModel(contentsOf:) could not read the model: \(error)")
            return nil
        }
    }

    /// The model in the file at `url`, as ``init(contentsOf:)`` reads it.
    ///
    /// - Throws: ``ModelFileError`` naming the file, line and element of the first
    ///   problem: a missing file (260), XML that is not well-formed, an element or
    ///   attribute Xcode does not write, a bad value, a reference to an entity or
    ///   property that does not exist (259).
    public convenience init(validatingContentsOf url: URL) throws {
        self.init()
        try load(url)
    }

    private func load(_ url: URL) throws(ModelFileError) {
        let reader = ModelFileReader()
        try reader.read(contentsOf: ModelFileLocator.contentsURL(of: url))
        try reader.finish(into: self)
    }

    /// One model holding the entities of every model in `bundles`' resources (every
    /// `.xcdatamodeld`, in its current version, and every `.xcdatamodel`); nil when there
    /// is none, or one cannot be read, or two define the same entity (the reason is
    /// written to standard error).
    ///
    /// With nil, the main bundle's resources, and when they hold no model, the current
    /// directory (see README, "Porting from Core Data").
    ///
    /// ```swift
    /// let model = NSManagedObjectModel.mergedModel(from: [Bundle.module])
    /// ```
    public class func mergedModel(from bundles: [Bundle]?) -> NSManagedObjectModel? {
        var files = modelFiles(in: bundles)
        if bundles == nil && files.isEmpty {
            files = ModelFileLocator.models(
                in: URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true))
        }
        guard !files.isEmpty else {
            ModelFileLog.write("mergedModel(from:) found no .xcdatamodeld or .xcdatamodel in the bundles")
            return nil
        }
        return merging(files, caller: "mergedModel(from:)")
    }

    /// One model holding, for each model package in `bundles` (nil: the main bundle),
    /// the version whose entity hashes match `metadata` (a store's metadata); nil when
    /// no version matches.
    ///
    /// Use it to find the model a store was saved with, among every version you ship.
    public class func mergedModel(from bundles: [Bundle]?, forStoreMetadata metadata: [String: Any])
        -> NSManagedObjectModel?
    {
        var matching: [URL] = []
        for file in modelFiles(in: bundles) {
            let versions = file.pathExtension == "xcdatamodeld" ? ModelFileLocator.versions(ofPackage: file) : [file]
            for version in versions {
                guard let model = try? NSManagedObjectModel(validatingContentsOf: version),
                    model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata)
                else { continue }
                matching.append(version)
                break
            }
        }
        guard !matching.isEmpty else { return nil }
        return merging(matching, caller: "mergedModel(from:forStoreMetadata:)")
    }

    /// One model from the model files at `urls`; nil, with the reason on standard error,
    /// when one cannot be read or two define the same entity.
    private class func merging(_ urls: [URL], caller: String) -> NSManagedObjectModel? {
        do {
            let reader = ModelFileReader()
            for url in urls { try reader.read(contentsOf: ModelFileLocator.contentsURL(of: url)) }
            let model = NSManagedObjectModel()
            try reader.finish(into: model)
            return model
        } catch {
            ModelFileLog.write("\(caller) could not merge the models: \(error)")
            return nil
        }
    }

    /// The ``versionChecksum`` of every version in the `.xcdatamodeld` package at `url`,
    /// by version name (the folder name without `.xcdatamodel`).
    ///
    /// - Throws: ``ModelFileError`` for the first version that cannot be read.
    public class func checksumsForVersionedModel(at url: URL) throws -> [String: String] {
        let versions = ModelFileLocator.versions(ofPackage: url)
        guard !versions.isEmpty else {
            throw ModelFileError(
                fileURL: url, message: "no .xcdatamodel versions in this package",
                code: CocoaError.fileReadNoSuchFile.rawValue)
        }
        var result: [String: String] = [:]
        for version in versions {
            let model = try NSManagedObjectModel(validatingContentsOf: version)
            result[version.deletingPathExtension().lastPathComponent] = model.versionChecksum
        }
        return result
    }

    private class func modelFiles(in bundles: [Bundle]?) -> [URL] {
        (bundles ?? [Bundle.main]).flatMap { bundle in
            ModelFileLocator.models(in: bundle.resourceURL ?? bundle.bundleURL)
        }
    }
}

/// Writes the library's few diagnostics (a model that cannot be read where Core Data's
/// API has no error to return) to standard error, one line each.
enum ModelFileLog {
    static func write(_ message: String) {
        FileHandle.standardError.write(Data("OpenCoreData: \(message)\n".utf8))
    }
}
