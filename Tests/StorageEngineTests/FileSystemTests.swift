import Foundation
import StorageEngine
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
            ? FileManager.default.temporaryDirectory.appendingPathComponent("empty-buffer-\(getpid()).bin").path
            : "empty-buffer.bin"
        defer { try? fileSystem.removeFile(atPath: path) }
        let file = try fileSystem.openFile(atPath: path, create: true)
        defer { file.close() }
        try [UInt8](repeating: 7, count: 16).withUnsafeBytes { try file.write($0, at: 0) }
        try file.write(UnsafeRawBufferPointer(start: nil, count: 0), at: 4)
        #expect(try file.read(into: UnsafeMutableRawBufferPointer(start: nil, count: 0), at: 4) == 0)
        #expect(try file.size() == 16)
    }
}
