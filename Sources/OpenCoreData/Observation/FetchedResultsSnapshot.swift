// A plain value for a results list: section names and the object IDs in each. Core
// Data hands its snapshot delegate a UIKit/AppKit NSDiffableDataSourceSnapshot, which
// Linux does not have; this type stands in for it (with the query and building methods
// of UIKit's that make sense without a view), and it is what the context's result
// sequences yield.
import Foundation

/// Section identifiers (section names) and item identifiers (object IDs) of a results
/// list, in order, with the items changed in place.
///
/// What a fetched results controller's snapshot delegate method receives, and what
/// ``NSManagedObjectContext/results(for:sectionNameKeyPath:)`` yields. Object IDs are
/// `Sendable`, so a snapshot may cross to any task or actor; turn IDs back into objects
/// with `context.object(with:)` on the context's queue.
///
/// ```swift
/// func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>,
///                 didChangeContentWith snapshot: NSDiffableDataSourceSnapshotReference) {
///     let snapshot = snapshot as NSDiffableDataSourceSnapshot<String, NSManagedObjectID>
///     for section in snapshot.sectionIdentifiers {
///         print(section, snapshot.numberOfItems(inSection: section))
///     }
/// }
/// ```
///
/// Objects inserted and not yet saved have temporary IDs, as in Core Data: obtain
/// permanent IDs before saving if you keep identifiers across a save.
public struct FetchedResultsSnapshot: Sendable, Hashable {
    /// The section names, in order.
    public private(set) var sectionIdentifiers: [String] = []
    private var sectionItems: [[NSManagedObjectID]] = []
    /// The items changed without moving since the previous snapshot (what UIKit's
    /// `reloadItems(_:)` marks).
    public private(set) var reloadedItemIdentifiers: [NSManagedObjectID] = []

    /// An empty snapshot.
    public init() {}

    /// How many sections there are.
    public var numberOfSections: Int { sectionIdentifiers.count }

    /// How many items there are in all sections.
    public var numberOfItems: Int { sectionItems.reduce(0) { $0 + $1.count } }

    /// Every item, section after section.
    ///
    /// - Complexity: O(n).
    public var itemIdentifiers: [NSManagedObjectID] { Array(sectionItems.joined()) }

    /// How many items `section` holds (0 for a section the snapshot lacks).
    public func numberOfItems(inSection section: String) -> Int {
        indexOfSection(section).map { sectionItems[$0].count } ?? 0
    }

    /// The items of `section`, in order (none for a section the snapshot lacks).
    public func itemIdentifiers(inSection section: String) -> [NSManagedObjectID] {
        indexOfSection(section).map { sectionItems[$0] } ?? []
    }

    /// The index of `section`, nil when the snapshot lacks it.
    public func indexOfSection(_ section: String) -> Int? {
        sectionIdentifiers.firstIndex(of: section)
    }

    /// The position of `item` among all items, nil when the snapshot lacks it.
    ///
    /// - Complexity: O(n).
    public func indexOfItem(_ item: NSManagedObjectID) -> Int? {
        var offset = 0
        for items in sectionItems {
            if let index = items.firstIndex(of: item) { return offset + index }
            offset += items.count
        }
        return nil
    }

    /// The section holding `item`, nil when the snapshot lacks it.
    ///
    /// - Complexity: O(n).
    public func sectionIdentifier(containingItem item: NSManagedObjectID) -> String? {
        for (index, items) in sectionItems.enumerated() where items.contains(item) { return sectionIdentifiers[index] }
        return nil
    }

    /// Adds `sections` (not in the snapshot yet) at the end, empty.
    public mutating func appendSections(_ sections: [String]) {
        for section in sections where indexOfSection(section) == nil {
            sectionIdentifiers.append(section)
            sectionItems.append([])
        }
    }

    /// Adds `items` at the end of `section` (the last section when nil; nothing when the
    /// snapshot has no such section).
    public mutating func appendItems(_ items: [NSManagedObjectID], toSection section: String? = nil) {
        guard let index = section.map(indexOfSection) ?? (sectionItems.isEmpty ? nil : sectionItems.count - 1)
        else { return }
        sectionItems[index] += items
    }

    /// Marks `items` as changed in place.
    public mutating func reloadItems(_ items: [NSManagedObjectID]) {
        reloadedItemIdentifiers += items
    }

    /// Removes every section and item.
    public mutating func deleteAllItems() {
        self = FetchedResultsSnapshot()
    }
}

/// The snapshot a fetched results controller's snapshot delegate method receives (Core
/// Data's `NSDiffableDataSourceSnapshotReference`): a ``FetchedResultsSnapshot``.
public typealias NSDiffableDataSourceSnapshotReference = FetchedResultsSnapshot

/// UIKit's typed snapshot name, so `snapshot as NSDiffableDataSourceSnapshot<String,
/// NSManagedObjectID>` compiles as in Core Data code: a ``FetchedResultsSnapshot``,
/// always of section names and object IDs (the type arguments are not checked).
public typealias NSDiffableDataSourceSnapshot<SectionIdentifierType: Hashable, ItemIdentifierType: Hashable> =
    FetchedResultsSnapshot
