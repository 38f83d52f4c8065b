// Values by tree name: the trees a transaction opened, and the shared cache of catalog
// entries. A save opens a handful (rows, indexes, the store's meta), each once, and its
// commit rewrites their entries: finding a name among a few by comparing strings costs
// less than hashing it, which a dictionary did on every lookup and insert. Past
// `linearLimit` names (a migration, a vacuum) they are found through a dictionary.

/// The trees a transaction opened, by name, in the order it opened them.
typealias TreeTable = NameTable<TreeState>

/// Values by name, in the order their names were added.
struct NameTable<Value> {
    /// Beyond this many names a name is looked up by hash rather than by comparison.
    static var linearLimit: Int { 16 }

    private var names: [String] = []
    private(set) var values: [Value] = []
    /// Position of each name, once there are more than ``linearLimit`` names.
    private var positions: [String: Int]?

    var count: Int { values.count }

    private func position(of name: String) -> Int? {
        if let positions { return positions[name] }
        return names.firstIndex(of: name)
    }

    /// The value named `name`; setting nil forgets it.
    subscript(name: String) -> Value? {
        get { position(of: name).map { values[$0] } }
        set {
            if let position = position(of: name) {
                if let newValue {
                    values[position] = newValue
                } else {
                    names.remove(at: position)
                    values.remove(at: position)
                    if positions != nil { positions = Dictionary(uniqueKeysWithValues: zip(names, names.indices)) }
                }
                return
            }
            guard let newValue else { return }
            // One allocation for a save's handful of trees instead of regrowing at 1, 2, 4.
            if names.isEmpty {
                names.reserveCapacity(8)
                values.reserveCapacity(8)
            }
            names.append(name)
            values.append(newValue)
            if positions != nil {
                positions?[name] = names.count - 1
            } else if names.count > Self.linearLimit {
                positions = Dictionary(uniqueKeysWithValues: zip(names, names.indices))
            }
        }
    }

    /// Forgets every name; keeps the storage.
    mutating func removeAll() {
        names.removeAll(keepingCapacity: true)
        values.removeAll(keepingCapacity: true)
        positions = nil
    }
}
