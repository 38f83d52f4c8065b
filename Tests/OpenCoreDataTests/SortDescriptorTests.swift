// NSSortDescriptor: directions, nil first ascending, multi-key stability, key paths
// through to-one relationships, comparators and the selector-equivalent comparisons.
import OpenCoreData
import TestSupport
import Testing

@Suite struct SortDescriptorTests {
    @Test func multiKeySortIsStableWithNilFirst() throws {
        let rows: [[String: Any]] = [
            ["name": "b", "age": 2, "id": 0], ["name": "a", "age": 2, "id": 1], ["age": 1, "id": 2],
            ["name": "a", "age": 1, "id": 3], ["name": "b", "age": 2, "id": 4],
        ]
        let sorted = try rows.sortedThrowing(using: [
            NSSortDescriptor(key: "name", ascending: true), NSSortDescriptor(key: "age", ascending: false),
        ])
        #expect(sorted.map { $0["id"] as? Int } == [2, 1, 3, 0, 4])
        let descending = try rows.sortedThrowing(using: [NSSortDescriptor(key: "name", ascending: false)])
        #expect(descending.map { $0["id"] as? Int } == [0, 4, 1, 3, 2])
    }

    @Test func stage2Orders() throws {
        let people = Fixtures.people()
        let byActiveThenAge = try people.sortedThrowing(using: [
            NSSortDescriptor(key: "isActive", ascending: false), NSSortDescriptor(key: "age", ascending: true),
        ])
        #expect(byActiveThenAge.map(\.age) == [30, 65, 17, 29])
        let caseless = people + [TestPerson("alice", "Z", age: 1)]
        let comparator = try caseless.sortedThrowing(using: [
            NSSortDescriptor(key: "firstName", ascending: true) { a, b in
                (a as? String ?? "").caseInsensitiveCompare(b as? String ?? "")
            }
        ])
        #expect(comparator.first?.firstName == "alice")
        let plain = try caseless.sortedThrowing(using: [NSSortDescriptor(key: "firstName", ascending: true)])
        #expect(plain.last?.firstName == "alice")
        let selector = try caseless.sortedThrowing(using: [
            NSSortDescriptor(key: "firstName", ascending: true, comparison: .caseInsensitiveCompare)
        ])
        #expect(selector.first?.firstName == "alice")
    }

    @Test func keyPathsThroughToOneRelationships() throws {
        let people = Fixtures.people()
        people[2].company = TestCompany("Zeta")
        let sorted = try people.sortedThrowing(using: [
            NSSortDescriptor(key: "company.name", ascending: true),
            NSSortDescriptor(key: "firstName", ascending: false),
        ])
        #expect(Fixtures.names(sorted) == ["Zoë", "Jane", "John", "Bob"])
    }

