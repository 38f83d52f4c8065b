// Values by tree name: the trees a transaction opened, and the shared cache of catalog
// entries. A save opens a handful (rows, indexes, the store's meta), each once, and its
// commit rewrites their entries: finding a name among a few by comparing strings costs
// less than hashing it, which a dictionary did on every lookup and insert. Past
// `linearLimit` names (a migration, a vacuum) they are found through a dictionary.
//
// A name added or found through its ``TreeHandle`` keeps the handle's id, and a lookup by
// handle compares ids: there is one handle per name (TreeHandle.swift), so an entry with
// another id has another name, and only the entries added by name alone (id 0) need a
// string comparison. A save that opens every tree by handle compares no strings.

/// The trees a transaction opened, by name, in the order it opened them.
typealias TreeTable = NameTable<TreeState>

/// Values by name, in the order their names were added.
struct NameTable<Value> {
    /// Beyond this many names a name is looked up by hash rather than by comparison.
    static var linearLimit: Int { 16 }

    /// Each name, with the id of the handle it was added or found by (0: by its name alone);
    /// one array with the names, so a transaction's table allocates once for its keys.
    private var keys: [(name: String, id: Int)] = []
    private(set) var values: [Value] = []
    /// Position of each name, once there are more than ``linearLimit`` names.
    private var positions: [String: Int]?
    /// How many entries have id 0.
    private var unidentified = 0

    var count: Int { values.count }

    /// How many values the table holds before its storage grows.
    var capacity: Int { values.capacity }

    private func position(of name: String) -> Int? {
        if let positions { return positions[name] }
        return keys.firstIndex { $0.name == name }
    }

    /// The position of `handle`'s name; an entry found by its name takes the handle's id.
    private mutating func position(of handle: TreeHandle) -> Int? {
        if let positions { return positions[handle.name] }
        if let position = keys.firstIndex(where: { $0.id == handle.id }) { return position }
        guard unidentified > 0 else { return nil }
        for position in keys.indices where keys[position].id == 0 && keys[position].name == handle.name {
            keys[position].id = handle.id
            unidentified -= 1
            return position
        }
        return nil
    }

    /// The value named `name`; setting nil forgets it.
    subscript(name: String) -> Value? {
        get { position(of: name).map { values[$0] } }
        set { set(newValue, at: position(of: name), name: name, id: 0) }
    }

    /// The value named by `handle`; setting nil forgets it.
    subscript(handle: TreeHandle) -> Value? {
        mutating get { position(of: handle).map { values[$0] } }
        set { set(newValue, at: position(of: handle), name: handle.name, id: handle.id) }
    }

    private mutating func set(_ newValue: Value?, at position: Int?, name: String, id: Int) {
        if let position {
            if let newValue {
                values[position] = newValue
            } else {
                if keys[position].id == 0 { unidentified -= 1 }
                keys.remove(at: position)
                values.remove(at: position)
                if positions != nil { indexPositions() }
            }
            return
        }
        guard let newValue else { return }
        // One allocation for a save's handful of trees instead of regrowing at 1, 2, 4.
        if keys.isEmpty {
            keys.reserveCapacity(8)
            values.reserveCapacity(8)
        }
        keys.append((name, id))
        if id == 0 { unidentified += 1 }
        values.append(newValue)
        if positions != nil {
            positions?[name] = keys.count - 1
        } else if keys.count > Self.linearLimit {
            indexPositions()
        }
    }

    private mutating func indexPositions() {
        positions = Dictionary(uniqueKeysWithValues: zip(keys.lazy.map(\.name), keys.indices))
    }

    /// Forgets every name; keeps the storage.
    mutating func removeAll() {
        keys.removeAll(keepingCapacity: true)
        values.removeAll(keepingCapacity: true)
        positions = nil
        unidentified = 0
    }
}
