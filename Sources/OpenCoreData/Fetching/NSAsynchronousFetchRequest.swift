// Asynchronous fetches: execute(_:) returns a result at once; the fetch runs later on
// the context's queue and the completion block runs there too, with the result filled
// in. Its Progress is a child of the caller's current Progress when there is one, so
// cancelling the parent (or the result) cancels the fetch. A fetch cancelled before it
// finishes completes with operationError NSUserCancelledError (3072) and no results;
// the completion block still runs, so callers waiting on it are never left hanging.
import Foundation

/// The result of an asynchronous operation: its context, progress and error.
open class NSPersistentStoreAsynchronousResult: NSPersistentStoreResult, @unchecked Sendable {
    /// The context the operation runs in.
    public let managedObjectContext: NSManagedObjectContext
    /// The error that ended the operation, if any (read it in the completion block).
    public internal(set) var operationError: Error?
    /// The operation's progress: cancel it to cancel the operation.
    public let progress: Progress?

    init(context: NSManagedObjectContext, progress: Progress?) {
        self.managedObjectContext = context
        self.progress = progress
        super.init()
    }

    /// Cancels the operation (its completion reports `NSUserCancelledError`).
    open func cancel() {
        progress?.cancel()
    }
}

/// The result of a fetch executed through `execute(_:)`: the fetched objects.
///
/// For an ``NSAsynchronousFetchRequest``, ``finalResult`` is nil until the completion
/// block runs.
public final class NSAsynchronousFetchResult<ResultType>: NSPersistentStoreAsynchronousResult,
    @unchecked Sendable
{
    /// The fetched results; nil before completion, on error and on cancellation.
    public internal(set) var finalResult: [ResultType]?
    /// The asynchronous request this result answers (nil for a plain fetch request).
    public let fetchRequest: NSAsynchronousFetchRequest<ResultType>?

    init(context: NSManagedObjectContext, finalResult: [ResultType]?) {
        self.finalResult = finalResult
        self.fetchRequest = nil
        super.init(context: context, progress: nil)
    }

    init(context: NSManagedObjectContext, request: NSAsynchronousFetchRequest<ResultType>, progress: Progress) {
        self.fetchRequest = request
        super.init(context: context, progress: progress)
    }
}

/// A fetch that runs later on the context's queue and reports to a completion block.
///
/// ```swift
/// let request = NSFetchRequest<Person>(entityName: "Person")
/// let asynchronous = NSAsynchronousFetchRequest(fetchRequest: request) { result in
///     let people = result.finalResult ?? []
///     print(people.count)
/// }
/// let result = try context.execute(asynchronous) as? NSAsynchronousFetchResult<Person>
/// result?.progress?.cancel()  // to give up
/// ```
public final class NSAsynchronousFetchRequest<ResultType>: NSPersistentStoreRequest, @unchecked Sendable {
    /// The fetch to run.
    public let fetchRequest: NSFetchRequest<ResultType>
    /// Called on the context's queue when the fetch finished, failed or was cancelled.
    public let completionBlock: ((NSAsynchronousFetchResult<ResultType>) -> Void)?
    /// The number of results you expect, for the progress's total unit count (0: unknown).
    public var estimatedResultCount = 0

    /// A request running `fetchRequest` and calling `completionBlock` with its result.
    public init(
        fetchRequest: NSFetchRequest<ResultType>,
        completionBlock: ((NSAsynchronousFetchResult<ResultType>) -> Void)?
    ) {
        self.fetchRequest = fetchRequest
        self.completionBlock = completionBlock
        super.init()
        affectedStores = fetchRequest.affectedStores
    }

    /// The kind of request: a fetch.
    public override var requestType: NSPersistentStoreRequestType { .fetchRequestType }
}

extension NSAsynchronousFetchRequest: ContextExecutableRequest {
    func execute(in context: NSManagedObjectContext) throws -> NSPersistentStoreResult {
        // Progress(totalUnitCount:) joins the caller's current Progress as a child.
        let progress = Progress(totalUnitCount: Int64(max(estimatedResultCount, 1)))
        let result = NSAsynchronousFetchResult<ResultType>(context: context, request: self, progress: progress)
        context.perform { [self] in
            run(result, progress: progress, in: context)
        }
        return result
    }

    private func run(
        _ result: NSAsynchronousFetchResult<ResultType>, progress: Progress, in context: NSManagedObjectContext
    ) {
        if !progress.isCancelled {
            do {
                let objects = try context.fetch(fetchRequest)
                if !progress.isCancelled {
                    result.finalResult = objects
                    progress.totalUnitCount = Int64(max(objects.count, 1))
                    progress.completedUnitCount = progress.totalUnitCount
                }
            } catch {
                result.operationError = error
            }
        }
        if progress.isCancelled {
            result.finalResult = nil
            result.operationError = CoreDataError.make(
                CocoaError.userCancelled.rawValue, "the asynchronous fetch was cancelled")
        }
        completionBlock?(result)
    }
}
