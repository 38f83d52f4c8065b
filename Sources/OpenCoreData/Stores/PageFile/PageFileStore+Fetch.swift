// Fetching from the page-file store: plan, collect candidate keys from an index (or
// scan the row tree), decode, and check the whole predicate on every candidate.
import Foundation
import StorageEngine

extension PageFileStore {
    /// The matching rows as `plan` asks: with its values when the plan reads them (blobs
    /// read; else blob values stay `.unresolved`, SPEC.md §3.8), and, when the plan allows,
    /// only its leading rows walked from an index in sort order.
    func fetchStoredRows(_ request: NSFetchRequest<NSFetchRequestResult>, plan: StoreFetchPlan) throws
        -> StoreFetchAnswer
    {
        let entity = plan.entity
        // The rows of many objects name the same destinations: one ID each per fetch.
        return try codec.interningReferences { codec in
            do {
                return try readCommitted { transaction in
                    var result: [StoreRow] = []
                    let entities = entity.hierarchy(includingSubentities: request.includesSubentities)
                    var isSorted = false
                    if entities.count == 1, let limit = plan.leadingRowLimit,
                        let sorted = try collectWindow(
                            of: entity, request: request, limit: limit, in: transaction, codec: codec,
                            intoSlots: plan.fillsObjects, into: &result)
                    {
                        isSorted = sorted
                    } else if entities.count == 1, let limit = plan.leadingRowLimit,
                        try collectTopRows(
                            of: entity, request: request, limit: limit, in: transaction, codec: codec,
                            intoSlots: plan.fillsObjects, into: &result)
                    {
                        isSorted = true
                    } else {
                        for candidate in entities {
                            try collectRows(
                                of: candidate, predicate: request.predicate, in: transaction, codec: codec,
                                intoSlots: plan.fillsObjects, into: &result)
                        }
                    }
                    if plan.readsValues { try resolveBlobs(&result, in: transaction) }
                    try resolvePrefetched(request, &result, in: transaction, codec: codec)
                    return StoreFetchAnswer(rows: result, isSorted: isSorted)
                }
            } catch {
                throw translate(error)
            }
        }
    }

    func countStoredRows(_ request: NSFetchRequest<NSFetchRequestResult>) throws -> Int {
        let plan = try StoreFetchPlan(everyRowOf: request).withoutValues()
        let entities = plan.entity.hierarchy(includingSubentities: request.includesSubentities)
        let codec = self.codec
        do {
            let counted: Int? = try readCommitted { transaction in
                var total = 0
                for candidate in entities {
                    let info = try info(for: candidate)
                    guard let rows = try transaction.tree(named: info.treeName) else { continue }
                    guard let predicate = request.predicate else {
                        total += try rows.count
                        continue
                    }
                    let indexPlan = PageFileQueryPlanner.plan(predicate, info: info)
                    // With no index to narrow them, every row is tested on its encoded bytes.
                    if indexPlan == nil,
                        let counted = try countEncodedMatches(
                            of: candidate, predicate: predicate, rows: rows, info: info, codec: codec)
                    {
                        total += counted
                        continue
                    }
                    guard let plan = indexPlan, plan.isExact else {
                        // Rows the predicate tests are counted where they lie, none decoded
                        // into a StoreRow when the predicate runs on encoded rows.
                        try matchEncodedRows(of: candidate, predicate: predicate, in: transaction, codec: codec) {
                            _, _, _ in total += 1
                        }
                        continue
                    }
                    guard let index = try transaction.tree(named: plan.index.treeName) else { continue }
                    for range in plan.ranges { total += try index.count(from: range.lower, to: range.upper) }
                }
                return total
            }
            if let counted { return counted }
        } catch {
            throw translate(error)
        }
        return try fetchStoredRows(request, plan: plan).rows.count
    }

    /// The number of rows of `entity` in its row tree `rows` matching `predicate`, counted
    /// in one tight walk of the leaves on the rows' encoded bytes (no row decoded, no
    /// call per row beyond the test); nil when the encoded form does not cover the
    /// predicate or it reads a blob, for the general path to count.
    private func countEncodedMatches(
        of entity: NSEntityDescription, predicate: NSPredicate, rows: Tree, info: PageFileCatalog.EntityInfo,
        codec: PageFileRowCodec
    ) throws -> Int? {
        guard !predicateReadsBlobs(predicate, info: info) else { return nil }
        // Compiled first, as the general path does, so a predicate it refuses fails alike.
        _ = try predicate.compiled(for: entity.frozenLayoutIfAny)
        guard let encoded = PageFileEncodedPredicate(predicate, layout: entity.layout) else { return nil }
        var total = 0
        let slots = PageFileRowSlots(capacity: entity.layout.attributeBySlot.count)
        let lastSlot = encoded.lastSlot
        try rows.scan { key, value in
            guard PageFileKey.isRowKey(key) else {
                throw CoreDataError.make(NSFileReadCorruptFileError, "a row key of \(info.treeName) is damaged")
            }
            try slots.walk(value, through: lastSlot)
            if try encoded.evaluate(value, offsets: slots.offsets, codec: codec) { total += 1 }
            return true
        }
        return total
    }

