// The resolution hook: a predicate or sort compiled for a KeyValueSchema resolves keys
// to slots once (unknown keys fail at compile time), reads records by slot with no
// key lookups, and still reads anything else through key-value coding.
import OpenCoreData
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
        TestRecord.keyLookups = 0
        let matches = try rows.filter { try compiled.evaluate(with: $0) }
        #expect(matches.map { $0.values[0] as? String } == ["Ann", "Cy"])
        #expect(TestRecord.keyLookups == 0)
        TestRecord.keyLookups = 0
        #expect(rows.filtered(using: predicate).count == 2)
        #expect(TestRecord.keyLookups > 0, "the generic path reads by key")
        let sorter = try NSSortDescriptor.compiled(
            [
                NSSortDescriptor(key: "company.name", ascending: false),
                NSSortDescriptor(key: "age", ascending: true),
            ], for: person)
        TestRecord.keyLookups = 0
        #expect(try sorter.sort(rows).map { $0.values[0] as? String } == ["Ann", "Cy", "Bob"])
        #expect(TestRecord.keyLookups == 0)
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
