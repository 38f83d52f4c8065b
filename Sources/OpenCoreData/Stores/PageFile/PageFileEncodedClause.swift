// One `attribute op constant` clause answered from its slot's encoded bytes: integers,
// booleans, dates and numbers compared as the row holds them, strings tested on their
// UTF-8 (ASCII) or on a String made straight from it — never a value boxed in `Any`.
// Each test reproduces the operator's prepared test (`ComparisonOperation.prepared`)
// for the value kinds it reads, and answers nil for anything else (another tag, a NaN,
// an integer beyond 2^53 where that test compares Doubles): the caller then runs that
// very test on the decoded value, so the answer and any error stay the evaluator's.
import Foundation

/// The encoded-bytes form of one clause's test, for the shapes it covers: a trivial value
/// (its tables are reached unretained), so testing a row copies nothing reference counted.
/// Valid while the objects its initializer added to `keepers` live.
struct PageFileEncodedClause {
    private enum Test {
        /// `==` (`!=` when negated) an integer, on an integer or boolean attribute.
        case integerEquals(Int64, negated: Bool)
        /// `<`, `<=`, `>`, `>=` a number, on a number attribute: compared as Doubles.
        case ordered(NSComparisonPredicate.Operator, Double)
        /// BETWEEN two integers, on an integer or boolean attribute.
        case integerBetween(Int64, Int64)
        /// IN a list without string options, on an integer or boolean attribute: the
        /// members' integer keys, and whether nil is a member.
        case integerMember(Unmanaged<PageFileIntegerMembers>, nullIsMember: Bool)
        /// `==`, `!=`, orderings and BETWEEN of dates, by seconds since the reference date.
        case date(NSComparisonPredicate.Operator, Double, Double)
        /// A string operator on a string attribute.
        case string(Unmanaged<PageFileEncodedStringClause>)
    }

    private let test: Test
    private let attributeType: NSAttributeType

    /// The encoded form of `attribute operation constant`, its tables appended to `keepers`
    /// (which the caller keeps as long as it uses the clause); nil when the shape is not covered.
    init?(
        attribute: NSAttributeDescription, operation: ComparisonOperation, constant: Any?,
        keepers: inout [AnyObject]
    ) {
        attributeType = attribute.attributeType
        let right = PredicateValue(constant)
        if attributeType == .stringAttributeType, case .string(let pattern) = right {
            guard let strings = Self.stringTest(operation, pattern) else { return nil }
            keepers.append(strings)
            test = .string(Unmanaged.passUnretained(strings))
            return
        }
        guard let test = Self.test(attributeType, operation, right, keepers: &keepers) else { return nil }
        self.test = test
    }

    private static func test(
        _ type: NSAttributeType, _ operation: ComparisonOperation, _ right: PredicateValue,
        keepers: inout [AnyObject]
    ) -> Test? {
        let integral = [
            .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .booleanAttributeType,
        ]
        .contains(type)
        let numeric = integral || type == .doubleAttributeType || type == .floatAttributeType
        let operators: [NSComparisonPredicate.Operator] = [
            .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo,
        ]
        switch (operation.type, right) {
        case (.equalTo, .integer(let number)) where integral: return .integerEquals(number, negated: false)
        case (.notEqualTo, .integer(let number)) where integral: return .integerEquals(number, negated: true)
        case (let kind, .integer), (let kind, .double):
            guard numeric, operators.contains(kind), let bound = right.doubleValue, !bound.isNaN else { return nil }
            return .ordered(kind, bound)
        case (.between, .collection(let bounds, _)) where bounds.count == 2:
            switch (PredicateValue(bounds[0]), PredicateValue(bounds[1])) {
            case (.integer(let low), .integer(let high)) where integral: return .integerBetween(low, high)
            case (.date(let low), .date(let high)) where type == .dateAttributeType:
                return .date(.between, low.timeIntervalSinceReferenceDate, high.timeIntervalSinceReferenceDate)
            default: return nil
            }
        case (.in, .collection(let members, _)) where integral && !operation.options.folds:
            var keys: Set<Int64> = []
            var nullIsMember = false
            for member in members {
                switch PredicateHashKey(PredicateValue(member)) {
                case .integer(let number): keys.insert(number)
                case .null: nullIsMember = true
                // Never equal to an integer key (the list's hashed membership).
                case .double, .string, .date, .data, .uuid, .url: continue
                case nil: return nil
                }
            }
            let members = PageFileIntegerMembers(keys)
            keepers.append(members)
            return .integerMember(Unmanaged.passUnretained(members), nullIsMember: nullIsMember)
        case (let kind, .date(let date)) where type == .dateAttributeType:
            guard kind == .equalTo || kind == .notEqualTo || operators.contains(kind) else { return nil }
            let seconds = date.timeIntervalSinceReferenceDate
            return seconds.isNaN ? nil : .date(kind, seconds, seconds)
        default: return nil
        }
    }

