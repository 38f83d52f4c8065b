// Beyond Core Data: a fetch request's results as an AsyncSequence that yields them at
// once and again after every change of the context that affects them — the shape of
// GRDB's ValueObservation and of SwiftData's @Query, over the results controller's
// tracker.
//
// Managed objects are not Sendable: they belong to their context's queue. So the
// sequences yield Sendable values made on that queue — a snapshot of object IDs in
// sections, a difference of object IDs, or values your closure maps each object to —
// and never the objects themselves.
//
// Mechanics: iterating starts a tracker on the context's queue (context.perform); its
// first fetch is the first element; each ObjectsDidChange batch that changes the
// results (its own processPendingChanges, a save, a merge of another context's save or
// of remote and batch changes) yields one element, coalesced per batch; a save that
// gives results their permanent IDs yields too, so IDs always resolve. The element
// buffer keeps only the newest snapshot or value list (a slow consumer skips to the
// latest) but every difference (they chain). Ending the iteration (break, task
// cancellation, or dropping the iterator) stops the tracker. A fetch error ends the
// sequence by throwing it.
import Foundation

/// A change of a results list: the results after it and the difference from before.
public struct FetchedResultsChange: Sendable, Hashable {
    /// The results after the change.
    public let snapshot: FetchedResultsSnapshot
    /// The change as object IDs removed from and inserted into the whole list (across
    /// sections; moves are a removal and an insertion associated with each other). The
    /// first change inserts every result.
    public let difference: CollectionDifference<NSManagedObjectID>
    /// The results changed in place (not part of `difference`).
    public var updatedObjectIDs: [NSManagedObjectID] { snapshot.reloadedItemIdentifiers }
}

/// The results of a fetch request over time, as an `AsyncSequence` of Sendable values.
///
/// Made by ``NSManagedObjectContext/results(for:sectionNameKeyPath:)``,
/// ``NSManagedObjectContext/resultChanges(for:sectionNameKeyPath:)`` and
/// ``NSManagedObjectContext/results(for:transform:)``.
public struct FetchedResultsSequence<Element: Sendable>: AsyncSequence, Sendable {
    /// A fetch error ends the sequence.
    public typealias Failure = any Error

    let context: NSManagedObjectContext
    let request: NSFetchRequest<NSFetchRequestResult>
    let sectionNameKeyPath: String?
    let keepsEveryElement: Bool
    let makeObservation: @Sendable () -> ResultsObservation<Element>

    /// Iterates the results: the first element comes once the context's queue has fetched.
    public func makeAsyncIterator() -> AsyncIterator {
        let (stream, continuation) = AsyncThrowingStream<Element, any Error>.makeStream(
            bufferingPolicy: keepsEveryElement ? .unbounded : .bufferingNewest(1))
        let observation = makeObservation()
        let context = self.context
        let request = request
        let sectionNameKeyPath = sectionNameKeyPath
        continuation.onTermination = { _ in context.perform { observation.stop() } }
        context.perform {
            observation.start(
                FetchedResultsTracker(
                    request: request, context: context, sectionNameKeyPath: sectionNameKeyPath, cacheName: nil),
                continuation: continuation)
        }
        return AsyncIterator(base: stream.makeAsyncIterator())
    }

    /// The iterator of a ``FetchedResultsSequence``.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<Element, any Error>.AsyncIterator

        /// The next results; nil once the iteration ended.
        public mutating func next() async throws -> Element? {
            try await base.next()
        }
    }
}

/// A tracker feeding one iteration: touched on the context's queue only (hence unchecked).
final class ResultsObservation<Element: Sendable>: @unchecked Sendable {
    /// Makes an element from the tracker's results after `changes` (nil: the first fetch, or
    /// a save that changed object IDs); nil when there is nothing to yield.
    private let produce: (FetchedResultsTracker, FetchedResultsChanges?) throws -> Element?
    private var tracker: FetchedResultsTracker?
    private var continuation: AsyncThrowingStream<Element, any Error>.Continuation?

    init(produce: @escaping (FetchedResultsTracker, FetchedResultsChanges?) throws -> Element?) {
        self.produce = produce
    }

    func start(_ tracker: FetchedResultsTracker, continuation: AsyncThrowingStream<Element, any Error>.Continuation) {
        self.tracker = tracker
        self.continuation = continuation
        do {
            try tracker.performFetch()
            try yield(tracker, nil)
        } catch {
            continuation.finish(throwing: error)
            stop()
            return
        }
        tracker.changeHandler = { [weak self, unowned tracker] changes in self?.yieldOrFinish(tracker, changes) }
        tracker.saveHandler = { [weak self, unowned tracker] in self?.yieldOrFinish(tracker, nil) }
    }

