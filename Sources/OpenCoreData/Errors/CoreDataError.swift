// Building the NSErrors the library throws: Core Data's domain and codes, a message
// that says what went wrong and where, and the documented userInfo keys.
import Foundation

enum CoreDataError {
    /// An error in NSCocoaErrorDomain with `code`, `message` as its description and `userInfo`.
    static func make(_ code: Int, _ message: String, userInfo: [String: Any] = [:]) -> NSError {
        var info = userInfo
        info[NSLocalizedDescriptionKey] = message
        return NSError(domain: NSCocoaErrorDomain, code: code, userInfo: info)
    }

    /// A validation error for `key` of `object` holding `value`.
    static func validation(
        _ code: Int, _ message: String, object: NSManagedObject?, key: String?, value: Any?,
        predicate: NSPredicate? = nil
    ) -> NSError {
        var info: [String: Any] = [:]
        if let object { info[NSValidationObjectErrorKey] = object }
        if let key { info[NSValidationKeyErrorKey] = key }
        if let value { info[NSValidationValueErrorKey] = value }
        if let predicate { info[NSValidationPredicateErrorKey] = predicate }
        return make(code, message, userInfo: info)
    }

    /// One error for a list: the error itself when alone, else `NSValidationMultipleErrorsError`
    /// with the list under `NSDetailedErrorsKey`.
    static func combining(_ errors: [Error]) -> Error? {
        if errors.count <= 1 { return errors.first }
        return make(
            NSValidationMultipleErrorsError,
            "\(errors.count) validation errors: "
                + errors.prefix(5).map { ($0 as NSError).localizedDescription }.joined(separator: "; "),
            userInfo: [NSDetailedErrorsKey: errors])
    }
}
