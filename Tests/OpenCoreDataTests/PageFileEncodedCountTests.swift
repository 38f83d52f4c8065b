// The default store counts an unindexed predicate in one walk of the row tree's leaves,
// testing each row's encoded bytes (no row decoded). Its counts must be the evaluator's:
// random saved rows (strings mixing ASCII, CR LF, combining marks, emoji and case pairs
// beyond ASCII; numbers, dates, booleans, nulls) and random predicates of every option
// ([c], [d], [cd]) give `count(for:)` and the fetch exactly what `evaluate(with:)` over
// every object gives, or fail alike.
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

@Suite struct PageFileEncodedCountTests {
    @Test func countsOnEncodedRowsAgreeWithTheEvaluator() throws {
        var random = SeededRandom(environmentOr: 0xC0_0171)
        let hint = random.replayHint
        let url = try PageFileFixtures.temporaryURL()
        let context = PageFileFixtures.context(try PageFileFixtures.coordinator(PageFileEncodedScanTests.model, url))
        try context.performAndWait {
            for _ in 0..<240 {
                let object = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
                func string() -> String? {
                    guard !random.chance(0.1) else { return nil }
                    var text = random.pick(PageFileEncodedScanTests.strings)
                    if random.chance(0.3) { text += random.pick(PageFileEncodedScanTests.strings) }
                    return text
                }
                object.setValue(string(), forKey: "name")
                object.setValue(string(), forKey: "note")
                let age = random.chance(0.1) ? nil : NSNumber(value: Int16(random.int(in: -3...40)))
                object.setValue(age, forKey: "age")
                object.setValue(
                    random.chance(0.1) ? nil : NSNumber(value: Double(random.int(in: -20...20)) / 4), forKey: "score")
                object.setValue(
                    random.chance(0.1)
                        ? nil : Date(timeIntervalSinceReferenceDate: Double(random.int(in: -5...5) * 1000)),
                    forKey: "born")
                object.setValue(random.chance(0.1) ? nil : NSNumber(value: random.chance(0.5)), forKey: "flag")
            }
            try context.save()
            context.reset()
            let everyone = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
            #expect(everyone.count == 240)
            var counted = 0
            for _ in 0..<400 {
                let predicate = PageFileEncodedScanTests.randomPredicate(&random)
                let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
                request.predicate = predicate
                let expected = Result { try everyone.filter { try predicate.evaluateThrowing(with: $0) }.count }
                let count = Result { try context.count(for: request) }
                let fetched = Result { try context.fetch(request).count }
                let format = predicate.predicateFormat
                for (path, actual) in [("count", count), ("fetch", fetched)] {
                    switch (expected, actual) {
                    case (.success(let a), .success(let b)):
                        #expect(a == b, "\(path) of \(format) (\(hint))")
                        if path == "count", a > 0 { counted += 1 }
                    case (.failure, .failure): break
                    default: Issue.record("\(path) of \(format): \(actual) but evaluation \(expected) (\(hint))")
                    }
                }
            }
            #expect(counted > 150, "too few predicates matched rows (\(hint))")
        }
    }
}
