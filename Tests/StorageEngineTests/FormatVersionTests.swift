import TestSupport
import Testing

@testable import StorageEngine

@Suite struct FormatVersionTests {
    @Test func formatVersionIsPositive() {
        #expect(storageEngineFormatVersion >= 1)
    }
}

/// Log format versions (SPEC.md §2.3, §6): format 1 logs an older build left are still
/// recovered and appended to in format 1; an unknown version is refused.
@Suite struct LogFormatVersionTests {
    private static func options(_ files: SimulatedFileSystem) -> Database.Options {
        var options = Database.Options(pageSize: 512, durability: .full, fileSystem: files)
        options.checkpointOnClose = false
        options.checkpointThreshold = Int.max
        return options
    }

    private static func contents(_ files: SimulatedFileSystem) throws -> [[UInt8]: [UInt8]] {
        let database = try Database.open(at: "v.db", options: options(files))
        defer { try? database.close() }
        _ = try database.verify()
        return try database.read { transaction in
            var rows: [[UInt8]: [UInt8]] = [:]
            try transaction.tree(named: "t")?.scan { key, value in
                rows[Array(key)] = Array(value)
                return true
            }
            return rows
        }
    }

    @Test func aFormatOneLogIsRecoveredAndExtendedInFormatOne() throws {
        let files = SimulatedFileSystem()
        let database = try Database.open(at: "v.db", options: Self.options(files))
        // A generation begun by an older build: format-1 header, whole-page free records.
        try database.log.reset(baseTransaction: 0, salt: 0x1234_5678, version: 1)
        var expected: [[UInt8]: [UInt8]] = [:]
        for index in 0..<20 {
            let key = [UInt8(index % 7)]
            try database.write { try $0.openTree(named: "t").setValue([UInt8(index)], forKey: key) }
            expected[key] = [UInt8(index)]
        }
        try database.close()
        var log = try #require(files.contents(ofPath: "v.db-wal"))
        #expect(get32(log, 8) == 1)
        #expect(get32(log, 64 + 20) == 0)
        #expect(try Self.contents(files) == expected)
        // Appending to the recovered generation keeps format 1 (no short records).
        let reopened = try Database.open(at: "v.db", options: Self.options(files))
        try reopened.write { try $0.openTree(named: "t").setValue([99], forKey: [1]) }
        expected[[1]] = [99]
        try reopened.close()
        log = try #require(files.contents(ofPath: "v.db-wal"))
        var position = 64
        while position + 576 <= log.count, get64(log, position + 48) == 0x1234_5678 {
            #expect(get32(log, position + 20) == 0)
            position += 576
        }
        #expect(try Self.contents(files) == expected)
        // A checkpoint starts a format-2 generation.
        let last = try Database.open(at: "v.db", options: Self.options(files))
        try last.checkpoint()
        try last.close()
        #expect(get32(try #require(files.contents(ofPath: "v.db-wal")), 8) == 2)
        #expect(try Self.contents(files) == expected)
    }

    @Test func anUnknownLogVersionIsRefused() throws {
        let files = SimulatedFileSystem()
        let database = try Database.open(at: "v.db", options: Self.options(files))
        try database.write { try $0.openTree(named: "t").setValue([1], forKey: [1]) }
        try database.close()
        var log = try #require(files.contents(ofPath: "v.db-wal"))
        log[8] = 3
        let sum = withUnsafeBytes(of: checksum(Array(log[0..<56])).littleEndian, Array.init)
        log.replaceSubrange(56..<64, with: sum)
        files.setContents(log, ofPath: "v.db-wal")
        let error = #expect(throws: StorageError.self) {
            _ = try Database.open(at: "v.db", options: Self.options(files))
        }
        #expect(error?.code == .unsupportedFormat)
        #expect(error?.description.contains("log format version 3") == true)
    }

    /// Small commits appended to a format-1 generation (as after an upgrade) until an
    /// automatic checkpoint starts a format-2 one, crashed after every I/O operation and
    /// recovered under every crash model: the last acknowledged commit or the one in
    /// flight, and a clean verify.
    @Test func crashesWhileAppendingToAFormatOneLogRecover() throws {
        func run(_ files: SimulatedFileSystem, _ log: CommitLog) throws {
            let database = try Database.open(at: "crash.db", options: EngineHarness.crashOptions(files))
            try database.log.reset(baseTransaction: 0, salt: 0xFEED, version: 1)
            for index in 0..<12 {
                let key: [UInt8] = [0, UInt8(index % 5)]
                var next = log.current
                next["rows", default: [:]][key] = index % 4 == 3 ? nil : [UInt8(index), 1]
                log.inFlight = next
                try database.write { transaction in
                    let tree = try transaction.openTree(named: "rows")
                    if let value = next["rows"]?[key] {
                        try tree.setValue(value, forKey: key)
                    } else {
                        try tree.removeValue(forKey: key)
                    }
                }
                log.current = next
                log.acknowledge()
            }
            #expect(database.log.version == 2)  // a checkpoint started a format-2 generation
            try database.close()
        }
        let probe = SimulatedFileSystem()
        try run(probe, CommitLog())
        var random = SeededRandom(seed: 5)
        var recoveries = 0
        for point in 0...probe.operationCount {
            let files = SimulatedFileSystem()
            files.crashAfter(operations: point)
            let log = CommitLog()
            do { try run(files, log) } catch { #expect(files.hasCrashed) }
            for model in SimulatedFileSystem.CrashModel.allCases {
                let image = files.afterCrash(model: model, random: &random)
                try EngineHarness.checkRecovery(of: image, log: log, context: "format 1, op \(point), \(model)")
                recoveries += 1
            }
        }
        #expect(recoveries > 100)
    }
}
