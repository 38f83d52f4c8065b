// The container: a model, a coordinator, its stores and the contexts an app uses.
import Foundation

/// Sets up the Core Data stack: a coordinator for a model, its stores, a main-queue
/// view context and background contexts.
///
/// ```swift
/// let container = NSPersistentContainer(name: "App", managedObjectModel: model)
/// container.loadPersistentStores { _, error in if let error { fatalError("\(error)") } }
/// let context = container.viewContext
/// ```
open class NSPersistentContainer: NSObject, @unchecked Sendable {
    /// The container's name; the default store file is named after it.
    public let name: String
    /// The model.
    public let managedObjectModel: NSManagedObjectModel
    /// The coordinator.
    public let persistentStoreCoordinator: NSPersistentStoreCoordinator
    /// The stores `loadPersistentStores` adds; by default one default store in
    /// ``defaultDirectoryURL()``.
    open var persistentStoreDescriptions: [NSPersistentStoreDescription]
    private let viewContextLock = NSLock()
    private var viewContextStorage: NSManagedObjectContext?

    /// A container for `model` named `name`.
    public init(name: String, managedObjectModel model: NSManagedObjectModel) {
        self.name = name
        self.managedObjectModel = model
        self.persistentStoreCoordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let url = Self.defaultDirectoryURL().appendingPathComponent("\(name).sqlite")
        self.persistentStoreDescriptions = [NSPersistentStoreDescription(url: url)]
        super.init()
    }

    /// The directory of default store files: Application Support, or `~/.local/share` on Linux.
    open class func defaultDirectoryURL() -> URL {
        FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
    }

    /// Adds a store for each description, calling `block` once per description with any error.
    ///
    /// A description with `shouldAddStoreAsynchronously` is added on a background queue
    /// and `block` runs there later; the others are added before this method returns.
    open func loadPersistentStores(completionHandler block: @escaping (NSPersistentStoreDescription, Error?) -> Void) {
        for description in persistentStoreDescriptions {
            if description.shouldAddStoreAsynchronously {
                let handler = UncheckedBox(block)
                let coordinator = persistentStoreCoordinator
                DispatchQueue.global().async {
                    coordinator.addPersistentStore(with: description, completionHandler: handler.value)
                }
            } else {
                persistentStoreCoordinator.addPersistentStore(with: description, completionHandler: block)
            }
        }
    }

    /// The main-queue context for the user interface (and top-level code on the main thread).
    open var viewContext: NSManagedObjectContext {
        viewContextLock.lock()
        defer { viewContextLock.unlock() }
        if let viewContextStorage { return viewContextStorage }
        let context = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        context.persistentStoreCoordinator = persistentStoreCoordinator
        context.name = "viewContext"
        viewContextStorage = context
        return context
    }

    /// A new private-queue context on the coordinator; use it with `perform`.
    open func newBackgroundContext() -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = persistentStoreCoordinator
        return context
    }

    /// Runs `block` on a new background context's queue.
    open func performBackgroundTask(_ block: @escaping @Sendable (NSManagedObjectContext) -> Void) {
        let context = newBackgroundContext()
        context.perform { block(context) }
    }

    /// Runs `block` on a new background context's queue and returns its value.
    public func performBackgroundTask<T: Sendable, Failure: Error>(
        _ block: @escaping @Sendable (NSManagedObjectContext) throws(Failure) -> T
    ) async throws(Failure) -> T {
        let context = newBackgroundContext()
        return try await context.perform { () throws(Failure) -> T in try block(context) }
    }
}
