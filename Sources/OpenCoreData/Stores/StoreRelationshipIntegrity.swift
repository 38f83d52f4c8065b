// Both sides of every relationship agree after every save, in every store. A context
// sends both sides of each change it makes, but a merge policy may keep one side of a
// change and drop the other (rollback, store trump), an upsert may give an object another
// row's ID, and a context may delete an object whose relationships it saw stale. So a
// store records each link its save added or removed on either side (a *link change*),
// and before the save commits, this pass makes the other side of every changed link
// agree, in the same transaction:
//
//   SHAPE            WHICH SIDE DECIDES                 THE OTHER SIDE
//   to-one/to-many   the to-one (the row's reference,   lists the source exactly when
//                    as in Core Data's SQLite store)    the to-one names it
//   to-many/to-many  the side that changed (both       gains or loses the link too
//   to-one/to-one    changed alike: nothing to do)     (a to-one set here lets go of
//                                                      the object it named before)
//
// A link to a row that is gone (deleted by this save or before) is removed from the side
// that still names it. A row only this pass changes gets a new version (contexts holding
// it see a conflict and merge, rather than write a stale list back). Links the save
// changed on both sides alike, the usual case, cost a hash lookup and nothing else.
import Foundation

/// One side of one link that a save added or removed.
struct StoreLinkChange {
    /// The row whose relationship changed.
    var source: NSManagedObjectID
    /// The relationship that changed (it has an inverse).
    var relationship: NSRelationshipDescription
    /// The row the link names.
    var destination: NSManagedObjectID
    /// Whether the save added the link (else removed it).
    var isAdded: Bool
}

/// What the integrity pass reads and writes in a store, in the save's transaction (the
/// state the save has written so far).
protocol StoreRelationshipAccess {
    /// Whether the row of `objectID` exists.
    mutating func exists(_ objectID: NSManagedObjectID) throws -> Bool
    /// The destination the to-one `relationship` of the row names now (nil: none, or no row).
    mutating func destination(of relationship: NSRelationshipDescription, in objectID: NSManagedObjectID) throws
        -> NSManagedObjectID?
    /// Whether the to-many `relationship` of the row lists `destination` now.
    mutating func contains(
        _ destination: NSManagedObjectID, in relationship: NSRelationshipDescription, of objectID: NSManagedObjectID
    ) throws -> Bool
    /// Whether the store computes the to-many `relationship` from its inverse to-one (so it
    /// is never written and always agrees).
    func derivesFromInverse(_ relationship: NSRelationshipDescription) -> Bool
    /// Makes the to-one `relationship` of the row name `destination`.
    mutating func setDestination(
        _ destination: NSManagedObjectID?, of relationship: NSRelationshipDescription, in objectID: NSManagedObjectID
    ) throws
    /// Adds `destination` to the to-many `relationship` of the row (at the end when ordered).
    mutating func insert(
        _ destination: NSManagedObjectID, into relationship: NSRelationshipDescription, of objectID: NSManagedObjectID
    ) throws
    /// Removes `destination` from the to-many `relationship` of the row.
    mutating func remove(
        _ destination: NSManagedObjectID, from relationship: NSRelationshipDescription, of objectID: NSManagedObjectID
    ) throws
}

enum StoreRelationshipIntegrity {
    /// One link as both of its sides changed it in a save.
    fileprivate struct Link {
        /// The relationship of side 0 and its row; side 1 is its inverse and `second`.
        let relationship: NSRelationshipDescription
        let first: NSManagedObjectID
        let second: NSManagedObjectID
        /// The last change of each side: true added, false removed, nil unchanged.
        var firstChange: Bool?
        var secondChange: Bool?
    }

    fileprivate struct LinkKey: Hashable {
        let relationship: ObjectIdentifier
        let first: Int64
        let second: Int64
    }

    /// A side of a link the pass wrote: its journal entry no longer tells its state.
    private struct Side: Hashable {
        let relationship: ObjectIdentifier
        let row: Int64
    }

    /// The links of a save that the pass must reconcile, in the order the save first
    /// changed them; empty for most saves (each link changed on both sides alike, or a
    /// to-one added whose derived inverse list always agrees).
    struct Plan {
        fileprivate var order: [LinkKey] = []
        fileprivate var links: [LinkKey: Link] = [:]

