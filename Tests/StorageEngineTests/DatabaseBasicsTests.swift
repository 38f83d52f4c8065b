import Foundation
import StorageEngine
import TestSupport
import Testing

@Suite struct DatabaseBasicsTests {
    static func temporaryPath(_ name: String) -> String {
        let directory = TestScratch.root.appendingPathComponent("engine-tests")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("\(name)-\(UInt64.random(in: 0...UInt64.max))").path
        return path
    }

    static func key(_ value: Int) -> [UInt8] { withUnsafeBytes(of: UInt64(value).bigEndian) { Array($0) } }

    @Test func putGetReopenOnRealFiles() throws {
        let path = Self.temporaryPath("basics")
        var database = try Database.open(at: path)
        try database.write { transaction in
            let tree = try transaction.openTree(named: "people")
            for index in 0..<5_000 {
                try tree.setValue(Array(repeating: UInt8(index & 0xFF), count: 100), forKey: Self.key(index))
            }
        }
        try database.write { transaction in
            let tree = try #require(try transaction.tree(named: "people"))
            for index in stride(from: 0, to: 5_000, by: 2) { #expect(try tree.removeValue(forKey: Self.key(index))) }
        }
        try database.read { transaction in
            let tree = try #require(try transaction.tree(named: "people"))
            #expect(try tree.count == 2_500)
            #expect(try tree.value(forKey: Self.key(1)) == Array(repeating: 1, count: 100))
            #expect(try tree.value(forKey: Self.key(2)) == nil)
        }
        _ = try database.verify()
        try database.close()
        database = try Database.open(at: path)
        try database.read { transaction in
            let tree = try #require(try transaction.tree(named: "people"))
            #expect(try tree.count == 2_500)
            #expect(try tree.value(forKey: Self.key(4_999)) == Array(repeating: UInt8(4_999 & 0xFF), count: 100))
            var seen = 0
            try tree.scan { _, _ in
                seen += 1
                return true
            }
            #expect(seen == 2_500)
        }
        _ = try database.verify()
        try database.close()
    }
}

/// SPEC.md §5 limits are enforced with clear errors.
@Suite struct LimitsTests {
    @Test func keysOutsideTheLimitsAreRefused() throws {
        let database = try Database.open(
            at: "limits.db", options: .init(pageSize: 512, durability: .off, fileSystem: SimulatedFileSystem()))
        try database.write { transaction in
            let tree = try transaction.openTree(named: "t")
            let longest = [UInt8](repeating: 1, count: tree.maximumKeyLength)
            try tree.setValue([UInt8](repeating: 2, count: 3_000), forKey: longest)
            #expect(try tree.value(forKey: longest) == [UInt8](repeating: 2, count: 3_000))
            let tooLong = #expect(throws: StorageError.self) { try tree.setValue([], forKey: longest + [1]) }
            #expect(tooLong?.code == .keyTooLarge)
            let empty = #expect(throws: StorageError.self) { try tree.setValue([], forKey: []) }
            #expect(empty?.code == .keyTooLarge)
            let name = #expect(throws: StorageError.self) { _ = try transaction.openTree(named: "") }
            #expect(name?.code == .invalidTreeName)
        }
        let readOnly = #expect(throws: StorageError.self) {
            try database.read { try $0.tree(named: "t")?.setValue([1], forKey: [1]) }
        }
        #expect(readOnly?.code == .readOnly)
        _ = try database.verify()
        try database.close()
        #expect(throws: StorageError.self) { try database.read { _ in 0 } }
    }

    @Test func unsupportedPageSizeIsRefused() {
        let error = #expect(throws: StorageError.self) {
            _ = try Database.open(at: "odd.db", options: .init(pageSize: 1_000, fileSystem: SimulatedFileSystem()))
        }
        #expect(error?.code == .invalidArgument)
    }
}

/// Starting a write inside a write on the same thread fails at once instead of waiting.
@Suite struct ReentrancyTests {
    @Test func nestedWriteThrowsImmediately() throws {
        var options = Database.Options(pageSize: 512, durability: .off, fileSystem: SimulatedFileSystem())
        options.busyTimeout = 30
        let database = try Database.open(at: "nested.db", options: options)
        let error = #expect(throws: StorageError.self) {
            try database.write { _ in try database.write { _ in } }
        }
        #expect(error?.code == .invalidArgument)
        try database.write { try $0.openTree(named: "t").setValue([1], forKey: [1]) }
        try database.close()
    }
}

/// The example of the DocC overview (StorageEngine.docc), run as written.
@Suite struct DocumentationExampleTests {
    @Test func overviewExampleRuns() throws {
        let path = DatabaseBasicsTests.temporaryPath("docc")
        let database = try Database.open(at: path)
        try database.write { transaction in
            let people = try transaction.openTree(named: "people")
            let byAge = try transaction.openTree(named: "people.age")
            let id: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 42]
            try people.setValue(Array("Ada Lovelace".utf8), forKey: id)
            try byAge.setValue([], forKey: [36] + id)
        }
        var found: [[UInt8]] = []
        try database.read { transaction in
            guard let people = try transaction.tree(named: "people") else { return }
            let name = try people.value(forKey: [0, 0, 0, 0, 0, 0, 0, 42])
            #expect(name == Array("Ada Lovelace".utf8))
            #expect(try people.count == 1)
            try transaction.tree(named: "people.age")?.scan(from: [30], to: [40]) { key, _ in
                found.append(Array(key))
                return true
            }
        }
        #expect(found == [[36, 0, 0, 0, 0, 0, 0, 0, 42]])
        let generation = try database.snapshot()
        #expect(try generation.tree(named: "people")?.count == 1)
        generation.close()
        try database.close()
    }
}
