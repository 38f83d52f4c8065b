import Testing

@testable import StorageEngine

/// A transaction's open trees by name (TreeTable.swift): the same answers below and past
/// the point where names are found by hash instead of by comparison.
@Suite struct TreeTableTests {
    @Test func findsReplacesAndForgetsTreesAtEverySize() {
        var table = TreeTable()
        var expected: [String: TreeState] = [:]
        for index in 0..<(TreeTable.linearLimit * 3) {
            let name = "tree.\(index)"
            let state = TreeState(name: name, root: UInt64(index), count: 0)
            table[name] = state
            expected[name] = state
            if index % 5 == 0 {
                let replacement = TreeState(name: name, root: UInt64(index + 1_000), count: 1)
                table[name] = replacement
                expected[name] = replacement
            }
            if index % 7 == 3 {
                let gone = "tree.\(index - 2)"
                table[gone] = nil
                expected[gone] = nil
            }
            #expect(table.count == expected.count)
            for (key, value) in expected { #expect(table[key] === value, "\(key) after \(index + 1) trees") }
            #expect(table["tree.\(index + 1)"] == nil)
        }
        #expect(Set(table.values.map(\.name)) == Set(expected.keys))
    }
}
