// Faults: objects registered by ID whose values load on first access.
//
// Where a fault's values come from when it fires:
//
//   .row(row)      the row a fetch already returned. This is our row cache: Core Data
//                  keeps one at the coordinator; we keep the fetched row ON THE FAULT
//                  itself, so firing it costs no store call and no shared table (no
//                  lock, no invalidation protocol between contexts). The row is as of
//                  the fetch: a refresh, a merge of a save or a refetch replaces it.
//   .batch(b)      one batch of a fetch with fetchBatchSize: the first fault of the
//                  batch to fire loads every row of the batch in one store call
//                  (NSPersistentStore.rows(for:)) and fills all of its faults.
//   nil            a lookup of its own: the parent context, or the store's row(for:).
//
// A fault whose row no longer exists is inaccessible. Core Data raises
// NSObjectInaccessibleException (or, with shouldDeleteInaccessibleFaults, marks the
// object deleted). We never raise: with shouldDeleteInaccessibleFaults (the default)
// the object reads default values and reports isDeleted; without, it reads default
// values and stays an ordinary object. Either way existingObject(with:) throws
// NSManagedObjectReferentialIntegrityError (133000) for it.
import Foundation

/// Where a fault's values come from when it fires (see the file comment).
enum PendingFault {
    /// The row a fetch returned.
    case row(StoreRow)
    /// A batch of a fetch with `fetchBatchSize`, loaded all at once.
    case batch(FaultBatch)
}

/// The faults of one batch: of a batched fetch result, or of a resolved to-many.
///
/// It holds its members (not their IDs, which would cost a registry lookup each when it
/// fires) until it fires; a member holds it through `pendingFault` until then, and every
/// path that takes an object out of its context clears that.
final class FaultBatch {
    /// The members, until the batch fires.
    var objects: [NSManagedObject]
    /// The request's relationshipKeyPathsForPrefetching, loaded with the batch.
    let prefetchKeyPaths: [String]
    /// For the members of a resolved to-many whose inverse is a to-one: the object whose
    /// relationship it is, which that to-one of every member's row names (checked per row).
    var source: ToOneSource?

    init(objects: [NSManagedObject], prefetchKeyPaths: [String], source: ToOneSource? = nil) {
        self.objects = objects
        self.prefetchKeyPaths = prefetchKeyPaths
        self.source = source
    }
}

/// A to-one of loaded rows that is known to name `destination` (a registered object):
/// the slot is filled with the object itself, not with a relationship left to resolve.
struct ToOneSource {
    /// The to-one's slot.
    let slot: Int
    /// The object the to-one names.
    let destination: NSManagedObject
    /// Its ID, permanent (so it stays), read once rather than for every loaded row.
    private let known: NSManagedObjectID

    /// The to-one `slot` naming `destination`, whose ID is permanent.
    init(slot: Int, destination: NSManagedObject) {
        self.slot = slot
        self.destination = destination
        known = destination.objectID
    }

    /// The object the stored `value` names when it is `destination`; nil otherwise.
    func destination(named value: StoreValue) -> NSManagedObject? {
        guard case .objectID(let id) = value else { return nil }
        return destination(naming: id)
    }

    /// The object the stored reference `id` names when it is `destination`; nil otherwise.
    @inline(__always)
    func destination(naming id: NSManagedObjectID) -> NSManagedObject? {
        guard
            id === known
                || (id.key == known.key && id.entity === known.entity && !id.isTemporaryID
                    && !known.isTemporaryID && id.persistentStore === known.persistentStore)
        else { return nil }
        return destination
    }
}

extension NSManagedObjectContext {
    /// Fires `object` from its pending source; false when it has none (or the source lacks its row).
    func fulfillPendingFault(_ object: NSManagedObject) -> Bool {
        guard let pending = object.pendingFault else { return false }
        object.pendingFault = nil
        switch pending {
        case .row(let row):
            fill(object, row: row)
        case .batch(let batch):
            fulfillBatch(batch)
        }
        return !object.isFault
    }

