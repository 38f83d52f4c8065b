// A fetched property: a read-only property whose value is the result of a fetch request.
import Foundation

/// A property whose value is the result of ``fetchRequest``, evaluated for each object;
/// its predicate may use `$FETCH_SOURCE` (the object) and `$FETCHED_PROPERTY` (this
/// description).
///
/// ```swift
/// let seniors = NSFetchedPropertyDescription()
/// seniors.name = "seniorReports"
/// let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Employee")
/// request.predicate = NSPredicate(format: "manager == $FETCH_SOURCE AND rank > 5")
/// seniors.fetchRequest = request
/// ```
///
/// `value(forKey:)` runs the request in the object's context the first time it is read
/// and keeps the result (an array) until the object is refreshed, as Core Data does;
/// stores keep nothing for it.
open class NSFetchedPropertyDescription: NSPropertyDescription, @unchecked Sendable {
    /// The request whose results are the property's value.
    open var fetchRequest: NSFetchRequest<NSFetchRequestResult>? {
        willSet { assertEditable("fetchRequest") }
    }

    /// Creates a fetched property with no request.
    public override init() {
        super.init()
    }

    override var isReadOnly: Bool { true }

    override var versionHashKind: String { "fetchedProperty" }
}
