// The slot cache every `@Managed` access reads (ManagedSlotCache) is scanned without a
// lock while writers publish longer snapshots: readers on other threads see each entry
// whole, as stored, and never an entry for another key path, whatever they race with.
import Foundation
import Synchronization
import Testing

@testable import OpenCoreData

@Suite struct ManagedSlotCacheTests {
    /// An object whose identity stands for a key path's.
    final class Key: Sendable {}

    /// Kept alive, so the identities stay unique.
    static let keys = (0..<64).map { _ in Key() }

    static func entry(_ index: Int) -> ManagedPropertyNames.Entry {
        ManagedPropertyNames.Entry(slot: index * 3 + 1, isOptional: index % 2 == 0, isToOneReference: index % 3 == 0)
    }

    static func same(_ left: ManagedPropertyNames.Entry?, _ right: ManagedPropertyNames.Entry) -> Bool {
        guard let left else { return false }
        return left.slot == right.slot && left.isOptional == right.isOptional
            && left.isToOneReference == right.isToOneReference
    }

    @Test func entriesReadAsStoredWhileOthersArePublished() {
        let cache = ManagedSlotCache()
        #expect(cache.entry(for: ObjectIdentifier(Self.keys[0])) == nil)
        let wrong = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for round in 0..<Self.keys.count {
                let index = (round * 8 + worker) % Self.keys.count
                let key = ObjectIdentifier(Self.keys[index])
                cache.store(Self.entry(index), for: key)
                // Every key, stored or not yet: an entry found is the one stored for it.
                for probe in 0..<Self.keys.count {
                    if let found = cache.entry(for: ObjectIdentifier(Self.keys[probe])),
                        !Self.same(found, Self.entry(probe))
                    {
                        wrong.add(1, ordering: .relaxed)
                    }
                }
            }
        }
        #expect(wrong.load(ordering: .relaxed) == 0)
        // The workers stored every key between them; storing one again changes nothing.
        for (index, key) in Self.keys.enumerated() {
            #expect(Self.same(cache.entry(for: ObjectIdentifier(key)), Self.entry(index)), "key \(index)")
        }
        cache.store(Self.entry(5), for: ObjectIdentifier(Self.keys[4]))
        #expect(Self.same(cache.entry(for: ObjectIdentifier(Self.keys[4])), Self.entry(4)))
        let stranger = Key()
        #expect(cache.entry(for: ObjectIdentifier(stranger)) == nil)
        withExtendedLifetime(stranger) {}
    }
}
