// Diagnostics of object reads that Core Data's non-throwing API cannot report as errors:
// a typed read of a value of the wrong type, a read of an object whose context is gone.
// Each is written to standard error once (per property, per object), so a program that
// repeats the mistake in a loop is not flooded, and kept in memory for tests to inspect.
import Foundation
import Synchronization

/// The object layer's one-time diagnostics (see the file comment).
enum ObjectDiagnostics {
    private struct Record {
        var reportedKeys: Set<String> = []
        var messages: [String] = []
    }

    private static let record = Mutex(Record())

    /// Writes `message` once for `key`: later calls with the same key do nothing.
    static func report(_ message: String, once key: String) {
        let isNew = record.withLock { record in
            guard record.reportedKeys.insert(key).inserted else { return false }
            // Bounded: a long-running program with many distinct mistakes keeps the newest.
            if record.messages.count >= 256 { record.messages.removeFirst(128) }
            record.messages.append(message)
            return true
        }
        if isNew { FileHandle.standardError.write(Data("OpenCoreData: \(message)\n".utf8)) }
    }

    /// Writes `message` (the caller makes it one-time).
    static func report(_ message: String) {
        record.withLock { record in
            if record.messages.count >= 256 { record.messages.removeFirst(128) }
            record.messages.append(message)
        }
        FileHandle.standardError.write(Data("OpenCoreData: \(message)\n".utf8))
    }

    /// The messages written so far (the newest 256 at most), for tests.
    static var messages: [String] { record.withLock { $0.messages } }
}
