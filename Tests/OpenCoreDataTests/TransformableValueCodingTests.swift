// TransformableValueCoding, the encoding stores will use for transformable attributes:
// the default secure archiving, named transformers forward and the unarchiving ones in
// reverse, nil, and every failure as an error with its code.
import Foundation
import Testing

@testable import OpenCoreData

/// Returns a string where Data is expected.
final class NotDataTransformer: ValueTransformer {
    override func transformedValue(_ value: Any?) -> Any? { "not data" }
}

/// Returns nil for everything.
final class NilTransformer: ValueTransformer {
    override func transformedValue(_ value: Any?) -> Any? { nil }
    override func reverseTransformedValue(_ value: Any?) -> Any? { nil }
}

/// Makes data, but cannot read it back.
final class OneWayDataTransformer: ValueTransformer {
    override class func allowsReverseTransformation() -> Bool { false }
    override func transformedValue(_ value: Any?) -> Any? { Data("x".utf8) }
}

@Suite struct TransformableValueCodingTests {
    @Test func theDefaultStoresPropertyListValues() throws {
        for name in [nil, ""] as [String?] {
            let data = try #require(try TransformableValueCoding.encode(["Swift", "Core Data"], transformerName: name))
            #expect(
                try TransformableValueCoding.decode(data, transformerName: name) as? [String] == ["Swift", "Core Data"])
        }
        let mixed: [String: Any] = ["n": 1, "d": Date(timeIntervalSinceReferenceDate: 0), "b": Data([9])]
        let data = try #require(try TransformableValueCoding.encode(mixed, transformerName: nil))
        let decoded = try #require(try TransformableValueCoding.decode(data, transformerName: nil) as? [String: Any])
        #expect(decoded["n"] as? Int == 1 && decoded["b"] as? Data == Data([9]))
        #expect(decoded["d"] as? Date == Date(timeIntervalSinceReferenceDate: 0))
    }

    @Test func nilIsStoredAsNil() throws {
        let none: [String]? = nil
        #expect(try TransformableValueCoding.encode(none, transformerName: nil) == nil)
        #expect(try TransformableValueCoding.encode(nil, transformerName: "Unregistered") == nil)
        #expect(try TransformableValueCoding.decode(nil, transformerName: nil) == nil)
    }

    @Test func aNamedTransformerRunsForwardToStore() throws {
        let name = "TransformableValueCodingTests.Temperature"
        CodableValueTransformer<Temperature>.register(forName: NSValueTransformerName(name))
        defer { ValueTransformer.setValueTransformer(nil, forName: NSValueTransformerName(name)) }
        let reading = Temperature(celsius: -3, station: "Tromsø")
        let data = try #require(try TransformableValueCoding.encode(reading, transformerName: name))
        #expect(String(decoding: data, as: UTF8.self).contains("Tromsø"), "the transformer's JSON is stored")
        #expect(try TransformableValueCoding.decode(data, transformerName: name) as? Temperature == reading)
        let wrong = try #require(throws: Error.self) {
            try TransformableValueCoding.encode("text", transformerName: name)
        }
        #expect((wrong as NSError).code == NSManagedObjectValidationError)
        #expect((wrong as NSError).localizedDescription.contains(name))
        #expect((wrong as NSError).userInfo[NSUnderlyingErrorKey] != nil)
        let corrupt = try #require(throws: Error.self) {
            try TransformableValueCoding.decode(Data("{".utf8), transformerName: name)
        }
        #expect((corrupt as NSError).code == CocoaError.Code.coderReadCorrupt.rawValue)
    }

    @Test func unarchivingTransformersRunInReverseToStore() throws {
        let name = "TransformableValueCodingTests.Coordinate"
        ValueTransformer.setValueTransformer(CoordinateTransformer(), forName: NSValueTransformerName(name))
        defer { ValueTransformer.setValueTransformer(nil, forName: NSValueTransformerName(name)) }
        let coordinate = ArchivedCoordinate(latitude: 1, longitude: 2, label: "here")
        let data = try #require(try TransformableValueCoding.encode(coordinate, transformerName: name))
        #expect(try TransformableValueCoding.decode(data, transformerName: name) as? ArchivedCoordinate == coordinate)
        let keyed = NSValueTransformerName.keyedUnarchiveFromDataTransformerName.rawValue
        let note = try #require(try TransformableValueCoding.encode(InsecureNote(text: "n"), transformerName: keyed))
        #expect((try TransformableValueCoding.decode(note, transformerName: keyed) as? InsecureNote)?.text == "n")
        #expect(throws: Error.self) { try TransformableValueCoding.decode(note, transformerName: nil) }
    }

    @Test func failuresNameTheProblem() throws {
        let missing = try #require(throws: Error.self) {
            try TransformableValueCoding.encode(1, transformerName: "Nope")
        }
        #expect((missing as NSError).code == NSCoreDataError)
        #expect(
            (missing as NSError).localizedDescription.contains(
                "no ValueTransformer is registered under the name 'Nope'"))
        #expect(throws: Error.self) { try TransformableValueCoding.decode(Data(), transformerName: "Nope") }

        let names = [
            "TransformableValueCodingTests.NotData", "TransformableValueCodingTests.Nil",
            "TransformableValueCodingTests.OneWay",
        ]
        ValueTransformer.setValueTransformer(NotDataTransformer(), forName: NSValueTransformerName(names[0]))
        ValueTransformer.setValueTransformer(NilTransformer(), forName: NSValueTransformerName(names[1]))
        ValueTransformer.setValueTransformer(OneWayDataTransformer(), forName: NSValueTransformerName(names[2]))
        defer { for name in names { ValueTransformer.setValueTransformer(nil, forName: NSValueTransformerName(name)) } }

        let notData = try #require(throws: Error.self) {
            try TransformableValueCoding.encode(1, transformerName: names[0])
        }
        #expect((notData as NSError).code == NSManagedObjectValidationError)
        #expect((notData as NSError).localizedDescription.contains("not Data"))
        let returnsNil = try #require(throws: Error.self) {
            try TransformableValueCoding.encode(1, transformerName: names[1])
        }
        #expect((returnsNil as NSError).localizedDescription.contains("returned nil"))
        let unreadable = try #require(throws: Error.self) {
            try TransformableValueCoding.decode(Data([1]), transformerName: names[1])
        }
        #expect((unreadable as NSError).code == CocoaError.Code.coderReadCorrupt.rawValue)
        #expect(try TransformableValueCoding.encode(1, transformerName: names[2]) == Data("x".utf8))
        let oneWay = try #require(throws: Error.self) {
            try TransformableValueCoding.decode(Data("x".utf8), transformerName: names[2])
        }
        #expect((oneWay as NSError).code == NSCoreDataError)
        #expect((oneWay as NSError).localizedDescription.contains("does not allow reverse transformation"))

        let damaged = try #require(throws: Error.self) {
            try TransformableValueCoding.decode(Data("bplist00".utf8), transformerName: nil)
        }
        #expect((damaged as NSError).code == CocoaError.Code.coderReadCorrupt.rawValue)
        struct Plain {}
        let unarchivable = try #require(throws: Error.self) {
            try TransformableValueCoding.encode(Plain(), transformerName: nil)
        }
        #expect((unarchivable as NSError).code == NSManagedObjectValidationError)
        #expect((unarchivable as NSError).localizedDescription.contains("Plain"))
    }
}
