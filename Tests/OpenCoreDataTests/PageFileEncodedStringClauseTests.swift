// The scan's string test (`PageFileEncodedStringClause`) reads ASCII rows eight bytes at a
// time and finds a CONTAINS[c] match by the pattern's first byte in both cases: rows
// longer than a word with a hazard (CR, a byte >= 0x80 of ß, İ, ﬀ, K, é) at every
// position, fetched and counted by string operators with and without [c], must give what
// `evaluate(with:)` gives.
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

@Suite struct PageFileEncodedStringClauseTests {
    static let hazards = ["\r", "\r\n", "ß", "İ", "ı", "ﬀ", "\u{212A}", "é", "e\u{301}", "🚀", "\u{7F}", "@", "[", "`"]

    @Test func longRowsWithAHazardAnywhereAgreeWithTheEvaluator() throws {
        let url = try PageFileFixtures.temporaryURL()
        let context = PageFileFixtures.context(try PageFileFixtures.coordinator(PageFileEncodedScanTests.model, url))
        try context.performAndWait {
            let base = "JacksonStrassesonFFkIi"
            var names: [String] = [base, base.lowercased(), base.uppercased(), "strasse", "STRASSE son"]
            for hazard in Self.hazards {
                for position in 0...base.count {
                    var name = base
                    name.insert(contentsOf: hazard, at: name.index(name.startIndex, offsetBy: position))
                    names.append(name)
                }
            }
            for name in names {
                NSEntityDescription.insertNewObject(forEntityName: "Person", into: context).setValue(
                    name, forKey: "name")
            }
            try context.save()
            context.reset()
            let everyone = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
            #expect(everyone.count == names.count)
            let patterns = [
                "son", "SON", "ss", "SS", "ß", "strasse", "ff", "ﬀ", "k", "K", "i", "I", "İ", "e", "\r", "@", "sonff",
                "sss", "fffk", "kk",
            ]
            typealias Operator = OpenCoreData.NSComparisonPredicate.Operator
            typealias Options = OpenCoreData.NSComparisonPredicate.Options
            let operators: [(String, Operator, Options)] = [
                ("CONTAINS", .contains, []), ("CONTAINS[c]", .contains, .caseInsensitive),
                ("CONTAINS[cd]", .contains, [.caseInsensitive, .diacriticInsensitive]),
                ("BEGINSWITH[c]", .beginsWith, .caseInsensitive), ("ENDSWITH[c]", .endsWith, .caseInsensitive),
                ("==[c]", .equalTo, .caseInsensitive), ("!=[c]", .notEqualTo, .caseInsensitive),
            ]
            var matched = 0
            for pattern in patterns {
                for (operation, type, options) in operators {
                    let predicate = NSPredicate(format: "name \(operation) %@", pattern)
                    let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
                    request.predicate = predicate
                    let expected = try everyone.filter { try predicate.evaluateThrowing(with: $0) }.count
                    // The Unicode path alone (no byte-level shortcut), so a wrong shortcut
                    // shared by the evaluator and the scan still fails here.
                    let general = ComparisonOperation(type: type, options: options)
                    let unicode = try names.filter { try general.evaluate($0, pattern) }.count
                    #expect(unicode == expected, "evaluation of \(predicate.predicateFormat)")
                    // And a model sharing no code with either (grapheme clusters folded by the
                    // options, compared scalar by scalar), on every sixth row: it is slow, and
                    // the hazard's position still varies across the sample.
                    for (row, object) in everyone.enumerated() where row % 6 == 0 {
                        let name = object.value(forKey: "name") as? String ?? ""
                        let modelled = StringOperatorOracle.evaluate(
                            type, subject: name, pattern: pattern, options: options)
                        #expect(
                            try modelled == predicate.evaluateThrowing(with: object),
                            "the oracle's answer to \(predicate.predicateFormat) on \(name.debugDescription)")
                    }
                    #expect(try context.count(for: request) == expected, "count of \(predicate.predicateFormat)")
                    #expect(try context.fetch(request).count == expected, "fetch of \(predicate.predicateFormat)")
                    if expected > 0, expected < names.count { matched += 1 }
                }
            }
            #expect(matched > 40, "too few predicates matched some rows but not all")
        }
    }
}
