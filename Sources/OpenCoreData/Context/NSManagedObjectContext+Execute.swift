// execute(_:): the one entry for every request kind. Fetch requests run the fetch
// pipeline; history, batch and asynchronous requests plug in through
// ContextExecutableRequest.
import Foundation

/// A request that knows how to execute itself in a context: history, batch and
/// asynchronous requests conform to it and plug into `execute(_:)`.
protocol ContextExecutableRequest {
    /// Runs the request in `context` and returns its result.
    func execute(in context: NSManagedObjectContext) throws -> NSPersistentStoreResult
}

extension NSManagedObjectContext {
    /// Executes `request` in the context and returns its result (which you may ignore, as
    /// with Core Data's: `try context.execute(batchDelete)`).
    ///
    /// A fetch request returns an `NSAsynchronousFetchResult` holding its results; an
    /// ``NSAsynchronousFetchRequest`` returns its result at once and fetches later on the
    /// context's queue; other request kinds return their own result type.
    ///
    /// - Throws: `NSPersistentStoreUnsupportedRequestTypeError` (134091) for a request kind
    ///   no store implements yet; the request's own errors.
    @discardableResult
    public func execute(_ request: NSPersistentStoreRequest) throws -> NSPersistentStoreResult {
        ConcurrencyDebug.check(self, "NSManagedObjectContext.execute(_:)")
        if let executable = request as? ContextExecutableRequest { return try executable.execute(in: self) }
        if let fetch = request as? NSFetchRequest<NSFetchRequestResult> {
            return NSAsynchronousFetchResult<NSFetchRequestResult>(
                context: self, finalResult: try executeFetch(fetch).compactMap { $0 as? NSFetchRequestResult })
        }
        throw CoreDataError.make(
            NSPersistentStoreUnsupportedRequestTypeError,
            "execute(_:): requests of type \(type(of: request)) are not supported yet")
    }
}

extension NSFetchRequest {
    /// Fetches with the context whose perform block is running: call it inside
    /// `perform` or `performAndWait`, as in Core Data.
    ///
    /// ```swift
    /// context.perform {
    ///     let people = try? Person.fetchRequest().execute()
    /// }
    /// ```
    ///
    /// - Throws: `NSCoreDataError` (134060) outside a perform block; the fetch's errors.
    public func execute() throws -> [ResultType] {
        guard let context = NSManagedObjectContext.current else {
            throw CoreDataError.make(
                NSCoreDataError,
                "NSFetchRequest.execute() ran outside a context's perform block: call it inside "
                    + "context.perform { } or performAndWait { }, or use context.fetch(request)")
        }
        return try context.fetch(self)
    }
}
