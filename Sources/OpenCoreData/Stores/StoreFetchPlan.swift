// What a context tells a store about one fetch, and what the store tells back. Both are
// values made per fetch, never state on the NSFetchRequest: contexts on different threads
// may run one request at once, and each one's plan and answer stay its own.
//
//   context ──StoreFetchPlan──▶ store      the entity, which rows the context will keep
//                                          (a leading window in sort order, or all), and
//                                          whether it reads their values
//   context ◀──StoreFetchAnswer── store    the rows, and whether they are already sorted
//
// A store that ignores the plan (every custom store: its public `fetchRows(_:)` answers)
// returns every matching row, unsorted; the context then sorts and windows as always.
import Foundation

/// How a context will use the rows of one fetch, so a store may return less or do less.
struct StoreFetchPlan {
    /// The entity the request fetches, resolved.
    let entity: NSEntityDescription
    /// When set, the context keeps only this many leading rows (fetchOffset + fetchLimit) in
    /// the order of the request's sort descriptors, and nothing unsaved can change which: the
    /// store may return just those, with every row tied with the last one on the sort value.
    let leadingRowLimit: Int?
    /// Whether the context reads the rows' values, not only their IDs or their number:
    /// when false a store may leave values it keeps apart (blobs) unread.
    let readsValues: Bool
    /// Whether the context fills managed objects from the rows and reads nothing else of
    /// them but what it reads through an object's values: a store may hand the rows over
    /// decoded straight into the objects' form (StoreRowSlots.swift).
    let fillsObjects: Bool

    /// A plan for `request` on its resolved `entity`; `mayStopEarly` when nothing unsaved in
    /// the fetching context can change which rows lead (asked only for a request with a limit).
    init(
        _ request: NSFetchRequest<NSFetchRequestResult>, entity: NSEntityDescription,
        mayStopEarly: @autoclosure () -> Bool
    ) {
        self.entity = entity
        leadingRowLimit =
            request.fetchLimit > 0 && request.resultType != .dictionaryResultType && mayStopEarly()
            ? Self.leadingRows(offset: request.fetchOffset, limit: request.fetchLimit) : nil
        readsValues = Self.readsValues(of: request)
        // A prefetch reads the rows' references in stored form, so its rows keep that form.
        fillsObjects =
            request.includesPropertyValues && request.resultType == .managedObjectResultType
            && (request.relationshipKeyPathsForPrefetching ?? []).isEmpty
    }

    /// Whether a context reads the values of `request`'s rows.
    private static func readsValues(of request: NSFetchRequest<NSFetchRequestResult>) -> Bool {
        request.includesPropertyValues && request.resultType != .managedObjectIDResultType
            && request.resultType != .countResultType
    }

    /// The rows before and in the window; nil (no early stop) when an offset near
    /// `Int.max` would overflow the sum.
    static func leadingRows(offset: Int, limit: Int) -> Int? {
        let (sum, overflow) = max(offset, 0).addingReportingOverflow(limit)
        return overflow ? nil : sum
    }

    /// Every matching row of `request`, with its values: what the public `fetchRows(_:)` answers.
    ///
    /// - Throws: `NSCoreDataError` when the request reached the store without an entity.
    init(everyRowOf request: NSFetchRequest<NSFetchRequestResult>) throws {
        guard let entity = request.entity else {
            throw CoreDataError.make(NSCoreDataError, "a fetch request reached the store without an entity")
        }
        self.init(entity: entity, leadingRowLimit: nil, readsValues: Self.readsValues(of: request))
    }

    /// The same plan for rows whose values nobody reads (a count).
    func withoutValues() -> StoreFetchPlan {
        StoreFetchPlan(entity: entity, leadingRowLimit: leadingRowLimit, readsValues: false)
    }

    /// A plan whose rows keep their stored form (their reader is not a context filling objects).
    private init(entity: NSEntityDescription, leadingRowLimit: Int?, readsValues: Bool) {
        self.entity = entity
        self.leadingRowLimit = leadingRowLimit
        self.readsValues = readsValues
        self.fillsObjects = false
    }
}

/// A store's answer to one fetch: the rows, and what the store did with them.
struct StoreFetchAnswer {
    /// The matching rows (under a plan with a `leadingRowLimit`, possibly only the leading ones).
    let rows: [StoreRow]
    /// Whether `rows` are already in the order the context's stable sort by the request's
    /// sort descriptors would give them, so the context may skip sorting them.
    let isSorted: Bool
}
