// The public enums mirrored from Core Data and Foundation keep Apple's raw values: stores,
// archives and code ported from Apple platforms read and write these numbers. The enums
// spell out only the raw values Swift's numbering from 0 would not give, so this table
// is what pins every one of them.
import Foundation
import Testing

@testable import OpenCoreData

struct AppleRawValueTests {
    @Test func mergePolicyTypes() {
        let expected: [(NSMergePolicyType, UInt)] = [
            (.errorMergePolicyType, 0), (.mergeByPropertyStoreTrumpMergePolicyType, 1),
            (.mergeByPropertyObjectTrumpMergePolicyType, 2), (.overwriteMergePolicyType, 3),
            (.rollbackMergePolicyType, 4),
        ]
        for (type, raw) in expected { #expect(type.rawValue == raw, "\(type)") }
    }

    @Test func requestAndResultTypes() {
        let requests: [(NSPersistentStoreRequestType, UInt)] = [
            (.fetchRequestType, 1), (.saveRequestType, 2), (.batchInsertRequestType, 5),
            (.batchUpdateRequestType, 6), (.batchDeleteRequestType, 7),
        ]
        for (type, raw) in requests { #expect(type.rawValue == raw, "\(type)") }
        let history: [(NSPersistentHistoryResultType, Int)] = [
            (.statusOnly, 0), (.objectIDs, 1), (.count, 2), (.transactionsOnly, 3), (.changesOnly, 4),
            (.transactionsAndChanges, 5),
        ]
        for (type, raw) in history { #expect(type.rawValue == raw, "\(type)") }
        let inserts: [(NSBatchInsertRequestResultType, UInt)] = [(.statusOnly, 0), (.objectIDs, 1), (.count, 2)]
        for (type, raw) in inserts { #expect(type.rawValue == raw, "\(type)") }
        let updates: [(NSBatchUpdateRequestResultType, UInt)] = [
            (.statusOnlyResultType, 0), (.updatedObjectIDsResultType, 1), (.updatedObjectsCountResultType, 2),
        ]
        for (type, raw) in updates { #expect(type.rawValue == raw, "\(type)") }
    }

    @Test func contextAndMappingTypes() {
        let concurrency: [(NSManagedObjectContextConcurrencyType, UInt)] = [
            (.confinementConcurrencyType, 0), (.privateQueueConcurrencyType, 1), (.mainQueueConcurrencyType, 2),
        ]
        for (type, raw) in concurrency { #expect(type.rawValue == raw, "\(type)") }
        let mappings: [(NSEntityMappingType, UInt)] = [
            (.undefinedEntityMappingType, 0), (.customEntityMappingType, 1), (.addEntityMappingType, 2),
            (.removeEntityMappingType, 3), (.copyEntityMappingType, 4), (.transformEntityMappingType, 5),
        ]
        for (type, raw) in mappings { #expect(type.rawValue == raw, "\(type)") }
    }

    @Test func predicateOperatorsModifiersAndExpressionTypes() {
        let operators: [(OpenCoreData.NSComparisonPredicate.Operator, UInt)] = [
            (.lessThan, 0), (.lessThanOrEqualTo, 1), (.greaterThan, 2), (.greaterThanOrEqualTo, 3), (.equalTo, 4),
            (.notEqualTo, 5), (.matches, 6), (.like, 7), (.beginsWith, 8), (.endsWith, 9), (.in, 10),
            (.customSelector, 11), (.contains, 99), (.between, 100),
        ]
        for (type, raw) in operators { #expect(type.rawValue == raw, "\(type)") }
        let modifiers: [(OpenCoreData.NSComparisonPredicate.Modifier, UInt)] = [(.direct, 0), (.all, 1), (.any, 2)]
        for (type, raw) in modifiers { #expect(type.rawValue == raw, "\(type)") }
        let expressions: [(OpenCoreData.NSExpression.ExpressionType, UInt)] = [
            (.constantValue, 0), (.evaluatedObject, 1), (.variable, 2), (.keyPath, 3), (.function, 4),
            (.unionSet, 5), (.intersectSet, 6), (.minusSet, 7), (.subquery, 13), (.aggregate, 14), (.anyKey, 15),
            (.block, 19), (.conditional, 20),
        ]
        for (type, raw) in expressions { #expect(type.rawValue == raw, "\(type)") }
    }
}
