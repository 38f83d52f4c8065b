// Integrity of a page-file store: the engine's own check (pages, order, counts), then
// every row decodes, every index entry has its row and every row its entries (SPEC.md
// §3.1 T3), every to-one with an inverse names an existing row, and join trees agree
// (T7). Works without the model: the index catalog names each index's slots.
import Foundation
import StorageEngine

/// What ``PageFileStore/verify()`` found.
public struct PageFileVerificationReport: Sendable {
    /// The engine's report (pages, trees, entries), nil when the engine check failed.
    public var engine: VerificationReport?
    /// Rows in every entity tree.
    public var rowCount = 0
    /// Entries in every index tree.
    public var indexEntryCount = 0
    /// Each problem found, one sentence each; empty for a sound store.
    public var problems: [String] = []
    /// Whether no problem was found.
    public var isClean: Bool { problems.isEmpty && engine != nil }
}

extension PageFileStore {
    /// Checks the store's file: the engine's `verify()`, every row, and that indexes agree with rows.
    ///
    /// - Returns: A report; damage is listed in `problems`, never trusted.
    /// - Throws: `NSPersistentStoreOperationError` when the store was removed.
    /// - Complexity: O(rows + index entries), with one set of index keys per index in memory.
    public func verify() throws -> PageFileVerificationReport {
        PageFileStore.verify(try openDatabase())
    }

    /// Checks the store file at `url` (see ``verify()``) without a model or coordinator.
    ///
    /// - Throws: the open error of a file that is not a store or cannot be opened.
    public static func verify(at url: URL) throws -> PageFileVerificationReport {
        try withExistingDatabase(at: url) { verify($0) }
    }

    static func verify(_ database: Database) -> PageFileVerificationReport {
        var report = PageFileVerificationReport()
        do {
            report.engine = try database.verify()
        } catch {
            report.problems.append("engine: \(error)")
        }
        let codec = PageFileRowCodec(
            entityNamed: { _ in nil }, makeObjectID: { _, _ in preconditionFailure("references are skipped") },
            skipsReferences: true)
        do {
            try database.read { transaction in
                guard let meta = try transaction.tree(named: metaTreeName) else {
                    report.problems.append("no \(metaTreeName) tree: not a store")
                    return
                }
                let catalog = try meta.value(forKey: catalogKey).flatMap { String(validating: $0, as: UTF8.self) }
                let names = try transaction.treeNames()
                let schema = storedSchema(meta)
                var blobReferences: [[UInt8]: Int] = [:]
                for line in (catalog ?? "").split(separator: "\n") {
                    let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
                    guard fields.count == 3 else { continue }
                    if ["index", "unique", "reference"].contains(fields[1]),
                        fields[2].split(separator: ",").contains(where: { StoreKeyField(recordText: $0) == nil })
                    {
                        report.problems.append("index catalog: the line of \(fields[0]) names a slot that is not one")
                    }
                    if fields[1] == "to-one",
                        fields[2].split(separator: "|", omittingEmptySubsequences: false).count != 2
                            || (Int(fields[2].prefix { $0 != "|" }) ?? -1) < 0
                    {
                        report.problems.append("index catalog: a to-one line of \(fields[0]) is damaged")
                    }
                }
                let toOnes = PageFileCatalog.toOnes(inRecord: catalog ?? "")
                for name in names where name.hasPrefix("rows.") {
                    let indexes = PageFileCatalog.indexes(
                        inRecord: catalog ?? "", entityName: String(name.dropFirst(5)))
                    verifyEntity(
                        rowTree: name, indexes: indexes, toOnes: toOnes[name] ?? [], transaction, codec: codec,
                        schema: schema, blobReferences: &blobReferences, into: &report)
                }
                verifyBlobs(transaction, references: blobReferences, into: &report)
                verifyJoins(catalog ?? "", transaction, into: &report)
            }
        } catch {
            report.problems.append("reading the store: \(error)")
        }
        return report
    }