    @Test func selectorComparisons() throws {
        let names = ["item10", "Item2", "item1", "éclair", "Zebra"]
        func order(_ comparison: NSSortDescriptor.Comparison) throws -> [String] {
            try names.sortedThrowing(using: [NSSortDescriptor(key: nil, ascending: true, comparison: comparison)])
        }
        #expect(try order(.compare) == ["Item2", "Zebra", "item1", "item10", "éclair"])
        // The same orders as Foundation's String methods the selectors name.
        #expect(
            try order(.caseInsensitiveCompare) == names.sorted { $0.caseInsensitiveCompare($1) == .orderedAscending })
        #expect(
            try order(.localizedStandardCompare)
                == names.sorted { $0.localizedStandardCompare($1) == .orderedAscending })
        #expect(try order(.localizedCompare) == names.sorted { $0.localizedCompare($1) == .orderedAscending })
        #expect(
            try order(.localizedCaseInsensitiveCompare)
                == names.sorted { $0.localizedCaseInsensitiveCompare($1) == .orderedAscending })
        #expect(
            try order(.localizedStandardCompare).filter { $0.hasPrefix("i") || $0.hasPrefix("I") } == [
                "item1", "Item2", "item10",
            ])
        #expect(NSSortDescriptor.Comparison(selectorName: "localizedStandardCompare:") == .localizedStandardCompare)
        #expect(NSSortDescriptor.Comparison(selectorName: "bogus:") == nil)
    }

    @Test func canonicallyEquivalentStringsTie() throws {
        let rows: [[String: Any]] = [
            ["s": "e\u{301}", "id": 0], ["s": "b", "id": 1], ["s": "\u{e9}", "id": 2], ["id": 3], ["s": "a", "id": 4],
        ]
        let sorted = try rows.sortedThrowing(using: [NSSortDescriptor(key: "s", ascending: true)])
        #expect(sorted.map { $0["id"] as? Int } == [3, 4, 1, 0, 2])
        let descending = try rows.sortedThrowing(using: [NSSortDescriptor(key: "s", ascending: false)])
        #expect(descending.map { $0["id"] as? Int } == [0, 2, 1, 4, 3])
    }

    @Test func reversedAndCompare() {
        let descriptor = NSSortDescriptor(key: "age", ascending: true)
        let reversed = descriptor.reversedSortDescriptor
        #expect(reversed.key == "age" && !reversed.ascending)
        #expect(descriptor.compare(["age": 1], to: ["age": 2]) == .orderedAscending)
        #expect(reversed.compare(["age": 1], to: ["age": 2]) == .orderedDescending)
        #expect(descriptor.compare(["age": NSNull()], to: ["age": 2]) == .orderedAscending)
        #expect(reversed.compare(["age": 2], to: [String: Any]()) == .orderedAscending)
        #expect(descriptor == NSSortDescriptor(key: "age", ascending: true))
        #expect(descriptor != reversed)
        #expect(descriptor.selectorName == "compare:")
    }

    @Test func mixedTypesNumbersAndDates() throws {
        let values: [Any] = [3, 2.5, Int16(1), NSNumber(value: 2), true]
        let sorted = try values.sortedThrowing(using: [NSSortDescriptor(key: nil, ascending: true)])
        #expect(sorted.map { "\($0)" } == ["1", "true", "2", "2.5", "3"])
        let dates = [Date(timeIntervalSince1970: 5), Date(timeIntervalSince1970: 1)]
        #expect(try dates.sortedThrowing(using: [NSSortDescriptor(key: nil, ascending: true)]).first == dates[1])
        #expect(throws: PredicateLanguageError.self) {
            try ([1, "a"] as [Any]).sortedThrowing(using: [NSSortDescriptor(key: nil, ascending: true)])
        }
        #expect(throws: KeyValueCodingError.self) {
            try Fixtures.people().sortedThrowing(using: [NSSortDescriptor(key: "shoeSize", ascending: true)])
        }
        #expect(([1, "a"] as [Any]).sorted(using: [NSSortDescriptor(key: nil, ascending: true)]).count == 2)
    }

    @Test func randomSortsMatchAReference() throws {
        var random = SeededRandom(environmentOr: 7)
        for _ in 0..<30 {
            let rows: [[String: Any]] = (0..<random.int(in: 0...60)).map { index in
                var row: [String: Any] = ["id": index, "a": random.int(in: 0...3)]
                if random.chance(0.8) { row["b"] = ["x", "y", "z"][random.int(in: 0...2)] }
                return row
            }
            let ascendingA = random.chance(0.5)
            let ascendingB = random.chance(0.5)
            let sorted = try rows.sortedThrowing(using: [
                NSSortDescriptor(key: "a", ascending: ascendingA), NSSortDescriptor(key: "b", ascending: ascendingB),
            ])
            let expected = rows.enumerated().sorted { left, right in
                let (a1, a2) = (left.element["a"] as? Int ?? 0, right.element["a"] as? Int ?? 0)
                if a1 != a2 { return ascendingA ? a1 < a2 : a1 > a2 }
                // nil sorts first ascending, last descending
                let (b1, b2) = (left.element["b"] as? String, right.element["b"] as? String)
                if b1 != b2 {
                    guard let b1 else { return ascendingB }
                    guard let b2 else { return !ascendingB }
                    return ascendingB ? b1 < b2 : b1 > b2
                }
                return left.offset < right.offset
            }.map { $0.element["id"] as? Int }
            #expect(sorted.map { $0["id"] as? Int } == expected, "\(random.replayHint)")
        }
    }
}
