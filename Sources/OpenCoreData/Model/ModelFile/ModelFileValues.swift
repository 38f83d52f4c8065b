// The values inside a model file's attributes: type and delete-rule names, default
// values written as text, and minimum, maximum and pattern settings, which Core Data
// turns into validation predicates when it compiles the model.
import Foundation

enum ModelFileValues {
    /// `attributeType` as Xcode writes it.
    static let attributeTypes: [String: NSAttributeType] = [
        "Undefined": .undefinedAttributeType, "Integer 16": .integer16AttributeType,
        "Integer 32": .integer32AttributeType, "Integer 64": .integer64AttributeType,
        "Decimal": .decimalAttributeType, "Double": .doubleAttributeType, "Float": .floatAttributeType,
        "String": .stringAttributeType, "Boolean": .booleanAttributeType, "Date": .dateAttributeType,
        "Binary": .binaryDataAttributeType, "UUID": .UUIDAttributeType, "URI": .URIAttributeType,
        "Transformable": .transformableAttributeType, "ObjectID": .objectIDAttributeType,
    ]

    /// The name Xcode writes for `type`.
    static func name(of type: NSAttributeType) -> String {
        attributeTypes.first { $0.value == type }?.key ?? "\(type.rawValue)"
    }

    /// `deletionRule` as Xcode writes it.
    static let deleteRules: [String: NSDeleteRule] = [
        "Nullify": .nullifyDeleteRule, "Cascade": .cascadeDeleteRule, "Deny": .denyDeleteRule,
        "No Action": .noActionDeleteRule,
    ]

    /// The default value `text` of an attribute of `type`, as the Swift value objects hold.
    static func defaultValue(_ text: String, type: NSAttributeType, attributes: ModelFileAttributes)
        throws(ModelFileError) -> Any
    {
        func bad() -> ModelFileError {
            attributes.error("defaultValueString '\(text)' is not a valid \(name(of: type))")
        }
        let value: Any?
        switch type {
        case .integer16AttributeType: value = Int16(text)
        case .integer32AttributeType: value = Int32(text)
        case .integer64AttributeType: value = Int64(text)
        case .doubleAttributeType: value = Double(text)
        case .floatAttributeType: value = Float(text)
        case .decimalAttributeType: value = decimal(text)
        case .booleanAttributeType: value = booleans[text.uppercased()]
        case .stringAttributeType: value = text
        case .UUIDAttributeType: value = UUID(uuidString: text)
        case .URIAttributeType: value = URL(string: text)
        case .dateAttributeType, .binaryDataAttributeType, .transformableAttributeType, .objectIDAttributeType,
            .undefinedAttributeType, .compositeAttributeType:
            throw attributes.error("an attribute of type \(name(of: type)) cannot have a defaultValueString")
        }
        guard let value else { throw bad() }
        return value
    }

    /// The words a Boolean default value may be written as.
    private static let booleans: [String: Bool] = [
        "YES": true, "TRUE": true, "1": true, "NO": false, "FALSE": false, "0": false,
    ]

    /// A decimal written in plain notation (`Decimal(string:)` alone accepts a number
    /// followed by anything).
    static func decimal(_ text: String) -> Decimal? {
        guard Double(text) != nil, !text.contains(where: { $0.isLetter && $0 != "e" && $0 != "E" }) else {
            return nil
        }
        return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
    }

    /// The validation predicates, warnings and Core Data error codes of an attribute's
    /// minimum, maximum and pattern, in that order (1620/1610 for numbers below/above,
    /// 1640/1630 for dates too soon/late, 1670/1660 for strings too short/long, 1680 for
    /// a pattern).
    static func validation(of attribute: NSAttributeDescription, from attributes: inout ModelFileAttributes)
        throws(ModelFileError) -> (predicates: [NSPredicate], warnings: [String], codes: [Int])
    {
        var predicates: [NSPredicate] = []
        var warnings: [String] = []
        var codes: [Int] = []
        let type = attribute.attributeType
        let minimum = attributes.string("minValueString")
        let maximum = attributes.string("maxValueString")
        let minimumDate = try attributes.number("minDateTimeInterval")
        let maximumDate = try attributes.number("maxDateTimeInterval")
        let pattern = attributes.string("regularExpressionString")
        func add(_ format: String, _ value: Any, _ warning: String, _ code: Int) {
            predicates.append(NSPredicate(format: format, argumentArray: [value]))
            warnings.append(warning)
            codes.append(code)
        }
        for (bound, text) in [(">=", minimum), ("<=", maximum)] {
            guard let text else { continue }
            let word = bound == ">=" ? "minimum" : "maximum"
            switch type {
            case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType:
                guard let value = Int64(text) else { throw attributes.error("\(word) '\(text)' is not an integer") }
                add(
                    "SELF \(bound) %@", NSNumber(value: value), "the value must be \(bound) \(value)",
                    bound == ">=" ? NSValidationNumberTooSmallError : NSValidationNumberTooLargeError)
            case .doubleAttributeType, .floatAttributeType:
                guard let value = Double(text) else { throw attributes.error("\(word) '\(text)' is not a number") }
                add(
                    "SELF \(bound) %@", NSNumber(value: value), "the value must be \(bound) \(value)",
                    bound == ">=" ? NSValidationNumberTooSmallError : NSValidationNumberTooLargeError)
            case .decimalAttributeType:
                guard let value = decimal(text) else { throw attributes.error("\(word) '\(text)' is not a number") }
                add(
                    "SELF \(bound) %@", NSDecimalNumber(decimal: value), "the value must be \(bound) \(value)",
                    bound == ">=" ? NSValidationNumberTooSmallError : NSValidationNumberTooLargeError)
            case .stringAttributeType:
                guard let value = Int(text), value >= 0 else {
                    throw attributes.error("\(word) length '\(text)' is not a whole number")
                }
                add(
                    "FUNCTION(SELF, 'length') \(bound) %@", NSNumber(value: value),
                    "the length must be \(bound) \(value)",
                    bound == ">=" ? NSValidationStringTooShortError : NSValidationStringTooLongError)
            default:
                throw attributes.error("a \(word) is not supported for an attribute of type \(name(of: type))")
            }
        }
        for (bound, interval) in [(">=", minimumDate), ("<=", maximumDate)] {
            guard let interval else { continue }
            guard type == .dateAttributeType else {
                throw attributes.error("a date bound is not supported for an attribute of type \(name(of: type))")
            }
            let date = Date(timeIntervalSinceReferenceDate: interval)
            add(
                "SELF \(bound) %@", date, "the date must be \(bound) \(date)",
                bound == ">=" ? NSValidationDateTooSoonError : NSValidationDateTooLateError)
        }
        if let pattern {
            guard type == .stringAttributeType else {
                throw attributes.error("regularExpressionString applies to String attributes only")
            }
            let predicate = NSPredicate(format: "SELF MATCHES %@", argumentArray: [pattern])
            predicates.append(predicate)
            warnings.append("the value must match \(pattern)")
            codes.append(NSValidationStringPatternMatchingError)
        }
        return (predicates, warnings, codes)
    }
}
