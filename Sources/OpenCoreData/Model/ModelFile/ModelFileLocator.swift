// Where a model's XML is: the version of a `.xcdatamodeld` package that its
// `.xccurrentversion` names, the `contents` of a `.xcdatamodel`, or the file itself;
// and where an app's model named "Name" is found (NSPersistentContainer(name:)).
//
// Lookup order for a model named Name, the first readable one wins:
//   1. Bundle.main's resources: Name.momd, Name.mom, Name.xcdatamodeld, Name.xcdatamodel;
//   2. SwiftPM resource bundles beside the main executable (*.resources, *.bundle),
//      in name order, with the same four names;
//   3. the current directory, with the same four names.
// Compiled models (.momd, .mom) are binary archives that only Apple's Core Data reads:
// one found is reported (ship the .xcdatamodeld instead) and the search goes on.
import Foundation

enum ModelFileLocator {
    /// The file names a model called `name` may have, in the order they are tried.
    static func candidateNames(for name: String) -> [String] {
        ["\(name).momd", "\(name).mom", "\(name).xcdatamodeld", "\(name).xcdatamodel"]
    }

    /// The `contents` files of the model at `url`: a `.xcdatamodeld` package (its current
    /// version), a `.xcdatamodel` folder, or a `contents` file.
    ///
    /// - Throws: ``ModelFileError``: 260 when nothing is at `url`; 259 for a compiled
    ///   model, an Xcode 3 binary model, or a package whose current version is missing.
    static func contentsURL(of url: URL) throws(ModelFileError) -> URL {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw ModelFileError(
                fileURL: url, message: "no model file here", code: CocoaError.fileReadNoSuchFile.rawValue)
        }
        switch url.pathExtension {
        case "momd", "mom":
            throw ModelFileError(
                fileURL: url,
                message: "a compiled model (.\(url.pathExtension)) cannot be read here: ship the .xcdatamodeld "
                    + "source with the app and load that")
        case "xcdatamodeld":
            return try contentsURL(of: currentVersion(ofPackage: url))
        default:
            guard isDirectory.boolValue else { return url }
            let contents = url.appendingPathComponent("contents")
            if !FileManager.default.fileExists(atPath: contents.path),
                FileManager.default.fileExists(atPath: url.appendingPathComponent("elements").path)
            {
                throw ModelFileError(
                    fileURL: url,
                    message: "an Xcode 3 model (binary 'elements' file) cannot be read: open it in a current Xcode, "
                        + "which saves it as XML")
            }
            return contents
        }
    }

    /// The `.xcdatamodel` folder of the package's current version: the one
    /// `.xccurrentversion` names under `_XCCurrentVersionName`, or the only one.
    static func currentVersion(ofPackage package: URL) throws(ModelFileError) -> URL {
        let marker = package.appendingPathComponent(".xccurrentversion")
        if FileManager.default.fileExists(atPath: marker.path) {
            let plist: Any
            do {
                plist = try PropertyListSerialization.propertyList(from: Data(contentsOf: marker), format: nil)
            } catch {
                throw ModelFileError(fileURL: marker, message: "not a property list (\(error.localizedDescription))")
            }
            guard let name = (plist as? [String: Any])?["_XCCurrentVersionName"] as? String, !name.isEmpty,
                !name.contains("/")
            else {
                throw ModelFileError(fileURL: marker, message: "no _XCCurrentVersionName naming the current version")
            }
            let version = package.appendingPathComponent(name)
            guard FileManager.default.fileExists(atPath: version.path) else {
                throw ModelFileError(
                    fileURL: marker, message: "the current version '\(name)' is not in the package",
                    code: CocoaError.fileReadNoSuchFile.rawValue)
            }
            return version
        }
        let versions = self.versions(ofPackage: package)
        guard versions.count == 1, let only = versions.first else {
            throw ModelFileError(
                fileURL: package,
                message: "no .xccurrentversion, and \(versions.count) versions: cannot tell which is current")
        }
        return only
    }

    /// The `.xcdatamodel` folders of a package, sorted by name.
    static func versions(ofPackage package: URL) -> [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: package.path)) ?? []
        return names.filter { $0.hasSuffix(".xcdatamodel") }.sorted().map { package.appendingPathComponent($0) }
    }

    /// The model files (`.xcdatamodeld`, `.xcdatamodel`) directly inside `directory`, sorted.
    static func models(in directory: URL) -> [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".xcdatamodeld") || $0.hasSuffix(".xcdatamodel") }.sorted().map {
            directory.appendingPathComponent($0)
        }
    }

    /// The directories an app's models are looked up in, in order (see the file comment).
    static func searchDirectories() -> [URL] {
        var result: [URL] = []
        let main = Bundle.main.resourceURL ?? Bundle.main.bundleURL
        result.append(main)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: Bundle.main.bundleURL.path)) ?? []
        for name in names.sorted() where name.hasSuffix(".resources") || name.hasSuffix(".bundle") {
            let bundle = Bundle.main.bundleURL.appendingPathComponent(name)
            result.append(Bundle(url: bundle)?.resourceURL ?? bundle)
        }
        result.append(URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true))
        var seen: Set<String> = []
        return result.filter { seen.insert($0.standardizedFileURL.path).inserted }
    }

    /// The model named `name` from the first place that has a readable one, or the
    /// places searched and what was found there.
    static func findModel(named name: String) -> (model: NSManagedObjectModel?, searched: [String]) {
        var searched: [String] = []
        for directory in searchDirectories() {
            var found = false
            for candidate in candidateNames(for: name) {
                let url = directory.appendingPathComponent(candidate)
                guard FileManager.default.fileExists(atPath: url.path) else { continue }
                found = true
                do {
                    return (try NSManagedObjectModel(validatingContentsOf: url), searched)
                } catch {
                    searched.append("\(url.path): \(error)")
                }
            }
            if !found {
                searched.append("\(directory.path): none of \(candidateNames(for: name).joined(separator: ", "))")
            }
        }
        return (nil, searched)
    }
}
