// Model files that are not well-formed XML, or XML that is not a Core Data model: each
// is a ModelFileError naming the file, the line and the element, never a trap.
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

@Suite struct ModelFileErrorTests {
    /// A model body (lines from 3: the declaration and <model> come first), the line and
    /// element the error must name, and a fragment of its message.
    struct Case: CustomStringConvertible, Sendable {
        let body: String
        let line: Int
        let element: String
        let message: String
        var description: String { message }
    }

    static let cases: [Case] = [
        Case(body: #"<entity name="A">"#, line: 4, element: "entity", message: "opened at line 3"),
        Case(body: #"<entity name="A"></entiti>"#, line: 3, element: "entity", message: "expected '</entity>'"),
        Case(
            body: "<entity name=\"A\">\n    <futureElement name=\"x\"/>\n</entity>", line: 4, element: "futureElement",
            message: "unknown element inside <entity>"),
        Case(
            body: #"<entity name="A"><attribute name="x" attributeType="String" someUnknownKey="42"/></entity>"#,
            line: 3, element: "attribute", message: "unknown attribute 'someUnknownKey'"),
        Case(
            body: #"<entity name="A"><attribute name="x" attributeType="Integer 8"/></entity>"#, line: 3,
            element: "attribute", message: "unknown attributeType 'Integer 8'"),
        Case(
            body:
                #"<entity name="A"><attribute name="x" attributeType="Integer 16" defaultValueString="40000"/></entity>"#,
            line: 3, element: "attribute", message: "defaultValueString '40000' is not a valid Integer 16"),
        Case(
            body:
                #"<entity name="A"><attribute name="x" attributeType="Boolean" defaultValueString="maybe"/></entity>"#,
            line: 3, element: "attribute", message: "not a valid Boolean"),
        Case(
            body: #"<entity name="A"><attribute name="x" optional="maybe" attributeType="String"/></entity>"#, line: 3,
            element: "attribute", message: "'optional' is 'maybe', not YES or NO"),
        Case(
            body: #"<entity name="A"><attribute name="x" attributeType="String" minValueString="few"/></entity>"#,
            line: 3, element: "attribute", message: "minimum length 'few'"),
        Case(
            body:
                "<entity name=\"A\">\n<relationship name=\"b\" maxCount=\"1\" destinationEntity=\"Nowhere\"/></entity>",
            line: 4, element: "relationship", message: "destinationEntity 'Nowhere'"),
        Case(
            body: """
                <entity name="A"><relationship name="b" maxCount="1" destinationEntity="B" inverseName="a" inverseEntity="B"/></entity>
                <entity name="B"><attribute name="a" attributeType="String"/></entity>
                """, line: 3, element: "relationship", message: "the inverse 'a' is not a relationship"),
        Case(
            body:
                #"<entity name="A"><relationship name="b" toMany="YES" deletionRule="Shred" destinationEntity="A"/></entity>"#,
            line: 3, element: "relationship", message: "unknown deletionRule 'Shred'"),
        Case(
            body: #"<entity name="A" parentEntity="Ghost"/>"#, line: 3, element: "entity",
            message: "parentEntity 'Ghost'"),
        Case(
            body: "<entity name=\"A\" parentEntity=\"B\"/>\n<entity name=\"B\" parentEntity=\"A\"/>", line: 3,
            element: "entity", message: "cycle"),
        Case(
            body: """
                <entity name="A"><attribute name="x" attributeType="String"/>
                <fetchIndex name="byY"><fetchIndexElement property="y" type="Binary" order="ascending"/></fetchIndex></entity>
                """, line: 4, element: "fetchIndexElement", message: "names 'y'"),
        Case(
            body: """
                <entity name="A"><attribute name="x" attributeType="String"/>
                <uniquenessConstraints><uniquenessConstraint><constraint value="z"/></uniquenessConstraint></uniquenessConstraints></entity>
                """, line: 4, element: "uniquenessConstraints", message: "names 'z'"),
        Case(
            body: "<entity name=\"A\"/>\n<configuration name=\"C\"><memberEntity name=\"B\"/></configuration>", line: 4,
            element: "memberEntity", message: "names the entity 'B'"),
        Case(
            body: "<entity name=\"A\"/>\n<fetchRequest name=\"R\" entity=\"A\" predicateString=\"name ==\"/>", line: 4,
            element: "fetchRequest", message: "does not parse"),
        Case(
            body: "<entity name=\"A\"/>\n<fetchRequest name=\"R\" entity=\"Z\"/>", line: 4, element: "fetchRequest",
            message: "names the entity 'Z'"),
        Case(
            body:
                #"<entity name="A"><attribute name="d" attributeType="String" derived="YES" derivationExpression="lowercase:("/></entity>"#,
            line: 3, element: "attribute", message: "derivation expression"),
        Case(
            body:
                #"<entity name="A"><attribute name="d" attributeType="String" derivationExpression="now()"/></entity>"#,
            line: 3, element: "attribute", message: "without derived"),
        Case(
            body: "<entity name=\"A\"/>\n<entity name=\"A\"/>", line: 4, element: "entity",
            message: "a second entity named 'A'"),
        Case(
            body: "<entity name=\"A\">\n<attribute name=\"x\" attributeType=\"String\"/>\n"
                + "<attribute name=\"x\" attributeType=\"Date\"/></entity>", line: 5, element: "attribute",
            message: "a second property named 'x'"),
        Case(body: "<entity name=\"A\">text</entity>", line: 3, element: "entity", message: "unexpected text"),
        Case(body: #"<entity name="A &foo; B"/>"#, line: 3, element: "entity", message: "unknown entity '&foo;'"),
        Case(body: #"<entity name="A" name="B"/>"#, line: 3, element: "entity", message: "appears twice"),
        Case(body: #"<entity name="A"/><attribute"#, line: 3, element: "attribute", message: "start tag is not closed"),
        Case(body: #"<entity/>"#, line: 3, element: "entity", message: "'name' is missing"),
        Case(
            body: #"<entity name="A"><attribute name="x" attributeType="Composite" composite="Nope"/></entity>"#,
            line: 3, element: "attribute", message: "composite attribute 'Nope' is not defined"),
        Case(
            body: #"<entity name="A"><fetchedProperty name="f"/></entity>"#, line: 3, element: "fetchedProperty",
            message: "exactly one <fetchRequest>"),
    ]

    @Test(arguments: cases) func aBadModelIsAnErrorNamingLineAndElement(_ item: Case) throws {
        let directory = try ModelFixtures.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = try ModelFixtures.writeModel(ModelFixtures.model(item.body), in: directory)
        let error = try #require(throws: ModelFileError.self) { try NSManagedObjectModel(validatingContentsOf: url) }
        #expect(error.fileURL.lastPathComponent == "contents")
        #expect(error.line == item.line, "\(error)")
        #expect(error.element == item.element, "\(error)")
        #expect(error.message.contains(item.message), "\(error)")
        #expect(error.code == 259 && (error as NSError).code == NSFileReadCorruptFileError)
        #expect("\(error)".contains("contents, line \(item.line), <\(item.element)>"))
        #expect(NSManagedObjectModel(contentsOf: url) == nil)
    }

    @Test func filesThatAreNotModels() throws {
        let directory = try ModelFixtures.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let texts: [(String, String)] = [
            ("", "no XML element"),
            ("just text", "expected an XML element"),
            ("<plist version=\"1.0\"><dict/></plist>", "not <model>"),
            ("<model type=\"com.example.Other\"/>", "not com.apple.IDECoreDataModeler.DataModel"),
            ("<model type=\"com.apple.IDECoreDataModeler.DataModel\"/><model/>", "after the root element"),
            ("<?xml version=\"1.0\" encoding=\"UTF-16\"?><model/>", "encoding 'UTF-16'"),
            ("<!DOCTYPE model [<!ENTITY x \"y\">]><model/>", "internal subset"),
            ("<model type='com.apple.IDECoreDataModeler.DataModel'><!-- open", "comment is not closed"),
            ("<model type=\"com.apple.IDECoreDataModeler.DataModel\" a=\"\u{1}&#0;\"/>", "character reference"),
        ]
        for (text, fragment) in texts {
            let url = try ModelFixtures.writeModel(text, in: directory)
            let error = try #require(throws: ModelFileError.self) {
                try NSManagedObjectModel(validatingContentsOf: url)
            }
            #expect(error.message.contains(fragment), "\(error)")
        }
        let invalid = directory.appendingPathComponent("Invalid.xcdatamodel")
        try FileManager.default.createDirectory(at: invalid, withIntermediateDirectories: true)
        try Data([0x3C, 0x6D, 0x6F, 0x64, 0x65, 0x6C, 0x20, 0x74, 0x3D, 0x22, 0xFF, 0xFE, 0x22, 0x2F, 0x3E]).write(
            to: invalid.appendingPathComponent("contents"))
        let error = try #require(throws: ModelFileError.self) {
            try NSManagedObjectModel(validatingContentsOf: invalid)
        }
        #expect(error.message.contains("not valid UTF-8"))
    }

    @Test func missingAndUnreadableModelFiles() throws {
        let directory = try ModelFixtures.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let missing = directory.appendingPathComponent("Missing.xcdatamodeld")
        let error = try #require(throws: ModelFileError.self) {
            try NSManagedObjectModel(validatingContentsOf: missing)
        }
        #expect(error.code == NSFileReadNoSuchFileError && (error as NSError).code == 260)

        let compiled = directory.appendingPathComponent("App.momd")
        try FileManager.default.createDirectory(at: compiled, withIntermediateDirectories: true)
        let compiledError = try #require(throws: ModelFileError.self) {
            try NSManagedObjectModel(validatingContentsOf: compiled)
        }
        #expect(compiledError.message.contains("compiled model"))

        let legacy = directory.appendingPathComponent("Old.xcdatamodel")
        try FileManager.default.createDirectory(at: legacy, withIntermediateDirectories: true)
        try Data([0x62, 0x70, 0x6C, 0x69, 0x73, 0x74]).write(to: legacy.appendingPathComponent("elements"))
        let legacyError = try #require(throws: ModelFileError.self) {
            try NSManagedObjectModel(validatingContentsOf: legacy)
        }
        #expect(legacyError.message.contains("Xcode 3"))

        let package = directory.appendingPathComponent("Broken.xcdatamodeld")
        try FileManager.default.createDirectory(at: package, withIntermediateDirectories: true)
        let marker = package.appendingPathComponent(".xccurrentversion")
        try Data("not a plist".utf8).write(to: marker)
        #expect(throws: ModelFileError.self) { try NSManagedObjectModel(validatingContentsOf: package) }
        let plist = try PropertyListSerialization.data(
            fromPropertyList: ["_XCCurrentVersionName": "Broken 9.xcdatamodel"], format: .xml, options: 0)
        try plist.write(to: marker)
        let versionError = try #require(throws: ModelFileError.self) {
            try NSManagedObjectModel(validatingContentsOf: package)
        }
        #expect(versionError.message.contains("'Broken 9.xcdatamodel' is not in the package"))
        #expect(versionError.fileURL.lastPathComponent == ".xccurrentversion")
    }

