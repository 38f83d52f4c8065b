// Damaged keyed archives: each archive that stops swift-corelibs-foundation's
// NSKeyedUnarchiver (or makes it read freed memory) is refused with an error, and seeded
// mutations of valid archives (bytes, and the property list's structure) never stop the
// process. A trap here ends the test run, which is the failure this suite guards against.
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

@Suite struct KeyedArchiveDamageTests {
    /// Every decoder that reads stored archives.
    static let decoders: [(name: String, decode: @Sendable (Data) throws -> Any?)] = [
        ("secure default", { try NSSecureUnarchiveFromDataTransformer().transformedValueThrowing($0) }),
        ("secure with your class", { try CoordinateTransformer().transformedValueThrowing($0) }),
        ("keyed, any class", { try KeyedUnarchiveFromDataTransformer().transformedValueThrowing($0) }),
        ("store default", { try TransformableValueCoding.decode($0, transformerName: nil) }),
    ]

    private typealias A = ArchiveText

    @Test func archivesThatStopFoundationAreErrors() throws {
        let null = A.string("$null")
        var deep = [null, A.classDescription("NSArray")]
        for level in 2..<102 {
            deep.append(A.object(classAt: 1, [("NS.objects", A.uidArray(level < 101 ? [level + 1] : []))]))
        }
        let cases: [(String, Data)] = [
            (
                "a dictionary with more keys than objects",
                try A.archive([
                    null, A.object(classAt: 2, [("NS.keys", A.uidArray([3, 3])), ("NS.objects", A.uidArray([3]))]),
                    A.classDescription("NSDictionary"), A.string("k"),
                ])
            ),
            (
                "a $class that is not a class description",
                try A.archive([null, A.object(classAt: 0, [("NS.objects", A.uidArray([]))])])
            ),
            (
                "a URL without NS.relative",
                try A.archive([null, A.object(classAt: 2, [("NS.base", A.uid(0))]), A.classDescription("NSURL")])
            ),
            (
                "a URL whose NS.relative is an array",
                try A.archive([
                    null, A.object(classAt: 2, [("NS.base", A.uid(0)), ("NS.relative", A.uid(3))]),
                    A.classDescription("NSURL"),
                    A.object(classAt: 4, [("NS.objects", A.uidArray([]))]), A.classDescription("NSArray"),
                ])
            ),
            (
                "an array containing itself",
                try A.archive([
                    null, A.object(classAt: 2, [("NS.objects", A.uidArray([1]))]), A.classDescription("NSArray"),
                ])
            ),
            (
                "a reference outside $objects",
                try A.archive([
                    null, A.object(classAt: 2, [("NS.objects", A.uidArray([40]))]), A.classDescription("NSArray"),
                ])
            ),
            (
                "$null inside an array",
                try A.archive([
                    null, A.object(classAt: 2, [("NS.objects", A.uidArray([0]))]), A.classDescription("NSArray"),
                ])
            ),
            (
                "a class description used as a value",
                try A.archive([
                    null, A.object(classAt: 2, [("NS.objects", A.uidArray([2]))]), A.classDescription("NSArray"),
                ])
            ),
            ("a root outside $objects", try A.archive([null], root: 9)),
            (
                "a UUID of five bytes",
                try A.archive([
                    null, A.object(classAt: 2, [("NS.uuidbytes", "<data>AAECAwQ=</data>")]),
                    A.classDescription("NSUUID"),
                ])
            ),
            (
                "a date whose time is a string",
                try A.archive([
                    null, A.object(classAt: 2, [("NS.time", A.string("noon"))]), A.classDescription("NSDate"),
                ])
            ),
            (
                "a Foundation class without a checked decoder",
                try A.archive([null, A.object(classAt: 2, []), A.classDescription("NSValue")])
            ),
            (
                "a class the program does not have",
                try A.archive([null, A.object(classAt: 2, []), A.classDescription("Nowhere.Thing")])
            ),
            ("objects nested 100 deep", try A.archive(deep, root: 2)),
            (
                "your class whose decoder fails",
                try A.archive([
                    null, A.object(classAt: 2, [("latitude", "<real>1</real>")]),
                    A.classDescription("OpenCoreDataTests.ArchivedCoordinate"),
                ])
            ),
            (
                "your class holding a date where it decodes a string",
                try A.archive([
                    null, A.object(classAt: 2, [("label", A.uid(3))]),
                    A.classDescription("OpenCoreDataTests.ArchivedCoordinate"),
                    A.object(classAt: 4, [("NS.time", "<real>1</real>")]), A.classDescription("NSDate"),
                ])
            ),
            ("bytes that are not a property list", Data("hello".utf8)),
            ("no bytes", Data()),
            (
                "a property list that is not an archive",
                try PropertyListSerialization.data(fromPropertyList: ["a": 1], format: .binary, options: 0)
            ),
            (
                "an XML archive",
                try PropertyListSerialization.data(
                    fromPropertyList: ["$archiver": "NSKeyedArchiver"], format: .xml, options: 0)
            ),
        ]
        for (problem, data) in cases {
            for decoder in Self.decoders {
                #expect(throws: Error.self, "\(problem) (\(decoder.name))") { try decoder.decode(data) }
            }
        }
    }

