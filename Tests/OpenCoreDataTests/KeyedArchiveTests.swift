// Keyed archives made and read by NSSecureUnarchiveFromDataTransformer: round trips of
// every default class and the Swift values that bridge to them, compatibility with
// Foundation's NSKeyedArchiver and NSKeyedUnarchiver both ways, your own NSSecureCoding
// classes, the allowed-class rules, golden bytes, and damaged archives (the ones that stop
// swift-corelibs-foundation's unarchiver, and seeded mutations) refused with errors.
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

/// An NSSecureCoding class of this test module (top level: Linux finds classes by name
/// only at the top level).
final class ArchivedCoordinate: NSObject, NSSecureCoding {
    static var supportsSecureCoding: Bool { true }
    let latitude: Double
    let longitude: Double
    let label: String

    init(latitude: Double, longitude: Double, label: String) {
        self.latitude = latitude
        self.longitude = longitude
        self.label = label
    }

    init?(coder: NSCoder) {
        guard let label = coder.decodeObject(of: NSString.self, forKey: "label") else { return nil }
        self.latitude = coder.decodeDouble(forKey: "latitude")
        self.longitude = coder.decodeDouble(forKey: "longitude")
        self.label = String(describing: label)
    }

    func encode(with coder: NSCoder) {
        coder.encode(latitude, forKey: "latitude")
        coder.encode(longitude, forKey: "longitude")
        coder.encode(NSString(string: label), forKey: "label")
    }

    override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? ArchivedCoordinate else { return false }
        return latitude == other.latitude && longitude == other.longitude && label == other.label
    }

    override var hash: Int { label.hashValue }
}

/// An NSCoding class without secure coding.
final class InsecureNote: NSObject, NSCoding {
    let text: String

    init(text: String) {
        self.text = text
    }

    init?(coder: NSCoder) {
        text = (coder.decodeObject(forKey: "text") as? String) ?? ""
    }

    func encode(with coder: NSCoder) {
        coder.encode(NSString(string: text), forKey: "text")
    }
}

/// Allows ArchivedCoordinate besides the default classes.
final class CoordinateTransformer: NSSecureUnarchiveFromDataTransformer {
    override static var allowedTopLevelClasses: [AnyClass] {
        [ArchivedCoordinate.self, NSArray.self, NSDictionary.self, NSString.self, NSNumber.self]
    }
}

