import StorageEngine
import TestSupport
import Testing

/// Damaged files open to valid data or throw a clear corruption error.
@Suite struct HostileFileTests {
    @Test func tenThousandMutationsNeverTrap() throws {
        var random = SeededRandom(environmentOr: 2_024)
        var counts: [FileMutation: Int] = [:]
        for iteration in 0..<10_000 {
            do {
                counts[try EngineHarness.runHostileMutation(random: &random), default: 0] += 1
            } catch {
                Issue.record("\(error) at mutation \(iteration) — \(random.replayHint)")
                return
            }
        }
        #expect(counts.count == FileMutation.allCases.count)
    }

    @Test func bothMetaSlotsDamagedIsACorruptionError() throws {
        var (data, log, _) = EngineHarness.hostileBase
        data[3] ^= 1
        data[259] ^= 1
        let files = SimulatedFileSystem()
        files.setContents(data, ofPath: "x.db")
        files.setContents(log, ofPath: "x.db-wal")
        let error = #expect(throws: StorageError.self) {
            _ = try Database.open(at: "x.db", options: .init(pageSize: 512, fileSystem: files))
        }
        #expect(error?.code == .corrupt)
        #expect(error?.message.contains("no valid meta slot") == true)
    }
}