    @Test func anInsecureClassIsReadOnlyWithoutSecureCoding() throws {
        let data = try A.archive([
            A.string("$null"), A.object(classAt: 2, [("text", A.uid(3))]),
            A.classDescription("OpenCoreDataTests.InsecureNote"),
            A.string("note"),
        ])
        for decoder in Self.decoders where decoder.name != "keyed, any class" {
            let error = try #require(throws: Error.self, "\(decoder.name)") { try decoder.decode(data) }
            #expect((error as NSError).localizedDescription.contains("secure coding"))
        }
        #expect(
            (try KeyedUnarchiveFromDataTransformer().transformedValueThrowing(data) as? InsecureNote)?.text == "note")
    }

    @Test func seededMutationsNeverStopTheProcess() throws {
        var random = SeededRandom(environmentOr: 0xA4C1_11E5)
        let rich: [String: Any] = [
            "list": ["a", "b", 3], "when": Date(timeIntervalSinceReferenceDate: 9), "id": UUID(),
            "where": URL(string: "page", relativeTo: URL(string: "https://example.com/")!)!, "bytes": Data([1, 2]),
            "set": Set(["x"]), "null": NSNull(), "nested": ["deeper": [1.5, true]],
        ]
        let coordinate = ArchivedCoordinate(latitude: 1, longitude: 2, label: "here")
        let samples = [
            try #require(try NSSecureUnarchiveFromDataTransformer().reverseTransformedValueThrowing(rich) as? Data),
            try NSKeyedArchiver.archivedData(withRootObject: rich, requiringSecureCoding: true),
            try #require(try CoordinateTransformer().reverseTransformedValueThrowing([coordinate, "tail"]) as? Data),
        ]
        let texts = try samples.map { sample in
            let plist = try PropertyListSerialization.propertyList(from: sample, options: [], format: nil)
            let xml = try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0)
            return String(decoding: xml, as: UTF8.self).components(separatedBy: "\n")
        }
        var decoded = 0
        var refused = 0
        for _ in 0..<1500 {
            let pick = random.int(in: 0...(samples.count - 1))
            let mutated: Data
            if random.chance(0.3) {
                mutated = mutateBytes(samples[pick], &random)
            } else {
                var lines = texts[pick]
                for _ in 0..<random.int(in: 1...3) { mutateLines(&lines, &random) }
                guard
                    let plist = try? PropertyListSerialization.propertyList(
                        from: Data(lines.joined(separator: "\n").utf8), options: [], format: nil),
                    let binary = try? PropertyListSerialization.data(
                        fromPropertyList: plist, format: .binary, options: 0)
                else { continue }
                mutated = binary
            }
            for decoder in Self.decoders {
                if (try? decoder.decode(mutated)) != nil { decoded += 1 } else { refused += 1 }
            }
        }
        #expect(
            decoded > 100 && refused > 100, "the mutations should both keep and break archives (\(random.replayHint))")
    }

    private func mutateBytes(_ data: Data, _ random: inout SeededRandom) -> Data {
        var bytes = [UInt8](data)
        switch random.int(in: 0...2) {
        case 0:
            for _ in 0..<random.int(in: 1...4) {
                bytes[random.int(in: 0...(bytes.count - 1))] ^= UInt8(random.int(in: 1...255))
            }
        case 1:
            bytes.removeLast(random.int(in: 1...(bytes.count - 1)))
        default:
            bytes.insert(contentsOf: random.bytes(random.int(in: 1...8)), at: random.int(in: 0...bytes.count))
        }
        return Data(bytes)
    }

    private func mutateLines(_ lines: inout [String], _ random: inout SeededRandom) {
        let strings = [
            "$null", "NSArray", "NSDictionary", "NSURL", "NSDate", "NSUUID", "NSNull", "NSValue", "NSMutableString", "",
            "OpenCoreDataTests.ArchivedCoordinate", "OpenCoreDataTests.InsecureNote", "Missing.Class",
        ]
        let keys = [
            "NS.objects", "NS.keys", "NS.base", "NS.relative", "NS.time", "NS.uuidbytes", "NS.string", "NS.data",
            "$class",
            "$classname", "$classes", "label", "root", "$top", "$objects",
        ]
        let index = random.int(in: 0...(lines.count - 1))
        let line = lines[index]
        let indent = String(line.prefix { $0 == "\t" })
        switch random.int(in: 0...6) {
        case 0 where line.contains("<integer>"):
            let values = [-1, 0, 1, 2, 3, 7, 12, 40, 100_000, 2_147_483_647]
            lines[index] = indent + "<integer>\(random.pick(values))</integer>"
        case 1 where line.contains("<string>"):
            lines[index] = indent + "<string>\(random.pick(strings))</string>"
        case 2 where line.contains("<key>"):
            lines[index] = indent + "<key>\(random.pick(keys))</key>"
        case 3:
            lines.remove(at: index)
        case 4:
            lines.insert(line, at: index)
        case 5:
            lines.swapAt(index, random.int(in: 0...(lines.count - 1)))
        default:
            let values = [
                "<true/>", "<real>1e308</real>", "<data>AAE=</data>", "<array/>", "<dict/>", "<string>x</string>",
            ]
            if line.contains("<") && !line.contains("key") && !line.contains("plist") {
                lines[index] = indent + random.pick(values)
            }
        }
    }
}