    /// `==`, `!=`, BEGINSWITH, ENDSWITH, CONTAINS and LIKE against a constant string.
    private static func stringTest(_ operation: ComparisonOperation, _ pattern: String)
        -> PageFileEncodedStringClause?
    {
        let options = operation.options
        let matcher = ASCIIStringMatcher(pattern: pattern, options: options)
        func ascii(_ test: ASCIIStringMatcher.Test, negated: Bool = false) -> (
            ASCIIStringMatcher, ASCIIStringMatcher.Test, Bool
        )? {
            matcher.map { ($0, test, negated) }
        }
        switch operation.type {
        case .equalTo, .notEqualTo:
            let negated = operation.type == .notEqualTo
            let folded = options.folds ? FoldedString(pattern, options: options).scalars : []
            let equals: (String) -> Bool = { subject in
                let equal =
                    options.folds ? FoldedString(subject, options: options).scalars == folded : subject == pattern
                return equal != negated
            }
            return PageFileEncodedStringClause(ascii: ascii(.equals, negated: negated), text: equals, null: negated)
        case .beginsWith, .endsWith, .contains:
            let kind: ASCIIStringMatcher.Test =
                operation.type == .beginsWith ? .isPrefix : operation.type == .endsWith ? .isSuffix : .isContained
            let search = StringSearch(kind, pattern: pattern, options: options)
            return PageFileEncodedStringClause(ascii: ascii(kind), text: search.matches, null: false)
        case .like:
            let like = LikePattern(pattern, options: options)
            return PageFileEncodedStringClause(ascii: nil, text: like.matches, null: false)
        default: return nil
        }
    }

    /// The string test, when the clause is a string operator's (reached unretained: valid
    /// while the clause's keepers live).
    var stringTest: Unmanaged<PageFileEncodedStringClause>? {
        if case .string(let strings) = test { return strings }
        return nil
    }

