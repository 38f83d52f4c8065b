// One save as the history journal keeps it: what changed, by whom, when. Objects are
// named by entity name and primary key (not by slot or live ID) so a record stays
// readable after the process ends; property names likewise, so it stays readable
// across model versions that keep those names.
import Foundation

/// The history record of one save: the value a store appends to its journal.
struct PersistentHistoryRecord: Equatable, Sendable {
    /// What happened to one object.
    enum Kind: UInt8, Sendable {
        case insert = 0
        case update = 1
        case delete = 2
    }

    /// One changed object.
    struct Change: Equatable, Sendable {
        var kind: Kind
        /// The name of the object's entity.
        var entityName: String
        /// The object's primary key in its store.
        var key: Int64
        /// For an update: the names of the changed properties.
        var updatedProperties: [String] = []
        /// For a delete: the preserved attribute values (`preservesValueInHistoryOnDeletion`).
        var tombstone: [Tombstone] = []

        /// An insert of `objectID`.
        static func insert(_ objectID: NSManagedObjectID) -> Change {
            Change(kind: .insert, entityName: objectID.entity.name ?? "", key: objectID.key)
        }

        /// An update of the properties in `slots` of `objectID`; transient slots are left out.
        static func update(_ objectID: NSManagedObjectID, slots: [Int]) -> Change {
            update(entity: objectID.entity, key: objectID.key, slots: slots)
        }

        /// An update of the properties in `slots` of the object of `entity` with primary key `key`.
        static func update(entity: NSEntityDescription, key: Int64, slots: [Int]) -> Change {
            let layout = entity.layout
            let names = slots.compactMap { slot -> String? in
                guard slot >= 0, slot < layout.properties.count, !layout.transientBySlot[slot] else { return nil }
                return layout.properties[slot].name
            }
            return Change(kind: .update, entityName: entity.name ?? "", key: key, updatedProperties: names)
        }

        /// A delete of `objectID`; `row`, its last stored state, supplies the tombstone.
        static func delete(_ objectID: NSManagedObjectID, row: StoreRow?) -> Change {
            var change = Change(kind: .delete, entityName: objectID.entity.name ?? "", key: objectID.key)
            guard let row else { return change }
            let layout = objectID.entity.layout
            for slot in layout.attributeSlots where slot < row.values.count {
                guard let attribute = layout.attributeBySlot[slot], attribute.preservesValueInHistoryOnDeletion
                else { continue }
                var value = row.values[slot]
                // Kept as a URI: a record names objects without live IDs.
                if case .objectID(let id) = value { value = .uri(id.uriRepresentation()) }
                change.tombstone.append(Tombstone(name: attribute.name, value: value))
            }
            return change
        }
    }

    /// One preserved attribute of a deleted object.
    struct Tombstone: Equatable, Sendable {
        var name: String
        var value: StoreValue
    }

    /// When the save happened.
    var timestamp: Date
    /// The saving context's `transactionAuthor`.
    var author: String?
    /// The saving context's `name`.
    var contextName: String?
    /// The changed objects: inserts, then updates, then deletes.
    var changes: [Change]

    init(timestamp: Date, author: String?, contextName: String?, changes: [Change]) {
        self.timestamp = timestamp
        self.author = author
        self.contextName = contextName
        self.changes = changes
    }

    /// The record of `request` as the store applies it unchanged; `storedRow` returns
    /// a deleted object's row before the delete (for its tombstone).
    init(request: StoreSaveRequest, timestamp: Date = Date(), storedRow: (NSManagedObjectID) -> StoreRow?) {
        var changes: [Change] = []
        changes.reserveCapacity(request.insertedRows.count + request.updatedRows.count + request.deletedObjects.count)
        for row in request.insertedRows { changes.append(.insert(row.objectID)) }
        for update in request.updatedRows {
            changes.append(.update(update.objectID, slots: update.changes.map(\.slot)))
        }
        for deleted in request.deletedObjects {
            // A row already gone was deleted, and recorded, by an earlier save.
            guard let row = storedRow(deleted.objectID) else { continue }
            changes.append(.delete(deleted.objectID, row: row))
        }
        self.init(
            timestamp: timestamp, author: request.transactionAuthor, contextName: request.contextName,
            changes: changes)
    }
}
