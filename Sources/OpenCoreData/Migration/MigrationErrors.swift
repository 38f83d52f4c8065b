// The errors of migration, with Core Data's codes and the userInfo keys its errors carry
// (`entity`, `property`/`attribute`/`relationship`, `reason`), so code written for Core
// Data's errors reads ours. Every message names the entity and the property.
import Foundation

enum MigrationError {
    /// The userInfo key naming the entity a migration error is about.
    static let entityKey = "entity"
    /// The userInfo key naming the property a migration error is about.
    static let propertyKey = "property"
    /// The userInfo key of the reason, as Core Data's migration errors carry it.
    static let reasonKey = "reason"

    /// A change lightweight migration cannot infer: 134140 when a store is opened
    /// (`NSMigrationMissingMappingModelError`, Core Data's "missing mapping model"),
    /// 134190 from `NSMappingModel.inferredMappingModel` (`NSInferredMappingModelError`).
    static func uninferable(
        _ reason: String, entity: String?, property: String? = nil, code: Int = NSMigrationMissingMappingModelError
    ) -> NSError {
        var info: [String: Any] = [reasonKey: reason]
        info[entityKey] = entity
        info[propertyKey] = property
        let lead =
            code == NSInferredMappingModelError
            ? "Can't find or automatically infer mapping model for migration"
            : "Persistent store migration failed, missing mapping model"
        return CoreDataError.make(code, "\(lead): \(reason)", userInfo: info)
    }

    /// `error` with `code` instead of its own (the same reason and userInfo).
    static func recoded(_ error: NSError, _ code: Int) -> NSError {
        guard error.domain == NSCocoaErrorDomain, error.code != code else { return error }
        var info = error.userInfo as [String: Any]
        let reason = info[reasonKey] as? String ?? error.localizedDescription
        info[NSLocalizedDescriptionKey] = nil
        return uninferable(
            reason, entity: info[entityKey] as? String, property: info[propertyKey] as? String, code: code)
    }

    /// Rows whose values the destination model cannot hold (a nil in a now mandatory
    /// property, several objects in a now to-one relationship): `NSMigrationError` (134110),
    /// as Core Data reports its validation failures during migration.
    static func invalidValue(_ reason: String, entity: String, property: String, isRelationship: Bool) -> NSError {
        CoreDataError.make(
            NSMigrationError, "An error occurred during persistent store migration: \(entity).\(property): \(reason)",
            userInfo: [
                reasonKey: reason, entityKey: entity, propertyKey: property,
                isRelationship ? "relationship" : "attribute": property,
            ])
    }

    /// A row of an entity that is abstract in the destination model.
    static func abstractRows(_ entity: String) -> NSError {
        CoreDataError.make(
            NSMigrationError,
            "An error occurred during persistent store migration: \(entity) is abstract in the new model but the "
                + "store holds objects of it (they would be lost)",
            userInfo: [reasonKey: "objects of an entity that became abstract", entityKey: entity])
    }

    /// Rows that break a uniqueness constraint of the destination model
    /// (`NSMigrationConstraintViolationError`, 134111).
    static func constraintViolation(_ entity: String, constraint: String, path: String) -> NSError {
        CoreDataError.make(
            NSMigrationConstraintViolationError,
            "cannot migrate \(path): objects of \(entity) violate the uniqueness constraint \(constraint) of the "
                + "new model",
            userInfo: [reasonKey: "uniqueness constraint violated", entityKey: entity, propertyKey: constraint])
    }
}