    private func yield(_ tracker: FetchedResultsTracker, _ changes: FetchedResultsChanges?) throws {
        if let element = try produce(tracker, changes) { continuation?.yield(element) }
    }

    private func yieldOrFinish(_ tracker: FetchedResultsTracker, _ changes: FetchedResultsChanges?) {
        do {
            try yield(tracker, changes)
        } catch {
            continuation?.finish(throwing: error)
            stop()
        }
    }

    func stop() {
        tracker?.changeHandler = nil
        tracker?.saveHandler = nil
        tracker = nil
        continuation = nil
    }
}

extension NSManagedObjectContext {
    /// The results of `request` as snapshots of object IDs in sections: the current results
    /// at once, then the results after each change of this context that affects them.
    ///
    /// ```swift
    /// let request = NSFetchRequest<Person>(entityName: "Person")
    /// request.sortDescriptors = [NSSortDescriptor(key: "lastName", ascending: true)]
    /// for try await snapshot in context.results(for: request, sectionNameKeyPath: "lastName") {
    ///     print(snapshot.sectionIdentifiers, snapshot.numberOfItems)
    /// }
    /// ```
    ///
    /// The request needs sort descriptors (and, with `sectionNameKeyPath`, a first sort that
    /// groups by it), as a fetched results controller's does; otherwise the sequence throws.
    /// A slow consumer gets the newest snapshot, not every one.
    public func results<ResultType>(for request: NSFetchRequest<ResultType>, sectionNameKeyPath: String? = nil)
        -> FetchedResultsSequence<FetchedResultsSnapshot>
    {
        FetchedResultsSequence(
            context: self, request: request.untyped(), sectionNameKeyPath: sectionNameKeyPath,
            keepsEveryElement: false,
            makeObservation: {
                ResultsObservation { tracker, _ in tracker.snapshot() }
            })
    }

    /// The results of `request` as changes: first every result inserted, then one
    /// ``FetchedResultsChange`` per change of this context that affects them, each with the
    /// new snapshot and the difference from the previous one. Every change is kept until
    /// consumed, so applying the differences in order rebuilds the list.
    ///
    /// ```swift
    /// var ids: [NSManagedObjectID] = []
    /// for try await change in context.resultChanges(for: request) {
    ///     ids = ids.applying(change.difference) ?? change.snapshot.itemIdentifiers
    /// }
    /// ```
    public func resultChanges<ResultType>(for request: NSFetchRequest<ResultType>, sectionNameKeyPath: String? = nil)
        -> FetchedResultsSequence<FetchedResultsChange>
    {
        FetchedResultsSequence(
            context: self, request: request.untyped(), sectionNameKeyPath: sectionNameKeyPath,
            keepsEveryElement: true,
            makeObservation: {
                var last: [NSManagedObjectID] = []
                return ResultsObservation { tracker, changes in
                    let snapshot = tracker.snapshot(reloading: changes?.updatedObjects ?? [])
                    let ids = snapshot.itemIdentifiers
                    // The first fetch and a save that made IDs permanent: the difference of the lists.
                    let difference = changes?.difference ?? ids.difference(from: last)
                    last = ids
                    return FetchedResultsChange(snapshot: snapshot, difference: difference)
                }
            })
    }

    /// The results of `request` mapped by `transform` to Sendable values on this context's
    /// queue: the current values at once, then after each change that affects the results.
    ///
    /// ```swift
    /// struct Row: Sendable { let name: String }
    /// for try await rows in context.results(for: request, transform: { Row(name: $0.name ?? "") }) {
    ///     show(rows)
    /// }
    /// ```
    ///
    /// `transform` runs for every result each time (O(n)); a slow consumer gets the newest
    /// values. An error thrown by `transform` ends the sequence.
    public func results<ResultType, Value: Sendable>(
        for request: NSFetchRequest<ResultType>, transform: @escaping @Sendable (ResultType) throws -> Value
    ) -> FetchedResultsSequence<[Value]> {
        FetchedResultsSequence(
            context: self, request: request.untyped(), sectionNameKeyPath: nil, keepsEveryElement: false,
            makeObservation: {
                ResultsObservation { tracker, _ in
                    try tracker.allObjects.map { object in
                        guard let typed = object as? ResultType else {
                            throw CoreDataError.make(
                                NSCoreDataError,
                                "results(for:transform:): a result of type \(type(of: object)) is not a \(ResultType.self)"
                            )
                        }
                        return try transform(typed)
                    }
                }
            })
    }
}