    /// The clause's answer for the value at `offset` of the row `bytes` (checked by
    /// `PageFileRowCodec.slotOffsets`); nil when the caller must run the decoded test.
    func evaluate(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Bool? {
        guard offset < bytes.count else { return nil }
        let tag = bytes[offset]
        switch test {
        case .integerEquals(let number, let negated):
            if tag == PageFileRowCodec.Tag.null.rawValue { return negated }
            // A boolean reads as 1 or 0 in every attribute this test is made for (`attributeInteger`).
            if tag == PageFileRowCodec.Tag.booleanTrue.rawValue { return (number == 1) != negated }
            if tag == PageFileRowCodec.Tag.booleanFalse.rawValue { return (number == 0) != negated }
            guard let value = integer(bytes, offset, tag) else { return nil }
            return (value == number) != negated
        case .ordered(let kind, let bound):
            if tag == PageFileRowCodec.Tag.null.rawValue { return false }
            guard let value = number(bytes, offset, tag) else { return nil }
            return Self.holds(kind, value, bound)
        case .integerBetween(let low, let high):
            if tag == PageFileRowCodec.Tag.null.rawValue { return false }
            guard let value = integer(bytes, offset, tag) else { return nil }
            return value >= low && value <= high
        case .integerMember(let keys, let nullIsMember):
            if tag == PageFileRowCodec.Tag.null.rawValue { return nullIsMember }
            guard let value = integer(bytes, offset, tag) else { return nil }
            return keys._withUnsafeGuaranteedRef { $0.keys.contains(value) }
        case .date(let kind, let low, let high):
            if tag == PageFileRowCodec.Tag.null.rawValue { return kind == .notEqualTo }
            guard let seconds = Self.dateSeconds(bytes, offset, tag), !seconds.isNaN else { return nil }
            switch kind {
            case .equalTo: return seconds == low
            case .notEqualTo: return seconds != low
            case .between: return seconds >= low && seconds <= high
            default: return Self.holds(kind, seconds, low)
            }
        case .string(let strings):
            return strings._withUnsafeGuaranteedRef { strings in
                if tag == PageFileRowCodec.Tag.null.rawValue { return strings.null }
                guard let utf8 = PageFileRowCodec.stringBytes(bytes, at: offset) else { return nil }
                return strings.evaluate(utf8: utf8)
            }
        }
    }

    private static func holds(_ kind: NSComparisonPredicate.Operator, _ value: Double, _ bound: Double) -> Bool {
        switch kind {
        case .lessThan: value < bound
        case .lessThanOrEqualTo: value <= bound
        case .greaterThan: value > bound
        default: value >= bound
        }
    }

    private func integer(_ bytes: UnsafeRawBufferPointer, _ offset: Int, _ tag: UInt8) -> Int64? {
        Self.attributeInteger(bytes, offset, tag, type: attributeType)
    }

    /// The value with tag `tag` at `offset` of `bytes` as the evaluator sees an attribute of
    /// `attributeType` holding it (narrow types truncated as `attributeValue` truncates
    /// them, booleans 0 or 1); nil for any other tag or type.
    static func attributeInteger(
        _ bytes: UnsafeRawBufferPointer, _ offset: Int, _ tag: UInt8, type attributeType: NSAttributeType
    ) -> Int64? {
        let raw: Int64
        if tag >= PageFileRowCodec.smallIntegerBase {
            raw = Int64(tag - PageFileRowCodec.smallIntegerBase)
        } else if tag == PageFileRowCodec.Tag.integer.rawValue {
            var reader = StoreByteReader(row: bytes, from: offset + 1)
            guard let number = try? reader.signed() else { return nil }
            raw = number
        } else if tag == PageFileRowCodec.Tag.booleanTrue.rawValue || tag == PageFileRowCodec.Tag.booleanFalse.rawValue
        {
            guard attributeType != .doubleAttributeType, attributeType != .floatAttributeType else { return nil }
            return tag == PageFileRowCodec.Tag.booleanTrue.rawValue ? 1 : 0
        } else {
            return nil
        }
        switch attributeType {
        case .integer16AttributeType: return Int64(Int16(truncatingIfNeeded: raw))
        case .integer32AttributeType: return Int64(Int32(truncatingIfNeeded: raw))
        case .integer64AttributeType: return raw
        case .booleanAttributeType: return raw != 0 ? 1 : 0
        default: return nil
        }
    }

    /// The attribute's number as the prepared ordering compares it: a Double, exact for
    /// integers within 2^53; nil otherwise (and for NaN, which takes the general rules).
    private func number(_ bytes: UnsafeRawBufferPointer, _ offset: Int, _ tag: UInt8) -> Double? {
        switch attributeType {
        case .doubleAttributeType, .floatAttributeType:
            var reader = StoreByteReader(row: bytes, from: offset + 1)
            let value: Double
            if tag == PageFileRowCodec.Tag.double.rawValue, let bits = try? reader.fixed64() {
                value = Double(bitPattern: bits)
            } else if tag == PageFileRowCodec.Tag.float.rawValue, let bits = try? reader.fixed32() {
                value = Double(Float(bitPattern: bits))
            } else {
                return nil
            }
            let narrowed = attributeType == .floatAttributeType ? Double(Float(value)) : value
            return narrowed.isNaN ? nil : narrowed
        default:
            guard let value = integer(bytes, offset, tag), value.magnitude < 1 << 53 else { return nil }
            return Double(value)
        }
    }

    /// A date's seconds since the reference date; nil for any other tag.
    static func dateSeconds(_ bytes: UnsafeRawBufferPointer, _ offset: Int, _ tag: UInt8) -> Double? {
        var reader = StoreByteReader(row: bytes, from: offset + 1)
        if tag == PageFileRowCodec.Tag.date.rawValue, let bits = try? reader.fixed64() {
            return Double(bitPattern: bits)
        }
        if tag == PageFileRowCodec.Tag.wholeSecondDate.rawValue, let seconds = try? reader.signed() {
            return Double(seconds)
        }
        return nil
    }
}

/// The integer keys of an IN list, held once per scan and reached unretained.
final class PageFileIntegerMembers {
    let keys: Set<Int64>

    init(_ keys: Set<Int64>) { self.keys = keys }
}
