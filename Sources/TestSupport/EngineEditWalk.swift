// Random walks of a TreeEditor (the engine's write cursor) mirrored on an oracle: seeks
// to ascending keys (present and absent) or steps with next, replacing values with ones
// of the same, a shorter, a longer or an overflowing length and removing entries, with
// now and then a put or removal beside the walk that the editor must notice. Shared by
// the differential run, the crash workload and the editor's tests.
import StorageEngine

extension EngineHarness {
    /// A new value for an entry holding `old`: the same length, shorter, longer (a few
    /// bytes or many), or now and then one for overflow pages at `pageSize`.
    public static func editedValue(_ old: [UInt8], _ random: inout SeededRandom, pageSize: Int) -> [UInt8] {
        let stamp = UInt8(truncatingIfNeeded: random.next())
        let length: Int
        switch random.int(in: 0...9) {
        case 0...3: length = old.count
        case 4...5: length = old.isEmpty ? 0 : random.int(in: 0...(old.count - 1))
        case 6...7: length = old.count + random.int(in: 1...3)
        case 8: length = old.count + random.int(in: 4...(pageSize / 6))
        default: return randomValue(&random, pageSize: pageSize)
        }
        return (0..<length).map { stamp &+ UInt8(truncatingIfNeeded: $0) }
    }

    /// One random walk of an editor over `tree` (named `name`), applied to `entries` as
    /// it goes; `beside` is another tree a change beside the walk may touch (with
    /// `besideEntries` its oracle). Finishes the editor unless `finishes` is false.
    public static func randomEditWalk(
        _ tree: Tree, entries: inout [[UInt8]: [UInt8]], beside: Tree? = nil,
        besideEntries: inout [[UInt8]: [UInt8]], random: inout SeededRandom, pageSize: Int, finishes: Bool = true
    ) throws {
        let editor = try tree.makeEditor()
        let removeShare = random.pick([0.0, 0.2, 0.6, 1.0])
        let replaceShare = random.pick([0.0, 0.5, 1.0])
        func edit(_ key: [UInt8]) throws {
            guard let old = entries[key] else {
                throw HarnessFailure("the editor is on \(key), absent from the oracle")
            }
            guard try editor.currentKey == key else { throw HarnessFailure("the editor's key is not \(key)") }
            let value = try editor.withValue { Array($0) }
            guard value == old else { throw HarnessFailure("the editor read \(value.count) bytes at \(key)") }
            if random.chance(removeShare) {
                try editor.removeEntry()
                entries[key] = nil
            } else if random.chance(replaceShare) {
                let new = editedValue(old, &random, pageSize: pageSize)
                try editor.replaceValue(new)
                entries[key] = new
                if random.chance(0.1) {
                    guard try editor.withValue({ Array($0) }) == new else {
                        throw HarnessFailure("the editor did not read back the value it put at \(key)")
                    }
                }
            }
        }
        func besideChange() throws {
            // A change the editor must notice: on its own tree, or on another one.
            let key = randomKey(&random)
            func change(_ target: Tree, _ oracle: inout [[UInt8]: [UInt8]]) throws {
                if random.chance(0.6) {
                    let value = randomValue(&random, pageSize: pageSize)
                    try target.setValue(value, forKey: key)
                    oracle[key] = value
                } else {
                    try target.removeValue(forKey: key)
                    oracle[key] = nil
                }
            }
            if let beside, random.chance(0.5) {
                try change(beside, &besideEntries)
            } else {
                try change(tree, &entries)
            }
        }
        if random.chance(0.5) {
            // Seeks to ascending keys, most of them present.
            // Sorted before drawing, so a seed gives the same walk in every process.
            let present = entries.keys.sorted { $0.lexicographicallyPrecedes($1) }.filter { _ in random.chance(0.4) }
            let absent = (0..<random.int(in: 0...6)).map { _ in randomKey(&random) }
            let keys = Set(present + absent).sorted { $0.lexicographicallyPrecedes($1) }
            // Some walks remove with removeEntry(forKey:), the seek and removal in one step.
            let removesByKey = removeShare > 0 && random.chance(0.3)
            for key in keys {
                if removesByKey, random.chance(removeShare) {
                    let removed = try editor.removeEntry(forKey: key)
                    guard removed == (entries[key] != nil) else {
                        throw HarnessFailure("removing \(key) removed \(removed), the oracle \(entries[key] != nil)")
                    }
                    entries[key] = nil
                    if random.chance(0.2) {
                        // Next moves to the first entry after the key, removed or absent.
                        let moved = try editor.next()
                        let expected = entries.keys.filter { key.lexicographicallyPrecedes($0) }
                            .min { $0.lexicographicallyPrecedes($1) }
                        guard moved == (expected != nil), try !moved || editor.currentKey == expected else {
                            throw HarnessFailure(
                                "next after removing \(key) moved \(moved), expected \(expected ?? [])")
                        }
                    }
                    if random.chance(0.03) { try besideChange() }
                    continue
                }
                let found = try editor.seek(key)
                guard found == (entries[key] != nil) else {
                    throw HarnessFailure("seek \(key) found \(found), the oracle \(entries[key] != nil)")
                }
                if found { try edit(key) }
                if random.chance(0.03) { try besideChange() }
            }
        } else {
            // Steps with next from a start key (or the first entry).
            var previous: [UInt8]?
            if random.chance(0.7) {
                let start = randomKey(&random)
                if try editor.seek(start) {
                    try edit(start)
                }
                previous = start
            }
            let steps = random.int(in: 1...(entries.count + 2))
            for _ in 0..<steps {
                let moved = try editor.next()
                let expected = entries.keys.filter { key in
                    previous.map { $0.lexicographicallyPrecedes(key) } ?? true
                }.min { $0.lexicographicallyPrecedes($1) }
                guard moved == (expected != nil) else {
                    throw HarnessFailure("next after \(previous ?? []) moved \(moved), expected \(expected ?? [])")
                }
                guard let expected else { break }
                try edit(expected)
                previous = expected
                if random.chance(0.03) { try besideChange() }
            }
        }
        if finishes { try editor.finish() }
    }
}
