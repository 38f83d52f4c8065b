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

    /// Handles and names mixed: an entry added by name is found by its handle (and then
    /// keeps the handle's id), one added by handle by its name, and a handle never finds
    /// another name's entry, below and past the linear limit.
    @Test func handlesFindWhatTheirNamesFind() throws {
        var table = TreeTable()
        var expected: [String: TreeState] = [:]
        for index in 0..<(TreeTable.linearLimit * 3) {
            let name = "handle-table.\(index)"
            let handle = try TreeHandle.named(name)
            let state = TreeState(name: name, root: UInt64(index), count: 0)
            if index % 2 == 0 { table[name] = state } else { table[handle] = state }
            expected[name] = state
            if index % 3 == 0 {
                let replacement = TreeState(name: name, root: UInt64(index + 1_000), count: 1)
                if index % 6 == 0 { table[handle] = replacement } else { table[name] = replacement }
                expected[name] = replacement
            }
            if index % 7 == 3 {
                let gone = "handle-table.\(index - 2)"
                if index % 2 == 0 { table[gone] = nil } else { table[try TreeHandle.named(gone)] = nil }
                expected[gone] = nil
            }
            #expect(table.count == expected.count)
            for (key, value) in expected {
                #expect(table[key] === value, "\(key) by name after \(index + 1) trees")
                #expect(table[try TreeHandle.named(key)] === value, "\(key) by handle after \(index + 1) trees")
            }
            #expect(table[try TreeHandle.named("handle-table.\(index + 1)")] == nil)
            #expect(table["handle-table.\(index + 1)"] == nil)
        }
        #expect(Set(table.values.map(\.name)) == Set(expected.keys))
    }

    @Test func aHandleIsOnePerNameAndRefusesWhatTreeNamesRefuse() throws {
        let first = try TreeHandle.named("handle.same")
        #expect(try TreeHandle.named("handle.same") === first)
        #expect(try TreeHandle.named("handle.other") !== first)
        #expect(first.name == "handle.same")
        #expect(throws: StorageError.self) { try TreeHandle.named("") }
        #expect(throws: StorageError.self) { try TreeHandle.named(String(repeating: "x", count: 256)) }
        #expect(try TreeHandle.named(String(repeating: "x", count: 255)).name.utf8.count == 255)
    }
}
