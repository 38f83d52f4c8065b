// Predicate and sort workloads on plain in-memory rows (no store): a 3-clause
// predicate over 1,000,000 rows and a two-key sort of 1,000,000 rows, each through
// the compiled path (keys resolved to slots once) and through a deliberately naive
// interpreter that walks the tree and looks keys up by string per row, to show
// what compilation buys.
import OpenCoreData
import TestSupport

extension Workload {
    /// `age > 30 AND name BEGINSWITH "J" AND score < 500.0` over rows: compiled vs generic vs naive.
    static let predicateEvaluate = Workload(
        name: "predicate/evaluate-3-clauses", summary: "3-clause predicate over 1,000,000 in-memory rows"
    ) { context in
        let rows = BenchRow.make(count: context.scaled(1_000_000))
        let predicate = NSPredicate(format: "age > %d AND name BEGINSWITH %@ AND score < %f", 30, "J", 500.0)
        // Each variant runs three times, interleaved, and reports its best: the machine is shared.
        context.progress("predicate: compiled for the schema")
        let compiled = try predicate.compiled(for: BenchRow.schema)
        let generic = try predicate.compiled()
        var compiledSeconds = Double.infinity
        var genericSeconds = Double.infinity
        var naiveSeconds = Double.infinity
        var compiledMatches = 0
        var genericMatches = 0
        var naiveMatches = 0
        for round in 1...3 {
            context.progress("predicate: round \(round) of 3")
            compiledMatches = 0
            compiledSeconds = min(
                compiledSeconds,
                try measureSeconds {
                    for row in rows where try compiled.evaluate(record: row) { compiledMatches += 1 }
                })
            genericMatches = 0
            genericSeconds = min(
                genericSeconds,
                try measureSeconds {
                    for row in rows where try generic.evaluate(with: row) { genericMatches += 1 }
                })
            naiveMatches = 0
            naiveSeconds = min(
                naiveSeconds,
                try measureSeconds {
                    for row in rows where try NaivePredicateInterpreter.evaluate(predicate, row) { naiveMatches += 1 }
                })
        }
        guard compiledMatches == naiveMatches, genericMatches == naiveMatches else {
            throw FuzzlessMismatch(
                description: "compiled \(compiledMatches), generic \(genericMatches), naive \(naiveMatches)")
        }
        let count = Double(rows.count)
        return [
            Measurement(label: "compiled, slots", value: count / compiledSeconds, unit: "rows/s"),
            Measurement(label: "compiled, key-value coding", value: count / genericSeconds, unit: "rows/s"),
            Measurement(label: "naive interpreter", value: count / naiveSeconds, unit: "rows/s"),
            Measurement(
                label: "compiled speed-up over naive", value: naiveSeconds / compiledSeconds, unit: "x", better: .higher
            ),
            Measurement(label: "matching rows", value: Double(compiledMatches), unit: "rows"),
        ]
    }

    /// Sorting rows by (age ascending, name descending): compiled sort descriptors vs naive comparisons.
    static let predicateSort = Workload(
        name: "predicate/sort-two-keys", summary: "stable two-key sort of 1,000,000 in-memory rows"
    ) { context in
        let rows = BenchRow.make(count: context.scaled(1_000_000))
        let descriptors = [
            NSSortDescriptor(key: "age", ascending: true), NSSortDescriptor(key: "name", ascending: false),
        ]
        context.progress("sort: compiled")
        let compiled = try NSSortDescriptor.compiled(descriptors, for: BenchRow.schema)
        var sorted: [BenchRow] = []
        let compiledSeconds = try measureSeconds { sorted = try compiled.sort(records: rows) }
        context.progress("sort: naive")
        var naive: [BenchRow] = []
        let naiveSeconds = try measureSeconds {
            naive = try rows.sorted { left, right in
                for descriptor in descriptors {
                    let order = try NaivePredicateInterpreter.compare(
                        left.readValue(forKey: descriptor.key ?? ""), right.readValue(forKey: descriptor.key ?? ""))
                    if order != .orderedSame {
                        return descriptor.ascending ? order == .orderedAscending : order == .orderedDescending
                    }
                }
                return false
            }
        }
        guard
            sorted.map(\.id) == naive.map(\.id)
                || !zip(sorted, naive).contains(where: { $0.age != $1.age || $0.name != $1.name })
        else {
            throw FuzzlessMismatch(description: "compiled and naive sorts disagree")
        }
        let count = Double(rows.count)
        return [
            Measurement(label: "compiled sort", value: count / compiledSeconds, unit: "rows/s"),
            Measurement(label: "naive sort", value: count / naiveSeconds, unit: "rows/s"),
            Measurement(
                label: "compiled speed-up over naive", value: naiveSeconds / compiledSeconds, unit: "x", better: .higher
            ),
        ]
    }
}