    /// Views of rows read in `transaction`: a key path through a relationship reads the
    /// destination's row (or to-many) in the same transaction.
    private func rowViews(in transaction: ReadTransaction, codec: PageFileRowCodec) -> PageFileRowViews {
        PageFileRowViews(
            resolve: { [unowned self] id in
                guard id.persistentStore === self else { return nil }
                return try self.loadRow(id.entity, key: id.key, in: transaction, codec: codec)
            },
            resolveToMany: { [unowned self] relationship, id in
                guard id.persistentStore === self else { return [] }
                return try self.destinationIDs(of: relationship, for: id, in: transaction, codec: codec)
            })
    }

    /// Appends the rows of `entity` (not its sub-entities) matching `predicate`, in key order;
    /// `intoSlots`: those matched on their encoded bytes decoded into the slot form (see
    /// ``decodedRow(_:primary:entity:codec:intoSlots:)``).
    func collectRows(
        of entity: NSEntityDescription, predicate: NSPredicate?, in transaction: ReadTransaction,
        codec: PageFileRowCodec, intoSlots: Bool = false, into result: inout [StoreRow]
    ) throws {
        // The row made here moves into `result`: handed on to another closure as a borrowed
        // argument first, it was copied into the array (three retains and releases per row).
        try matchEncodedRows(of: entity, predicate: predicate, in: transaction, codec: codec) {
            bytes, primary, decoded in
            result.append(
                try decoded
                    ?? decodedRow(bytes, primary: primary, entity: entity, codec: codec, intoSlots: intoSlots))
        }
    }

    /// The row `bytes` of `entity` with key `primary`, decoded; with `intoSlots`, straight
    /// into the slot form a context fills objects from when the row takes it.
    func decodedRow(
        _ bytes: UnsafeRawBufferPointer, primary: Int64, entity: NSEntityDescription, codec: PageFileRowCodec,
        intoSlots: Bool = false
    ) throws -> StoreRow {
        try codec.row(bytes, entity: entity, intoSlots: intoSlots) { newObjectID(for: entity, key: primary) }
    }

