// Hostile files: damage a valid database's page file and log in the ways disks and
// people do (bit flips, zeroed or swapped pages, truncation, garbage log tails, damaged
// meta slots) and check the engine either opens valid data or throws a StorageError —
// never traps, hangs, or allocates without bound.
import Foundation
import StorageEngine

/// One way of damaging a database.
public enum FileMutation: String, CaseIterable, Sendable {
    case flipBitInPageFile, flipBitInLog, zeroPage, swapPages, truncatePageFile, truncateLog, garbageLogTail,
        damageOneMetaSlot, damageBothMetaSlots, randomBytesInPage,
        /// Damages one byte of the newest meta slot (slot 1: the checkpoint after the third
        /// commit wrote it), whose transaction the older slot names (M3) and the log's base
        /// records: open must refuse, never fall back to the empty state.
        damageNewestMetaSlot,
        /// Changes a field of the newest meta slot and recomputes its checksum.
        forgeMetaField,
        /// Changes bytes of a page and recomputes the page's checksum, so only the
        /// structural checks stand between the damage and the engine.
        forgePage,
        /// Changes a log frame (header fields or page bytes) and recomputes its page
        /// checksum and the checksum chain from there on: a well-formed but lying log.
        forgeLogFrame
}

extension EngineHarness {
    static let hostilePageSize = 512

    /// A small database with trees, overflow values, a checkpointed part and log frames:
    /// (page file bytes, log bytes, contents after each commit).
    public static let hostileBase: (data: [UInt8], log: [UInt8], states: [EngineOracle]) = {
        let files = SimulatedFileSystem()
        var options = Database.Options(pageSize: hostilePageSize, durability: .full, fileSystem: files)
        options.checkpointOnClose = false
        var random = SeededRandom(seed: 99)
        do {
            let database = try Database.open(at: "hostile.db", options: options)
            var states: [EngineOracle] = [[:]]
            for round in 0..<6 {
                try database.write { transaction in
                    for _ in 0..<15 {
                        let tree = try transaction.openTree(named: random.pick(["a", "b"]))
                        try tree.setValue(randomValue(&random, pageSize: hostilePageSize), forKey: randomKey(&random))
                    }
                }
                states.append(try EngineHarness.contents(of: database))
                if round == 2 { try database.checkpoint() }
            }
            try database.close()
            return (files.contents(ofPath: "hostile.db") ?? [], files.contents(ofPath: "hostile.db-wal") ?? [], states)
        } catch {
            fatalError("building the hostile-file base database failed: \(error)")
        }
    }()

