// Differential fuzzing of the evaluator: random predicates over random records must
// give the same answer (or both fail) through the slot path (compiled for a schema)
// and through the key-value path, and sorting both ways must give the same order.
import Foundation
import OpenCoreData
import TestSupport

extension FuzzTarget {
    /// Slot path versus key-value path on random predicates, records and sorts.
    static let predicateDifferential = FuzzTarget(
        name: "predicate-differential", summary: "compiled slot evaluation agrees with key-value evaluation"
    ) { random in
        let schema = FuzzSchema()
        let records: [FuzzRecord] = (0..<random.int(in: 1...12)).map { _ in
            FuzzRecord(
                schema: schema,
                values: [
                    random.chance(0.85) ? random.pick(["Ann", "bob", "Émile", "", "ann"]) as Any : nil,
                    random.chance(0.85) ? Int16(random.int(in: -5...60)) as Any : nil,
                    random.chance(0.85) ? Double(random.int(in: -20...20)) / 4 as Any : nil, nil, [FuzzRecord](),
                ])
        }
        for record in records {
            if random.chance(0.6) { record.values[3] = random.pick(records) }
            record.values[4] = (0..<random.int(in: 0...3)).map { _ in random.pick(records) }
        }
        var generator = PredicateFuzzGenerator(random: random)
        let clauses = [
            "name", "age", "score", "boss.name", "boss.age", "friends.@count", "friends.@sum.age", "boss.boss.score",
        ]
        var format = ""
        for index in 0..<generator.random.int(in: 1...3) {
            if index > 0 { format += generator.random.pick([" AND ", " OR ", " AND NOT "]) }
            let modifier = generator.random.chance(0.2) ? "ANY friends." : ""
            let key = modifier.isEmpty ? generator.random.pick(clauses) : generator.random.pick(["name", "age"])
            let op = generator.random.pick([
                "==", "!=", "<", ">=", "BEGINSWITH[c]", "CONTAINS", "IN", "LIKE[cd]", "BETWEEN",
            ])
            let right = generator.random.pick([
                "nil", "3", "20.5", "'ann'", "'b*'", "{1, 30}", "{'Ann', 'bob'}", "age", "score", "boss.age", "$v",
            ])
            format += modifier + key + " " + op + " " + right
        }
        random = generator.random
        let predicate = NSPredicate(format: format)
        guard predicate.validationError == nil else {
            throw FuzzFailure(description: "generated format failed to parse: \(format)")
        }
        let compiled = try predicate.compiled(for: schema)
        for record in records {
            let slot = Result { try compiled.evaluate(record: record, substitutionVariables: ["v": 4]) }
            let generic = Result { try predicate.evaluateThrowing(with: record, substitutionVariables: ["v": 4]) }
            switch (slot, generic) {
            case (.success(let a), .success(let b)) where a == b: continue
            case (.failure, .failure): continue
            default: throw FuzzFailure(description: "\(format): slot \(slot) but key-value \(generic)")
            }
        }
        try checkStringFastPath(&random)
        let descriptors = (0..<random.int(in: 1...2)).map { _ in
            NSSortDescriptor(key: random.pick(["name", "age", "score", "boss.name"]), ascending: random.chance(0.5))
        }
        let bySlot = Result { try NSSortDescriptor.compiled(descriptors, for: schema).sort(records: records).map(\.id) }
        let byKey = Result { try records.sortedThrowing(using: descriptors).map(\.id) }
        switch (bySlot, byKey) {
        case (.success(let a), .success(let b)) where a == b: break
        case (.failure, .failure): break
        default: throw FuzzFailure(description: "sort \(descriptors): slot \(bySlot) but key-value \(byKey)")
        }
    }
}

/// String operators against a constant take a byte-level path for ASCII operands; the same
/// operator against a variable takes the general Unicode path. Both, and the compiled and
/// key-value paths, must give the oracle's answer on random awkward strings.
private func checkStringFastPath(_ random: inout SeededRandom) throws {
    if let disagreement = StringOperatorCase.random(&random).disagreement() {
        throw FuzzFailure(description: disagreement)
    }
}

/// The fuzz records' layout: name, age, score, a to-one `boss` and a to-many `friends`.
final class FuzzSchema: KeyValueSchema {
    let schemaName = "Person"
    let slots = ["name": 0, "age": 1, "score": 2, "boss": 3, "friends": 4]

    func slot(forKey key: String) -> KeyValueSlot? {
        guard let index = slots[key] else { return nil }
        switch key {
        case "boss": return KeyValueSlot(index: index, kind: .toOne(destination: self))
        case "friends": return KeyValueSlot(index: index, kind: .toMany(destination: self))
        default: return KeyValueSlot(index: index, kind: .attribute)
        }
    }
}

/// A record of `FuzzSchema`, readable by slot and by key.
final class FuzzRecord: KeyValueSlotReadable {
    let keyValueSchema: any KeyValueSchema
    var values: [Any?]
    let id = UUID()

    init(schema: FuzzSchema, values: [Any?]) {
        keyValueSchema = schema
        self.values = values
    }

    func readValue(atSlot slot: Int) -> Any? { slot < values.count ? values[slot] : nil }

    func readValue(forKey key: String) throws -> Any? {
        guard let slot = keyValueSchema.slot(forKey: key) else {
            throw KeyValueCodingError.unknownKey(key, in: keyValueSchema.schemaName)
        }
        return readValue(atSlot: slot.index)
    }
}