        /// Whether the pass has nothing to do.
        var isEmpty: Bool { order.isEmpty }
    }

    /// Makes the other side of every link in `changes` agree (see the file comment).
    ///
    /// - Parameters:
    ///   - changes: The link changes of the save, in the order it made them.
    ///   - deleted: The rows the save deleted.
    ///   - written: The rows the save inserted or updated (they exist).
    ///   - replaced: Inserted objects that became upserts, to the rows that absorbed them.
    ///   - access: The store's rows as the save has left them so far.
    static func repair(
        _ changes: [StoreLinkChange], deleted: Set<NSManagedObjectID>, written: ObjectIDSet,
        replaced: [NSManagedObjectID: NSManagedObjectID] = [:], access: inout some StoreRelationshipAccess
    ) throws {
        guard !changes.isEmpty else { return }
        let plan = self.plan(
            changes, deleted: deleted, isWritten: written.contains, replaced: replaced,
            derivesFromInverse: { [access] in access.derivesFromInverse($0) })
        try repair(plan, deleted: deleted, written: written, access: &access)
    }

    /// The links of `changes` to reconcile (the parameters as for
    /// ``repair(_:deleted:written:replaced:access:)``; `isWritten` answers whether the
    /// save wrote a row, and `derivesFromInverse` as the store's
    /// ``StoreRelationshipAccess/derivesFromInverse(_:)``): a store reads no row to plan,
    /// so it builds the access, and the set of written rows, only when the plan is not empty.
    static func plan(
        _ changes: [StoreLinkChange], deleted: Set<NSManagedObjectID>, isWritten: (NSManagedObjectID) -> Bool,
        replaced: [NSManagedObjectID: NSManagedObjectID], derivesFromInverse: (NSRelationshipDescription) -> Bool
    ) -> Plan {
        var plan = Plan()
        // The facts of the last change's relationship: a save's links mostly share a few
        // relationships, whose inverse and kind are read through the model once per run.
        var known: (relationship: NSRelationshipDescription, inverse: NSRelationshipDescription?, derived: Bool)?
        for change in changes {
            if known?.relationship !== change.relationship {
                let inverse = change.relationship.inverseRelationship
                let derived = inverse.map { !change.relationship.isToMany && derivesFromInverse($0) } ?? false
                known = (change.relationship, inverse, derived)
            }
            guard let inverse = known?.inverse else { continue }
            // A to-one whose inverse list the store derives from it: the to-one decides and the
            // list always agrees, so a link it removed needs nothing, and a link it added only
            // needs its destination to exist, which a row this save writes (and does not
            // delete) does. One such link per inserted object is the common case of a save.
            if known?.derived == true {
                if !change.isAdded { continue }
                let destination = replaced[change.destination] ?? change.destination
                if isWritten(destination), deleted.isEmpty || !deleted.contains(destination) { continue }
            }
            // A deleted row's no-action relationship leaves its destinations naming it, as
            // Core Data does (the model asked for it; verify() reports those links).
            if !change.isAdded, change.relationship.deleteRule == .noActionDeleteRule,
                deleted.contains(change.source)
            {
                continue
            }
            let source = replaced[change.source] ?? change.source
            let destination = replaced[change.destination] ?? change.destination
            // Side 0 is the relationship with the lower identity (for a relationship that is
            // its own inverse, the row with the lower key).
            let sourceFirst =
                change.relationship === inverse
                ? source.key <= destination.key
                : ObjectIdentifier(change.relationship) < ObjectIdentifier(inverse)
            let relationship = sourceFirst ? change.relationship : inverse
            let (first, second) = sourceFirst ? (source, destination) : (destination, source)
            let key = LinkKey(relationship: ObjectIdentifier(relationship), first: first.key, second: second.key)
            var link =
                plan.links[key]
                ?? {
                    plan.order.append(key)
                    return Link(relationship: relationship, first: first, second: second)
                }()
            if sourceFirst { link.firstChange = change.isAdded } else { link.secondChange = change.isAdded }
            plan.links[key] = link
        }
        return plan
    }

