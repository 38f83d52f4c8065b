// The resolution hook: a predicate or sort compiled for a KeyValueSchema resolves keys
// to slots once (unknown keys fail at compile time), reads records by slot with no
// key lookups, and still reads anything else through key-value coding.
import OpenCoreData
import TestSupport
import Testing

@Suite(.serialized) struct PredicateSchemaTests {
    let company = TestSchema("Company")
    let person = TestSchema("Person")

    init() {
        company.slots = ["name": KeyValueSlot(index: 0, kind: .attribute)]
        person.slots = [
            "name": KeyValueSlot(index: 0, kind: .attribute), "age": KeyValueSlot(index: 1, kind: .attribute),
            "company": KeyValueSlot(index: 2, kind: .toOne(destination: company)),
            "friends": KeyValueSlot(index: 3, kind: .toMany(destination: nil)),
        ]
    }

    func rows() -> [TestRecord] {
        let acme = TestRecord(schema: company, values: ["Acme"])
        let ann = TestRecord(schema: person, values: ["Ann", 31, acme, Set<Int>()])
        let bob = TestRecord(schema: person, values: ["Bob", 17, nil, Set<Int>()])
        let cy = TestRecord(schema: person, values: ["Cy", Int16(40), acme, Set<Int>()])
        ann.values[3] = [bob, cy]
        return [ann, bob, cy]
    }

    @Test func slotsAreReadWithoutKeyLookups() throws {
        let rows = rows()
        let predicate = NSPredicate(format: "age > %d AND company.name BEGINSWITH 'Ac' AND name != 'Zed'", 18)
        let compiled = try predicate.compiled(for: person)
        person.keyLookups = 0
        let matches = try rows.filter { try compiled.evaluate(with: $0) }
        #expect(matches.map { $0.values[0] as? String } == ["Ann", "Cy"])
        #expect(person.keyLookups == 0)
        person.keyLookups = 0
        #expect(rows.filtered(using: predicate).count == 2)
        #expect(person.keyLookups > 0, "the generic path reads by key")
        let sorter = try NSSortDescriptor.compiled(
            [
                NSSortDescriptor(key: "company.name", ascending: false),
                NSSortDescriptor(key: "age", ascending: true),
            ], for: person)
        person.keyLookups = 0
        #expect(try sorter.sort(rows).map { $0.values[0] as? String } == ["Ann", "Cy", "Bob"])
        #expect(person.keyLookups == 0)
    }

    @Test func unknownKeysFailAtCompileTime() {
        #expect(throws: KeyValueCodingError.unknownKey("shoeSize", in: "Person")) {
            try NSPredicate(format: "shoeSize > 3").compiled(for: person)
        }
        #expect(throws: KeyValueCodingError.unknownKey("city", in: "Company")) {
            try NSPredicate(format: "company.city == 'x'").compiled(for: person)
        }
        #expect(throws: KeyValueCodingError.self) {
            try NSSortDescriptor.compiled([NSSortDescriptor(key: "height", ascending: true)], for: person)
        }
    }

    @Test func toManyAndForeignObjectsFallBackToKeyValueCoding() throws {
        let rows = rows()
        let friends = try NSPredicate(format: "ANY friends.name == 'Bob' AND friends.@count == 2").compiled(for: person)
        #expect(try friends.evaluate(with: rows[0]))
        #expect(try !friends.evaluate(with: rows[1]))
        let ages = try NSPredicate(format: "age >= 18").compiled(for: person)
        #expect(try ages.evaluate(with: ["age": 20]), "a dictionary is read by key")
        let other = TestSchema("Person")
        other.slots = ["age": KeyValueSlot(index: 0, kind: .attribute)]
        #expect(
            try ages.evaluate(with: TestRecord(schema: other, values: [30])),
            "a record of another schema is read by key")
        let subquery = try NSPredicate(format: "SUBQUERY(friends, $f, $f.age < 18).@count == 1").compiled(for: person)
        #expect(try subquery.evaluate(with: rows[0]))
    }
}

@Suite struct PredicateIdentityTests {
    struct ObjectID: Hashable, PredicateIdentifiable {
        let value: Int
        var predicateIdentity: AnyHashable { self }
    }

    final class Object: KeyValueReadable, PredicateIdentifiable {
        let objectID: ObjectID
        let company: Object?
        init(_ id: Int, company: Object? = nil) {
            objectID = ObjectID(value: id)
            self.company = company
        }
        var predicateIdentity: AnyHashable { objectID }
        func readValue(forKey key: String) throws -> Any? {
            guard key == "company" else { throw KeyValueCodingError.unknownKey(key, in: "Object") }
            return company
        }
    }

    @Test func objectsMatchTheirIDs() {
        let acme = Object(1)
        let employee = Object(2, company: acme)
        #expect(NSPredicate(format: "company == %@", acme).evaluate(with: employee))
        #expect(NSPredicate(format: "company == %@", acme.objectID).evaluate(with: employee))
        #expect(NSPredicate(format: "company IN %@", [ObjectID(value: 9), acme.objectID]).evaluate(with: employee))
        #expect(!NSPredicate(format: "company == %@", ObjectID(value: 3)).evaluate(with: employee))
        #expect(NSPredicate(format: "company != %@", Object(4)).evaluate(with: employee))
    }
}

