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
    /// Why `init(name:)` found no model: what `loadPersistentStores` reports.
    private var modelLookupError: NSError?

    /// A container for `model` named `name`.
    public init(name: String, managedObjectModel model: NSManagedObjectModel) {
        self.name = name
        self.managedObjectModel = model
        self.persistentStoreCoordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let url = Self.defaultDirectoryURL().appendingPathComponent("\(name).sqlite")
        self.persistentStoreDescriptions = [NSPersistentStoreDescription(url: url)]
        super.init()
    }

    /// A container named `name` for the model of the same name, found the way an app
    /// finds its model: `name.momd`, `name.mom`, `name.xcdatamodeld` or `name.xcdatamodel`
    /// in `Bundle.main`'s resources, then in SwiftPM resource bundles beside the
    /// executable, then in the current directory (compiled `.momd`/`.mom` models cannot be
    /// read: ship the `.xcdatamodeld`).
    ///
    /// When no readable model is found the container gets an empty model, a line naming
    /// the places searched goes to standard error, and ``loadPersistentStores(completionHandler:)``
    /// reports `NSFileReadNoSuchFileError` (260) with the same text for every description.
    ///
    /// ```swift
    /// let container = NSPersistentContainer(name: "Company")  // finds Company.xcdatamodeld
    /// container.loadPersistentStores { _, error in if let error { fatalError("\(error)") } }
    /// ```
    public convenience init(name: String) {
        let found = ModelFileLocator.findModel(named: name)
        self.init(name: name, managedObjectModel: found.model ?? NSManagedObjectModel())
        if found.model == nil {
            let message =
                "NSPersistentContainer(name: \"\(name)\") found no readable model named \(name); searched: "
                + found.searched.joined(separator: "; ")
            ModelFileLog.write(message)
            modelLookupError = CoreDataError.make(NSFileReadNoSuchFileError, message)
        }
    }

    /// The directory of default store files: Application Support, or `~/.local/share` on Linux.
    open class func defaultDirectoryURL() -> URL {
        FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
    }

    /// Adds a store for each description, calling `block` once per description with any
    /// error (for a container whose `init(name:)` found no model: that error, and no store
    /// is added).
    ///
    /// A description with `shouldAddStoreAsynchronously` is added on a background queue
    /// and `block` runs there later; the others are added before this method returns.
    open func loadPersistentStores(completionHandler block: @escaping (NSPersistentStoreDescription, Error?) -> Void) {
        if let modelLookupError {
            for description in persistentStoreDescriptions { block(description, modelLookupError) }
            return
        }
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
