// A position in the history of one or more stores: for each store, the sequence of
// the newest transaction it covers.
import Foundation

/// A position in persistent history: "everything up to here has been seen".
///
/// A transaction's token names its store and sequence; the coordinator's
/// `currentPersistentHistoryToken(fromStores:)` names several stores at once. Keep a
/// token between launches with `Codable`:
///
/// ```swift
/// let data = try JSONEncoder().encode(token)
/// let restored = try JSONDecoder().decode(NSPersistentHistoryToken.self, from: data)
/// ```
public final class NSPersistentHistoryToken: NSObject, Codable, Comparable, @unchecked Sendable {
    /// The newest covered sequence by store identifier (`NSStoreUUIDKey`).
    public let sequencesByStore: [String: Int64]

    /// A token at `sequence` of the store `storeIdentifier`.
    public convenience init(storeIdentifier: String, sequence: Int64) {
        self.init(sequencesByStore: [storeIdentifier: sequence])
    }

    /// A token covering each store of `sequencesByStore` up to its sequence.
    public init(sequencesByStore: [String: Int64]) {
        self.sequencesByStore = sequencesByStore
        super.init()
    }

    /// The covered sequence of the store `storeIdentifier`, or nil when the token does not name it.
    public func sequence(forStore storeIdentifier: String) -> Int64? {
        sequencesByStore[storeIdentifier]
    }

    /// Whether `object` is a token covering the same stores at the same sequences.
    public override func isEqual(_ object: Any?) -> Bool {
        (object as? NSPersistentHistoryToken)?.sequencesByStore == sequencesByStore
    }

    /// A hash consistent with `isEqual(_:)`.
    public override var hash: Int { sequencesByStore.hashValue }

    /// The token's stores and sequences, for logs.
    public override var description: String {
        let parts = sequencesByStore.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }
        return "<NSPersistentHistoryToken \(parts.joined(separator: ", "))>"
    }

    /// Whether `lhs` comes before `rhs` in the history of the stores they share: no
    /// shared store is further in `lhs`, and one is behind.
    ///
    /// Tokens of one store are totally ordered; tokens naming different stores are
    /// ordered only by the stores they share.
    public static func < (lhs: NSPersistentHistoryToken, rhs: NSPersistentHistoryToken) -> Bool {
        var behind = false
        for (store, sequence) in lhs.sequencesByStore {
            guard let other = rhs.sequencesByStore[store] else { continue }
            if sequence > other { return false }
            if sequence < other { behind = true }
        }
        return behind
    }

    /// Whether both tokens cover the same stores at the same sequences.
    public static func == (lhs: NSPersistentHistoryToken, rhs: NSPersistentHistoryToken) -> Bool {
        lhs.sequencesByStore == rhs.sequencesByStore
    }

    private enum CodingKeys: String, CodingKey {
        case sequencesByStore
    }

    /// Decodes a token written by `encode(to:)`.
    public required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        sequencesByStore = try container.decode([String: Int64].self, forKey: .sequencesByStore)
        super.init()
    }

    /// Encodes the token (its stores and sequences).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(sequencesByStore, forKey: .sequencesByStore)
    }
}