    @Test func deepNestingIsAnErrorNotACrash() throws {
        let directory = try ModelFixtures.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let depth = 100_000
        let text = String(repeating: "<a>", count: depth) + String(repeating: "</a>", count: depth)
        let url = try ModelFixtures.writeModel(text, in: directory)
        let error = try #require(throws: ModelFileError.self) { try NSManagedObjectModel(validatingContentsOf: url) }
        #expect(error.message.contains("nest more than"))
    }

    /// Damaged copies of a real model: every one reads or throws; none traps.
    @Test func damagedModelFilesNeverTrap() throws {
        let source = ModelFixtures.everything.appendingPathComponent("Everything 2.xcdatamodel/contents")
        let original = [UInt8](try Data(contentsOf: source))
        var random = SeededRandom(environmentOr: 0x4D0D_E1F1)
        let directory = try ModelFixtures.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var thrown = 0
        for round in 0..<300 {
            var bytes = original
            for _ in 0..<random.int(in: 1...4) {
                let at = random.int(in: 0...(bytes.count - 1))
                switch random.int(in: 0...2) {
                case 0: bytes[at] = random.pick(Array("<>\"&/=x ;".utf8) + [0, 0xFF])
                case 1: bytes.remove(at: at)
                default: bytes.removeSubrange(at..<min(bytes.count, at + random.int(in: 1...40)))
                }
            }
            let url = try ModelFixtures.writeModel(
                String(decoding: bytes, as: UTF8.self), named: "Damaged\(round)", in: directory)
            do {
                _ = try ModelFixtures.read(url)
            } catch {
                thrown += 1
            }
        }
        #expect(thrown > 150, "seed \(random.seed)")
    }
}
