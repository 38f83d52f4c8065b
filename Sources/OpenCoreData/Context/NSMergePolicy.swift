// Merge policies: how a save resolves conflicts with changes saved meanwhile.
//
// The five policies exist with Core Data's names. What they do today: the error
// policy makes a store refuse a stale row (NSManagedObjectMergeError, 133020); the
// other four let the save write its changed properties over the stored ones.
// Per-policy conflict resolution (rollback, overwrite of whole objects, constraint
// upserts) is completed with the on-disk store.
import Foundation

/// The kinds of merge policy.
public enum NSMergePolicyType: UInt, Sendable {
    /// A conflict fails the save.
    case errorMergePolicyType = 0x00
    /// Stored values win over in-memory ones, property by property.
    case mergeByPropertyStoreTrumpMergePolicyType = 0x01
    /// In-memory values win over stored ones, property by property.
    case mergeByPropertyObjectTrumpMergePolicyType = 0x02
    /// The in-memory object replaces the stored one entirely.
    case overwriteMergePolicyType = 0x03
    /// The in-memory changes are discarded.
    case rollbackMergePolicyType = 0x04
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
