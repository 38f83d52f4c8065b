// The public transaction types: a read transaction (also a long-lived snapshot) and the
// write transaction, which can do everything a read can plus change trees.

/// A consistent, read-only view of the database as of one committed transaction.
///
/// Get one inside ``Database/read(_:)`` or keep one with ``Database/snapshot()``. It never
/// blocks the writer and never sees later commits. Use it from one thread at a time.
public class ReadTransaction {
    let database: Database
    let core: TransactionCore
    private let readerID: Int?

    init(database: Database, core: TransactionCore, readerID: Int?) {
        self.database = database
        self.core = core
        self.readerID = readerID
    }

    deinit { close() }

    /// The id of the committed transaction this view shows.
    public var transactionID: UInt64 { core.snapshot.transaction }

    /// Whether the transaction can still be used.
    public var isOpen: Bool { core.isOpen }

    /// The tree named `name`, or nil when there is none.
    /// - Throws: ``StorageError`` (`closed`, `invalidTreeName`, `corrupt`).
    public func tree(named name: String) throws -> Tree? {
        guard let state = try core.tree(named: name) else { return nil }
        return Tree(core: core, state: state)
    }

    /// The tree of `handle`, or nil when there is none: ``tree(named:)`` for a name
    /// resolved once (``TreeHandle``).
    /// - Throws: ``StorageError`` (`closed`, `corrupt`).
    public func tree(_ handle: TreeHandle) throws -> Tree? {
        guard let state = try core.tree(handle) else { return nil }
        return Tree(core: core, state: state)
    }

    /// The names of all trees, in byte order.
    /// - Throws: ``StorageError``: `closed` when the transaction has ended, `corrupt`.
    /// - Complexity: O(number of trees).
    public func treeNames() throws -> [String] {
        try core.checkOpen()
        var names: [String] = []
        let cursor = Cursor(core: core, state: core.catalog)
        var more = try cursor.first()
        while more {
            let key = try cursor.key
            let name = String(decoding: key, as: UTF8.self)
            if let state = core.trees[name], state.deleted {
            } else {
                names.append(name)
            }
            more = try cursor.next()
        }
        for state in core.trees.values where !state.deleted && !names.contains(state.name) { names.append(state.name) }
        return names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
    }

    /// Ends the transaction and releases its snapshot. Later use throws `closed`.
    public func close() {
        guard core.isOpen else { return }
        core.isOpen = false
        if let readerID { database.endRead(readerID) }
    }
}

/// The single write transaction. Everything it changes commits atomically when the
/// closure given to ``Database/write(_:)`` returns.
public final class WriteTransaction: ReadTransaction {
    init(database: Database, core: TransactionCore) {
        super.init(database: database, core: core, readerID: nil)
    }

    /// The id this transaction will commit as.
    public override var transactionID: UInt64 { core.writer?.transaction ?? core.snapshot.transaction }

    /// The tree named `name`, created empty if it does not exist.
    /// - Throws: ``StorageError`` (`invalidTreeName` for an empty or over-long name).
    public func openTree(named name: String) throws -> Tree {
        if let tree = try tree(named: name) { return tree }
        let state = TreeState(name: name, root: 0, count: 0)
        state.changed = true
        core.trees[name] = state
        return Tree(core: core, state: state)
    }

    /// The tree of `handle`, created empty if it does not exist: ``openTree(named:)`` for a
    /// name resolved once (``TreeHandle``).
    /// - Throws: ``StorageError`` (`closed`, `corrupt`).
    public func openTree(_ handle: TreeHandle) throws -> Tree {
        if let state = try core.tree(handle) { return Tree(core: core, state: state) }
        let state = TreeState(name: handle.name, root: 0, count: 0, handle: handle)
        state.changed = true
        core.trees[handle] = state
        return Tree(core: core, state: state)
    }

    /// Deletes the tree named `name` and all its entries; returns whether it existed.
    /// - Throws: ``StorageError``: `readOnly` in a read transaction, `closed`,
    ///   `invalidTreeName`, `corrupt`.
    /// - Complexity: O(pages of the tree).
    @discardableResult
    public func deleteTree(named name: String) throws -> Bool {
        _ = try core.requireWriter()
        guard let state = try core.tree(named: name) else { return false }
        try core.freeAllPages(of: state)
        state.deleted = true
        state.changed = true
        state.version &+= 1
        // A later openTree of the same name starts a fresh tree; the catalog entry of the
        // deleted one is removed at commit unless a new tree replaces it.
        core.trees[name] = state
        return true
    }
}
