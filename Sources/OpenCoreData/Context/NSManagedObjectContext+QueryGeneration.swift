// A context's query generation (NSQueryGenerationToken.swift): pinning, reading in it,
// and moving it forward.
import Foundation

extension NSManagedObjectContext {
    /// The generation the context reads from: nil when not pinned (the default), and
    /// always nil for a child context (it reads through its parent).
    public var queryGenerationToken: NSQueryGenerationToken? {
        guard parent == nil else { return nil }
        return generationLock.withLock { queryGeneration }.map { NSQueryGenerationToken(generation: $0) }
    }

    /// Pins the context's reads — fetches, counts, faults — to a generation: `.current`
    /// binds to the newest data at the context's next read; another context's
    /// ``queryGenerationToken`` shares its generation; nil unpins.
    ///
    /// The generation moves to the newest data (a new `.current`) when the context saves,
    /// resets, or merges a save (`mergeChanges(fromContextDidSave:)`,
    /// `mergeChanges(fromRemoteContextSave:into:)`, automatic merging); batch requests and
    /// refreshing objects do not move it. Releasing the context or
    /// unpinning lets the store reuse the space the generation kept.
    ///
    /// ```swift
    /// try context.setQueryGenerationFrom(.current)
    /// let count = try context.count(for: request)   // binds; later reads see the same data
    /// ```
    ///
    /// - Throws: `NSCoreDataError` (134060) for a child context (it defers to its parent)
    ///   or a token of another coordinator's stores.
    public func setQueryGenerationFrom(_ token: NSQueryGenerationToken?) throws {
        guard parent == nil else {
            throw CoreDataError.make(
                NSCoreDataError,
                "setQueryGenerationFrom(_:): a child context reads its parent's generation; pin the parent instead")
        }
        let generation: QueryGeneration?
        if let token {
            if let shared = token.generation {
                if let owner = shared.coordinator, owner !== persistentStoreCoordinator {
                    throw CoreDataError.make(
                        NSCoreDataError,
                        "setQueryGenerationFrom(_:): the token belongs to another coordinator's stores")
                }
                generation = shared
            } else {
                generation = QueryGeneration()
            }
        } else {
            generation = nil
        }
        generationLock.withLock { queryGeneration = generation }
    }

    /// Moves a pinned context to a new `.current` generation (its save, reset(), a merge).
    func advanceQueryGeneration() {
        generationLock.withLock {
            if queryGeneration != nil { queryGeneration = QueryGeneration() }
        }
    }

    /// Runs the store reads of `body` in the generation of the context (of its root
    /// ancestor, for a child), binding it first; directly when not pinned or saving.
    func readingQueryGeneration<T>(_ body: () throws -> T) throws -> T {
        var root = self
        while let parent = root.parent { root = parent }
        guard let generation = root.generationLock.withLock({ root.isSavingUnpinned ? nil : root.queryGeneration })
        else { return try body() }
        guard let coordinator = persistentStoreCoordinator else { return try body() }
        try coordinator.bind(generation)
        return try QueryGeneration.$current.withValue(generation) { try body() }
    }

    /// Runs `body` (a save) reading the newest data even when pinned: conflicts are
    /// checked against what is stored now.
    func withoutQueryGeneration<T>(_ body: () throws -> T) rethrows -> T {
        let pinned = generationLock.withLock { () -> Bool in
            isSavingUnpinned = queryGeneration != nil
            return isSavingUnpinned
        }
        defer { if pinned { generationLock.withLock { isSavingUnpinned = false } } }
        return try body()
    }
}

extension NSPersistentStoreCoordinator {
    /// Takes `generation`'s snapshots of every store now, unless it has them.
    func bind(_ generation: QueryGeneration) throws {
        try withStores { try generation.bindIfNeeded(to: persistentStoresUnlocked, of: self) }
    }
}
