// Stores of every type for tests that run once per store type.
import Foundation
import TestSupport

@testable import OpenCoreData

extension TestStack {
    /// The store types every feature runs on.
    static let storeTypes = [NSInMemoryStoreType, NSSQLiteStoreType, NSBinaryStoreType]

    /// A new empty directory under the temporary directory (the caller removes it).
    static func scratchDirectory(_ prefix: String) throws -> URL {
        let directory = try TestScratch.directory(prefix)
        return directory
    }

    /// A coordinator of `model` with one store of `type`: the file `name` in `directory`,
    /// or in memory.
    static func coordinator(
        _ type: String, model: NSManagedObjectModel, in directory: URL, name: String = "store"
    ) throws -> NSPersistentStoreCoordinator {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(
            ofType: type, configurationName: nil,
            at: type == NSInMemoryStoreType ? nil : directory.appendingPathComponent(name), options: nil)
        return coordinator
    }
}
