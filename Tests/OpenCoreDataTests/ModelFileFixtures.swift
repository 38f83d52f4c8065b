// The model files under Tests/ModelFixtures (Xcode's format, outside any target so
// SwiftPM leaves them alone), the classes they name, and scratch model files for tests.
import Foundation
import TestSupport

@testable import OpenCoreData

final class LibraryAuthor: NSManagedObject {
    @Managed var name: String?
    @Managed var born: Date?
    @Managed var rating: Double
    @Managed var books: NSOrderedSet
}

class LibraryPublication: NSManagedObject {
    @Managed var title: String?
    @Managed var published: Date?
}

final class LibraryBook: LibraryPublication {
    @Managed var isbn: String?
    @Managed var pages: Int32
    @Managed var price: Decimal?
    @Managed var author: LibraryAuthor?
}

final class FixtureOwner: NSManagedObject {
    @Managed var name: String?
}

enum ModelFixtures {
    /// Tests/ModelFixtures.
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("ModelFixtures")
    static let everything = directory.appendingPathComponent("Everything.xcdatamodeld")
    static let library = directory.appendingPathComponent("Library.xcdatamodel")

    /// The module a leading "." names in the fixtures read by ``read(_:)``.
    static let testModule = String(reflecting: LibraryAuthor.self).components(separatedBy: ".")[0]

    /// The model at `url`, with "." class names resolved in this test module.
    static func read(_ url: URL) throws -> NSManagedObjectModel {
        let reader = ModelFileReader(productModuleName: testModule)
        try reader.read(contentsOf: ModelFileLocator.contentsURL(of: url))
        let model = NSManagedObjectModel()
        try reader.finish(into: model)
        return model
    }

    /// A new directory for one test's files.
    static func scratchDirectory() throws -> URL {
        let url = try TestScratch.directory("modelfile")
        return url
    }

    /// Writes `xml` as `directory/name.xcdatamodel/contents`; returns the `.xcdatamodel` URL.
    @discardableResult
    static func writeModel(_ xml: String, named name: String = "Scratch", in directory: URL) throws -> URL {
        let folder = directory.appendingPathComponent("\(name).xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(xml.utf8).write(to: folder.appendingPathComponent("contents"))
        return folder
    }

    /// A `<model>` element around `body`, with the header Xcode writes.
    static func model(_ body: String, identifier: String = "") -> String {
        """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22758" \
        systemVersion="23F79" minimumToolsVersion="Automatic" sourceLanguage="Swift" \
        userDefinedModelVersionIdentifier="\(identifier)">
        \(body)
        </model>
        """
    }
}
