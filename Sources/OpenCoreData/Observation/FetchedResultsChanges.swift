// What one batch of context changes did to a results list, in the form Core Data's
// fetched results controller reports it (NSFetchedResultsController.h):
//
//   - insert / delete: an object started or stopped being a result (created, destroyed,
//     or starting or stopping to match the predicate); only that object is reported,
//     the rows after it shift implicitly.
//   - move: a changed object's position changed; the update is implied and not sent.
//   - update: a changed object kept its position.
//   - paths: delete, update and the start of a move carry the OLD index path; insert and
//     the end of a move the NEW one; insert has no old path, delete no new one (an
//     update also carries its new path as newIndexPath).
//   - order: section changes (insert and delete only) before object changes; within
//     each, deletions (by old path) before insertions (by new path), then moves (by new
//     path), then updates (by old path).
//
// Applied as a table view applies a batch of updates — remove the deleted rows and the
// starts of moves at their old paths, then insert the inserted rows and the ends of
// moves at their new paths — they turn the old list into the new one, sections
// included.
//
// Whether a change "alters the position": an object moves when the unchanged results
// before it are not the same before and after, when its section changes, or when it
// changed places with another changed object between the same unchanged neighbours. So
// the objects not reported as moved keep their relative order, which is what makes the
// batch above exact.
import Foundation

/// The kind of a change a fetched results controller reports.
public enum NSFetchedResultsChangeType: UInt, Sendable {
    /// An object or section was inserted.
    case insert = 1
    /// An object or section was deleted.
    case delete = 2
    /// An object moved.
    case move = 3
    /// An object changed without moving.
    case update = 4
}

/// One batch of changes to a results list (see the file comment).
struct FetchedResultsChanges {
    /// A section inserted (at its new index) or deleted (at its old index).
    struct SectionChange {
        let section: FetchedResultsSection
        let index: Int
        let type: NSFetchedResultsChangeType
    }

    /// An object's change; positions count over the whole list, across sections.
    struct ObjectChange {
        let object: NSManagedObject
        let type: NSFetchedResultsChangeType
        let oldPath: IndexPath?
        let newPath: IndexPath?
        let oldPosition: Int?
        let newPosition: Int?
    }

    private(set) var sections: [SectionChange] = []
    private(set) var objects: [ObjectChange] = []

    /// Whether nothing changed.
    var isEmpty: Bool { sections.isEmpty && objects.isEmpty }

    /// The reported changes, ordered as the file comment says.
    init(sections sectionChanges: [SectionChange], objects affected: [AffectedObject]) {
        let deletedSections = sectionChanges.filter { $0.type == .delete }.sorted { $0.index < $1.index }
        let insertedSections = sectionChanges.filter { $0.type == .insert }.sorted { $0.index < $1.index }
        sections = deletedSections + insertedSections
        var deletions: [ObjectChange] = []
        var insertions: [ObjectChange] = []
        var moves: [ObjectChange] = []
        var updates: [ObjectChange] = []
        for entry in affected {
            switch (entry.oldPosition, entry.newPosition) {
            case (.some, nil):
                deletions.append(entry.change(.delete))
            case (nil, .some):
                insertions.append(entry.change(.insert))
            case (.some, .some) where entry.isMoved:
                moves.append(entry.change(.move))
            case (.some, .some) where entry.isChanged:
                updates.append(entry.change(.update))
            default:
                break
            }
        }
        deletions.sort { ($0.oldPosition ?? 0) < ($1.oldPosition ?? 0) }
        insertions.sort { ($0.newPosition ?? 0) < ($1.newPosition ?? 0) }
        moves.sort { ($0.newPosition ?? 0) < ($1.newPosition ?? 0) }
        updates.sort { ($0.oldPosition ?? 0) < ($1.oldPosition ?? 0) }
        objects = deletions + insertions + moves + updates
    }

    /// The objects changed in place (reported as updates).
    var updatedObjects: [NSManagedObject] { objects.filter { $0.type == .update }.map(\.object) }

    /// The change as a difference of object IDs over the whole list (positions across
    /// sections): deletions and starts of moves are removals at old positions, insertions
    /// and ends of moves are insertions at new positions; updates are not part of it.
    var difference: CollectionDifference<NSManagedObjectID> {
        var changes: [CollectionDifference<NSManagedObjectID>.Change] = []
        for change in objects {
            let id = change.object.objectID
            switch change.type {
            case .delete:
                if let old = change.oldPosition {
                    changes.append(.remove(offset: old, element: id, associatedWith: nil))
                }
            case .insert:
                if let new = change.newPosition {
                    changes.append(.insert(offset: new, element: id, associatedWith: nil))
                }
            case .move:
                if let old = change.oldPosition, let new = change.newPosition {
                    changes.append(.remove(offset: old, element: id, associatedWith: new))
                    changes.append(.insert(offset: new, element: id, associatedWith: old))
                }
            case .update:
                break
            }
        }
        // Valid by construction (distinct offsets per side, moves paired); the empty
        // difference stands in should that ever not hold.
        return CollectionDifference(changes) ?? [NSManagedObjectID]().difference(from: [])
    }
}

/// An object a batch may have changed, with where it was and where it is.
struct AffectedObject {
    let object: NSManagedObject
    /// Whether the object itself changed (its update is reported when it neither moves nor
    /// enters or leaves); false for objects only shifted by others.
    var isChanged = true
    var oldPosition: Int?
    var oldPath: IndexPath?
    var oldSectionName: String?
    var newPosition: Int?
    var newPath: IndexPath?
    var newSectionName: String?
    var isMoved = false

    init(object: NSManagedObject) {
        self.object = object
    }

    /// The change of `type`: no old path or position for an insert, no new one for a delete.
    func change(_ type: NSFetchedResultsChangeType) -> FetchedResultsChanges.ObjectChange {
        FetchedResultsChanges.ObjectChange(
            object: object, type: type, oldPath: type == .insert ? nil : oldPath,
            newPath: type == .delete ? nil : newPath, oldPosition: type == .insert ? nil : oldPosition,
            newPosition: type == .delete ? nil : newPosition)
    }
}
