// Every error the engine throws: one type with a code to switch on and a message that
// says what went wrong and where.

/// An error thrown by the storage engine.
///
/// Switch on ``code``; ``message`` explains the specific failure, for example
/// `"page 17: checksum mismatch"`.
public struct StorageError: Error, Equatable, CustomStringConvertible, Sendable {
    /// The kinds of failure.
    public enum Code: String, Sendable, Equatable {
        /// The file is damaged or is not a database: a checksum, magic number, length or
        /// page number is wrong.
        case corrupt
        /// The file was written by a newer format version or uses unknown features.
        case unsupportedFormat
        /// Another writer holds the database and did not finish within the busy timeout,
        /// or another process has it open exclusively.
        case busy
        /// An earlier I/O error in a commit or checkpoint made the handle unusable; close and
        /// reopen the database to recover.
        case poisoned
        /// A system call failed (the message has the call and `errno`).
        case io
        /// The device is full.
        case noSpace
        /// A key is empty or longer than the page size allows (SPEC.md §5).
        case keyTooLarge
        /// A value is longer than 2^31 - 1 bytes.
        case valueTooLarge
        /// A tree name is empty or longer than 255 bytes.
        case invalidTreeName
        /// The database is closed, or a transaction, cursor or tree handle was used after it ended.
        case closed
        /// A write was attempted in a read transaction or on a handle opened with
        /// ``Database/Options/readOnly``, or a file the database needs to write cannot be
        /// opened for writing (a read-only file system, or no permission): open it
        /// read-only instead.
        case readOnly
        /// The tree was deleted in this transaction.
        case treeDeleted
        /// An argument is out of range (for example an unsupported page size).
        case invalidArgument
    }

    /// What kind of failure this is.
    public let code: Code
    /// A sentence describing the failure.
    public let message: String

    /// An error with a code and a message.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// `"corrupt: page 17: checksum mismatch"`.
    public var description: String { "\(code.rawValue): \(message)" }

    static func corrupt(_ message: String) -> StorageError { StorageError(.corrupt, message) }
}
