import TestSupport
import Testing

@testable import StorageEngine

/// The table by page number behind the writer's dirty pages and the log index
/// (PageNumberTable.swift): every answer the same as a `Dictionary`'s, through growth and
/// removals that shift colliding entries back.
@Suite struct PageNumberTableTests {
    /// Random puts, replacements and removals over a small key range (so keys collide and
    /// clusters wrap around the table's end), checked against a dictionary after each step.
    @Test(arguments: [UInt64(1), 2, 3])
    func answersAsADictionaryDoes(seed: UInt64) {
        var random = SeededRandom(environmentOr: seed)
        var table = PageNumberTable<UInt64>()
        var expected: [UInt64: UInt64] = [:]
        let range: UInt64 = seed == 3 ? 40 : 600
        for step in 0..<6_000 {
            let key = 1 + random.next() % range
            switch random.next() % 5 {
            case 0, 1, 2:
                let value = random.next()
                table[key] = value
                expected[key] = value
            case 3:
                #expect(table.removeValue(forKey: key) == expected.removeValue(forKey: key), "seed \(random.seed)")
            default:
                table[key] = nil
                expected[key] = nil
            }
            #expect(table.count == expected.count, "step \(step), seed \(random.seed)")
            if step % 97 == 0 || step > 5_900 {
                for probe in 0...(range + 2) {
                    #expect(table[probe] == expected[probe], "key \(probe) at step \(step), seed \(random.seed)")
                }
            }
        }
        #expect(Set(table.keys) == Set(expected.keys))
        #expect(table.values.sorted() == expected.values.sorted())
        table.removeAll()
        #expect(table.isEmpty && table.keys.isEmpty)
        for probe in 0...(range + 2) { #expect(table[probe] == nil) }
    }

    /// A table grown large, then holding a few keys (clustered and scattered, some placed
    /// past others' homes), cleared slot by slot: none is found afterwards, and the table
    /// takes new keys, the old ones included, as an empty one does.
    @Test func removeAllOfFewEntriesInManySlotsClearsThemAll() {
        var table = PageNumberTable<Int>()
        for key in UInt64(1)...2_000 { table[key] = 1 }
        for key in UInt64(1)...2_000 { table[key] = nil }
        let slots = table.slotCount
        for round in 0..<3 {
            let keys = (UInt64(1)...24).map { $0 * UInt64(round + 1) } + [4_096, 4_097, 70_000, 1 << 39]
            for key in keys { table[key] = Int(key) }
            #expect(8 * table.count < table.slotCount)
            table.removeAll()
            #expect(table.isEmpty && table.slotCount == slots)
            for probe in UInt64(0)...200 { #expect(table[probe] == nil, "key \(probe), round \(round)") }
            for key in keys { #expect(table[key] == nil) }
        }
        for key in UInt64(1)...100 { table[key] = Int(key) }
        for key in UInt64(0)...101 { #expect(table[key] == ((1...100).contains(key) ? Int(key) : nil)) }
    }

    /// Consecutive page numbers (as the allocator hands them out) in a table grown from its
    /// smallest size: removing every third one, from inside its cluster, keeps every other
    /// key findable.
    @Test func removalInsideAClusterKeepsTheRestFindable() {
        var table = PageNumberTable<Int>(minimumCapacity: 4)
        var expected: [UInt64: Int] = [:]
        for key in UInt64(1)...64 {
            table[key] = Int(key)
            expected[key] = Int(key)
        }
        for key in stride(from: UInt64(3), through: 64, by: 3) {
            #expect(table.removeValue(forKey: key) == Int(key))
            expected[key] = nil
            for other in UInt64(0)...70 {
                #expect(table[other] == expected[other], "key \(other) after removing \(key)")
            }
        }
        #expect(table.removeValue(forKey: 3) == nil)
        #expect(table.count == expected.count)
    }

    /// A log index installed from recovery's dictionary holds the same entries.
    @Test func buildsFromADictionary() {
        let dictionary: [UInt64: UInt64] = Dictionary(
            uniqueKeysWithValues: (1...300).map { (UInt64($0 * 7), UInt64($0)) })
        let table = PageNumberTable(dictionary)
        #expect(table.count == dictionary.count)
        for key in UInt64(0)...2_200 { #expect(table[key] == dictionary[key]) }
    }
}
