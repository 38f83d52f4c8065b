import Foundation
import OpenCoreData
import TestSupport
import Testing

@Suite struct FetchDistinctTests {
    @Test func distinctDictionariesKeepFirstOccurrencesInOrder() throws {
        var random = SeededRandom(environmentOr: 0xD15)
        let context = try TestStack.freshContext()
        var expected: [String] = []
        var seen: Set<String> = []
        for _ in 0..<400 {
            let employee = TEmployee(context: context)
            let age = Int16(random.int(in: 0...19))
            let name: String? = random.chance(0.25) ? nil : "N\(random.int(in: 0...2))"
            employee.age = age
            employee.name = name
            let key = "\(age)|\(name ?? "nil")"
            if seen.insert(key).inserted { expected.append(key) }
        }
        try context.save()
        let request = NSFetchRequest<NSDictionary>(entityName: "Employee")
        request.resultType = .dictionaryResultType
        request.propertiesToFetch = ["age", "name"]
        request.returnsDistinctResults = true
        request.includesPendingChanges = false
        let rows = try context.fetch(request)
        let keys = rows.map { "\($0["age"] as? Int16 ?? -1)|\($0["name"] as? String ?? "nil")" }
        #expect(Set(keys) == Set(expected), "\(random.replayHint)")
        #expect(keys.count == expected.count, "\(random.replayHint)")
    }
}
