// Merge policies: how a save resolves conflicts with changes saved meanwhile.
//
// A store refuses a stale row (133020); the saving context hands the conflicts to its
// policy's resolve(optimisticLockingConflicts:), which throws (error policy) or
// rewrites the objects to the merged state, and the save retries against the new
// versions. A uniqueness clash (133021) goes to resolve(constraintConflicts:); the
// upserts the built-in policies choose happen in the store.
import Foundation

/// The kinds of merge policy.
public enum NSMergePolicyType: UInt, Sendable {
    /// A conflict fails the save.
    case errorMergePolicyType
    /// Stored values win over in-memory ones, property by property.
    case mergeByPropertyStoreTrumpMergePolicyType
    /// In-memory values win over stored ones, property by property.
    case mergeByPropertyObjectTrumpMergePolicyType
    /// The in-memory object replaces the stored one entirely.
    case overwriteMergePolicyType
    /// The in-memory changes are discarded.
    case rollbackMergePolicyType
}

/// A strategy for resolving conflicts between a save and changes already stored.
open class NSMergePolicy: NSObject, @unchecked Sendable {
    /// The policy's kind.
    public let mergeType: NSMergePolicyType

    /// A policy of `type`.
    public init(merge type: NSMergePolicyType) {
        self.mergeType = type
        super.init()
    }

    /// Resolves optimistic locking conflicts by the policy's type, leaving each source
    /// object in the state the retried save writes and at the stored version.
    ///
    /// An object deleted in the store (`persistedSnapshot` nil, `newVersionNumber` 0)
    /// is inserted again under object trump and overwrite, and deleted in the context
    /// under store trump and rollback. An object the save deletes but the store changed
    /// stays deleted (its delete rules also run on destinations the store gave it),
    /// except under rollback, which discards the delete and restores the stored values.
    ///
    /// - Throws: `NSManagedObjectMergeError` (133020) with the conflicts under
    ///   `NSPersistentStoreSaveConflictsErrorKey` for the error policy.
    open func resolve(optimisticLockingConflicts list: [NSMergeConflict]) throws {
        if mergeType == .errorMergePolicyType {
            throw CoreDataError.mergeConflicts(
                list, "optimistic locking failure: \(list.count) object(s) changed in the store since they were read")
        }
        for conflict in list { merge(conflict) }
    }

    /// Resolves uniqueness constraint conflicts by the policy's type.
    ///
    /// Under the trump, overwrite and rollback policies an inserted object that clashes
    /// becomes an update of the object holding the values and takes its object ID (an
    /// upsert): object trump and overwrite write the inserted values, store trump and
    /// rollback keep the stored ones. A subclass may resolve conflicts itself instead, by
    /// changing, deleting or merging the objects involved; the save is then retried with
    /// what the context holds.
    ///
    /// - Throws: `NSManagedObjectConstraintMergeError` (133021) with the conflicts under
    ///   `NSPersistentStoreSaveConflictsErrorKey` under the error policy, and for a clash
    ///   no policy merges: an updated object taking another object's constraint values.
    open func resolve(constraintConflicts list: [NSConstraintConflict]) throws {
        var unresolved: [NSConstraintConflict] = []
        for conflict in list {
            let upserts =
                mergeType != .errorMergePolicyType && !conflict.conflictingObjects.isEmpty
                && conflict.conflictingObjects.allSatisfy(\.isInserted)
            if upserts { conflict.resolvedByUpsert = true } else { unresolved.append(conflict) }
        }
        guard !unresolved.isEmpty else { return }
        let described = unresolved.map { "\($0.constraint) = \($0.constraintValues)" }.joined(separator: "; ")
        throw CoreDataError.make(
            NSManagedObjectConstraintMergeError, "uniqueness constraint violated: \(described)",
            userInfo: [
                NSPersistentStoreSaveConflictsErrorKey: unresolved,
                NSAffectedObjectsErrorKey: unresolved.flatMap { $0.conflictingObjects.map(\.objectID) },
            ])
    }

    /// Resolves conflicts of either kind, as Core Data's `resolve(mergeConflicts:)`.
    open func resolve(mergeConflicts list: [Any]) throws {
        let optimistic = list.compactMap { $0 as? NSMergeConflict }
        if !optimistic.isEmpty { try resolve(optimisticLockingConflicts: optimistic) }
        let constraints = list.compactMap { $0 as? NSConstraintConflict }
        if !constraints.isEmpty { try resolve(constraintConflicts: constraints) }
    }

    /// A conflict fails the save (the default).
    public static let error = NSMergePolicy(merge: .errorMergePolicyType)
    /// Stored values win, property by property.
    public static let mergeByPropertyStoreTrump = NSMergePolicy(merge: .mergeByPropertyStoreTrumpMergePolicyType)
    /// In-memory values win, property by property.
    public static let mergeByPropertyObjectTrump = NSMergePolicy(merge: .mergeByPropertyObjectTrumpMergePolicyType)
    /// The in-memory object replaces the stored one.
    public static let overwrite = NSMergePolicy(merge: .overwriteMergePolicyType)
    /// The in-memory changes are discarded.
    public static let rollback = NSMergePolicy(merge: .rollbackMergePolicyType)
}

/// The error merge policy (Core Data's constant form).
public let NSErrorMergePolicy: NSMergePolicy = .error
/// The store-trump merge policy (Core Data's constant form).
public let NSMergeByPropertyStoreTrumpMergePolicy: NSMergePolicy = .mergeByPropertyStoreTrump
/// The object-trump merge policy (Core Data's constant form).
public let NSMergeByPropertyObjectTrumpMergePolicy: NSMergePolicy = .mergeByPropertyObjectTrump
/// The overwrite merge policy (Core Data's constant form).
public let NSOverwriteMergePolicy: NSMergePolicy = .overwrite
/// The rollback merge policy (Core Data's constant form).
public let NSRollbackMergePolicy: NSMergePolicy = .rollback
