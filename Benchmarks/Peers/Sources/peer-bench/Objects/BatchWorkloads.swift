// The object-level batch workloads (issue 12): set-based writes that bypass objects.
// Ours runs NSBatchInsertRequest / NSBatchUpdateRequest / NSBatchDeleteRequest on the
// default store; SQLite runs multi-row INSERT, UPDATE ... WHERE and DELETE ... WHERE;
// GRDB its inserts in one write, updateAll and deleteAll. Every result is checked.
import Foundation

/// Batch insert of 100,000 people into a new store in one transaction; each side's
/// input (ours: dictionaries; the SQL sides: Person values) is made before the clock.
struct ObjectBatchInsert: ObjectWorkload {
    let name = "object/batch-insert"

    func run<Store: ObjectStore>(_ store: Store.Type, in context: BenchContext) throws -> [Measurement] {
        let people = ObjectWorkloads.people(count: ObjectWorkloads.objectCount(context))
        let opened = try Store(path: try context.freshPath("\(name)-\(Store.sideName)"))
        defer { try? opened.close() }
        let input = opened.batchInput(people)
        let seconds = try measureSeconds { try opened.batchInsert(input) }
        let sample = people[people.count / 2]
        guard try opened.fetch(id: sample.id) == sample, try opened.count(ageFrom: 0, below: 200) == people.count else {
            throw BenchError(message: "batch-insert: the store does not hold the people inserted")
        }
        return [.rate("\(people.count) objects, one batch", count: people.count, seconds: seconds, noun: "objects")]
    }
}

/// Batch update of the ~15% of people aged 30...40: `isActive = false, age = age + 100`,
/// by the age index, in one statement or request.
struct ObjectBatchUpdate: ObjectWorkload {
    let name = "object/batch-update"

    func run<Store: ObjectStore>(_ store: Store.Type, in context: BenchContext) throws -> [Measurement] {
        let path = try context.copyOfFixture(
            try ObjectWorkloads.loadedStore(Store.self, context), files: Store.files(at:),
            name: "\(name)-\(Store.sideName)")
        let opened = try Store(path: path)
        defer { try? opened.close() }
        let expected = try opened.count(ageFrom: 30, below: 41)
        var changed = 0
        let seconds = try measureSeconds { changed = try opened.batchUpdate(ageFrom: 30, below: 41) }
        guard changed == expected, expected > 0, try opened.count(ageFrom: 30, below: 41) == 0,
            try opened.count(ageFrom: 130, below: 141) == expected
        else {
            throw BenchError(message: "batch-update: \(changed) of \(expected) changed")
        }
        let share = Double(expected) / Double(ObjectWorkloads.objectCount(context))
        return [
            .rate(
                "\(expected) objects (\(Int((share * 100).rounded()))%), one batch", count: expected, seconds: seconds,
                noun: "objects")
        ]
    }
}

/// Batch delete of the ~15% of people aged 50...60, by the age index, in one statement
/// or request.
struct ObjectBatchDelete: ObjectWorkload {
    let name = "object/batch-delete"

    func run<Store: ObjectStore>(_ store: Store.Type, in context: BenchContext) throws -> [Measurement] {
        let path = try context.copyOfFixture(
            try ObjectWorkloads.loadedStore(Store.self, context), files: Store.files(at:),
            name: "\(name)-\(Store.sideName)")
        let opened = try Store(path: path)
        defer { try? opened.close() }
        let expected = try opened.count(ageFrom: 50, below: 61)
        let total = try opened.count(ageFrom: 0, below: 200)
        var deleted = 0
        let seconds = try measureSeconds { deleted = try opened.batchDelete(ageFrom: 50, below: 61) }
        guard deleted == expected, expected > 0, try opened.count(ageFrom: 50, below: 61) == 0,
            try opened.count(ageFrom: 0, below: 200) == total - expected
        else {
            throw BenchError(message: "batch-delete: \(deleted) of \(expected) deleted")
        }
        let share = Double(expected) / Double(total)
        return [
            .rate(
                "\(expected) objects (\(Int((share * 100).rounded()))%), one batch", count: expected, seconds: seconds,
                noun: "objects")
        ]
    }
}
