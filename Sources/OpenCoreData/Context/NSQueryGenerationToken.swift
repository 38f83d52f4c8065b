// Query generations: a context pinned to a generation reads one snapshot of its stores
// — fetches, counts and faults — while other contexts and processes save.
//
// A token names a QueryGeneration: the snapshots of the coordinator's stores, taken
// together (under the coordinator's lock) at the first read after pinning, so
// `.current` means "the stores as of the pinned context's next read". The default
// store's snapshot is an engine read transaction (Database.snapshot()): its pages are
// kept from reuse only while the generation lives. The in-memory and binary stores'
// snapshot is a copy-on-write copy of their row tables. Stores added after the
// generation bound are left out of its reads until the generation moves, as Core Data
// ignores them; a store class without snapshots is read as it is now.
//
// A context's reads run with its generation as the task-local QueryGeneration.current;
// stores read from its snapshot when it has one for them. Contexts sharing a token read
// the same snapshot (reads are serialized by the coordinator's lock). Child contexts
// defer to their root ancestor's generation. A pinned context moves to a new `.current`
// generation when it saves, resets, or merges a save (explicitly, from a remote save, or
// automatically) — the points Core Data's header names; batch requests and refreshing
// objects do not move it. A token keeps its generation alive, as a context does: the
// snapshot's pages are reused once neither is left.
import Foundation
import StorageEngine

/// A point in the stores' history that a context reads from: `.current` (the newest data
/// at the context's next read), or another context's `queryGenerationToken`.
///
/// ```swift
/// try context.setQueryGenerationFrom(.current)
/// let people = try context.fetch(request)   // binds: later reads see this data until it moves
/// ```
public final class NSQueryGenerationToken: NSObject, @unchecked Sendable {
    /// The generation, or nil for `.current`.
    let generation: QueryGeneration?

    init(generation: QueryGeneration?) {
        self.generation = generation
        super.init()
    }

    /// The newest data: pin a context to it, and it binds at the context's next read.
    public static let current = NSQueryGenerationToken(generation: nil)

    /// Whether `object` is a token of the same generation.
    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSQueryGenerationToken else { return false }
        return other.generation === generation
    }

    /// A hash consistent with `isEqual(_:)`.
    public override var hash: Int { generation.map { ObjectIdentifier($0).hashValue } ?? 0 }
}

/// The snapshots of one generation, by store.
final class QueryGeneration: @unchecked Sendable {
    /// The generation the running read uses (set by the reading context).
    @TaskLocal static var current: QueryGeneration?

    private let lock = NSLock()
    private var isBound = false
    private var snapshots: [ObjectIdentifier: AnyObject] = [:]
    /// The stores there were when the generation bound.
    private var boundStores: Set<ObjectIdentifier> = []
    /// The coordinator the generation belongs to, once bound.
    private(set) var coordinator: NSPersistentStoreCoordinator? {
        get { coordinatorHandle?.target }
        set { coordinatorHandle = newValue?.referenceHandle }
    }
    private var coordinatorHandle: WeakHandle<NSPersistentStoreCoordinator>?

    /// Takes a snapshot of each of `stores` unless bound already (called under the
    /// coordinator's lock, so no save lands between two stores' snapshots).
    func bindIfNeeded(to stores: [NSPersistentStore], of coordinator: NSPersistentStoreCoordinator) throws {
        try lock.withLock {
            guard !isBound else { return }
            for store in stores {
                boundStores.insert(ObjectIdentifier(store))
                if let snapshot = try store.queryGenerationSnapshot() { snapshots[ObjectIdentifier(store)] = snapshot }
            }
            self.coordinator = coordinator
            isBound = true
        }
    }

    /// Whether `store` is read in this generation: it was there when the generation
    /// bound (every store is, before).
    func covers(_ store: NSPersistentStore) -> Bool {
        lock.withLock { !isBound || boundStores.contains(ObjectIdentifier(store)) }
    }

    /// `store`'s snapshot in this generation, if it has one.
    func snapshot(for store: NSPersistentStore) -> AnyObject? {
        lock.withLock { snapshots[ObjectIdentifier(store)] }
    }
}
