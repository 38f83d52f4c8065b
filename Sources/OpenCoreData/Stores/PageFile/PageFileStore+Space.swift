// Where a default store's bytes go: entries and key/value bytes per tree, and how full
// the pages are. For tuning the row and key encodings (SPEC.md §3.2, §3.4) against
// issue 5's file-size goal; `storage-bench`-style tools and tests print it.
import Foundation
import StorageEngine

/// The space a default store's trees use.
public struct PageFileSpaceReport: Sendable, CustomStringConvertible {
    /// One tree's share.
    public struct TreeSpace: Sendable {
        /// The tree's name (`rows.Person`, `index.Person.age`, ...).
        public var name: String
        /// The number of entries.
        public var entries: Int
        /// The bytes of all keys.
        public var keyBytes: Int
        /// The bytes of all values.
        public var valueBytes: Int
    }

    /// Every tree, by name.
    public var trees: [TreeSpace] = []
    /// The page size of the file.
    public var pageSize: Int = 0
    /// Pages in use (the file's pages minus free ones).
    public var usedPages: Int = 0
    /// Bytes the entries take in their pages, cell headers and slot offsets included
    /// (SPEC.md §2.2: 7 bytes of cell header and a 2-byte offset per entry).
    public var cellBytes: Int {
        trees.reduce(0) { $0 + $1.keyBytes + $1.valueBytes + 9 * $1.entries }
    }
    /// The fraction of the used pages' bytes that hold entries (1 = no slack).
    public var fill: Double {
        usedPages == 0 ? 0 : Double(cellBytes) / Double(usedPages * pageSize)
    }

    /// A table: one line per tree, then pages and fill.
    public var description: String {
        var lines = trees.map { tree in
            let perEntry = tree.entries == 0 ? 0 : Double(tree.keyBytes + tree.valueBytes) / Double(tree.entries)
            return "\(tree.name): \(tree.entries) entries, keys \(tree.keyBytes) B, values \(tree.valueBytes) B, "
                + "\(String(format: "%.1f", perEntry)) B/entry"
        }
        lines.append(
            "pages: \(usedPages) x \(pageSize) B used, cells \(cellBytes) B, fill \(String(format: "%.3f", fill))")
        return lines.joined(separator: "\n")
    }
}

extension PageFileStore {
    /// The space report of the closed store at `url`.
    ///
    /// - Throws: the engine's open error, translated (259 for a damaged file).
    public static func spaceReport(at url: URL) throws -> PageFileSpaceReport {
        var options = Database.Options()
        options.readOnly = true  // a report writes nothing (SPEC.md §2.12)
        let database: Database
        do {
            database = try openEngine(at: url, options: options, timeout: 5)
        } catch {
            throw translate(error, opening: url)
        }
        defer { try? database.close() }
        do {
            var report = PageFileSpaceReport()
            let engine = try database.verify()
            report.usedPages = engine.pageCount - engine.freePageCount
            report.pageSize = database.pageSize
            try database.read { transaction in
                for name in try transaction.treeNames().sorted() {
                    guard let tree = try transaction.tree(named: name) else { continue }
                    var space = PageFileSpaceReport.TreeSpace(name: name, entries: 0, keyBytes: 0, valueBytes: 0)
                    try tree.scan { key, value in
                        space.entries += 1
                        space.keyBytes += key.count
                        space.valueBytes += value.count
                        return true
                    }
                    report.trees.append(space)
                }
            }
            return report
        } catch {
            throw translate(error, opening: url)
        }
    }
}

extension PageFileStore {
    /// The keys of tree `name` of the open store, in order (for tests and tools).
    ///
    /// - Throws: the engine's read error, translated.
    public func treeKeys(_ name: String) throws -> [[UInt8]] {
        do {
            return try openDatabase().read { try $0.tree(named: name)?.entries().map(\.key) ?? [] }
        } catch {
            throw translate(error)
        }
    }
}
