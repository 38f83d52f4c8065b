import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

/// The results controller's order-statistics tree against a plain array: random inserts
/// (by binary search on a key) and removals, positions, ranges and the invariants after
/// every step.
@Suite struct RankedObjectListTests {
    @Test func randomInsertsAndRemovalsMatchAnArray() throws {
        var random = SeededRandom(environmentOr: 0x7EA9)
        let entity = try #require(ResultsFixtures.model.entitiesByName["Person"])
        let pool = (0..<300).map { index -> RPerson in
            let person = RPerson(entity: entity, insertInto: nil)
            person.serial = Int64(index)
            return person
        }
        var keys: [ObjectIdentifier: Int] = [:]
        let list = RankedObjectList(Array(pool.prefix(20)))
        var oracle = Array(pool.prefix(20))
        for (position, person) in oracle.enumerated() { keys[ObjectIdentifier(person)] = position * 10 }
        var sequence = 20
        for step in 0..<2_000 {
            let hint = Comment(rawValue: "step \(step), \(random.replayHint)")
            if random.chance(0.55) || oracle.isEmpty {
                let candidates = pool.filter { !list.contains($0) }
                guard let person = candidates.randomElement(using: &random) else { continue }
                let key = random.int(in: 0...400)
                keys[ObjectIdentifier(person)] = key
                sequence += 1
                let mine = sequence
                _ = try list.insert(person, sequence: mine) { other in
                    let otherKey = keys[ObjectIdentifier(other.object)] ?? 0
                    if key != otherKey { return key < otherKey ? .orderedAscending : .orderedDescending }
                    return mine < other.sequence ? .orderedAscending : .orderedDescending
                }
                // Equal keys: the newest goes last among them.
                let index = oracle.firstIndex { (keys[ObjectIdentifier($0)] ?? 0) > key } ?? oracle.count
                oracle.insert(person, at: index)
            } else {
                let victim = oracle.remove(at: random.int(in: 0...(oracle.count - 1)))
                list.remove(try #require(list.node(for: victim)))
            }
            #expect(list.checkInvariants() == nil, hint)
            #expect(list.count == oracle.count, hint)
            if let probe = oracle.indices.randomElement(using: &random) {
                #expect(list.object(at: probe) === oracle[probe], hint)
                #expect(list.node(for: oracle[probe]).map(list.position(of:)) == probe, hint)
            }
        }
        #expect(list.allObjects.map(ObjectIdentifier.init) == oracle.map(ObjectIdentifier.init))
        let low = oracle.count / 3
        #expect(
            list.objects(in: low..<oracle.count).map(ObjectIdentifier.init) == oracle[low...].map(ObjectIdentifier.init)
        )
    }
}