    /// Applies a random mutation to the base database and opens, reads and verifies it.
    /// Returns the mutation; throws ``HarnessFailure`` when the engine misbehaves (an error
    /// of another type, or wrong data reported as valid where that is decidable).
    @discardableResult
    public static func runHostileMutation(random: inout SeededRandom) throws -> FileMutation {
        var (data, log, states) = hostileBase
        let mutation = random.pick(FileMutation.allCases)
        let pageSize = hostilePageSize
        let pages = data.count / pageSize
        switch mutation {
        case .flipBitInPageFile:
            let index = random.int(in: 0...(data.count - 1))
            data[index] ^= UInt8(1) << UInt8(random.int(in: 0...7))
        case .flipBitInLog:
            guard !log.isEmpty else { break }
            let index = random.int(in: 0...(log.count - 1))
            log[index] ^= UInt8(1) << UInt8(random.int(in: 0...7))
        case .zeroPage:
            let page = random.int(in: 0...(pages - 1))
            for index in (page * pageSize)..<((page + 1) * pageSize) { data[index] = 0 }
        case .swapPages:
            let first = random.int(in: 1...(pages - 1))
            let second = random.int(in: 1...(pages - 1))
            for offset in 0..<pageSize { data.swapAt(first * pageSize + offset, second * pageSize + offset) }
        case .truncatePageFile:
            data.removeSubrange(random.int(in: 0...(data.count - 1))...)
        case .truncateLog:
            if !log.isEmpty { log.removeSubrange(random.int(in: 0...(log.count - 1))...) }
        case .garbageLogTail:
            let keep = log.isEmpty ? 0 : random.int(in: 0...(log.count - 1))
            log.removeSubrange(keep...)
            log.append(contentsOf: random.bytes(random.int(in: 1...(3 * (pageSize + 64)))))
        case .damageOneMetaSlot:
            let slot = random.int(in: 0...1)
            data[slot * 256 + random.int(in: 0...255)] ^= 0xFF
        case .damageNewestMetaSlot:
            data[256 + random.int(in: 0...255)] ^= UInt8(random.int(in: 1...255))
        case .damageBothMetaSlots:
            data[random.int(in: 0...255)] ^= 0xFF
            data[256 + random.int(in: 0...255)] ^= 0xFF
        case .forgeMetaField:
            let slot = random.int(in: 0...1)
            let field = random.pick([8, 12, 16, 20, 24, 32, 40, 48])
            let offset = slot * 256 + field + random.int(in: 0...(field >= 24 ? 7 : 3))
            data[offset] = random.chance(0.5) ? UInt8.random(in: 0...255, using: &random) : data[offset] ^ 1
            let sum = StorageChecksum.xxh64(Array(data[(slot * 256)..<(slot * 256 + 248)]))
            withUnsafeBytes(of: sum.littleEndian) { for index in 0..<8 { data[slot * 256 + 248 + index] = $0[index] } }
        case .forgePage:
            let page = random.int(in: 1...(pages - 1))
            let base = page * pageSize
            for _ in 0..<random.int(in: 1...4) {
                let offset = random.chance(0.6) ? random.int(in: 24...63) : random.int(in: 8...(pageSize - 1))
                data[base + offset] =
                    random.chance(0.5) ? UInt8.random(in: 0...255, using: &random) : data[base + offset] ^ 0x80
            }
            let sum = StorageChecksum.xxh64(Array(data[(base + 8)..<(base + pageSize)]))
            withUnsafeBytes(of: sum.littleEndian) { for index in 0..<8 { data[base + index] = $0[index] } }
        case .forgeLogFrame:
            let frameSize = 64 + pageSize
            let frames = (log.count - 64) / frameSize
            guard frames > 0 else { break }
            let frame = random.int(in: 0...(frames - 1))
            let base = 64 + frame * frameSize
            for _ in 0..<random.int(in: 1...3) {
                // Header fields (page number, transaction, flags, roots, page count) or page bytes.
                let offset =
                    random.chance(0.4)
                    ? random.pick([0, 1, 8, 16, 24, 32, 40, 41, 44])
                    : 64 + (random.chance(0.6) ? random.int(in: 16...63) : random.int(in: 8...(pageSize - 1)))
                log[base + offset] =
                    random.chance(0.5) ? UInt8.random(in: 0...255, using: &random) : log[base + offset] ^ 0x01
            }
            // Re-seal the page, then the chain from this frame on.
            let pageSum = StorageChecksum.xxh64(Array(log[(base + 64 + 8)..<(base + frameSize)]))
            withUnsafeBytes(of: pageSum.littleEndian) { for index in 0..<8 { log[base + 64 + index] = $0[index] } }
            var previous: UInt64 =
                frame == 0
                ? log[16..<24].enumerated().reduce(0) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
                : log[(base - frameSize + 56)..<(base - frameSize + 64)].enumerated().reduce(0) {
                    $0 | UInt64($1.element) << (8 * UInt64($1.offset))
                }
            for index in frame..<frames {
                let start = 64 + index * frameSize
                let sealed = Array(log[start..<(start + 56)]) + Array(log[(start + 64)..<(start + 72)])
                previous = StorageChecksum.xxh64(sealed, seed: previous)
                withUnsafeBytes(of: previous.littleEndian) { for byte in 0..<8 { log[start + 56 + byte] = $0[byte] } }
            }
        case .randomBytesInPage:
            let page = random.int(in: 1...(pages - 1))
            let start = page * pageSize + random.int(in: 0...(pageSize - 1))
            for index in start..<min(start + random.int(in: 1...64), data.count) {
                data[index] = UInt8.random(in: 0...255, using: &random)
            }
        }
        let files = SimulatedFileSystem()
        files.setContents(data, ofPath: "hostile.db")
        files.setContents(log, ofPath: "hostile.db-wal")
        var options = Database.Options(pageSize: pageSize, durability: .full, fileSystem: files)
        options.checkpointOnClose = false
        do {
            let database = try Database.open(at: "hostile.db", options: options)
            if mutation == .damageNewestMetaSlot {
                throw HarnessFailure("\(mutation): opened over a damaged newest meta slot")
            }
            // verify() first: forged pages can hold anything, and only verify judges order.
            _ = try database.verify()
            let got = try EngineHarness.contents(of: database)
            if mutation == .damageOneMetaSlot || mutation == .truncateLog || mutation == .garbageLogTail {
                // Decidable: the result must be one of the committed states, never a mixture.
                guard states.contains(where: { difference(got, $0) == nil }) else {
                    throw HarnessFailure("\(mutation): opened to a state that was never committed")
                }
            }
            // Writing into damaged trees must fail cleanly too.
            try database.write { transaction in
                for _ in 0..<random.int(in: 1...20) {
                    let tree = try transaction.openTree(named: random.pick(["a", "b"]))
                    if random.chance(0.6) {
                        try tree.setValue(randomValue(&random, pageSize: pageSize), forKey: randomKey(&random))
                    } else {
                        try tree.removeValue(forKey: randomKey(&random))
                    }
                }
            }
            try database.checkpoint()
            _ = try database.verify()
            try database.close()
        } catch let error as StorageError {
            guard [.corrupt, .unsupportedFormat, .poisoned].contains(error.code) else {
                throw HarnessFailure("\(mutation): unexpected error \(error)")
            }
            if mutation == .damageOneMetaSlot, error.message.contains("no valid meta slot") {
                throw HarnessFailure("\(mutation): one intact meta slot should still open")
            }
            if mutation == .damageNewestMetaSlot, error.code != .corrupt || !error.message.contains("would lose") {
                throw HarnessFailure("\(mutation): not refused as a lost newest meta: \(error)")
            }
        }
        return mutation
    }
}