    /// Calls `found` with the encoded bytes and key of each row of `entity` (not its
    /// sub-entities) matching `predicate`, in key order, and with the row when matching it
    /// decoded the row (blobs the predicate reads resolved); the bytes are valid only
    /// during the call.
    func matchEncodedRows(
        of entity: NSEntityDescription, predicate: NSPredicate?, in transaction: ReadTransaction,
        codec: PageFileRowCodec, found: (UnsafeRawBufferPointer, Int64, StoreRow?) throws -> Void
    ) throws {
        let info = try info(for: entity)
        guard let rows = try transaction.tree(named: info.treeName) else { return }
        let readsBlobs = predicateReadsBlobs(predicate, info: info)
        let plan = PageFileQueryPlanner.plan(predicate, info: info)
        let index = try plan.flatMap { try transaction.tree(named: $0.index.treeName) }
        // An exact index range holds only matching rows (what counts rely on): nothing below
        // evaluates a row, so the predicate is not even compiled (a fetch by an indexed
        // attribute costs the index probe and the row).
        let exactIndex = index != nil && plan?.isExact == true
        let compiled = exactIndex ? nil : try predicate.map { try $0.compiled(for: entity.frozenLayoutIfAny) }
        let evaluates = compiled != nil
        // Made only for a predicate that runs on rows: a fetch by an indexed attribute
        // allocates no views.
        let views = evaluates ? rowViews(in: transaction, codec: codec) : nil
        func accept(_ value: UnsafeRawBufferPointer, _ primary: Int64) throws {
            var row = try decodedRow(value, primary: primary, entity: entity, codec: codec)
            if readsBlobs { try resolveBlobs(&row, info: info, in: transaction) }
            if let compiled, let views {
                guard try compiled.evaluate(record: views.view(of: row)) else { return }
            }
            try found(value, primary, row)
        }
        func match(_ value: UnsafeRawBufferPointer, _ primary: Int64) throws {
            try found(value, primary, nil)
        }
        // Rows the predicate rejects are read slot by slot in their encoded form, never decoded:
        // by the encoded predicate when it covers the predicate, else by the compiled one on a view.
        let direct = evaluates ? predicate.flatMap { PageFileEncodedPredicate($0, layout: entity.layout) } : nil
        let slots = PageFileRowSlots(capacity: entity.layout.attributeBySlot.count)
        if plan == nil, !readsBlobs, let direct {
            // The commonest scan in a loop of its own: the key's check, the test (a lone string
            // clause, `firstName CONTAINS[c] %@`, straight on the row's bytes) and, for a
            // match, the key's value and the caller's call, with nothing else captured or
            // checked per row.
            // Other predicates walk the slots here, as a count does (`countEncodedMatches`: its
            // walk behind the string clause's row test went out of line, +7.5% on count-bool).
            let onlyString = direct.isOnlyString
            let lastSlot = direct.lastSlot
            try rows.scan { key, value in
                guard PageFileKey.isRowKey(key) else {
                    throw CoreDataError.make(NSFileReadCorruptFileError, "a row key of \(info.treeName) is damaged")
                }
                if onlyString {
                    guard try direct.evaluate(row: value, slots: slots, codec: codec) else { return true }
                } else {
                    try slots.walk(value, through: lastSlot)
                    guard try direct.evaluate(value, offsets: slots.offsets, codec: codec) else { return true }
                }
                guard let primary = PageFileKey.rowKey(key) else {
                    throw CoreDataError.make(NSFileReadCorruptFileError, "a row key of \(info.treeName) is damaged")
                }
                try found(value, primary, nil)
                return true
            }
            return
        }
        var encoded: PageFileEncodedRowView?
        if direct == nil, let views,
            predicate.map({ PageFileEncodedRowView.canEvaluate($0, layout: entity.layout) }) == true
        {
            encoded = PageFileEncodedRowView(
                entity: entity, codec: codec,
                decodeRow: { [unowned self] value, primary in
                    try self.decodedRow(value, primary: primary, entity: entity, codec: codec)
                }, makeView: views.view)
        }
        /// Appends the row `value` of `primary` when it matches (`exact`: known to match).
        func consider(_ value: UnsafeRawBufferPointer, primary: Int64, exact: Bool) throws {
            if readsBlobs, !exact, compiled != nil {
                // The predicate reads an attribute kept in the blob tree (SPEC.md §3.8 X3).
                try accept(value, primary)
            } else if exact || compiled == nil {
                try match(value, primary)
            } else if let direct {
                try slots.walk(value, through: direct.lastSlot)
                if try direct.evaluate(value, offsets: slots.offsets, codec: codec) { try match(value, primary) }
            } else if let encoded, let compiled {
                try encoded.reset(bytes: value, primaryKey: primary)
                let matches = try compiled.evaluate(record: encoded)
                if let error = encoded.failure { throw error }
                if matches { try match(value, primary) }
            } else {
                try accept(value, primary)
            }
        }
        if let plan, let index {
            // One cursor walks all of the plan's ranges (an IN list's thousands of points
            // each found near the last). The tree's walks called directly: through
            // PageFilePlan.scan, a closure more per entry cost a range fetch 0.6%.
            var keys: [Int64] = []
            if let points = plan.points {
                try index.scan(prefixes: points) { _, key, _ in
                    if let primary = PageFileKey.primaryKey(key) { keys.append(primary) }
                    return true
                }
            } else {
                try index.scan(ranges: plan.ranges) { _, key, _ in
                    if let primary = PageFileKey.primaryKey(key) { keys.append(primary) }
                    return true
                }
            }
            keys.sort()
            // The candidate rows by one lookup each: most of a range's rows lie on leaves of
            // their own, and a lookup needs no key array per row (a walk over ranges of the
            // row tree made two per row and checked exclusivity per step: +49% on a range
            // fetch of ~10,000 candidates).
            var previous: Int64?
            for key in keys where key != previous {
                previous = key
                let found = try PageFileKey.withPrimary(key) { keyBytes -> Bool in
                    try rows.withValue(forKey: keyBytes) { value -> Bool in
                        try consider(value, primary: key, exact: plan.isExact)
                        return true
                    } ?? false
                }
                guard found else {
                    throw CoreDataError.make(
                        NSFileReadCorruptFileError,
                        "the store's index \(plan.index.treeName) lists row \(key), which does not exist "
                            + "(run storage-bench check)")
                }
            }
            return
        }
        var failure: Error?
        try rows.scan { key, value in
            do {
                guard let primary = PageFileKey.rowKey(key) else {
                    throw CoreDataError.make(NSFileReadCorruptFileError, "a row key of \(info.treeName) is damaged")
                }
                try consider(value, primary: primary, exact: false)
                return true
            } catch {
                failure = error
                return false
            }
        }
        if let failure { throw failure }
    }

