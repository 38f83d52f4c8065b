// Probes (ProbeWorkloads.swift) of peer-bench's object/batch-update and object/batch-delete:
// 100,000 people batch-inserted and the store reopened before the measured part, then one
// NSBatchUpdateRequest (`isActive = false, age = age + 100`) or NSBatchDeleteRequest of the
// ~15% aged 30...40 (50...60) by the age index; instructions are per changed row, commit
// included.
import Foundation
import OpenCoreData

enum BatchWriteProbes {
    static let rows = 100_000

    /// People aged `lower..<upper` among `rows` filled by `BatchBench.dictionary` (age 18 + index % 72).
    static func expected(ageFrom lower: Int, below upper: Int) -> Int {
        (0..<rows).filter { (lower..<upper).contains(18 + $0 % 72) }.count
    }

    static let updated = expected(ageFrom: 30, below: 41)
    static let deleted = expected(ageFrom: 50, below: 61)

    /// A store of `rows` people, closed and opened again (as peer-bench opens its fixture's copy).
    static func loaded(_ directory: URL) throws -> (NSPersistentStoreCoordinator, NSManagedObjectContext) {
        let url = directory.appendingPathComponent("batch-write.store")
        let (coordinator, context) = try BatchBench.open(url)
        try BatchBench.insert((0..<rows).map(BatchBench.dictionary), into: context)
        for store in coordinator.persistentStores { try coordinator.remove(store) }
        return try BatchBench.open(url)
    }

    static func probeUpdate(_ directory: URL) throws { try probe(directory, probeMeasuredBatchUpdate) }

    static func probeDelete(_ directory: URL) throws { try probe(directory, probeMeasuredBatchDelete) }

    /// Runs `measured` on a loaded store, then closes it.
    private static func probe(_ directory: URL, _ measured: (NSManagedObjectContext) throws -> Void) throws {
        let (coordinator, context) = try loaded(directory)
        try measured(context)
        for store in coordinator.persistentStores { try coordinator.remove(store) }
    }

    @inline(never)
    static func probeMeasuredBatchUpdate(_ context: NSManagedObjectContext) throws {
        let changed = try BatchBench.update(context)
        guard changed == updated else { throw ProbeFailure(message: "batch update changed \(changed) of \(updated)") }
    }

    @inline(never)
    static func probeMeasuredBatchDelete(_ context: NSManagedObjectContext) throws {
        let changed = try BatchBench.delete(context)
        guard changed == deleted else { throw ProbeFailure(message: "batch delete removed \(changed) of \(deleted)") }
    }
}