    /// Loads every still-faulted object of `batch` with one store call.
    private func fulfillBatch(_ batch: FaultBatch) {
        // The members still waiting, in order: the batch's own list while every member
        // waits (the common case: no copy, no retain per member), cut where the first one
        // does not and extended with the later ones that do.
        var waiting = batch.objects
        var ids: [NSManagedObjectID] = []
        ids.reserveCapacity(waiting.count)
        var filtering = false
        for (position, object) in batch.objects.enumerated() {
            var waits = object.isFault && object.isRegistered(in: self)
            if waits, case .batch(let other) = object.pendingFault, other !== batch { waits = false }
            if waits {
                ids.append(object.objectID)
                if filtering { waiting.append(object) }
            } else if !filtering {
                filtering = true
                waiting.removeSubrange(position...)
            }
        }
        // The source only while it is still this context's object (not reset or invalidated since).
        let source = batch.source.flatMap { $0.destination.isRegistered(in: self) ? $0 : nil }
        guard !waiting.isEmpty,
            var rows = try? loadRows(ids, naming: source?.destination.objectID, fillsObjects: true)
        else { return }
        // Fired: a member whose row is gone looks it up on its own when it fires.
        batch.objects = []
        batch.source = nil
        var filled: [NSManagedObject] = []
        filled.reserveCapacity(batch.prefetchKeyPaths.isEmpty ? 0 : waiting.count)
        for (position, object) in zip(rows.indices, waiting) {
            // Taken out of the list: the object's values are then the row's own, not a copy.
            guard var row = rows[position].take() else { continue }
            lifecycle.load(
                object, values: object.layout.objectValues(taking: &row, source: source), version: row.version)
            if !batch.prefetchKeyPaths.isEmpty { filled.append(object) }
        }
        // The key paths were validated at fetch time; a store error here leaves the
        // destinations to load on access.
        if !batch.prefetchKeyPaths.isEmpty { try? prefetch(batch.prefetchKeyPaths, of: filled) }
    }

    /// The objects of `objectIDs`, the destinations of `source`'s to-many `slot` just read,
    /// registered as faults where not registered yet (one registry probe each, the registry
    /// grown once). The faults among them that have nothing to load from yet share batches,
    /// so the first of a batch to fire loads all of its rows in one store call: reading
    /// every object of the relationship costs a store call per batch, not per object, as
    /// Core Data's batch faulting of a relationship does. Batches are bounded, so a very
    /// large relationship loads a slice at a time. The batch members are picked while
    /// registering: one pass over the destinations, not a second one checking each again.
    ///
    /// When the to-many's inverse is a to-one, each loaded row whose to-one names `source`
    /// gets `source` itself in that slot (no object ID to look up when it is read).
    func toManyDestinations(_ objectIDs: [NSManagedObjectID], of source: NSManagedObject, slot: Int)
        -> [NSManagedObject]
    {
        var objects: [NSManagedObject] = []
        objects.reserveCapacity(objectIDs.count)
        registerToManyDestinations(objectIDs, of: source, slot: slot) { objects.append($0) }
        return objects
    }

    /// ``toManyDestinations(_:of:slot:)`` as the set an unordered to-many holds, each
    /// destination inserted as it is registered: no array of them made, kept and hashed
    /// into a set again.
    func toManyDestinationSet(_ objectIDs: [NSManagedObjectID], of source: NSManagedObject, slot: Int)
        -> Set<NSManagedObject>
    {
        var objects = Set<NSManagedObject>(minimumCapacity: objectIDs.count)
        registerToManyDestinations(objectIDs, of: source, slot: slot) { objects.insert($0) }
        return objects
    }

