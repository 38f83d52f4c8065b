// The trees a transaction opened, by name. A save opens a handful (rows, indexes, the
// store's meta), each once: finding a name among a few by comparing strings costs less
// than hashing it, which a dictionary did twice per opening (the miss and the insert).
// Past `linearLimit` trees (a migration, a vacuum) names are found through a dictionary.

/// The trees a transaction opened, by name, in the order it opened them.
struct TreeTable {
    /// Beyond this many trees a name is looked up by hash rather than by comparison.
    static let linearLimit = 16

    private var names: [String] = []
    private(set) var values: [TreeState] = []
    /// Position of each name, once there are more than ``linearLimit`` trees.
    private var positions: [String: Int]?

    var count: Int { values.count }

    private func position(of name: String) -> Int? {
        if let positions { return positions[name] }
        return names.firstIndex(of: name)
    }

    /// The tree named `name`; setting nil forgets it.
    subscript(name: String) -> TreeState? {
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
}
