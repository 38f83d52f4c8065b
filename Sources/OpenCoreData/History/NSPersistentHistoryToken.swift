// A position in the history of one or more stores: for each store, the sequence of
// the newest transaction it covers.
import Foundation

/// A position in persistent history: "everything up to here has been seen".
///
/// A transaction's token names its store and sequence; the coordinator's
/// `currentPersistentHistoryToken(fromStores:)` names several stores at once. Keep a
/// token between launches as the guides do, with a secure keyed archive (or `Codable`):
///
/// ```swift
/// let data = try NSKeyedArchiver.archivedData(withRootObject: token, requiringSecureCoding: true)
/// UserDefaults.standard.set(data, forKey: "lastHistoryToken")
/// let restored = try NSKeyedUnarchiver.unarchivedObject(ofClass: NSPersistentHistoryToken.self, from: data)
/// ```
public final class NSPersistentHistoryToken: NSObject, NSSecureCoding, Codable, Comparable, @unchecked Sendable {
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

    /// True: a token decodes only the types it expects.
    public static var supportsSecureCoding: Bool { true }

    /// Archive keys: the stores' identifiers and their sequences, in the same order.
    private static let storesKey = "NSPersistentHistoryTokenStores"
    private static let sequencesKey = "NSPersistentHistoryTokenSequences"

    /// Encodes the token into a keyed archive: its stores and their sequences.
    public func encode(with coder: NSCoder) {
        let sorted = sequencesByStore.sorted { $0.key < $1.key }
        coder.encode(sorted.map { NSString(string: $0.key) } as NSArray, forKey: Self.storesKey)
        coder.encode(sorted.map { NSNumber(value: $0.value) } as NSArray, forKey: Self.sequencesKey)
    }

    /// Decodes a token written by `encode(with:)`; nil (with the coder's error set) when
    /// the archive does not hold one.
    public init?(coder: NSCoder) {
        let stores = coder.decodeObject(of: [NSArray.self, NSString.self], forKey: Self.storesKey) as? [Any]
        let sequences = coder.decodeObject(of: [NSArray.self, NSNumber.self], forKey: Self.sequencesKey) as? [Any]
        guard let stores, let sequences, stores.count == sequences.count else {
            coder.failWithError(
                CoreDataError.make(
                    NSCoderReadCorruptError, "the archive holds no history token (stores and sequences missing)"))
            return nil
        }
        var byStore: [String: Int64] = [:]
        for (store, sequence) in zip(stores, sequences) {
            guard let name = (store as? String) ?? (store as? NSString).map(String.init(describing:)),
                let number = (sequence as? NSNumber)?.int64Value ?? (sequence as? Int64)
            else {
                coder.failWithError(
                    CoreDataError.make(NSCoderReadCorruptError, "the archived history token has a damaged entry"))
                return nil
            }
            byStore[name] = number
        }
        sequencesByStore = byStore
        super.init()
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
