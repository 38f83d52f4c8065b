// A tree name resolved once, for callers that open the same trees in transaction after
// transaction (an object store opens a save's row and index trees in every save). A
// transaction, and the database's cache of catalog entries, find a tree opened by handle
// by comparing one integer per tree they hold, where a name is compared as a string
// against each of them (NameTable.swift). The catalog is unchanged: it is keyed by name.

/// A tree's name, resolved once for opening the tree in many transactions.
///
/// There is one handle per name in a process, so a handle stands for its name in every
/// database: ``ReadTransaction/tree(_:)`` and ``WriteTransaction/openTree(_:)`` find what
/// ``ReadTransaction/tree(named:)`` and ``WriteTransaction/openTree(named:)`` find, and
/// the two can be mixed freely. Make handles once (for instance when a schema is loaded),
/// not per transaction: ``named(_:)`` looks the name up in a process-wide table, which
/// keeps every handle made for the life of the process.
///
/// ```swift
/// let rows = try TreeHandle.named("rows.Person")
/// try database.write { transaction in
///     try transaction.openTree(rows).setValue([1], forKey: [0, 0, 0, 7])
/// }
/// ```
public final class TreeHandle: Sendable {
    /// The tree's name.
    public let name: String
    /// Unique to the name in this process (never 0: NameTable's mark for "by name alone").
    let id: Int

    private init(name: String, id: Int) {
        self.name = name
        self.id = id
    }

    /// The handle of the tree named `name` (the same object for the same name).
    /// - Throws: ``StorageError`` `invalidTreeName` for an empty name or one over 255 UTF-8 bytes.
    public static func named(_ name: String) throws -> TreeHandle {
        guard !name.utf8.isEmpty, name.utf8.count <= 255 else {
            throw StorageError(.invalidTreeName, "tree name \"\(name)\"")
        }
        return registry.handle(named: name)
    }

    private static let registry = Registry()

    /// The process's handles by name.
    private final class Registry: @unchecked Sendable {
        private let lock = Lock()
        // Used under `lock` only.
        private var handles: [String: TreeHandle] = [:]

        func handle(named name: String) -> TreeHandle {
            lock.withLock {
                if let known = handles[name] { return known }
                let handle = TreeHandle(name: name, id: handles.count + 1)
                handles[name] = handle
                return handle
            }
        }
    }
}