/// Builds archives from XML text, so tests can write the damaged ones by hand.
enum ArchiveText {
    /// A keyed archive whose `$objects` entries are the XML elements in `objects`.
    static func archive(_ objects: [String], root: Int = 1) throws -> Data {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
            <key>$archiver</key><string>NSKeyedArchiver</string>
            <key>$version</key><integer>100000</integer>
            <key>$top</key><dict><key>root</key>\(uid(root))</dict>
            <key>$objects</key><array>\(objects.joined())</array>
            </dict></plist>
            """
        let plist = try PropertyListSerialization.propertyList(from: Data(xml.utf8), options: [], format: nil)
        return try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
    }

    static func uid(_ index: Int) -> String { "<dict><key>CF$UID</key><integer>\(index)</integer></dict>" }

    static func string(_ text: String) -> String { "<string>\(text)</string>" }

    static func classDescription(_ name: String) -> String {
        "<dict><key>$classname</key><string>\(name)</string><key>$classes</key><array><string>\(name)</string>"
            + "<string>NSObject</string></array></dict>"
    }

    static func object(classAt index: Int, _ fields: [(String, String)]) -> String {
        "<dict><key>$class</key>\(uid(index))" + fields.map { "<key>\($0.0)</key>\($0.1)" }.joined() + "</dict>"
    }

    static func uidArray(_ indexes: [Int]) -> String { "<array>" + indexes.map(uid).joined() + "</array>" }
}

@Suite struct KeyedArchiveTests {
    let transformer = NSSecureUnarchiveFromDataTransformer()

    private func roundTrip(_ value: Any) throws -> Any? {
        let data = try #require(try transformer.reverseTransformedValueThrowing(value) as? Data)
        return try transformer.transformedValueThrowing(data)
    }

    @Test func swiftValuesRoundTrip() throws {
        #expect(try roundTrip("héllo wörld ✓") as? String == "héllo wörld ✓")
        #expect(try roundTrip("") as? String == "")
        #expect(try roundTrip(42) as? Int == 42)
        #expect(try roundTrip(-7) as? Int == -7)
        #expect(try roundTrip(Int64.min) as? Int64 == Int64.min)
        #expect(try roundTrip(UInt64.max) as? UInt64 == UInt64.max)
        #expect(try roundTrip(2.5) as? Double == 2.5)
        #expect(try roundTrip(Float(1.25)) as? Float == 1.25)
        #expect(try roundTrip(true) as? Bool == true)
        #expect(try roundTrip(false) as? Bool == false)
        let date = Date(timeIntervalSinceReferenceDate: 123_456.789)
        #expect(try roundTrip(date) as? Date == date)
        #expect(try roundTrip(Data([0, 1, 255])) as? Data == Data([0, 1, 255]))
        let uuid = UUID()
        #expect(try roundTrip(uuid) as? UUID == uuid)
        let absolute = URL(string: "https://example.com/a?b=c#d")!
        #expect(try roundTrip(absolute) as? URL == absolute)
        let relative = URL(string: "page.html", relativeTo: URL(string: "https://example.com/dir/"))!
        let decodedRelative = try #require(try roundTrip(relative) as? URL)
        #expect(decodedRelative.absoluteString == relative.absoluteString && decodedRelative.baseURL != nil)
        let file = URL(fileURLWithPath: "/tmp/some file.txt")
        #expect(try roundTrip(file) as? URL == file)
        #expect(try roundTrip(NSNull()) is NSNull)
        #expect(try roundTrip(["Swift", "Core Data"]) as? [String] == ["Swift", "Core Data"])
        #expect(try roundTrip([String]()) as? [String] == [])
        #expect(try roundTrip(Set(["a", "b"])) as? Set<String> == ["a", "b"])
        let nested: [String: Any] = [
            "name": "Ada", "age": 36, "tags": ["x", "y"], "born": date, "site": absolute,
            "scores": [1.5, 2.5], "meta": ["empty": [String: Int](), "none": NSNull()],
        ]
        let decoded = try #require(try roundTrip(nested) as? [String: Any])
        #expect(decoded["name"] as? String == "Ada" && decoded["age"] as? Int == 36)
        #expect(decoded["tags"] as? [String] == ["x", "y"] && decoded["born"] as? Date == date)
        #expect(decoded["scores"] as? [Double] == [1.5, 2.5] && decoded["site"] as? URL == absolute)
        let meta = try #require(decoded["meta"] as? [String: Any])
        #expect((meta["empty"] as? [String: Int])?.isEmpty == true && meta["none"] is NSNull)
        let optionals: [String?] = ["a", nil]
        let withNull = try #require(try roundTrip(optionals) as? [Any])
        #expect(withNull.first as? String == "a" && withNull.last is NSNull, "nil in a collection becomes NSNull")
    }

    @Test func foundationObjectsRoundTrip() throws {
        let mutable = NSMutableArray(array: [NSString(string: "a"), NSNumber(value: 1)])
        let decoded = try #require(try roundTrip(mutable) as? [Any])
        #expect(decoded.first as? String == "a" && decoded.last as? Int == 1)
        let dictionary = NSDictionary(dictionary: ["k": NSDate(timeIntervalSinceReferenceDate: 5)])
        #expect((try roundTrip(dictionary) as? [String: Date])?["k"] == Date(timeIntervalSinceReferenceDate: 5))
        #expect(
            try roundTrip(NSUUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!) as? UUID
                == UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
    }

    @Test func foundationReadsOurArchivesAndWeReadFoundations() throws {
        let value: [String: Any] = [
            "list": ["a", "b"], "number": 3, "flag": true, "when": Date(timeIntervalSinceReferenceDate: 9),
            "where": URL(string: "https://example.com")!,
            "id": UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!,
            "bytes": Data([1, 2]), "set": Set([1, 2]), "null": NSNull(),
        ]
        let ours = try #require(try transformer.reverseTransformedValueThrowing(value) as? Data)
        let classes = NSSecureUnarchiveFromDataTransformer.allowedTopLevelClasses
        let byFoundation = try #require(
            try NSKeyedUnarchiver.unarchivedObject(ofClasses: classes, from: ours) as? NSDictionary)
        #expect(byFoundation["list"] as? [String] == ["a", "b"] && byFoundation["number"] as? Int == 3)
        #expect(
            byFoundation["flag"] as? Bool == true
                && byFoundation["when"] as? Date == Date(timeIntervalSinceReferenceDate: 9))
        #expect(byFoundation["where"] as? URL == URL(string: "https://example.com"))
        #expect((byFoundation["id"] as? UUID)?.uuidString == "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")
        #expect(byFoundation["bytes"] as? Data == Data([1, 2]) && byFoundation["set"] as? Set<Int> == [1, 2])
        #expect(byFoundation["null"] is NSNull)

        let foundations = try NSKeyedArchiver.archivedData(withRootObject: value, requiringSecureCoding: true)
        let byUs = try #require(try transformer.transformedValueThrowing(foundations) as? [String: Any])
        #expect(byUs["list"] as? [String] == ["a", "b"] && byUs["flag"] as? Bool == true)
        #expect(byUs["where"] as? URL == URL(string: "https://example.com") && byUs["set"] as? Set<Int> == [1, 2])
        #expect((byUs["id"] as? UUID)?.uuidString == "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")
        let mutableString = try NSKeyedArchiver.archivedData(
            withRootObject: NSMutableData(bytes: [7], length: 1), requiringSecureCoding: true)
        #expect(try transformer.transformedValueThrowing(mutableString) as? Data == Data([7]))
    }

    @Test func yourSecureCodingClassesRoundTripWhenAllowed() throws {
        let coordinate = ArchivedCoordinate(latitude: 48.85, longitude: 2.35, label: "Paris")
        let allowing = CoordinateTransformer()
        let data = try #require(try allowing.reverseTransformedValueThrowing(coordinate) as? Data)
        #expect(try allowing.transformedValueThrowing(data) as? ArchivedCoordinate == coordinate)
        let list = try #require(try allowing.reverseTransformedValueThrowing([coordinate, coordinate]) as? Data)
        let decodedList = try #require(try allowing.transformedValueThrowing(list) as? [Any])
        #expect(decodedList.count == 2 && decodedList.first as? ArchivedCoordinate == coordinate)

        #expect(throws: Error.self) { try transformer.reverseTransformedValueThrowing(coordinate) }
        let refused = try #require(throws: Error.self) { try transformer.transformedValueThrowing(data) }
        #expect((refused as NSError).code == CocoaError.Code.coderReadCorrupt.rawValue)
        #expect((refused as NSError).localizedDescription.contains("ArchivedCoordinate"))
        #expect(transformer.transformedValue(data) == nil, "the non-throwing form answers nil")
    }

    @Test func yourClassesCrossFoundationsCoderBothWays() throws {
        let coordinate = ArchivedCoordinate(latitude: -33.9, longitude: 151.2, label: "Sydney")
        let ours = try #require(
            try CoordinateTransformer().reverseTransformedValueThrowing(["at": coordinate]) as? Data)
        let classes: [AnyClass] = [NSDictionary.self, NSString.self, ArchivedCoordinate.self]
        let byFoundation = try NSKeyedUnarchiver.unarchivedObject(ofClasses: classes, from: ours) as? NSDictionary
        #expect(byFoundation?["at"] as? ArchivedCoordinate == coordinate)
        let foundations = try NSKeyedArchiver.archivedData(withRootObject: [coordinate], requiringSecureCoding: true)
        #expect(
            (try CoordinateTransformer().transformedValueThrowing(foundations) as? [Any])?.first as? ArchivedCoordinate
                == coordinate)
    }

    @Test func aMemberThatFailsToDecodeFailsTheArchive() throws {
        typealias A = ArchiveText
        // A dictionary whose value is a coordinate without its label: Foundation's
        // NSDictionary decoder reads freed memory on this; here it is an error.
        let data = try A.archive([
            A.string("$null"), A.object(classAt: 2, [("NS.keys", A.uidArray([3])), ("NS.objects", A.uidArray([4]))]),
            A.classDescription("NSDictionary"), A.string("at"),
            A.object(classAt: 5, [("latitude", "<real>1</real>")]),
            A.classDescription("OpenCoreDataTests.ArchivedCoordinate"),
        ])
        let error = try #require(throws: Error.self) { try CoordinateTransformer().transformedValueThrowing(data) }
        #expect((error as NSError).localizedDescription.contains("init(coder:) failed"))
    }

    @Test func thousandsOfDictionariesArchiveQuickly() throws {
        let rows: [[String: Any]] = (0..<2000).map { ["id": $0, "name": "row \($0)", "tags": ["a", "b"]] }
        let start = Date()
        let data = try #require(try transformer.reverseTransformedValueThrowing(rows) as? Data)
        let decoded = try #require(try transformer.transformedValueThrowing(data) as? [[String: Any]])
        #expect(decoded.count == 2000 && decoded[1999]["name"] as? String == "row 1999")
        // Foundation's NSKeyedArchiver needs minutes for this (it compares containers pairwise).
        #expect(Date().timeIntervalSince(start) < 30)
    }

    @Test func insecureClassesNeedTheKeyedTransformer() throws {
        let note = InsecureNote(text: "hi")
        let secureError = try #require(throws: Error.self) { try transformer.reverseTransformedValueThrowing(note) }
        #expect((secureError as NSError).localizedDescription.contains("secure coding"))
        let keyed = try #require(ValueTransformer(forName: .keyedUnarchiveFromDataTransformerName))
        let data = try #require(keyed.reverseTransformedValue(note) as? Data)
        #expect((keyed.transformedValue(data) as? InsecureNote)?.text == "hi")
        #expect(throws: Error.self) { try transformer.transformedValueThrowing(data) }
    }

    @Test func valuesThatCannotBeArchivedAreErrors() throws {
        struct Plain { let x = 1 }
        let structError = try #require(throws: Error.self) { try transformer.reverseTransformedValueThrowing(Plain()) }
        #expect((structError as NSError).code == CocoaError.Code.coderInvalidValue.rawValue)
        #expect((structError as NSError).localizedDescription.contains("Plain"))
        #expect(throws: Error.self) { try transformer.reverseTransformedValueThrowing(Decimal(1)) }
        #expect(throws: Error.self) { try transformer.reverseTransformedValueThrowing([[1]: "array key"]) }
        #expect(throws: Error.self) { try transformer.reverseTransformedValueThrowing(["nested": [Plain()]]) }
        var deep: Any = 1
        for _ in 0..<70 { deep = [deep] }
        #expect(throws: Error.self) { try transformer.reverseTransformedValueThrowing(deep) }
        let narrow = NarrowTransformer()
        #expect(throws: Error.self) { try narrow.reverseTransformedValueThrowing(["a": 1]) }
        #expect(throws: Error.self) { try narrow.reverseTransformedValueThrowing([1]) }
        #expect(try narrow.reverseTransformedValueThrowing(["a"]) is Data)
    }

    @Test func archivedClassesOutsideTheAllowedOnesAreRefused() throws {
        let numbers = try #require(try transformer.reverseTransformedValueThrowing([1, 2]) as? Data)
        let error = try #require(throws: Error.self) { try NarrowTransformer().transformedValueThrowing(numbers) }
        #expect((error as NSError).localizedDescription.contains("NSNumber"))
        #expect(
            try NarrowTransformer().transformedValueThrowing(transformer.reverseTransformedValueThrowing(["a"]))
                as? [String] == ["a"])
    }

    @Test func goldenBytes() throws {
        let data = try #require(try TransformableValueCoding.encode(["Swift", "Core Data"], transformerName: nil))
        let hex = data.map { String(format: "%02x", $0) }.joined()
        #expect(hex == GoldenArchive.stringArray, "the archive of [\"Swift\", \"Core Data\"] changed: \(hex)")
        #expect(
            try TransformableValueCoding.encode(["b": 2, "a": 1], transformerName: nil)
                == TransformableValueCoding.encode(["a": 1, "b": 2], transformerName: nil), "equal values, equal bytes")
    }
}

/// Allows arrays of strings only.
final class NarrowTransformer: NSSecureUnarchiveFromDataTransformer {
    override static var allowedTopLevelClasses: [AnyClass] { [NSArray.self, NSString.self] }
}

/// Pinned archive bytes: a change here changes what stores write for transformable values.
enum GoldenArchive {
    /// `["Swift", "Core Data"]` through the default transformer: "bplist00", the keys of the
    /// envelope, 100000, "NSKeyedArchiver", the root UID 4, then $objects: "$null", "Swift",
    /// "Core Data", the NSArray class description and the NSArray object; offset table and
    /// trailer (27 objects, top 26).
    static let stringArray =
        "62706c6973743030582476657273696f6e592461726368697665725424746f7058246f626a6563747312000186a05f10"
        + "0f4e534b65796564417263686976657254726f6f748004d1060755246e756c6c55537769667459436f72652044617461"
        + "5824636c61737365735a24636c6173736e616d65574e534172726179584e534f626a656374a20e0fd20c0d100e562463"
        + "6c6173735a4e532e6f626a65637473800380018002a21516d212131417a5090a0b1118d4000102030405081908111b20"
        + "292e4045474a50566069747c85888d949fa1a3a5a8adb30000000000000101000000000000001b000000000000001a00"
        + "000000000000bc"
}