    /// When the first sort key is a number or date with an index led by it, walks that index
    /// in sort order and stops after the `limit` leading matching rows (SPEC.md §3.5 Q5); it
    /// also takes the rows tied with the last one when the index cannot tell which of them
    /// the context's stable sort keeps. Returns whether the rows are in the context's sort
    /// order, or nil when the walk does not apply.
    private func collectWindow(
        of entity: NSEntityDescription, request: NSFetchRequest<NSFetchRequestResult>, limit needed: Int,
        in transaction: ReadTransaction, codec: PageFileRowCodec, intoSlots: Bool, into result: inout [StoreRow]
    ) throws -> Bool? {
        // The sort key is an attribute or a composite element (`location.latitude`).
        guard let descriptor = request.sortDescriptors?.first, descriptor.comparator == nil,
            descriptor.comparison == .compare, let key = descriptor.key,
            let (field, attribute) = entity.layout.keyField(named: key),
            attribute.attributeType != .stringAttributeType, PageFileKey.isOrderable(attribute.attributeType)
        else { return nil }
        let info = try info(for: entity)
        guard let index = info.indexes.first(where: { !$0.isUnique && $0.isOrdered && $0.fields.first == field })
        else { return nil }
        var range: (lower: [UInt8]?, upper: [UInt8]?) = (nil, nil)
        var rangeIsExact = false
        if let plan = PageFileQueryPlanner.plan(request.predicate, info: info) {
            guard plan.index.treeName == index.treeName, plan.ranges.count == 1, let only = plan.ranges.first else {
                return nil
            }
            range = only
            rangeIsExact = plan.isExact
        }
        guard let tree = try transaction.tree(named: index.treeName) else { return false }
        // An exact range holds only matching rows (what counts rely on): nothing to evaluate.
        let compiled =
            rangeIsExact ? nil : try request.predicate.map { try $0.compiled(for: entity.frozenLayoutIfAny) }
        let readsBlobs = predicateReadsBlobs(request.predicate, info: info)
        let views = compiled == nil ? nil : rowViews(in: transaction, codec: codec)
        // Stopping at exactly `needed` rows is right only when ties on the sort value arrive in
        // the order the context's stable sort keeps them: ascending primary key, the order the
        // full path returns. That holds for a one-element index (entries are (value, key)) and
        // a lone sort descriptor; a descending walk re-reads its last tie group forward.
        let mayStopEarly = index.fields.count == 1 && request.sortDescriptors?.count == 1
        let rows = try transaction.tree(named: info.treeName)
        func load(_ primary: Int64) throws -> StoreRow? {
            // A row the predicate reads on a view keeps its stored form.
            guard let rows,
                var row = try loadRow(
                    entity, key: primary, from: rows, codec: codec, intoSlots: intoSlots && compiled == nil)
            else {
                throw CoreDataError.make(
                    NSFileReadCorruptFileError,
                    "the store's index \(index.treeName) lists row \(primary), which does not exist (run storage-bench check)"
                )
            }
            if readsBlobs { try resolveBlobs(&row, info: info, in: transaction) }
            if let compiled, let views {
                guard try compiled.evaluate(record: views.view(of: row)) else { return nil }
            }
            return row
        }
        func entry(_ key: UnsafeRawBufferPointer) throws -> (value: [UInt8], primary: Int64) {
            // The sort value's bytes: nil or a number (SPEC.md §3.4 K2).
            guard let valueLength = PageFileKey.firstElementLength(key),
                let primaryLength = PageFileKey.primaryLength(key), key.count >= valueLength + primaryLength,
                let primary = PageFileKey.primaryKey(key)
            else {
                throw CoreDataError.make(NSFileReadCorruptFileError, "an entry of \(index.treeName) is damaged")
            }
            return (Array(key[0..<valueLength]), primary)
        }
        var accepted = 0
        var boundary: [UInt8]?
        var group: (value: [UInt8], start: Int)?
        var reread: (value: [UInt8], start: Int)?
        var stopAtNextTie = false
        try tree.scan(from: range.lower, to: range.upper, reverse: !descriptor.ascending) { key, _ in
            let (value, primary) = try entry(key)
            if let boundary, value != boundary { return false }
            if stopAtNextTie {
                // More of the last group lies below the keys already read: re-read it forward.
                reread = group
                return false
            }
            if group?.value != value { group = (value, result.count) }
            guard let row = try load(primary) else { return true }
            result.append(row)
            accepted += 1
            guard accepted >= needed, boundary == nil else { return true }
            boundary = value
            guard mayStopEarly, Self.tiesAreExact(value, type: attribute.attributeType) else { return true }
            if descriptor.ascending { return false }
            stopAtNextTie = true
            return true
        }
        if let reread {
            // The walk met this group's highest keys first; the context keeps its lowest.
            result.removeSubrange(reread.start...)
            let wanted = needed - reread.start
            var lower = reread.value
            if let rangeLower = range.lower, lower.lexicographicallyPrecedes(rangeLower) { lower = rangeLower }
            var upper = PageFileKey.successor(ofPrefix: reread.value)
            if let rangeUpper = range.upper, upper.map({ rangeUpper.lexicographicallyPrecedes($0) }) ?? true {
                upper = rangeUpper
            }
            try tree.scan(from: lower, to: upper) { key, _ in
                let (value, primary) = try entry(key)
                guard value == reread.value else { return false }
                guard let row = try load(primary) else { return true }
                result.append(row)
                return result.count - reread.start < wanted
            }
        }
        if request.sortDescriptors?.count == 1,
            let ordered = Self.sortedBySortValue(result, field: field, ascending: descriptor.ascending)
        {
            result = ordered
            return true
        }
        // Key order, as the full path returns: the context's stable sort then orders ties alike.
        result.sort { $0.objectID.key < $1.objectID.key }
        return false
    }