    private static func verifyEntity(
        rowTree name: String, indexes: [PageFileIndex], toOnes: [(slot: Int, destinations: [String])],
        _ transaction: ReadTransaction, codec: PageFileRowCodec, schema: [String: [String]]?,
        blobReferences: inout [[UInt8]: Int], into report: inout PageFileVerificationReport
    ) {
        var expected: [Set<[UInt8]>] = Array(repeating: [], count: indexes.count)
        var uniqueOwners: [[[UInt8]: [UInt8]]] = Array(repeating: [:], count: indexes.count)
        // The keys each to-one names, checked against its destination trees after the scan.
        var named: [Set<Int64>] = Array(repeating: [], count: toOnes.count)
        do {
            guard let rows = try transaction.tree(named: name) else { return }
            try rows.scan { key, value in
                report.rowCount += 1
                guard let primary = PageFileKey.rowKey(key) else {
                    report.problems.append("\(name): a row key of \(key.count) bytes is not a primary key")
                    return true
                }
                do {
                    let values = try codec.decode(value, entity: nil).values
                    noteBlobReferences(
                        values, primaryKey: primary, entityName: String(name.dropFirst(5)), schema: schema,
                        into: &blobReferences, report: &report)
                    for (position, index) in indexes.enumerated() {
                        guard let entry = index.key(for: values, primaryKey: primary) else { continue }
                        expected[position].insert(entry)
                        if index.isUnique { uniqueOwners[position][entry] = PageFileKey.primary(primary) }
                    }
                    for (position, toOne) in toOnes.enumerated() where toOne.slot < values.count {
                        if case .integer(let destination) = values[toOne.slot] { named[position].insert(destination) }
                    }
                } catch {
                    report.problems.append(
                        "\(name): row \(primary) does not decode: \((error as NSError).localizedDescription)")
                }
                return true
            }
        } catch {
            report.problems.append("\(name): \(error)")
            return
        }
        verifyToOnes(of: name, toOnes, named: named, transaction, into: &report)
        for (position, index) in indexes.enumerated() {
            var missing = expected[position]
            do {
                guard let tree = try transaction.tree(named: index.treeName) else {
                    if !missing.isEmpty { report.problems.append("\(index.treeName): the index tree is missing") }
                    continue
                }
                var orphans = 0
                var wrongOwners = 0
                try tree.scan { key, value in
                    report.indexEntryCount += 1
                    let entry = Array(key)
                    if missing.remove(entry) == nil {
                        orphans += 1
                    } else if index.isUnique, uniqueOwners[position][entry] != Array(value) {
                        wrongOwners += 1
                    }
                    return true
                }
                if orphans > 0 { report.problems.append("\(index.treeName): \(orphans) entries without their row") }
                if wrongOwners > 0 {
                    report.problems.append("\(index.treeName): \(wrongOwners) entries name the wrong row")
                }
                if !missing.isEmpty {
                    report.problems.append("\(index.treeName): \(missing.count) rows without their entry")
                }
            } catch {
                report.problems.append("\(index.treeName): damaged, not trusted: \(error)")
            }
        }
    }
}

extension PageFileStore {
    /// Checks that every key the to-ones of row tree `name` name (`named`, by position in
    /// `toOnes`) is a row of their destination trees.
    private static func verifyToOnes(
        of name: String, _ toOnes: [(slot: Int, destinations: [String])], named: [Set<Int64>],
        _ transaction: ReadTransaction, into report: inout PageFileVerificationReport
    ) {
        for (position, toOne) in toOnes.enumerated() where !named[position].isEmpty {
            do {
                let trees = try toOne.destinations.compactMap { try transaction.tree(named: $0) }
                var missing = 0
                for key in named[position] {
                    let primary = PageFileKey.primary(key)
                    if try !trees.contains(where: { try $0.contains(primary) }) { missing += 1 }
                }
                if missing > 0 {
                    report.problems.append("\(name): its to-one in slot \(toOne.slot) names \(missing) missing rows")
                }
            } catch {
                report.problems.append("\(name): the destinations of slot \(toOne.slot) are damaged: \(error)")
            }
        }
    }