    /// Reconciles the links of `plan` (the other parameters as for
    /// ``repair(_:deleted:written:replaced:access:)``).
    static func repair(
        _ plan: Plan, deleted: Set<NSManagedObjectID>, written: ObjectIDSet, access: inout some StoreRelationshipAccess
    ) throws {
        var repair = Repair(deleted: deleted, written: written)
        for key in plan.order {
            guard let link = plan.links[key] else { continue }
            try repair.reconcile(link, access: &access)
        }
    }

    /// The state of one pass over a save's links.
    private struct Repair {
        let deleted: Set<NSManagedObjectID>
        let written: ObjectIDSet
        /// Sides this pass changed.
        var rewritten: Set<Side> = []

        init(deleted: Set<NSManagedObjectID>, written: ObjectIDSet) {
            self.deleted = deleted
            self.written = written
        }

        mutating func reconcile(_ link: Link, access: inout some StoreRelationshipAccess) throws {
            guard let inverse = link.relationship.inverseRelationship else { return }
            let firstSide = (relationship: link.relationship, row: link.first, change: link.firstChange)
            let secondSide = (relationship: inverse, row: link.second, change: link.secondChange)
            let deciding: (relationship: NSRelationshipDescription, row: NSManagedObjectID, change: Bool?)
            let other: (relationship: NSRelationshipDescription, row: NSManagedObjectID, change: Bool?)
            if link.relationship.isToMany != inverse.isToMany {
                // A one-to-many: the to-one decides.
                (deciding, other) = link.relationship.isToMany ? (secondSide, firstSide) : (firstSide, secondSide)
            } else {
                (deciding, other) = link.firstChange != nil ? (firstSide, secondSide) : (secondSide, firstSide)
            }
            if let decided = deciding.change, decided == other.change, !wasRewritten(deciding), !wasRewritten(other) {
                return
            }
            let linked = try isLinked(deciding, to: other.row, access: &access)
            let gone = try deleted.contains(other.row) || (linked && !exists(other.row, access: &access))
            if gone {
                // The other row is gone: the deciding side lets go of it.
                if linked, !deleted.contains(deciding.row) {
                    try unlink(deciding.row, deciding.relationship, from: other.row, access: &access)
                }
                return
            }
            if other.relationship.isToMany {
                if access.derivesFromInverse(other.relationship) { return }
                if other.change == linked && !wasRewritten(other) { return }
                let listed = try access.contains(deciding.row, in: other.relationship, of: other.row)
                if linked && !listed {
                    try access.insert(deciding.row, into: other.relationship, of: other.row)
                    note(other.relationship, other.row)
                } else if !linked && listed {
                    try access.remove(deciding.row, from: other.relationship, of: other.row)
                    note(other.relationship, other.row)
                }
                return
            }
            let named = try access.destination(of: other.relationship, in: other.row)
            if linked, named != deciding.row {
                // The other row now names the deciding row; what it named before lets go of it.
                try access.setDestination(deciding.row, of: other.relationship, in: other.row)
                note(other.relationship, other.row)
                if let previous = named, !deleted.contains(previous) {
                    try unlink(previous, deciding.relationship, from: other.row, access: &access)
                }
            } else if !linked, named == deciding.row {
                try access.setDestination(nil, of: other.relationship, in: other.row)
                note(other.relationship, other.row)
            }
        }

        /// Whether the deciding side links `row` to `other` now.
        private func isLinked(
            _ side: (relationship: NSRelationshipDescription, row: NSManagedObjectID, change: Bool?),
            to other: NSManagedObjectID, access: inout some StoreRelationshipAccess
        ) throws -> Bool {
            if deleted.contains(side.row) { return false }
            if let change = side.change, !wasRewritten(side) { return change }
            if side.relationship.isToMany {
                return try access.contains(other, in: side.relationship, of: side.row)
            }
            return try access.destination(of: side.relationship, in: side.row) == other
        }

        private func exists(_ row: NSManagedObjectID, access: inout some StoreRelationshipAccess) throws -> Bool {
            if written.contains(row) { return true }
            return try access.exists(row)
        }

