// A store holding nothing but strings, for checking the string operators as fetches:
// saved rows are tested by the store (the default store on their encoded bytes), unsaved
// ones by the context. One stack serves many checks: each replaces the rows.
import Foundation
import OpenCoreData

/// One coordinator and context over a `Row(payload: String)` model on a store type.
public final class StringStoreStack {
    private static let model: NSManagedObjectModel = {
        let payload = NSAttributeDescription()
        payload.name = "payload"
        payload.attributeType = .stringAttributeType
        payload.isOptional = true
        let entity = NSEntityDescription()
        entity.name = "Row"
        entity.properties = [payload]
        let model = NSManagedObjectModel()
        model.entities = [entity]
        return model
    }()

    /// The store type the stack's coordinator holds (default, binary or in-memory).
    public let storeType: String
    private let coordinator: NSPersistentStoreCoordinator
    private let context: NSManagedObjectContext
    private let directory: URL?

    /// A fresh store of `storeType` (in a temporary directory unless in memory).
    public init(storeType: String) throws {
        self.storeType = storeType
        coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.model)
        var url: URL?
        if storeType == NSInMemoryStoreType {
            directory = nil
        } else {
            let directory = try TestScratch.directory("string-store")
            self.directory = directory
            url = directory.appendingPathComponent("Strings.store")
        }
        try coordinator.addPersistentStore(
            ofType: storeType, configurationName: nil, at: url, options: [PageFileStoreDurabilityOption: "off"])
        context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
    }

    /// Deletes every row, saves `saved` as new rows, then inserts `unsaved` without saving.
    public func replaceRows(with saved: [String], unsaved: [String]) throws {
        try context.performAndWait {
            context.rollback()
            for row in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Row")) { context.delete(row) }
            for payload in saved { insert(payload) }
            try context.save()
            for payload in unsaved { insert(payload) }
        }
    }

    private func insert(_ payload: String) {
        let row = NSEntityDescription.insertNewObject(forEntityName: "Row", into: context)
        row.setValue(payload, forKey: "payload")
    }

    /// The payloads of the rows `predicate` fetches, saved and unsaved.
    public func fetchPayloads(_ predicate: OpenCoreData.NSPredicate) throws -> [String] {
        try context.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Row")
            request.predicate = predicate
            return try context.fetch(request).map { $0.value(forKey: "payload") as? String ?? "<nil>" }
        }
    }

    /// Removes the store and its files.
    public func close() {
        for store in coordinator.persistentStores { try? coordinator.remove(store) }
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }
}
