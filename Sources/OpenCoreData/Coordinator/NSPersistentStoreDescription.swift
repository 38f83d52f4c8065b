// How to add a store: its type, location and options.
import Foundation

/// The description of a store a container adds: type, URL, options.
///
/// ```swift
/// let description = NSPersistentStoreDescription()
/// description.type = NSInMemoryStoreType
/// container.persistentStoreDescriptions = [description]
/// ```
open class NSPersistentStoreDescription: NSObject, @unchecked Sendable {
    /// The store type; `NSSQLiteStoreType` (the default on-disk store) unless set.
    open var type: String = NSSQLiteStoreType
    /// The model configuration the store holds.
    open var configuration: String?
    /// The store's location; nil for the in-memory store.
    open var url: URL?
    /// The store options.
    open private(set) var options: [String: NSObject] = [:]
    /// Whether the store is opened read-only.
    open var isReadOnly = false
    /// Seconds to wait for the store's lock.
    open var timeout: TimeInterval = 240
    /// Whether `loadPersistentStores` adds the store on a background queue.
    open var shouldAddStoreAsynchronously = false
    /// Whether the store migrates to the current model automatically.
    open var shouldMigrateStoreAutomatically = true
    /// Whether an automatic migration infers its mapping model.
    open var shouldInferMappingModelAutomatically = true
    /// How Core Data would mirror the store to CloudKit: accepted and ignored (no CloudKit
    /// here; ``NSPersistentCloudKitContainer`` says so when it loads).
    open var cloudKitContainerOptions: NSPersistentCloudKitContainerOptions?

    /// A description with no URL (set one, or use the in-memory type).
    public override init() {
        super.init()
    }

    /// A description of the store at `url`.
    public convenience init(url: URL) {
        self.init()
        self.url = url
    }

    /// Sets the option `key` to `option` (nil removes it).
    open func setOption(_ option: NSObject?, forKey key: String) {
        options[key] = option
    }

    open override var description: String {
        "<NSPersistentStoreDescription type=\(type) url=\(url?.path ?? "nil")>"
    }
}
