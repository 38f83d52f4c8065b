// The error key-value access throws where Core Data raises NSUnknownKeyException.
import Foundation

/// Errors of key-value access: Core Data raises `NSUnknownKeyException` here; we throw.
public enum KeyValueCodingError: Error, Equatable, CustomStringConvertible, LocalizedError {
    /// The receiver has no property named `key`; `type` names the receiver (an entity or a type).
    case unknownKey(String, in: String)

    /// What went wrong and how to fix it.
    public var description: String {
        switch self {
        case .unknownKey(let key, let type):
            "unknown key '\(key)' for \(type): it is not a property of it (NSUnknownKeyException in Core Data)"
        }
    }

    /// The same text as `description`, so `localizedDescription` says what to fix.
    public var errorDescription: String? { description }
}