    /// The row of `entity` with `key` in its row tree `rows` (looked up once per fetch, not per
    /// row), in the slot form with `intoSlots` when it takes it.
    private func loadRow(
        _ entity: NSEntityDescription, key: Int64, from rows: Tree, codec: PageFileRowCodec, intoSlots: Bool
    ) throws -> StoreRow? {
        try PageFileKey.primary(key).withUnsafeBytes { keyBytes in
            try rows.withValue(forKey: keyBytes) { bytes -> StoreRow in
                try codec.row(bytes, entity: entity, intoSlots: intoSlots) { newObjectID(for: entity, key: key) }
            }
        }
    }

    /// `rows` in the order the context's stable sort gives the full path's key-ordered rows —
    /// by the value of `field`, ties by key — when every value is an integer or a date, which
    /// the context compares exactly as numbers; nil otherwise (nulls, NaN dates, other types).
    private static func sortedBySortValue(_ rows: [StoreRow], field: StoreKeyField, ascending: Bool) -> [StoreRow]? {
        var keyed: [(value: Double, key: Int64, index: Int)] = []
        keyed.reserveCapacity(rows.count)
        for (index, row) in rows.enumerated() {
            let value: StoreValue
            if field.elementPath.isEmpty, row.slots != nil {
                // Read from the slot form without making the row's other stored values.
                value = row.storeValue(atSlot: field.slot)
            } else {
                guard field.slot < row.values.count else { return nil }
                value = field.value(in: row.values)
            }
            switch value {
            case .integer(let number) where number.magnitude < 1 << 53:
                keyed.append((Double(number), row.objectID.key, index))
            case .date(let date) where !date.timeIntervalSinceReferenceDate.isNaN:
                keyed.append((date.timeIntervalSinceReferenceDate, row.objectID.key, index))
            default: return nil
            }
        }
        keyed.sort { left, right in
            if left.value != right.value { return ascending ? left.value < right.value : left.value > right.value }
            return left.key < right.key
        }
        return keyed.map { rows[$0.index] }
    }

    /// Whether index entries with the sort value `value` hold equal attribute values, so
    /// their key order is the context's tie order: not so for NaN, nor for 64-bit integers
    /// beyond 2^53, which share a Float64 key.
    private static func tiesAreExact(_ value: [UInt8], type: NSAttributeType) -> Bool {
        guard let number = value.withUnsafeBytes({ PageFileKey.number(at: $0)?.value }) else { return true }
        if number.isNaN { return false }
        return type != .integer64AttributeType || number.magnitude < 9_007_199_254_740_992
    }
}

/// Makes views of the rows one fetch reads, resolving relationships in its transaction.
private struct PageFileRowViews {
    let resolve: (NSManagedObjectID) throws -> StoreRow?
    let resolveToMany: (NSRelationshipDescription, NSManagedObjectID) throws -> [NSManagedObjectID]

    /// A view of `row` for a compiled predicate to read.
    func view(of row: StoreRow) -> StoreRowView {
        StoreRowView(row: row, resolve: resolve, resolveToMany: resolveToMany)
    }
}
