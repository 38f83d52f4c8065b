// The forms the acceptance programs (Stage4, Stage5) and the guides in
// ../shared/reference write with UndoManager, ValueTransformer, NSValueTransformerName,
// NSSecureUnarchiveFromDataTransformer and IndexPath, compiled and run standalone
// (without contexts or stores). Each declaration is copied from its source; where the
// source cannot compile on any platform, the comment says what changed.
import Foundation
import OpenCoreData
import Testing

// Stage5/main.swift, verbatim.

/// A value kept in Employee.address, a transformable attribute.
struct Address: Codable, Equatable {
    let street: String
    let city: String
    let zipCode: String
}

/// Turns an Address into JSON data for the store and back; registered by name, the
/// name the model file gives as the attribute's valueTransformerName.
final class AddressTransformer: ValueTransformer {
    static let name = NSValueTransformerName(rawValue: "AddressTransformer")
    nonisolated(unsafe) static var encoded = 0
    nonisolated(unsafe) static var decoded = 0

    override class func transformedValueClass() -> AnyClass { NSData.self }

    override class func allowsReverseTransformation() -> Bool { true }

    override func transformedValue(_ value: Any?) -> Any? {
        guard let address = value as? Address else { return nil }
        Self.encoded += 1
        return try? JSONEncoder().encode(address)
    }

    override func reverseTransformedValue(_ value: Any?) -> Any? {
        guard let data = value as? Data else { return nil }
        Self.decoded += 1
        return try? JSONDecoder().decode(Address.self, from: data)
    }

    static func register() {
        ValueTransformer.setValueTransformer(AddressTransformer(), forName: name)
    }
}

// core-data-guide.txt, "Transformable Attributes". The guide writes
// `@objc(AddressTransformer)` (Linux has no Objective-C attribute) and lists the struct
// `Address.self` among `[AnyClass]` (a struct is not a class on any platform): here the
// value is an NSSecureCoding class and the attribute is dropped.

/// The guide's address, as a class that secure coding can archive.
final class GuideAddress: NSObject, NSSecureCoding {
    static var supportsSecureCoding: Bool { true }
    let street: String

    init(street: String) {
        self.street = street
    }

    init?(coder: NSCoder) {
        guard let street = coder.decodeObject(of: NSString.self, forKey: "street") else { return nil }
        self.street = String(describing: street)
    }

    func encode(with coder: NSCoder) {
        coder.encode(NSString(string: street), forKey: "street")
    }
}

class GuideAddressTransformer: NSSecureUnarchiveFromDataTransformer {
    static let name = NSValueTransformerName(rawValue: "GuideAddressTransformer")
    override static var allowedTopLevelClasses: [AnyClass] {
        return [GuideAddress.self, NSString.self]
    }
    static func register() {
        let transformer = GuideAddressTransformer()
        ValueTransformer.setValueTransformer(transformer, forName: name)
    }
}

// core-data-guide.txt, "Encrypt sensitive attributes using Transformable" (encrypt and
// decrypt are the app's; here a reversible byte mask stands in).
class EncryptedStringTransformer: ValueTransformer {
    override func transformedValue(_ value: Any?) -> Any? {
        guard let string = value as? String else { return nil }
        // Implement encryption
        return encrypt(string)
    }
    override func reverseTransformedValue(_ value: Any?) -> Any? {
        guard let data = value as? Data else { return nil }
        // Implement decryption
        return decrypt(data)
    }
    private func encrypt(_ string: String) -> Data { Data(string.utf8.map { $0 ^ 0x5A }) }
    private func decrypt(_ data: Data) -> String { String(decoding: data.map { $0 ^ 0x5A }, as: UTF8.self) }
}

// Stage4/main.swift: `describe(_ path: IndexPath?)`, verbatim but renamed (Stage4 also
// declares describe(_: NSFetchedResultsChangeType)).
func describePath(_ path: IndexPath?) -> String {
    guard let path else { return "nil" }
    return "[\(path.section),\(path.row)]"
}

