// The rows a save writes, as the default store's integrity pass asks for them
// (PageFileWrittenRows): a small save scans its request, a larger one builds a set, and
// both answer as the definition does (updated rows; inserted rows, or for an upsert the
// row that absorbed it when the inserted values win).
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

@Suite struct WrittenRowsTests {
    @Test func theScanAndTheSetAnswerAsTheDefinition() throws {
        let stack = try PageFileWriterTests.Stack()
        var pool: [NSManagedObjectID] = []
        for number in 1...10 {
            let entity = number % 2 == 0 ? "Team" : "Member"
            pool.append(try stack.id(entity, Int64(number / 2 + 1)))
        }
        var random = SeededRandom(environmentOr: 0x5EED_1616)
        let hint = random.replayHint
        for _ in 0..<300 {
            var request = StoreSaveRequest()
            request.mergePolicyType = random.pick([
                .errorMergePolicyType, .mergeByPropertyObjectTrumpMergePolicyType, .overwriteMergePolicyType,
                .mergeByPropertyStoreTrumpMergePolicyType,
            ])
            for _ in 0..<random.int(in: 0...6) {
                request.updatedRows.append(
                    StoreRowUpdate(objectID: random.pick(pool), expectedVersion: 1, changes: []))
            }
            for _ in 0..<random.int(in: 0...6) {
                request.insertedRows.append(StoreRow(objectID: random.pick(pool), version: 0, values: []))
            }
            var replaced: [NSManagedObjectID: NSManagedObjectID] = [:]
            for row in request.insertedRows where random.chance(0.3) { replaced[row.objectID] = random.pick(pool) }
            let valuesWin = StoreUniqueness.insertedValuesWin(request.mergePolicyType)
            var expected = Set(request.updatedRows.map(\.objectID))
            for row in request.insertedRows {
                if let existing = replaced[row.objectID] {
                    if valuesWin { expected.insert(existing) }
                } else {
                    expected.insert(row.objectID)
                }
            }
            let rows = PageFileWrittenRows(request: request, replaced: replaced)
            let set = rows.set()
            for id in pool {
                #expect(rows.contains(id) == expected.contains(id), "\(hint)")
                #expect(set.contains(id) == expected.contains(id), "\(hint)")
            }
        }
    }
}
