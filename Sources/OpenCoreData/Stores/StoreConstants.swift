// Store type strings, metadata keys and store options, with Core Data's names.
import Foundation

/// The in-memory store: rows in memory, gone when the store is removed.
public let NSInMemoryStoreType = "InMemory"
/// The default on-disk store (Core Data's name; here served by the page-file store on the
/// storage engine). It is the default type of a store description.
public let NSSQLiteStoreType = "SQLite"
/// The binary store: the whole graph in one checksummed file, replaced atomically.
public let NSBinaryStoreType = "Binary"

/// Metadata key: the store's type string.
public let NSStoreTypeKey = "NSStoreType"
/// Metadata key: the store's UUID string.
public let NSStoreUUIDKey = "NSStoreUUID"
/// Metadata key: the entity version hashes (`[String: Data]`) of the model the store holds.
public let NSStoreModelVersionHashesKey = "NSStoreModelVersionHashes"
/// Metadata key: the model's version identifiers.
public let NSStoreModelVersionIdentifiersKey = "NSStoreModelVersionIdentifiers"

/// Option: open the store read-only (`Bool`).
public let NSReadOnlyPersistentStoreOption = "NSReadOnlyPersistentStoreOption"
/// Option: migrate the store to the current model automatically (`Bool`).
public let NSMigratePersistentStoresAutomaticallyOption = "NSMigratePersistentStoresAutomaticallyOption"
/// Option: infer the mapping model of an automatic migration (`Bool`).
public let NSInferMappingModelAutomaticallyOption = "NSInferMappingModelAutomaticallyOption"
/// Option: record every save in the store's persistent history (`NSNumber` Boolean).
public let NSPersistentHistoryTrackingKey = "NSPersistentHistoryTrackingKey"
/// Option: post a notification for every remote change of the store (`NSNumber` Boolean).
public let NSPersistentStoreRemoteChangeNotificationPostOptionKey =
    "NSPersistentStoreRemoteChangeNotificationOptionKey"
/// Option: the timeout in seconds for acquiring the store's write lock (`NSNumber`).
public let NSPersistentStoreTimeoutOption = "NSPersistentStoreTimeoutOption"
/// Option: the file protection of store files (accepted, unused on Linux).
public let NSPersistentStoreFileProtectionKey = "NSPersistentStoreFileProtectionKey"
