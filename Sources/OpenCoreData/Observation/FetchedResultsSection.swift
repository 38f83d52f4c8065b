// Sections of a fetched results controller: a run of consecutive results sharing the
// value at the section name key path (the request's first sort groups them). A section
// is kept as its name and its object count; its objects are the list's positions from
// the sum of the counts before it. Without a section name key path there is exactly one
// section, named "", even while it is empty (as in Core Data).
import Foundation

/// A section of a fetched results controller's results.
///
/// ```swift
/// for section in controller.sections ?? [] {
///     print(section.name, section.numberOfObjects)
/// }
/// ```
public protocol NSFetchedResultsSectionInfo {
    /// The section's name: the value at the controller's section name key path, as a string.
    var name: String { get }
    /// The section's title in a section index: by default the name's first letter, capitalized.
    var indexTitle: String? { get }
    /// How many objects the section holds.
    var numberOfObjects: Int { get }
    /// The section's objects, in order.
    var objects: [Any]? { get }
}

/// One section of a results tracker: its name and object count, kept current as changes
/// are tracked (the same instance stays the section while it exists).
final class FetchedResultsSection: NSFetchedResultsSectionInfo {
    let name: String
    /// Objects in the section; 0 once the section has gone.
    var count: Int
    private weak var tracker: FetchedResultsTracker?

    init(name: String, count: Int, tracker: FetchedResultsTracker) {
        self.name = name
        self.count = count
        self.tracker = tracker
    }

    var numberOfObjects: Int { count }

    var indexTitle: String? { tracker?.indexTitle(forSectionName: name) }

    var objects: [Any]? { tracker?.objects(in: self) ?? [] }

    /// The section name of a value at the section name key path: strings as they are, nil
    /// as "", numbers by their string value, anything else by its description.
    static func name(of value: Any?) -> String {
        switch value {
        case nil, is NSNull: ""
        case let text as String: text
        case let number as NSNumber: number.stringValue
        case let value?: String(describing: value)
        }
    }

    /// Core Data's default index title: the name's first letter, capitalized (nil for "").
    static func defaultIndexTitle(forSectionName name: String) -> String? {
        name.first.map { String($0).uppercased() }
    }
}
