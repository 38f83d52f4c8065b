// Core Data's documented error codes and userInfo keys, kept so that ported error
// handling (`(error as NSError).code == NSValidationMissingMandatoryPropertyError`)
// works unchanged. Every error the library throws for a documented condition uses
// NSCocoaErrorDomain and one of these codes.
import Foundation

// MARK: Validation (1550-1690)

/// Generic validation error.
public let NSManagedObjectValidationError = 1550
/// A uniqueness constraint was violated during validation.
public let NSManagedObjectConstraintValidationError = 1551
/// Several validation errors; the individual errors are under `NSDetailedErrorsKey`.
public let NSValidationMultipleErrorsError = 1560
/// A non-optional property has no value.
public let NSValidationMissingMandatoryPropertyError = 1570
/// A to-many relationship has fewer objects than its minimum count.
public let NSValidationRelationshipLacksMinimumCountError = 1580
/// A to-many relationship has more objects than its maximum count.
public let NSValidationRelationshipExceedsMaximumCountError = 1590
/// A deny delete rule blocked the deletion of an object that still has destinations.
public let NSValidationRelationshipDeniedDeleteError = 1600
/// A number is larger than the attribute's maximum.
public let NSValidationNumberTooLargeError = 1610
/// A number is smaller than the attribute's minimum.
public let NSValidationNumberTooSmallError = 1620
/// A date is later than the attribute's maximum.
public let NSValidationDateTooLateError = 1630
/// A date is earlier than the attribute's minimum.
public let NSValidationDateTooSoonError = 1640
/// A date is invalid.
public let NSValidationInvalidDateError = 1650
/// A string is longer than the attribute's maximum length.
public let NSValidationStringTooLongError = 1660
/// A string is shorter than the attribute's minimum length.
public let NSValidationStringTooShortError = 1670
/// A string does not match the attribute's regular expression.
public let NSValidationStringPatternMatchingError = 1680
/// A URI is invalid.
public let NSValidationInvalidURIError = 1690

// MARK: Contexts, objects, stores (132000-134999)

/// A context could not be locked.
public let NSManagedObjectContextLockingError = 132000
/// A coordinator could not be locked.
public let NSPersistentStoreCoordinatorLockingError = 132010
/// An attempt to fire a fault pointing to an object that does not exist.
public let NSManagedObjectReferentialIntegrityError = 133000
/// An object being saved has a relationship to an object in another store.
public let NSManagedObjectExternalRelationshipError = 133010
/// A merge conflict (optimistic locking failure) during save.
public let NSManagedObjectMergeError = 133020
/// A uniqueness constraint conflict during save.
public let NSManagedObjectConstraintMergeError = 133021
/// An unknown persistent store type or format.
public let NSPersistentStoreInvalidTypeError = 134000
/// The store type does not match the store file.
public let NSPersistentStoreTypeMismatchError = 134010
/// The store's schema is incompatible with the model.
public let NSPersistentStoreIncompatibleSchemaError = 134020
/// An unclassified error while saving to a store.
public let NSPersistentStoreSaveError = 134030
/// One or more stores failed to save.
public let NSPersistentStoreIncompleteSaveError = 134040
/// An unresolved merge conflict during save.
public let NSPersistentStoreSaveConflictsError = 134050
/// A general Core Data error.
public let NSCoreDataError = 134060
/// A store operation failed.
public let NSPersistentStoreOperationError = 134070
/// A store could not be opened.
public let NSPersistentStoreOpenError = 134080
/// A store operation timed out (e.g. the store is busy).
public let NSPersistentStoreTimeoutError = 134090
/// The store does not support this request type.
public let NSPersistentStoreUnsupportedRequestTypeError = 134091
/// The model's entity version hashes do not match the store's.
public let NSPersistentStoreIncompatibleVersionHashError = 134100
/// A migration failed.
public let NSMigrationError = 134110
/// A migration failed on a uniqueness constraint.
public let NSMigrationConstraintViolationError = 134111
/// A migration was cancelled.
public let NSMigrationCancelledError = 134120
/// No source model for a migration.
public let NSMigrationMissingSourceModelError = 134130
/// No mapping model for a migration.
public let NSMigrationMissingMappingModelError = 134140
/// The source store of a migration is invalid.
public let NSMigrationManagerSourceStoreError = 134150
/// The destination store of a migration is invalid.
public let NSMigrationManagerDestinationStoreError = 134160
/// An entity migration policy failed.
public let NSEntityMigrationPolicyError = 134170
/// No mapping model could be inferred.
public let NSInferredMappingModelError = 134190
/// A persistent history token refers to history that was purged.
public let NSPersistentHistoryTokenExpiredError = 134301
/// A model reference of a staged migration names no model (or one with another checksum).
public let NSManagedObjectModelReferenceNotFoundError = 134504
/// The store's metadata does not support staged migration.
public let NSStagedMigrationFrameworkVersionMismatchError = 134505
/// A staged migration would take the store to an earlier version.
public let NSStagedMigrationBackwardMigrationError = 134506

// MARK: userInfo keys

/// The individual errors of an `NSValidationMultipleErrorsError`.
public let NSDetailedErrorsKey = "NSDetailedErrors"
/// The object that failed validation.
public let NSValidationObjectErrorKey = "NSValidationErrorObject"
/// The key that failed validation.
public let NSValidationKeyErrorKey = "NSValidationErrorKey"
/// The predicate that failed validation.
public let NSValidationPredicateErrorKey = "NSValidationErrorPredicate"
/// The value that failed validation.
public let NSValidationValueErrorKey = "NSValidationErrorValue"
/// The stores affected by an error.
public let NSAffectedStoresErrorKey = "NSAffectedStoresErrorKey"
/// The objects affected by an error.
public let NSAffectedObjectsErrorKey = "NSAffectedObjectsErrorKey"
/// The `NSMergeConflict` or `NSConstraintConflict` values of a save conflict.
public let NSPersistentStoreSaveConflictsErrorKey = "NSPersistentStoreSaveConflicts"
