import Foundation
import StorageEngine
import TestSupport
import Testing

/// The file-system seam (StorageFileSystem.swift): both implementations agree on edge cases.
@Suite struct FileSystemTests {
    /// A read into, or a write from, an empty buffer (whose address may be nil) moves no
    /// bytes and does not trap.
    @Test(arguments: ["simulated", "posix"])
    func emptyBuffersMoveNothing(_ kind: String) throws {
        let fileSystem: any StorageFileSystem = kind == "posix" ? POSIXFileSystem() : SimulatedFileSystem()
        let path =
            kind == "posix"
            ? TestScratch.root.appendingPathComponent("empty-buffer.bin").path
            : "empty-buffer.bin"
        defer { try? fileSystem.removeFile(atPath: path) }
        let file = try fileSystem.openFile(atPath: path, create: true)
        defer { file.close() }
        try [UInt8](repeating: 7, count: 16).withUnsafeBytes { try file.write($0, at: 0) }
        try file.write(UnsafeRawBufferPointer(start: nil, count: 0), at: 4)
        #expect(try file.read(into: UnsafeMutableRawBufferPointer(start: nil, count: 0), at: 4) == 0)
        #expect(try file.size() == 16)
    }

    /// A gathered write (the log's frames: headers and the pages' own bytes) puts the
    /// concatenation of its pieces at the offset, empty pieces and more pieces than one
    /// `pwritev` takes included, as one plain write of the same bytes does.
    @Test(arguments: ["simulated", "posix"])
    func gatheredWriteEqualsOneWriteOfTheConcatenation(_ kind: String) throws {
        let fileSystem: any StorageFileSystem = kind == "posix" ? POSIXFileSystem() : SimulatedFileSystem()
        let path =
            kind == "posix"
            ? TestScratch.root.appendingPathComponent("gathered.bin").path
            : "gathered.bin"
        defer { try? fileSystem.removeFile(atPath: path) }
        let file = try fileSystem.openFile(atPath: path, create: true)
        defer { file.close() }
        // 2,100 pieces of 0 to 6 bytes: past IOV_MAX (1,024 on Linux), so the write takes
        // several calls and resumes where the last one stopped.
        let lengths = (0..<2_100).map { $0 % 7 }
        var expected: [UInt8] = []
        var storage: [[UInt8]] = []
        for (index, length) in lengths.enumerated() {
            let piece = (0..<length).map { UInt8(truncatingIfNeeded: index &* 31 &+ $0) }
            storage.append(piece)
            expected += piece
        }
        let pointers = storage.map { piece -> UnsafeMutableRawBufferPointer in
            let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, piece.count), alignment: 1)
            copy.copyBytes(from: piece)
            return copy
        }
        defer { for pointer in pointers { pointer.deallocate() } }
        let pieces = zip(pointers, storage).map { UnsafeRawBufferPointer(start: $0.baseAddress, count: $1.count) }
        try [UInt8](repeating: 0xEE, count: 10).withUnsafeBytes { try file.write($0, at: 0) }
        try pieces.withUnsafeBufferPointer { try file.write(gathering: $0, at: 10) }
        #expect(try file.size() == UInt64(10 + expected.count))
        var back = [UInt8](repeating: 0, count: 10 + expected.count)
        #expect(try back.withUnsafeMutableBytes { try file.read(into: $0, at: 0) } == back.count)
        #expect(back[..<10].allSatisfy { $0 == 0xEE })
        #expect(Array(back[10...]) == expected)
    }
}