    /// Registers the destinations (see ``toManyDestinations(_:of:slot:)``) and hands each
    /// to `collect`, in the order of `objectIDs`.
    @inline(__always)
    private func registerToManyDestinations(
        _ objectIDs: [NSManagedObjectID], of source: NSManagedObject, slot: Int,
        _ collect: (NSManagedObject) -> Void
    ) {
        registry.reserveCapacity(registry.count + objectIDs.count)
        // A child context's faults fire through its parent, which may hold newer values.
        let batches = parent == nil && objectIDs.count > 1
        var waiting: [NSManagedObject] = []
        waiting.reserveCapacity(batches ? objectIDs.count : 0)
        for id in objectIDs {
            let object = object(with: id)
            collect(object)
            // A permanent `id` finds an object under its permanent ID; a temporary one may
            // find the object that adopted a permanent ID since.
            if batches, object.isFault, object.pendingFault == nil, !id.isTemporaryID || !object.objectID.isTemporaryID
            {
                waiting.append(object)
            }
        }
        guard waiting.count > 1 else { return }
        var toOne: ToOneSource?
        if !source.objectID.isTemporaryID, let inverseSlot = source.layout.inverseSlotBySlot[slot],
            source.layout.relationshipBySlot[slot]?.inverseRelationship?.isToMany == false
        {
            toOne = ToOneSource(slot: inverseSlot, destination: source)
        }
        let limit = Self.relationshipFaultBatchLimit
        if waiting.count <= limit {
            // One batch: it takes the array as it is.
            let batch = FaultBatch(objects: waiting, prefetchKeyPaths: [], source: toOne)
            for object in waiting { object.pendingFault = .batch(batch) }
            return
        }
        var start = 0
        while start < waiting.count {
            let slice = waiting[start..<min(start + limit, waiting.count)]
            let batch = FaultBatch(objects: Array(slice), prefetchKeyPaths: [], source: toOne)
            for object in slice { object.pendingFault = .batch(batch) }
            start += limit
        }
    }

    /// The objects of `objectIDs`, registered as faults where not registered yet: one
    /// registry probe each, the registry grown once.
    func objects(with objectIDs: [NSManagedObjectID]) -> [NSManagedObject] {
        registry.reserveCapacity(registry.count + objectIDs.count)
        return objectIDs.map { object(with: $0) }
    }

    /// The most faults of a resolved to-many that one store call loads.
    static let relationshipFaultBatchLimit = 1_024

    /// The rows of `objectIDs` from the stores, in one call per store; references to the
    /// object of `named` may be given as `named` itself; with `toManyNames`, only the
    /// to-manys of those names need resolving; `fillsObjects`: the rows only fill faults.
    func loadRows(
        _ objectIDs: [NSManagedObjectID], naming named: NSManagedObjectID? = nil,
        resolvingToMany toManyNames: Set<String>? = nil, fillsObjects: Bool = false
    ) throws -> [StoreRow?] {
        guard let coordinator = persistentStoreCoordinator else { throw CoreDataError.noCoordinator }
        return try readingQueryGeneration {
            try coordinator.rows(
                for: objectIDs, naming: named, resolvingToMany: toManyNames, fillsObjects: fillsObjects)
        }
    }

    /// A fault fired and its row is gone (see the file comment).
    func faultIsInaccessible(_ object: NSManagedObject) {
        guard !object.objectID.isTemporaryID else { return }
        lifecycle.faultIsInaccessible(object, marksDeleted: shouldDeleteInaccessibleFaults)
    }

    // MARK: Fetched objects