@Suite struct FoundationGapsPortingFormsTests {
    @Test func stage5AddressTransformer() throws {
        AddressTransformer.register()
        let home = Address(street: "1 Infinite Loop", city: "Cupertino", zipCode: "95014")
        let stored = try #require(try TransformableValueCoding.encode(home, transformerName: "AddressTransformer"))
        #expect(
            AddressTransformer.encoded >= 1, "the registered ValueTransformer turns the value into data for the store")
        let read = try TransformableValueCoding.decode(stored, transformerName: AddressTransformer.name.rawValue)
        #expect(read as? Address == home, "a Codable struct round-trips through its ValueTransformer")
        #expect(AddressTransformer.decoded >= 1, "the transformer turns the stored data back into the value")
        let skills = try TransformableValueCoding.encode(["Swift", "Core Data"], transformerName: nil)
        #expect(
            try TransformableValueCoding.decode(skills, transformerName: nil) as? [String] == ["Swift", "Core Data"],
            "an array of strings round-trips through the default transformer")
        #expect(try TransformableValueCoding.encode(nil, transformerName: "AddressTransformer") == nil)
    }

    @Test func guideTransformers() throws {
        GuideAddressTransformer.register()
        let transformer = try #require(ValueTransformer(forName: GuideAddressTransformer.name))
        let data = try #require(transformer.reverseTransformedValue(GuideAddress(street: "Main St")) as? Data)
        #expect((transformer.transformedValue(data) as? GuideAddress)?.street == "Main St")
        let stored = try #require(
            try TransformableValueCoding.encode(GuideAddress(street: "Elm"), transformerName: "GuideAddressTransformer")
        )
        #expect(
            (try TransformableValueCoding.decode(stored, transformerName: "GuideAddressTransformer") as? GuideAddress)?
                .street == "Elm")

        let encrypted = EncryptedStringTransformer()
        let secret = try #require(encrypted.transformedValue("pin 1234") as? Data)
        #expect(secret != Data("pin 1234".utf8) && encrypted.reverseTransformedValue(secret) as? String == "pin 1234")
    }

    @Test func stage4UndoManagerForms() {
        // Stage4 makes the manager, turns event grouping off and wraps each change in a group.
        let undoManager = UndoManager()
        undoManager.groupsByEvent = false
        let contextUndoManager: UndoManager? = undoManager
        #expect(contextUndoManager === undoManager)
        final class Counter {
            var value = 0
        }
        let counter = Counter()
        func group(_ body: () -> Void) {
            undoManager.beginUndoGrouping()
            body()
            undoManager.endUndoGrouping()
        }
        func set(_ value: Int) {
            let old = counter.value
            counter.value = value
            undoManager.registerUndo(withTarget: counter) { _ in set(old) }
        }
        group { set(1) }
        #expect(contextUndoManager?.canUndo == true)
        undoManager.undo()
        #expect(counter.value == 0 && undoManager.canRedo)
        undoManager.redo()
        #expect(counter.value == 1)
        undoManager.disableUndoRegistration()
        set(5)
        undoManager.enableUndoRegistration()
        group { set(6) }
        undoManager.undo()
        #expect(counter.value == 5, "a change made with registration disabled is not undone")
        undoManager.removeAllActions()
        #expect(!undoManager.canUndo && !undoManager.canRedo)
    }

    @Test func indexPathForms() {
        #expect(describePath(IndexPath(row: 1, section: 1)) == "[1,1]" && describePath(nil) == "nil")
        let updateDestinations: [IndexPath?] = [nil, IndexPath(row: 1, section: 0)]
        #expect(updateDestinations.allSatisfy { $0 == nil || $0 == IndexPath(row: 1, section: 0) })
        // making-apps-with-core-data.md, the CollectionDifference delegate.
        let frcSection = 0
        let oldRow = 2
        let newRow = 5
        let move = (at: IndexPath(row: oldRow, section: frcSection), to: IndexPath(row: newRow, section: frcSection))
        #expect(
            move.at.row == 2 && move.to.row == 5 && [IndexPath(row: newRow, section: frcSection)].first?.section == 0)
    }
}