    /// Checks every join tree of the catalog (SPEC.md §3.2 R1): each entry parses, its source
    /// row exists, its destination row exists when the relationship has an inverse, the
    /// entries of a many-to-many pair mirror each other, and order keys are unique per source.
    static func verifyJoins(
        _ catalog: String, _ transaction: ReadTransaction, into report: inout PageFileVerificationReport
    ) {
        var entriesByTree: [String: Set<[Int64]>] = [:]
        var mirrors: [(tree: String, mirror: String)] = []
        var references: [(tree: String, slot: Int, destinations: [Substring])] = []
        for line in catalog.split(separator: "\n") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count == 3, fields[1] == "join" || fields[1] == "join-ordered" else { continue }
            let name = String(fields[0])
            let parts = fields[2].split(separator: "|", omittingEmptySubsequences: false)
            guard parts.count == 3 else {
                report.problems.append("\(name): its catalog line is damaged")
                continue
            }
            let destinations = parts[1].split(separator: ",")
            if parts[2].hasPrefix("ref:"), let slot = Int(parts[2].dropFirst(4)), slot >= 0 {
                references.append((name, slot, destinations))
            } else if !parts[2].isEmpty {
                mirrors.append((name, String(parts[2])))
            }
            entriesByTree[name] = verifyJoinTree(
                name, ordered: fields[1] == "join-ordered", sources: parts[0].split(separator: ","),
                destinations: parts[2].isEmpty ? nil : destinations, transaction, into: &report)
        }
        for (tree, slot, destinations) in references {
            guard let entries = entriesByTree[tree] else { continue }
            do {
                let pointing = try referencePairs(slot: slot, rowTrees: destinations, transaction)
                let missing = pointing.subtracting(entries).count
                let extra = entries.subtracting(pointing).count
                if missing > 0 { report.problems.append("\(tree): \(missing) references without their entry") }
                if extra > 0 {
                    report.problems.append("\(tree): \(extra) entries whose destination names another source")
                }
            } catch {
                report.problems.append("\(tree): its destinations do not decode: \(error)")
            }
        }
        for (tree, mirror) in mirrors {
            guard let entries = entriesByTree[tree] else { continue }
            let reflected = Set((entriesByTree[mirror] ?? []).map { [$0[1], $0[0]] })
            let unmatched = entries.subtracting(reflected).count
            if unmatched > 0 {
                report.problems.append("\(tree): \(unmatched) entries without their mirror in \(mirror)")
            }
        }
    }
}

extension PageFileStore {
    /// Checks one join tree: each entry parses, its source row exists in `sources`, its
    /// destination row in `destinations` (nil: not checked, no inverse), and order keys are
    /// unique per source. Returns its (source, destination) pairs; nil when it is missing
    /// or damaged.
    private static func verifyJoinTree(
        _ name: String, ordered: Bool, sources: [Substring], destinations: [Substring]?, _ transaction: ReadTransaction,
        into report: inout PageFileVerificationReport
    ) -> Set<[Int64]>? {
        func exists(_ key: Int64, in trees: [Substring]) throws -> Bool {
            let primary = PageFileKey.primary(key)
            for name in trees {
                if let tree = try transaction.tree(named: String(name)), try tree.contains(primary) { return true }
            }
            return false
        }
        do {
            guard let tree = try transaction.tree(named: name) else { return nil }
            var damaged = 0
            var orphans = 0
            var dangling = 0
            var duplicateOrders = 0
            var lastOrder: (source: Int64, order: UInt64)?
            var seen: Set<[Int64]> = []
            try tree.scan { key, _ in
                report.indexEntryCount += 1
                guard let entry = PageFileToMany.parseJoinKey(key, ordered: ordered) else {
                    damaged += 1
                    return true
                }
                if let order = entry.order {
                    if let last = lastOrder, last.source == entry.source, last.order == order {
                        duplicateOrders += 1
                    }
                    lastOrder = (entry.source, order)
                }
                seen.insert([entry.source, entry.destination])
                if try !exists(entry.source, in: sources) { orphans += 1 }
                if let destinations, try !exists(entry.destination, in: destinations) { dangling += 1 }
                return true
            }
            if damaged > 0 { report.problems.append("\(name): \(damaged) entries are damaged") }
            if orphans > 0 { report.problems.append("\(name): \(orphans) entries without their source row") }
            if dangling > 0 { report.problems.append("\(name): \(dangling) entries name a missing destination") }
            if duplicateOrders > 0 {
                report.problems.append("\(name): \(duplicateOrders) entries repeat an order key of their source")
            }
            return seen
        } catch {
            report.problems.append("\(name): damaged, not trusted: \(error)")
            return nil
        }
    }
}

extension PageFileStore {
    /// The (referenced key, row key) pairs of the rows of `rowTrees` whose `slot` holds a
    /// reference, read without the model.
    fileprivate static func referencePairs(slot: Int, rowTrees: [Substring], _ transaction: ReadTransaction) throws
        -> Set<[Int64]>
    {
        let codec = PageFileRowCodec(
            entityNamed: { _ in nil }, makeObjectID: { _, _ in preconditionFailure("references are skipped") },
            skipsReferences: true)
        var pairs: Set<[Int64]> = []
        for name in rowTrees {
            guard let tree = try transaction.tree(named: String(name)) else { continue }
            try tree.scan { key, value in
                guard let primary = PageFileKey.rowKey(key) else { return true }
                let values = try codec.decode(value, entity: nil).values
                if slot < values.count, case .integer(let source) = values[slot] { pairs.insert([source, primary]) }
                return true
            }
        }
        return pairs
    }
}