/// A result check that failed inside a workload.
struct FuzzlessMismatch: Error, CustomStringConvertible {
    let description: String
}

/// A row as the object layer will present one: values in slots, a shared schema.
final class BenchRow: KeyValueSlotReadable, @unchecked Sendable {
    final class Schema: KeyValueSchema, @unchecked Sendable {
        let schemaName = "Row"
        let slots = ["id": 0, "name": 1, "age": 2, "score": 3]
        func slot(forKey key: String) -> KeyValueSlot? {
            slots[key].map { KeyValueSlot(index: $0, kind: .attribute) }
        }
    }

    static let schema = Schema()

    let id: Int
    let name: String
    let age: Int16
    let score: Double

    init(id: Int, name: String, age: Int16, score: Double) {
        self.id = id
        self.name = name
        self.age = age
        self.score = score
    }

    var keyValueSchema: any KeyValueSchema { Self.schema }

    func readValue(atSlot slot: Int) -> Any? {
        switch slot {
        case 0: id
        case 1: name
        case 2: age
        default: score
        }
    }

    func readValue(forKey key: String) throws -> Any? {
        guard let slot = Self.schema.slots[key] else { throw KeyValueCodingError.unknownKey(key, in: "Row") }
        return readValue(atSlot: slot)
    }

    static func make(count: Int) -> [BenchRow] {
        var random = SeededRandom(seed: 2026)
        let names = ["John", "Jane", "Bob", "Alice", "Johanna", "Zoë", "Joe", "Mary"]
        return (0..<count).map { index in
            BenchRow(
                id: index, name: names[random.int(in: 0...7)] + String(random.int(in: 0...99)),
                age: Int16(random.int(in: 0...90)), score: Double(random.int(in: 0...1_000)))
        }
    }
}

/// The baseline: walks the predicate tree for every row, reads keys by string, compares
/// Foundation values directly — what an evaluator without a compile step does.
enum NaivePredicateInterpreter {
    static func evaluate(_ predicate: NSPredicate, _ object: any KeyValueReadable) throws -> Bool {
        let node = predicate.structuredPredicate
        if let compound = node as? NSCompoundPredicate {
            switch compound.compoundPredicateType {
            case .and: return try compound.subpredicates.allSatisfy { try evaluate($0, object) }
            case .or: return try compound.subpredicates.contains { try evaluate($0, object) }
            case .not: return try !evaluate(compound.subpredicates[0], object)
            }
        }
        guard let comparison = node as? NSComparisonPredicate else { return node.evaluate(with: object) }
        let left = try value(comparison.leftExpression, object)
        let right = try value(comparison.rightExpression, object)
        switch comparison.predicateOperatorType {
        case .greaterThan: return compare(left, right) == .orderedDescending
        case .lessThan: return compare(left, right) == .orderedAscending
        case .equalTo: return compare(left, right) == .orderedSame
        case .beginsWith: return (left as? String)?.hasPrefix(right as? String ?? "\u{0}") ?? false
        default: return comparison.evaluate(with: object)
        }
    }

    static func value(_ expression: NSExpression, _ object: any KeyValueReadable) throws -> Any? {
        switch expression.expressionType {
        case .keyPath: try object.readValue(forKey: expression.keyPath)
        default: expression.constantValue
        }
    }

