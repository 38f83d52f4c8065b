// The lexer answers ASCII characters without Unicode property lookups; these are the
// facts that makes exact: for every ASCII scalar, the sets it uses equal the properties.
import Foundation
import OpenCoreData
import Testing

struct PredicateLexerASCIITests {
    @Test func asciiSetsEqualTheUnicodeProperties() {
        for value in UInt32(0)..<0x80 {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let letter = ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
            let digit = ("0"..."9").contains(scalar)
            #expect(scalar.properties.isWhitespace == (scalar == " " || (9...13).contains(value)), "U+\(value)")
            #expect(scalar.properties.isAlphabetic == letter, "U+\(value)")
            #expect((scalar.properties.generalCategory == .decimalNumber) == digit, "U+\(value)")
            #expect((scalar.properties.numericType != nil) == digit, "U+\(value)")
        }
    }

    @Test func formatsWithEveryKindOfTokenStillParse() {
        let predicate = NSPredicate(
            format:
                "\tname ==[c] 'Ann'\n AND age >= %d OR #size BETWEEN {1, 2} AND $v.x != nil AND ANY kids.@count > 2",
            3)
        #expect(predicate.validationError == nil)
        #expect(
            predicate.predicateFormat
                == "name ==[c] \"Ann\" AND age >= 3 OR #size BETWEEN {1, 2} AND $v.x != nil AND ANY kids.@count > 2"
        )
    }
}
