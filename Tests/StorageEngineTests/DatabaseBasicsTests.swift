import Foundation
import StorageEngine
import Testing

@Suite struct DatabaseBasicsTests {
    static func temporaryPath(_ name: String) -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("engine-tests-\(getpid())")
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