/// A database closed cleanly twice, with committed data behind both checkpoints: the
/// subject of meta-slot damage (SPEC.md §2.1 M3, M4). Its log is empty (a clean close
/// truncates it), so nothing but the older slot's successor field records the newest meta.
public struct ClosedDatabaseImage: Sendable {
    /// The page file.
    public let data: [UInt8]
    /// The log (empty: a clean close truncates it).
    public let log: [UInt8]
    /// The log as it was just before the second close's checkpoint (base: the first
    /// checkpoint, holding every later transaction).
    public let logBeforeSecondCheckpoint: [UInt8]
    /// The contents after the first close (the older slot's state).
    public let older: EngineOracle
    /// The contents after the second close (the newest slot's state).
    public let newest: EngineOracle
    /// The newest slot's position in page 0 (0 or 1).
    public let newestSlot: Int
    /// The transaction the newest slot records.
    public let newestTransaction: UInt64
    /// The transaction the older slot records.
    public let olderTransaction: UInt64
    /// The page size the image is written with.
    public static let pageSize = 512
    /// The page file's path on the simulated file system.
    public static let path = "closed.db"

    /// Options for opening an image of it.
    public static func options(_ files: SimulatedFileSystem, recoverToOlderState: Bool = false) -> Database.Options {
        var options = Database.Options(pageSize: pageSize, durability: .full, fileSystem: files)
        options.recoverToOlderState = recoverToOlderState
        return options
    }

    /// A simulated file system holding `data` and `log` as the database's files.
    public static func files(data: [UInt8], log: [UInt8]) -> SimulatedFileSystem {
        let files = SimulatedFileSystem()
        files.setContents(data, ofPath: path)
        files.setContents(log, ofPath: path + "-wal")
        return files
    }

    /// The image: `firstSessionCommits` commits and a close, then `secondSessionCommits`
    /// and a close (0 first-session commits: the older slot is the empty state creation
    /// wrote, as in a store saved once and closed).
    public static func make(firstSessionCommits: Int, secondSessionCommits: Int, seed: UInt64) throws
        -> ClosedDatabaseImage
    {
        let files = SimulatedFileSystem()
        var random = SeededRandom(seed: seed)
        func commit(_ count: Int, to database: Database) throws -> EngineOracle {
            for _ in 0..<count {
                try database.write { transaction in
                    for _ in 0..<12 {
                        let tree = try transaction.openTree(named: random.pick(["a", "b"]))
                        try tree.setValue(
                            EngineHarness.randomValue(&random, pageSize: pageSize),
                            forKey: EngineHarness.randomKey(&random))
                    }
                }
            }
            return try EngineHarness.contents(of: database)
        }
        let first = try Database.open(at: path, options: options(files))
        let older = try commit(firstSessionCommits, to: first)
        try first.close()
        let olderTransaction = UInt64(firstSessionCommits)
        let second = try Database.open(at: path, options: options(files))
        let newest = try commit(secondSessionCommits, to: second)
        let logBefore = files.contents(ofPath: path + "-wal") ?? []
        try second.close()
        let data = files.contents(ofPath: path) ?? []
        let newestTransaction = olderTransaction + UInt64(secondSessionCommits)
        let newestSlot =
            data[24..<32].elementsEqual(withUnsafeBytes(of: newestTransaction.littleEndian, Array.init)) ? 0 : 1
        return ClosedDatabaseImage(
            data: data, log: files.contents(ofPath: path + "-wal") ?? [], logBeforeSecondCheckpoint: logBefore,
            older: older, newest: newest, newestSlot: newestSlot, newestTransaction: newestTransaction,
            olderTransaction: olderTransaction)
    }
}
