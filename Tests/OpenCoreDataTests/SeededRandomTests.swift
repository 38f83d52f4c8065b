import TestSupport
import Testing

@Suite struct SeededRandomTests {
    @Test func sameSeedSameSequence() {
        var a = SeededRandom(seed: 42)
        var b = SeededRandom(seed: 42)
        let first = (0..<8).map { _ in a.next() }
        #expect(first == (0..<8).map { _ in b.next() })
        var c = SeededRandom(seed: 43)
        #expect(first != (0..<8).map { _ in c.next() })
    }

    @Test func rangesAreRespected() {
        var random = SeededRandom(seed: 7)
        for _ in 0..<1000 {
            let value = random.int(in: -3...5)
            #expect((-3...5).contains(value))
        }
    }
}
