// "Does this object belong in the request's results, and where does it sort?" — asked of
// one object at a time, on its current values. The fetch pipeline asks it of every object
// with unsaved changes (FetchExecution.swift, stage 3) and sorts with its compiled sort
// descriptors (stage 4); a results controller asks it of an object that changed, pending
// in its context or merged from another context's save, to place it in a sorted list.
import Foundation

/// A fetch request's entity, predicate and sort descriptors, compiled once and asked about
/// single objects: whether one matches, and how two compare.
///
/// The predicate is compiled for the entity of each object it meets, as the stores compile
/// it for each entity they read (a sub-entity may have keys its super-entity lacks); the
/// sort descriptors are compiled for the request's entity, as the fetch sorts. Compilation
/// happens on first use, so a request whose predicate or sort cannot compile throws when
/// asked, not when the matcher is made. Use a matcher on its context's queue only.
///
/// ```swift
/// let matcher = FetchRequestMatcher(request, entity: entity)
/// if try matcher.matches(object) {
///     sorted.insert(object, at: try matcher.insertionIndex(of: object, in: sorted))
/// }
/// ```
final class FetchRequestMatcher {
    /// The request's entity.
    let entity: NSEntityDescription
    private let includesSubentities: Bool
    private let predicate: NSPredicate?
    private let sortDescriptors: [NSSortDescriptor]
    /// The entities whose objects may match, once asked.
    private var entities: Set<ObjectIdentifier>?
    /// The predicate compiled for each entity it met.
    private var predicates: [ObjectIdentifier: CompiledPredicate] = [:]
    private var sort: CompiledSortDescriptors?

    /// A matcher for `request`, whose entity resolved to `entity`. It reads the request's
    /// predicate, sort descriptors and `includesSubentities` now, and never the request again.
    init(_ request: NSFetchRequest<NSFetchRequestResult>, entity: NSEntityDescription) {
        self.entity = entity
        includesSubentities = request.includesSubentities
        predicate = request.predicate
        sortDescriptors = request.sortDescriptors ?? []
    }

    /// Whether objects of `entity` can be results: the request's entity, or one of its
    /// sub-entities when the request includes them.
    func includes(_ entity: NSEntityDescription) -> Bool {
        if entity === self.entity { return true }
        guard includesSubentities else { return false }
        if entities == nil {
            entities = Set(self.entity.hierarchy(includingSubentities: true).map(ObjectIdentifier.init))
        }
        return entities?.contains(ObjectIdentifier(entity)) ?? false
    }

    /// Whether `object` is one of the request's results on its current values: of an entity
    /// the request includes, not deleted in its context, and satisfying the predicate.
    ///
    /// - Throws: the predicate's parse error, `KeyValueCodingError.unknownKey` for a key the
    ///   object's entity lacks, `PredicateLanguageError` when a comparison cannot be made.
    func matches(_ object: NSManagedObject) throws -> Bool {
        let objectEntity = object.objectID.entity
        guard includes(objectEntity), !object.isDeleted else { return false }
        guard let predicate else { return true }
        let key = ObjectIdentifier(objectEntity)
        if let compiled = predicates[key] { return try compiled.evaluate(record: object) }
        let compiled = try predicate.compiled(for: objectEntity.frozenLayoutIfAny)
        predicates[key] = compiled
        return try compiled.evaluate(record: object)
    }

    /// The request's sort descriptors, compiled for its entity.
    ///
    /// - Throws: `KeyValueCodingError.unknownKey` for a sort key the entity lacks.
    func compiledSortDescriptors() throws -> CompiledSortDescriptors {
        if let sort { return sort }
        let compiled = try CompiledSortDescriptors(sortDescriptors, schema: entity.frozenLayoutIfAny)
        sort = compiled
        return compiled
    }

    /// The order of two objects by the request's sort descriptors: the first descriptor that
    /// tells them apart decides; `.orderedSame` when none does (or there are none).
    ///
    /// - Throws: as ``compiledSortDescriptors()``; `PredicateLanguageError.typeMismatch` for
    ///   values with no order.
    func compare(_ first: NSManagedObject, _ second: NSManagedObject) throws -> ComparisonResult {
        try compiledSortDescriptors().compare(first, second)
    }

    /// Whether `first` sorts strictly before `second`.
    ///
    /// - Throws: as ``compare(_:_:)``.
    func areInIncreasingOrder(_ first: NSManagedObject, _ second: NSManagedObject) throws -> Bool {
        try compare(first, second) == .orderedAscending
    }

    /// Where `object` goes in `sorted` (ordered by the request's sort descriptors): after
    /// every element that does not sort after it, as the fetch's stable sort places a
    /// pending object after the stored rows it ties with.
    ///
    /// - Throws: as ``compare(_:_:)``.
    /// - Complexity: O(log n) comparisons.
    func insertionIndex<Objects: RandomAccessCollection>(of object: NSManagedObject, in sorted: Objects) throws
        -> Objects.Index where Objects.Element: NSManagedObject
    {
        var low = sorted.startIndex
        var count = sorted.count
        while count > 0 {
            let half = count / 2
            let middle = sorted.index(low, offsetBy: half)
            if try compare(object, sorted[middle]) == .orderedAscending {
                count = half
            } else {
                low = sorted.index(after: middle)
                count -= half + 1
            }
        }
        return low
    }
}