@Suite struct PredicateSchemaDifferentialTests {
    /// The slot path and the key-value path agree — same answers, same failures — on random
    /// predicates and sorts over random records.
    @Test func slotAndKeyValuePathsAgree() throws {
        var random = SeededRandom(environmentOr: 314)
        let company = TestSchema("Company")
        company.slots = ["name": KeyValueSlot(index: 0, kind: .attribute)]
        let person = TestSchema("Person")
        person.slots = [
            "name": KeyValueSlot(index: 0, kind: .attribute), "age": KeyValueSlot(index: 1, kind: .attribute),
            "company": KeyValueSlot(index: 2, kind: .toOne(destination: company)),
            "friends": KeyValueSlot(index: 3, kind: .toMany(destination: person)),
            "score": KeyValueSlot(index: 4, kind: .attribute),
        ]
        let companies = ["Acme", "Bolt", "acme"].map { TestRecord(schema: company, values: [$0]) }
        let rows: [TestRecord] = (0..<40).map { _ in
            TestRecord(
                schema: person,
                values: [
                    random.chance(0.9) ? random.pick(["Ann", "bob", "Cy", "Ann"]) : nil,
                    random.chance(0.9) ? Int16(random.int(in: 0...60)) : nil,
                    random.chance(0.8) ? random.pick(companies) : nil, [TestRecord](),
                    Double(random.int(in: -10...10)) / 2,
                ])
        }
        for row in rows { row.values[3] = (0..<random.int(in: 0...3)).map { _ in random.pick(rows) } }
        let clauses = [
            "age > 30", "age BETWEEN {10, 40}", "name ==[c] 'ann'", "name BEGINSWITH 'b'", "company.name == 'Acme'",
            "company.name ==[c] 'ACME'", "company == nil", "ANY friends.age < 20", "ALL friends.name != 'Cy'",
            "friends.@count >= 2", "friends.@avg.age > 25", "score * 2 > age / 10",
            "SUBQUERY(friends, $f, $f.score > 0).@count > 0",
            "name IN {'Cy', 'bob'}", "age == nil", "name MATCHES '[A-Z].*'", "company.name LIKE 'A*'", "age < score",
            "name > age",
        ]
        for _ in 0..<150 {
            var format = random.pick(clauses)
            for _ in 0..<random.int(in: 0...2) {
                format += random.pick([" AND ", " OR "]) + (random.chance(0.2) ? "NOT " : "") + random.pick(clauses)
            }
            let predicate = NSPredicate(format: format)
            let compiled = try predicate.compiled(for: person)
            for row in rows {
                let slot = Result { try compiled.evaluate(record: row) }
                let generic = Result { try predicate.evaluateThrowing(with: row) }
                switch (slot, generic) {
                case (.success(let a), .success(let b)): #expect(a == b, "\(format); \(random.replayHint)")
                case (.failure, .failure): break
                default: Issue.record("\(format): slot \(slot) vs key-value \(generic); \(random.replayHint)")
                }
            }
        }
        let keys = ["name", "age", "company.name", "score"]
        for _ in 0..<30 {
            let descriptors = (0..<random.int(in: 1...3)).map { _ in
                NSSortDescriptor(key: random.pick(keys), ascending: random.chance(0.5))
            }
            let compiled = try NSSortDescriptor.compiled(descriptors, for: person)
            let bySlot = try compiled.sort(records: rows).map { ObjectIdentifier($0) }
            let byKey = try rows.sortedThrowing(using: descriptors).map { ObjectIdentifier($0) }
            #expect(bySlot == byKey, "\(descriptors); \(random.replayHint)")
        }
    }
}

@Suite struct PredicateSubschemaTests {
    final class SubSchema: KeyValueSchema {
        let parent: TestSchema
        let schemaName = "Manager"
        init(parent: TestSchema) { self.parent = parent }
        func slot(forKey key: String) -> KeyValueSlot? {
            key == "reports" ? KeyValueSlot(index: 1, kind: .attribute) : parent.slot(forKey: key)
        }
        func sharesSlots(with schema: any KeyValueSchema) -> Bool { schema === parent }
    }

    /// A record that cannot be read by key: a predicate that evaluates on it read it by slot.
    final class SlotOnlyRecord: KeyValueSlotReadable {
        let keyValueSchema: any KeyValueSchema
        let values: [Any?]
        init(_ schema: any KeyValueSchema, _ values: [Any?]) {
            keyValueSchema = schema
            self.values = values
        }
        func readValue(atSlot slot: Int) -> Any? { values[slot] }
        func readValue(forKey key: String) throws -> Any? { throw KeyValueCodingError.unknownKey(key, in: "slot-only") }
    }

    @Test func subschemaRecordsAreReadBySlot() throws {
        let person = TestSchema("Person")
        person.slots = ["age": KeyValueSlot(index: 0, kind: .attribute)]
        let manager = SubSchema(parent: person)
        let predicate = try NSPredicate(format: "age > 40").compiled(for: person)
        #expect(try predicate.evaluate(record: SlotOnlyRecord(manager, [50, 3])))
        #expect(try predicate.evaluate(with: SlotOnlyRecord(manager, [50, 3])))
        let other = TestSchema("Other")
        other.slots = ["age": KeyValueSlot(index: 0, kind: .attribute)]
        #expect(throws: KeyValueCodingError.self) { try predicate.evaluate(record: SlotOnlyRecord(other, [41])) }
        #expect(try predicate.evaluate(with: TestRecord(schema: other, values: [41])))
    }
}