        /// `row` no longer links to `destination` through `relationship`.
        private mutating func unlink(
            _ row: NSManagedObjectID, _ relationship: NSRelationshipDescription, from destination: NSManagedObjectID,
            access: inout some StoreRelationshipAccess
        ) throws {
            if relationship.isToMany {
                guard !access.derivesFromInverse(relationship),
                    try access.contains(destination, in: relationship, of: row)
                else { return }
                try access.remove(destination, from: relationship, of: row)
            } else {
                guard try access.destination(of: relationship, in: row) == destination else { return }
                try access.setDestination(nil, of: relationship, in: row)
            }
            note(relationship, row)
        }

        private func wasRewritten(
            _ side: (relationship: NSRelationshipDescription, row: NSManagedObjectID, change: Bool?)
        ) -> Bool {
            !rewritten.isEmpty
                && rewritten.contains(Side(relationship: ObjectIdentifier(side.relationship), row: side.row.key))
        }

        private mutating func note(_ relationship: NSRelationshipDescription, _ row: NSManagedObjectID) {
            rewritten.insert(Side(relationship: ObjectIdentifier(relationship), row: row.key))
        }
    }
}

extension StoreLinkChange {
    /// Appends to `changes` the links of `objectID` that differ between the values `before`
    /// and `after` (nil: no row) in the relationship slots with an inverse (`slots`: only
    /// those; `.unresolved` counts as unchanged).
    static func append(
        _ objectID: NSManagedObjectID, before: [StoreValue]?, after: [StoreValue]?, slots: [Int]? = nil,
        to changes: inout [StoreLinkChange]
    ) {
        let layout = objectID.entity.layout
        for slot in slots ?? layout.relationshipSlots {
            guard slot < layout.relationshipBySlot.count, let relationship = layout.relationshipBySlot[slot],
                layout.hasInverseBySlot[slot]
            else { continue }
            let old = before.map { slot < $0.count ? $0[slot] : .null } ?? .null
            let new = after.map { slot < $0.count ? $0[slot] : .null } ?? .null
            if case .unresolved = new, after != nil { continue }
            // A new row's to-one, the common link of a save: one added link, no lists built.
            if before == nil, case .objectID(let destination) = new {
                changes.append(
                    StoreLinkChange(
                        source: objectID, relationship: relationship, destination: destination, isAdded: true))
                continue
            }
            let removed = destinations(old)
            let added = destinations(new)
            if removed.isEmpty && added.isEmpty { continue }
            if removed.count + added.count <= 2 {
                // A to-one (or a short list): no sets to build.
                for destination in removed where !added.contains(destination) {
                    changes.append(
                        StoreLinkChange(
                            source: objectID, relationship: relationship, destination: destination, isAdded: false))
                }
                for destination in added where !removed.contains(destination) {
                    changes.append(
                        StoreLinkChange(
                            source: objectID, relationship: relationship, destination: destination, isAdded: true))
                }
                continue
            }
            let oldKeys = Set(removed.map(\.key))
            let newKeys = Set(added.map(\.key))
            for destination in removed where !newKeys.contains(destination.key) {
                changes.append(
                    StoreLinkChange(
                        source: objectID, relationship: relationship, destination: destination, isAdded: false))
            }
            for destination in added where !oldKeys.contains(destination.key) {
                changes.append(
                    StoreLinkChange(
                        source: objectID, relationship: relationship, destination: destination, isAdded: true))
            }
        }
    }

    /// The object IDs a relationship value names.
    static func destinations(_ value: StoreValue) -> [NSManagedObjectID] {
        switch value {
        case .objectID(let id): [id]
        case .objectIDs(let ids): ids
        default: []
        }
    }
}

extension PersistentHistoryRecord {
    /// Records that `slots` of `objectID` changed too: added to its update, or a new update
    /// before the deletes.
    mutating func noteUpdate(of objectID: NSManagedObjectID, slots: [Int]) {
        let added = Change.update(objectID, slots: slots)
        if let position = changes.firstIndex(where: {
            $0.kind != .delete && $0.key == objectID.key && $0.entityName == added.entityName
        }) {
            guard changes[position].kind == .update else { return }
            for name in added.updatedProperties where !changes[position].updatedProperties.contains(name) {
                changes[position].updatedProperties.append(name)
            }
            return
        }
        changes.insert(added, at: changes.firstIndex { $0.kind == .delete } ?? changes.endIndex)
    }
}
