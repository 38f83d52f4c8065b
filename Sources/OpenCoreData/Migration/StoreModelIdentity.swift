// What every store records about the model it is written with (SPEC.md §3.10, §3.11):
// the entity version hashes it is compared by, the model's version identifiers, and the
// model record a later version migrates from.
import Foundation

extension NSManagedObjectModel {
    /// The metadata entries a store records for this model: `NSStoreModelVersionHashesKey`,
    /// `NSStoreModelVersionIdentifiersKey` and the model record.
    ///
    /// - Throws: `NSPersistentStoreSaveError` when the model cannot be recorded.
    func storeIdentityMetadata() throws -> [String: Any] {
        [
            NSStoreModelVersionHashesKey: entityVersionHashesByName,
            NSStoreModelVersionIdentifiersKey: ModelRecord.versionIdentifiers(of: self),
            ModelRecord.metadataKey: try ModelRecord.encode(self),
        ]
    }
}

extension NSPersistentStore {
    /// Whether the store was added with automatic, inferred (lightweight) migration.
    var migratesAutomatically: Bool {
        func flag(_ key: String) -> Bool {
            guard let value = options?[key] else { return false }
            return (value as? NSNumber)?.boolValue ?? (value as? Bool) ?? false
        }
        return flag(NSMigratePersistentStoresAutomaticallyOption) && flag(NSInferMappingModelAutomaticallyOption)
    }
}

extension NSManagedObjectModel {
    /// The model a store was last written with, read from its metadata (the model record,
    /// SPEC.md §3.11), with `NSManagedObject` for every entity; nil for a store written
    /// before stores recorded their model. Beyond Core Data: what tools that open a store
    /// without the app's model (the `opencoredata-store` inspector) read it with.
    ///
    /// ```swift
    /// let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(
    ///     ofType: NSSQLiteStoreType, at: url, options: nil)
    /// let model = try NSManagedObjectModel.recordedModel(inStoreMetadata: metadata)
    /// ```
    ///
    /// - Throws: `NSFileReadCorruptFileError` (259) for a damaged record.
    public static func recordedModel(inStoreMetadata metadata: [String: Any]) throws -> NSManagedObjectModel? {
        try ModelRecord.model(in: metadata)
    }
}
