// Derived values computed at save time, into the same store request as the changes they
// follow, so the store applies both in one transaction.
//
// Which objects are recomputed:
//   - every inserted or updated object of an entity with derived attributes (so now()
//     is the time of the object's latest save);
//   - every object whose derived attribute reads through a relationship to an object the
//     save inserts, updates or deletes: the destination's inverse names it, before and
//     after the save (an employee moving from Globex to Acme recomputes both companies).
// Values are evaluated against the rows as the save leaves them: stored rows with the
// request's changes applied, inserted rows as they are, deleted rows gone. An object the
// save did not otherwise touch gets an update of its derived slots only when a value
// changed. The stores never see a difference between an app's change and a derived one.
import Foundation

/// The rows as a save leaves them, read lazily from the stores and the request.
final class DerivedSaveState {
    unowned let coordinator: NSPersistentStoreCoordinator
    var request: StoreSaveRequest
    private let insertedIndex: [NSManagedObjectID: Int]
    private let updatedIndex: [NSManagedObjectID: Int]
    let deleted: Set<NSManagedObjectID>
    private var storedRows: [NSManagedObjectID: StoreRow?] = [:]

    init(coordinator: NSPersistentStoreCoordinator, request: StoreSaveRequest) {
        self.coordinator = coordinator
        self.request = request
        var inserted: [NSManagedObjectID: Int] = [:]
        for (index, row) in request.insertedRows.enumerated() { inserted[row.objectID] = index }
        var updated: [NSManagedObjectID: Int] = [:]
        for (index, update) in request.updatedRows.enumerated() { updated[update.objectID] = index }
        insertedIndex = inserted
        updatedIndex = updated
        deleted = Set(request.deletedObjects.map(\.objectID))
    }

    /// The row as stored before the save.
    func storedRow(_ id: NSManagedObjectID) throws -> StoreRow? {
        if let cached = storedRows[id] { return cached }
        let row = id.isTemporaryID || insertedIndex[id] != nil ? nil : try coordinator.rows(for: [id]).first ?? nil
        storedRows[id] = row
        return row
    }

    /// The row as the save leaves it; nil when it is deleted or does not exist.
    func row(_ id: NSManagedObjectID) throws -> StoreRow? {
        if deleted.contains(id) { return nil }
        if let index = insertedIndex[id] { return request.insertedRows[index] }
        guard var row = try storedRow(id) else { return nil }
        if let index = updatedIndex[id] {
            for change in request.updatedRows[index].changes where change.slot < row.values.count {
                row.values[change.slot] = change.value
            }
        }
        return row
    }

    /// The destinations of a to-many the row leaves to the store (unchanged by the save).
    func destinations(_ relationship: NSRelationshipDescription, of id: NSManagedObjectID) throws
        -> [NSManagedObjectID]
    {
        guard insertedIndex[id] == nil, !id.isTemporaryID else { return [] }
        return try coordinator.objectIDs(forRelationship: relationship, of: id).filter { !deleted.contains($0) }
    }

    /// A view of `row` whose relationships read the rows as the save leaves them.
    func view(_ row: StoreRow) -> StoreRowView {
        StoreRowView(
            row: row, resolve: { [unowned self] in try self.row($0) },
            resolveToMany: { [unowned self] in try self.destinations($0, of: $1) })
    }

    /// The objects `value` (a relationship slot's) names; `relationship` resolves a
    /// to-many left to the store.
    func objectIDs(in value: StoreValue?, _ relationship: NSRelationshipDescription, of id: NSManagedObjectID) throws
        -> [NSManagedObjectID]
    {
        switch value {
        case .objectID(let destination): return [destination]
        case .objectIDs(let destinations): return destinations
        case .unresolved: return try destinations(relationship, of: id)
        default: return []
        }
    }

