// The rows of one entity a batch update or delete selects on the default store, found
// as the fetch path finds them but left in their encoded bytes:
//
//   1. candidates   the keys in the predicate's index ranges (PageFileQueryPlanner),
//                   sorted; with no usable index, a scan of the row tree keeping the
//                   keys of matching rows (the tree cannot change during a scan)
//   2. match        each candidate's bytes tested by the encoded predicate
//                   (PageFileEncodedPredicate); a predicate it does not cover runs
//                   compiled on the decoded row; an exact index range needs no test
//
// The caller then changes each row from the same bytes, decoding only the slots it
// needs. Rows come in key order, as the fetch path returns them.
import Foundation
import StorageEngine

/// Finds the rows of one entity matching a predicate in a write transaction.
struct PageFileBatchMatcher {
    let entity: NSEntityDescription
    let info: PageFileCatalog.EntityInfo
    /// The entity's row tree, nil when it has no rows yet.
    let rows: Tree?
    private let codec: PageFileRowCodec
    private let plan: PageFilePlan?
    private let index: Tree?
    /// The predicate when candidates still need testing.
    private let compiled: CompiledPredicate?
    private let encoded: PageFileEncodedPredicate?
    private let decodeRow: (UnsafeRawBufferPointer, Int64) throws -> StoreRow
    private let view: (StoreRow) -> StoreRowView

    /// A matcher of `entity`'s rows for `predicate`; `decodeRow` makes a row of bytes and
    /// a key, `view` the view a compiled predicate reads (relationships resolved).
    ///
    /// - Throws: the predicate's compile errors; the engine's errors.
    init(
        entity: NSEntityDescription, predicate: NSPredicate?, info: PageFileCatalog.EntityInfo,
        transaction: ReadTransaction, codec: PageFileRowCodec,
        decodeRow: @escaping (UnsafeRawBufferPointer, Int64) throws -> StoreRow,
        view: @escaping (StoreRow) -> StoreRowView
    ) throws {
        self.entity = entity
        self.info = info
        self.codec = codec
        self.decodeRow = decodeRow
        self.view = view
        rows = try transaction.tree(named: info.treeName)
        let plan = PageFileQueryPlanner.plan(predicate, info: info)
        let index = try plan.flatMap { try transaction.tree(named: $0.index.treeName) }
        self.plan = index == nil ? nil : plan
        self.index = index
        let exact = index != nil && plan?.isExact == true
        compiled = exact ? nil : try predicate.map { try $0.compiled(for: entity.frozenLayoutIfAny) }
        encoded = compiled == nil ? nil : predicate.flatMap { PageFileEncodedPredicate($0, layout: entity.layout) }
    }

    /// The keys of the rows to consider, ascending; `matched` says whether they are
    /// known to match (else ``matches(_:primaryKey:offsets:)`` decides each).
    ///
    /// - Throws: `NSFileReadCorruptFileError` for a damaged key; the predicate's errors.
    func candidates() throws -> (keys: [Int64], matched: Bool) {
        guard let rows else { return ([], true) }
        var keys: [Int64] = []
        if let plan, let index {
            try plan.scan(index) { key in
                if let primary = PageFileKey.primaryKey(key) { keys.append(primary) }
                return true
            }
            // A multi-range plan (IN, OR) may list a row twice.
            keys.sort()
            var unique: [Int64] = []
            unique.reserveCapacity(keys.count)
            for key in keys where key != unique.last { unique.append(key) }
            return (unique, compiled == nil)
        }
        var offsets: [Int] = []
        try rows.scan { key, value in
            guard let primary = PageFileKey.rowKey(key) else {
                throw CoreDataError.make(NSFileReadCorruptFileError, "a row key of \(info.treeName) is damaged")
            }
            if try matches(value, primaryKey: primary, offsets: &offsets) { keys.append(primary) }
            return true
        }
        return (keys, true)
    }

    /// Whether the row `bytes` of `primaryKey` matches; `offsets` holds its slot offsets
    /// after the call whenever the encoded predicate read them.
    ///
    /// - Throws: the predicate's evaluation errors; `NSFileReadCorruptFileError` for a damaged row.
    func matches(_ bytes: UnsafeRawBufferPointer, primaryKey: Int64, offsets: inout [Int]) throws -> Bool {
        guard let compiled else { return true }
        if let encoded {
            try PageFileRowCodec.slotOffsets(bytes, into: &offsets)
            return try encoded.evaluate(bytes, offsets: offsets, codec: codec)
        }
        return try compiled.evaluate(record: view(try decodeRow(bytes, primaryKey)))
    }

    /// Whether ``matches(_:primaryKey:offsets:)`` leaves the row's slot offsets in `offsets`
    /// (it reads the encoded row).
    var readsOffsets: Bool { encoded != nil }

    /// The index plan's error for a key its index lists but the row tree lacks.
    func missingRow(_ key: Int64) -> NSError {
        CoreDataError.make(
            NSFileReadCorruptFileError,
            "the store's index \(plan?.index.treeName ?? info.treeName) lists row \(key), which does not exist "
                + "(run storage-bench check)")
    }
}