    /// Stage 6 for managed object results: `candidates` (already windowed) become
    /// registered objects, faults or loaded as `request` asks.
    func fetchedObjects(_ candidates: [FetchCandidate], _ request: NSFetchRequest<NSFetchRequestResult>)
        -> [NSManagedObject]
    {
        // A child context's faults fire through its parent, which may hold newer values.
        let fromStore = parent == nil
        let batchSize = fromStore ? max(request.fetchBatchSize, 0) : 0
        var objects: [NSManagedObject] = []
        objects.reserveCapacity(candidates.count)
        // One growth of the registry instead of one per doubling while registering the results.
        registry.reserveCapacity(registry.count + candidates.count)
        var batchObjects: [NSManagedObject] = []
        // Each candidate is read where it lies: a copy of it per iteration, besides the one
        // of its row, retained and released its ID and the row's values again per object.
        for index in candidates.indices {
            if let object = candidates[index].object {
                objects.append(object)
                continue
            }
            let object = self.object(with: candidates[index].objectID)
            objects.append(object)
            guard fromStore, let row = candidates[index].row else {
                if !request.returnsObjectsAsFaults && request.includesPropertyValues { object.fireFaultIfNeeded() }
                continue
            }
            if !object.isFault {
                if request.shouldRefreshRefetchedObjects { refreshRefetched(object, from: row) }
                continue
            }
            if batchSize > 0 {
                batchObjects.append(object)
            } else if !request.includesPropertyValues {
                object.pendingFault = nil
            } else if request.returnsObjectsAsFaults {
                object.pendingFault = .row(row)
            } else {
                fill(object, row: row)
            }
        }
        if batchSize > 0 {
            var start = 0
            while start < batchObjects.count {
                let slice = batchObjects[start..<min(start + batchSize, batchObjects.count)]
                let batch = FaultBatch(
                    objects: Array(slice), prefetchKeyPaths: request.relationshipKeyPathsForPrefetching ?? [])
                for object in slice { object.pendingFault = .batch(batch) }
                start += batchSize
            }
        }
        return objects
    }

    /// Updates a loaded object to `row` (shouldRefreshRefetchedObjects): unsaved changes win.
    func refreshRefetched(_ object: NSManagedObject, from row: StoreRow) {
        // The same version holds the same values.
        guard row.version != object.version else { return }
        // A row in the slot form holds the object values as they are.
        lifecycle.refresh(
            object, fresh: row.slots?.values ?? object.objectValues(from: row.values), version: row.version)
    }
}

/// A candidate as a sort reads it: its object when loaded, else its fetched row, so
/// sorting fires no faults. A class, so passing it as an existential does not allocate.
final class FetchSortRecord: KeyValueSlotReadable {
    let index: Int
    private let object: NSManagedObject?
    private let row: StoreRow?
    private let layout: EntityLayout
    private let makeView: ((StoreRow) -> StoreRowView)?

    /// A record reading `object`.
    init(index: Int, object: NSManagedObject) {
        self.index = index
        self.object = object
        self.row = nil
        self.layout = object.layout
        self.makeView = nil
    }

    /// A record reading `row`; `makeView` builds a view for key paths through relationships.
    init(index: Int, row: StoreRow, makeView: @escaping (StoreRow) -> StoreRowView) {
        self.index = index
        self.object = nil
        self.row = row
        self.layout = row.objectID.entity.layout
        self.makeView = makeView
    }

    var keyValueSchema: any KeyValueSchema { layout }

    func readValue(atSlot slot: Int) -> Any? {
        if let object { return object.readValue(atSlot: slot) }
        guard let row else { return nil }
        if let slots = row.slots {
            // The slot form holds an attribute as its object does (StoreRowSlots.swift).
            guard slot < slots.values.count else { return nil }
            if slot < layout.attributeBySlot.count, layout.attributeBySlot[slot] != nil { return slots.values[slot] }
            return makeView?(row).readValue(atSlot: slot)
        }
        guard slot < row.values.count else { return nil }
        if slot < layout.attributeBySlot.count, let attribute = layout.attributeBySlot[slot] {
            return attribute.attributeValue(row.values[slot])
        }
        return makeView?(row).readValue(atSlot: slot)
    }

    func readValue(forKey key: String) throws -> Any? {
        if let object { return try object.readValue(forKey: key) }
        guard let row, let makeView else { return nil }
        return try makeView(row).readValue(forKey: key)
    }
}