    /// Sets derived `changes` of `id`: into its inserted row or update, or as a new update
    /// when at least one differs from the stored value.
    func apply(_ changes: [(slot: Int, value: StoreValue)], to id: NSManagedObjectID) throws {
        if let index = insertedIndex[id] {
            for change in changes where change.slot < request.insertedRows[index].values.count {
                request.insertedRows[index].values[change.slot] = change.value
            }
            return
        }
        if let index = updatedIndex[id] {
            var merged = request.updatedRows[index].changes.filter { old in !changes.contains { $0.slot == old.slot } }
            merged.append(contentsOf: changes)
            merged.sort { $0.slot < $1.slot }
            request.updatedRows[index].changes = merged
            return
        }
        guard let stored = try storedRow(id) else { return }
        let different = changes.filter { change in
            change.slot >= stored.values.count || stored.values[change.slot] != change.value
        }
        guard !different.isEmpty else { return }
        request.updatedRows.append(
            StoreRowUpdate(
                objectID: id, expectedVersion: stored.version, changes: different.sorted { $0.slot < $1.slot }))
    }
}

extension NSPersistentStoreCoordinator {
    /// `request` with the derived values of every object whose values the save changes.
    ///
    /// - Throws: a validation error naming a derived attribute whose expression gave a
    ///   value of another type; the stores' read errors.
    func addingDerivedValues(to request: StoreSaveRequest, plan: DerivedAttributePlan) throws -> StoreSaveRequest {
        let state = DerivedSaveState(coordinator: self, request: request)
        var targets: [NSManagedObjectID] = []
        var seen: Set<NSManagedObjectID> = []
        func add(_ id: NSManagedObjectID) {
            guard !state.deleted.contains(id), plan.slotsByEntity[ObjectIdentifier(id.entity)] != nil,
                seen.insert(id).inserted
            else { return }
            targets.append(id)
        }
        for row in request.insertedRows { add(row.objectID) }
        for update in request.updatedRows { add(update.objectID) }
        let changed =
            request.insertedRows.map(\.objectID) + request.updatedRows.map(\.objectID)
            + request.deletedObjects.map(\.objectID)
        for (owner, relationship) in plan.dependencies {
            guard let inverse = relationship.inverseRelationship, let destination = relationship.destinationEntity
            else { continue }
            for id in changed where id.entity.isKindOf(entity: destination) {
                guard let slot = id.entity.layout.slotsByName[inverse.name] else { continue }
                let before = try state.storedRow(id).map { slot < $0.values.count ? $0.values[slot] : .null }
                let after = try state.row(id).map { slot < $0.values.count ? $0.values[slot] : .null }
                var sources = try state.objectIDs(in: before, inverse, of: id)
                if after != before { sources += try state.objectIDs(in: after, inverse, of: id) }
                for source in sources where source.entity.isKindOf(entity: owner) { add(source) }
            }
        }
        for id in targets {
            guard let slots = plan.slotsByEntity[ObjectIdentifier(id.entity)], let row = try state.row(id) else {
                continue
            }
            let view = state.view(row)
            var changes: [(slot: Int, value: StoreValue)] = []
            for derived in slots {
                changes.append((derived.slot, try derivedValue(derived, of: view)))
            }
            try state.apply(changes, to: id)
        }
        // A batch insert's upsert takes only the given attributes: its derived ones too.
        for (id, slots) in state.request.upsertedSlots {
            guard let derived = plan.slotsByEntity[ObjectIdentifier(id.entity)] else { continue }
            state.request.upsertedSlots[id] = Array(Set(slots + derived.map(\.slot))).sorted()
        }
        return state.request
    }

    /// The stored value of `derived` for the row `view` reads.
    private func derivedValue(_ derived: DerivedSlot, of view: StoreRowView) throws -> StoreValue {
        // A nil along the way (a missing to-one, a nil string to lowercase) derives nil.
        let raw = (try? derived.expression.value(with: view)) ?? nil
        let attribute = derived.attribute
        guard case .value(let value) = attribute.attributeType.coerce(raw is NSNull ? nil : raw) else {
            throw CoreDataError.make(
                NSManagedObjectValidationError,
                "the derived attribute \(attribute.qualifiedName) computed \(raw.map { "a \(type(of: $0))" } ?? "nil") from "
                    + "'\(derived.expression)', which is not a \(attribute.attributeType.swiftTypeName)",
                userInfo: [NSValidationKeyErrorKey: attribute.name])
        }
        return try attribute.storeValue(value)
    }
}
