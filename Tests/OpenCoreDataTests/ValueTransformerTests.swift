// ValueTransformer: the registry (standard names, lookup by name and type, removal,
// concurrent use), the base class's defaults, the standard transformers, and
// CodableValueTransformer.
import Foundation
import Testing

@testable import OpenCoreData

/// Uppercases strings; one-way.
final class UppercaseTransformer: ValueTransformer {
    override class func transformedValueClass() -> AnyClass { NSString.self }
    override class func allowsReverseTransformation() -> Bool { false }
    override func transformedValue(_ value: Any?) -> Any? { (value as? String)?.uppercased() }
}

/// Doubles numbers; reversible by the base class's default (which transforms again).
final class DoublingTransformer: ValueTransformer {
    override func transformedValue(_ value: Any?) -> Any? { (value as? Int).map { $0 * 2 } }
}

struct Temperature: Codable, Equatable {
    var celsius: Double
    var station: String
}

@Suite struct ValueTransformerTests {
    @Test func theStandardTransformersAreRegistered() {
        let names = ValueTransformer.valueTransformerNames()
        for name in [
            NSValueTransformerName.negateBooleanTransformerName, .isNilTransformerName, .isNotNilTransformerName,
            .unarchiveFromDataTransformerName, .keyedUnarchiveFromDataTransformerName,
            .secureUnarchiveFromDataTransformerName,
        ] {
            #expect(names.contains(name), "\(name.rawValue)")
            #expect(ValueTransformer(forName: name) != nil)
        }
        #expect(NSValueTransformerName.secureUnarchiveFromDataTransformerName.rawValue == "NSSecureUnarchiveFromData")
        #expect(NSValueTransformerName.negateBooleanTransformerName.rawValue == "NSNegateBoolean")
        #expect(
            ValueTransformer(forName: .secureUnarchiveFromDataTransformerName) is NSSecureUnarchiveFromDataTransformer)
    }

    @Test func registrationLookupAndRemoval() {
        let name = NSValueTransformerName("ValueTransformerTests.Uppercase")
        #expect(ValueTransformer(forName: name) == nil)
        let transformer = UppercaseTransformer()
        ValueTransformer.setValueTransformer(transformer, forName: name)
        #expect(ValueTransformer(forName: name) === transformer)
        #expect(UppercaseTransformer(forName: name) === transformer, "a typed lookup returns the registered instance")
        #expect(DoublingTransformer(forName: name) == nil, "a typed lookup of another class finds nothing")
        #expect(ValueTransformer.valueTransformerNames().contains(name))
        ValueTransformer.setValueTransformer(nil, forName: name)
        #expect(ValueTransformer(forName: name) == nil && !ValueTransformer.valueTransformerNames().contains(name))
        #expect(NSValueTransformerName(rawValue: "x") == NSValueTransformerName("x"))
    }

    @Test func theRegistryIsSafeFromManyThreads() {
        DispatchQueue.concurrentPerform(iterations: 400) { iteration in
            let name = NSValueTransformerName("ValueTransformerTests.Concurrent.\(iteration % 7)")
            if iteration % 3 == 0 {
                ValueTransformer.setValueTransformer(DoublingTransformer(), forName: name)
            } else {
                _ = ValueTransformer(forName: name)?.transformedValue(iteration)
                _ = ValueTransformer.valueTransformerNames()
            }
        }
        #expect(ValueTransformer(forName: NSValueTransformerName("ValueTransformerTests.Concurrent.0")) != nil)
    }

    @Test func theBaseClassDefaults() {
        let plain = ValueTransformer()
        #expect(plain.transformedValue("same") as? String == "same")
        #expect(plain.reverseTransformedValue(3) as? Int == 3)
        #expect(ObjectIdentifier(ValueTransformer.transformedValueClass()) == ObjectIdentifier(NSObject.self))
        #expect(ValueTransformer.allowsReverseTransformation())
        #expect(DoublingTransformer().reverseTransformedValue(4) as? Int == 8, "reverse calls transformedValue")
        #expect(UppercaseTransformer().transformedValue("abc") as? String == "ABC")
        #expect(UppercaseTransformer().reverseTransformedValue("ABC") == nil, "no reverse: nil instead of an exception")
    }

    @Test func negateIsNilAndIsNotNil() throws {
        let negate = try #require(ValueTransformer(forName: .negateBooleanTransformerName))
        #expect(negate.transformedValue(true) as? Bool == false)
        #expect(negate.transformedValue(NSNumber(value: false)) as? Bool == true)
        #expect(negate.transformedValue(nil) as? Bool == true)
        #expect(negate.reverseTransformedValue(false) as? Bool == true)
        #expect(negate.transformedValue(Date()) == nil)
        let isNil = try #require(ValueTransformer(forName: .isNilTransformerName))
        let isNotNil = try #require(ValueTransformer(forName: .isNotNilTransformerName))
        let empty: String? = nil
        #expect(isNil.transformedValue(empty) as? Bool == true && isNil.transformedValue("x") as? Bool == false)
        #expect(isNotNil.transformedValue(empty) as? Bool == false && isNotNil.transformedValue(0) as? Bool == true)
        #expect(!type(of: isNil).allowsReverseTransformation())
        #expect(ObjectIdentifier(type(of: isNil).transformedValueClass()) == ObjectIdentifier(NSNumber.self))
    }

    @Test func codableValuesAsJSONAndPropertyLists() throws {
        let reading = Temperature(celsius: 21.5, station: "Oslo")
        for format in [CodableValueTransformer<Temperature>.Format.json, .propertyList] {
            let transformer = CodableValueTransformer<Temperature>(format: format)
            let data = try #require(transformer.transformedValue(reading) as? Data)
            #expect(transformer.reverseTransformedValue(data) as? Temperature == reading)
            #expect(transformer.transformedValue("not a temperature") == nil)
            #expect(transformer.reverseTransformedValue(Data("garbage".utf8)) == nil)
            let wrongType = try #require(throws: Error.self) { try transformer.transformedValueThrowing(3) }
            #expect((wrongType as NSError).localizedDescription.contains("expects a Temperature"))
            let badBytes = try #require(throws: Error.self) {
                try transformer.reverseTransformedValueThrowing(Data([1, 2]))
            }
            #expect((badBytes as NSError).code == CocoaError.Code.coderReadCorrupt.rawValue)
        }
        let json = try #require(CodableValueTransformer<Temperature>().transformedValue(reading) as? Data)
        #expect(String(decoding: json, as: UTF8.self) == #"{"celsius":21.5,"station":"Oslo"}"#, "sorted keys")
        #expect(
            ObjectIdentifier(CodableValueTransformer<Temperature>.transformedValueClass())
                == ObjectIdentifier(NSData.self))
        let name = NSValueTransformerName("ValueTransformerTests.Temperature")
        CodableValueTransformer<Temperature>.register(forName: name)
        #expect(CodableValueTransformer<Temperature>(forName: name) != nil)
        ValueTransformer.setValueTransformer(nil, forName: name)
    }
}
