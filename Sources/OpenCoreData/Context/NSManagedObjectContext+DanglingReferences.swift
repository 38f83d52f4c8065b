// A save's rows name other rows by permanent ID: the save gives each object it inserts
// one and maps the temporary IDs in relationship values to it. A temporary ID left after
// that names no row of the store and none of the save: an object inserted in another
// context and never saved (reached through `object(with:)`), an object in no context, or
// one inserted and deleted before the save that a relationship without an inverse (or a
// no-action rule) still names. Writing it left a reference to a row that never exists.
// Core Data fails such a save in validation with `NSManagedObjectValidationError` (1550),
// "Dangling reference to an invalid object.", the object and key in the error's user info
// (mikeabdullah.net/dangling-ref-to-an-invalid-object.html; gist mikeabdullah/4147871
// recovers from it by checking code 1550 and NSValidationKeyErrorKey).
import Foundation

extension NSManagedObjectContext {
    /// Replaces the temporary IDs of the save's own new objects still in `request`'s
    /// relationship values (the map is built only when a new object has relationships, so
    /// an updated object's relationship without an inverse can name one), and refuses any
    /// other temporary ID.
    ///
    /// - Throws: `NSManagedObjectValidationError` (1550) naming the object, the key and
    ///   the destination; nothing is written.
    func settleTemporaryReferences(
        in request: inout StoreSaveRequest, newObjects: [NSManagedObject], permanentIDs: [NSManagedObjectID],
        mapping: TemporaryIDMapping
    ) throws {
        var map: TemporaryIDMapping? = mapping.isEmpty ? nil : mapping
        func settled(_ value: StoreValue, slot: Int, of objectID: NSManagedObjectID, object: NSManagedObject?) throws
            -> StoreValue?
        {
            func permanent(_ id: NSManagedObjectID) throws -> NSManagedObjectID {
                if map == nil {
                    var built = TemporaryIDMapping()
                    for (object, permanent) in zip(newObjects, permanentIDs) where built[object.objectID] == nil {
                        built[object.objectID] = permanent
                    }
                    map = built
                }
                if let mapped = map?[id] { return mapped }
                throw danglingReference(to: id, slot: slot, of: object ?? registry[objectID], objectID: objectID)
            }
            switch value {
            case .objectID(let id) where id.isTemporaryID:
                return .objectID(try permanent(id))
            case .objectIDs(let ids) where ids.contains(where: \.isTemporaryID):
                return .objectIDs(try ids.map { $0.isTemporaryID ? try permanent($0) : $0 })
            default:
                return nil
            }
        }
        // Rows of one entity follow each other (new objects come in creation order): its
        // relationship slots are read once per run, and a value is only copied out when it
        // names a temporary ID (this pass looks at every relationship of every new row).
        var entity: NSEntityDescription?
        var relationshipSlots: [Int] = []
        for index in request.insertedRows.indices {
            let rowEntity = request.insertedRows[index].objectID.entity
            if rowEntity !== entity {
                entity = rowEntity
                relationshipSlots = rowEntity.layout.relationshipSlots
            }
            for slot in relationshipSlots where slot < request.insertedRows[index].values.count {
                guard request.insertedRows[index].values[slot].namesTemporaryID else { continue }
                let objectID = request.insertedRows[index].objectID
                let object = index < newObjects.count ? newObjects[index] : nil
                if let value = try settled(
                    request.insertedRows[index].values[slot], slot: slot, of: objectID, object: object)
                {
                    request.insertedRows[index].values[slot] = value
                }
            }
        }
        for index in request.updatedRows.indices {
            let objectID = request.updatedRows[index].objectID
            let layout = objectID.entity.layout
            for change in request.updatedRows[index].changes.indices {
                let slot = request.updatedRows[index].changes[change].slot
                guard slot < layout.relationshipBySlot.count, layout.relationshipBySlot[slot] != nil else { continue }
                if let value = try settled(
                    request.updatedRows[index].changes[change].value, slot: slot, of: objectID, object: nil)
                {
                    request.updatedRows[index].changes[change].value = value
                }
            }
        }
    }

    private func danglingReference(
        to destination: NSManagedObjectID, slot: Int, of object: NSManagedObject?, objectID: NSManagedObjectID
    ) -> NSError {
        let layout = objectID.entity.layout
        let key = slot < layout.properties.count ? layout.properties[slot].name : "?"
        let value: Any = registry[destination] ?? destination
        return CoreDataError.validation(
            NSManagedObjectValidationError,
            "Dangling reference to an invalid object: \(objectID.entity.name ?? "?").\(key) names "
                + "\(destination.uriRepresentation().absoluteString), an object with a temporary ID this save does "
                + "not insert (inserted in another context and not saved, in no context, or deleted before the save)",
            object: object, key: key, value: value)
    }
}

extension StoreValue {
    /// Whether the value names a destination by a temporary ID.
    fileprivate var namesTemporaryID: Bool {
        switch self {
        case .objectID(let id): id.isTemporaryID
        case .objectIDs(let ids): ids.contains { $0.isTemporaryID }
        default: false
        }
    }
}