    static func compare(_ left: Any?, _ right: Any?) -> ComparisonResult {
        func number(_ value: Any?) -> Double? {
            switch value {
            case let value as Int: Double(value)
            case let value as Int16: Double(value)
            case let value as Double: value
            case let value as NSNumber: value.doubleValue
            default: nil
            }
        }
        if let a = number(left), let b = number(right) {
            return a == b ? .orderedSame : (a < b ? .orderedAscending : .orderedDescending)
        }
        if let a = left as? String, let b = right as? String {
            return a == b ? .orderedSame : (a < b ? .orderedAscending : .orderedDescending)
        }
        return .orderedSame
    }
}

extension Workload {
    /// The same predicate and sort through the fetch path on the in-memory store: the store
    /// evaluates the compiled predicate on its rows by slot; sorted fetches materialize
    /// objects and sort them by slot (documented scale: 1,000,000 saved objects).
    static let predicateStore = Workload(
        name: "predicate/in-memory-store",
        summary: "3-clause fetch, count and two-key sorted fetch of 1,000,000 objects"
    ) { bench in
        let count = bench.scaled(1_000_000)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: ObjectBench.model)
        try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
        let writer = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        writer.persistentStoreCoordinator = coordinator
        try writer.performAndWait {
            bench.progress("in-memory store: inserting \(grouped(count)) objects")
            var random = SeededRandom(seed: 2026)
            for index in 0..<count {
                let record = BenchRecord(context: writer)
                record.name = "record \(random.int(in: 0...999))"
                record.age = Int16(random.int(in: 0...90))
                record.score = Int64(index)
                record.weight = Double(random.int(in: 0...1_000))
                record.active = index % 2 == 0
            }
            bench.progress("in-memory store: saving \(grouped(count)) objects")
            try writer.save()
            writer.reset()
        }
        let predicate = NSPredicate(format: "age > %d AND name BEGINSWITH %@ AND weight < %f", 30, "record 1", 500.0)
        /// A fresh context, so each measurement starts with no registered objects.
        func reader() -> NSManagedObjectContext {
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            return context
        }
        var matches = 0
        let fetchContext = reader()
        let fetchSeconds = try fetchContext.performAndWait {
            let context = fetchContext
            let request = NSFetchRequest<BenchRecord>(entityName: "Record")
            request.predicate = predicate
            bench.progress("in-memory store: fetching with a predicate")
            return try measureSeconds { matches = try context.fetch(request).count }
        }
        var counted = 0
        let countContext = reader()
        let countSeconds = try countContext.performAndWait {
            let context = countContext
            let request = NSFetchRequest<BenchRecord>(entityName: "Record")
            request.predicate = predicate
            bench.progress("in-memory store: counting with a predicate")
            return try measureSeconds { counted = try context.count(for: request) }
        }
        var sortedCount = 0
        let sortContext = reader()
        let sortSeconds = try sortContext.performAndWait {
            let context = sortContext
            let request = NSFetchRequest<BenchRecord>(entityName: "Record")
            request.sortDescriptors = [
                NSSortDescriptor(key: "age", ascending: true), NSSortDescriptor(key: "score", ascending: false),
            ]
            bench.progress("in-memory store: fetching sorted by two keys")
            return try measureSeconds { sortedCount = try context.fetch(request).count }
        }
        guard counted == matches, sortedCount == count else {
            throw FuzzlessMismatch(description: "fetch \(matches), count \(counted), sorted \(sortedCount) of \(count)")
        }
        let rows = Double(count)
        return [
            Measurement(label: "fetch, 3-clause predicate", value: rows / fetchSeconds, unit: "rows/s"),
            Measurement(label: "count, 3-clause predicate", value: rows / countSeconds, unit: "rows/s"),
            Measurement(label: "fetch sorted by two keys", value: rows / sortSeconds, unit: "rows/s"),
            Measurement(label: "matching rows", value: Double(matches), unit: "rows"),
        ]
    }
}
