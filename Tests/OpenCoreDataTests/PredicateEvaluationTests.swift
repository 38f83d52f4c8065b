// Semantics of evaluation: Apple's documented rules (nil, ANY/ALL, BETWEEN, IN and
// CONTAINS, string options, numbers across types) on objects, dictionaries and SELF.
import OpenCoreData
import Synchronization
import Testing

@Suite struct PredicateEvaluationTests {
    let people = Fixtures.people()

    func matching(_ format: String, _ arguments: Any...) -> [String] {
        Fixtures.names(people.filtered(using: NSPredicate(format: format, argumentArray: arguments)))
    }

    @Test func basicComparisons() {
        #expect(matching("firstName == %@", "John") == ["John"])
        #expect(matching("firstName = 'John'") == ["John"])
        #expect(matching("firstName ==[c] %@", "JOHN") == ["John"])
        #expect(matching("firstName != %@", "John") == ["Jane", "Bob", "Zoë"])
        #expect(matching("firstName <> 'John'").count == 3)
        #expect(matching("age > %d", 30) == ["Bob"])
        #expect(matching("age >= 30") == ["John", "Bob"])
        #expect(matching("age => 30") == ["John", "Bob"])
        #expect(matching("age =< 17") == ["Jane"])
        #expect(matching("age < 18") == ["Jane"])
        #expect(matching("age >= %d AND age <= %d", 18, 65) == ["John", "Bob", "Zoë"])
    }

    @Test func betweenIsInclusive() {
        #expect(matching("age BETWEEN {17, 30}") == ["John", "Jane", "Zoë"])
        #expect(matching("age BETWEEN %@", [29, 30]) == ["John", "Zoë"])
        #expect(matching("salary BETWEEN {200, 5000}") == ["John"])
    }

    @Test func stringOperators() {
        #expect(matching("firstName BEGINSWITH 'J'") == ["John", "Jane"])
        #expect(matching("firstName BEGINSWITH[c] 'j'") == ["John", "Jane"])
        #expect(matching("lastName ENDSWITH[c] 'SON'") == ["Jane"])
        #expect(matching("firstName CONTAINS 'o'") == ["John", "Bob", "Zoë"])
        #expect(matching("firstName CONTAINS[c] 'O'") == ["John", "Bob", "Zoë"])
        #expect(matching("email LIKE %@", "*@gmail.com") == ["John"])
        #expect(matching("firstName LIKE 'J?n?'") == ["Jane"])
        #expect(matching("lastName like[c] \"S*\"") == ["Bob"])
        #expect(matching("firstName MATCHES %@", "J[a-z]+n") == ["John"])
        #expect(matching("firstName MATCHES 'J'") == [])
        #expect(matching("lastName ==[cd] %@", "emile") == ["Zoë"])
        #expect(matching("firstName ==[d] 'Zoe'") == ["Zoë"])
        #expect(matching("firstName BEGINSWITH ''") == [])
    }

    @Test func likeEscapesAndWildcards() {
        let pattern = NSPredicate(format: "SELF LIKE %@", "a\\*b")
        #expect(pattern.evaluate(with: "a*b"))
        #expect(!pattern.evaluate(with: "axxb"))
        #expect(NSPredicate(format: "SELF LIKE 'a*b*c'").evaluate(with: "aXXbYYc"))
        #expect(!NSPredicate(format: "SELF LIKE 'a*b*c'").evaluate(with: "aXXbYY"))
        #expect(NSPredicate(format: "SELF LIKE '*'").evaluate(with: ""))
        #expect(NSPredicate(format: "SELF LIKE 'a\\?'").evaluate(with: "a?"))
        #expect(!NSPredicate(format: "SELF LIKE 'a\\?'").evaluate(with: "ab"))
    }

    @Test func membershipAndSubstring() {
        #expect(matching("firstName IN %@", ["John", "Jane", "Bob"]) == ["John", "Jane", "Bob"])
        #expect(matching("firstName IN {'Ben', 'Bob'}") == ["Bob"])
        #expect(matching("firstName IN[c] {'JOHN'}") == ["John"])
        #expect(matching("tags CONTAINS 'admin'") == ["John"])
        #expect(matching("'dev' IN tags") == ["John"])
        #expect(NSPredicate(format: "SELF IN %@", "hello world").evaluate(with: "lo w"))
        #expect(NSPredicate(format: "SELF CONTAINS %@", "lo w").evaluate(with: "hello world"))
        #expect(NSPredicate(format: "SELF IN %@", NSSet(array: [1, 2])).evaluate(with: 2))
        #expect(NSPredicate(format: "SELF IN %@", NSOrderedSet(array: ["a"])).evaluate(with: "a"))
    }

    @Test func nilEqualsOnlyNilAndFailsOrdering() {
        #expect(matching("email == nil") == ["Jane", "Zoë"])
        #expect(matching("email = NULL") == ["Jane", "Zoë"])
        #expect(matching("email != nil") == ["John", "Bob"])
        #expect(matching("email < 'zzz'") == ["John", "Bob"])
        #expect(matching("NOT (email < 'zzz')") == ["Jane", "Zoë"])
        #expect(matching("email BEGINSWITH 'j'") == ["John"])
        #expect(matching("company.name == nil") == ["Jane", "Zoë"])
        #expect(NSPredicate(format: "SELF == nil").evaluate(with: nil))
        #expect(!NSPredicate(format: "SELF > 3").evaluate(with: nil))
    }

    @Test func numbersCompareAcrossTypes() {
        #expect(matching("isActive == YES") == ["John", "Bob"])
        #expect(matching("isActive == TRUE") == ["John", "Bob"])
        #expect(matching("isActive == 1") == ["John", "Bob"])
        #expect(matching("isActive == %@", NSNumber(value: false)) == ["Jane", "Zoë"])
        #expect(matching("age == %@", NSNumber(value: 30)) == ["John"])
        #expect(matching("age == 30.0") == ["John"])
        #expect(matching("age == %@", Int64(30)) == ["John"])
        #expect(matching("salary > %f", 9000.25) == ["Bob"])
        #expect(matching("salary == %@", Decimal(string: "9000.5")!) == ["Bob"])
        #expect(NSPredicate(format: "SELF == 3").evaluate(with: UInt8(3)))
        #expect(NSPredicate(format: "SELF < 3.5").evaluate(with: Float(3.25)))
    }

    @Test func modifiersOverCollections() {
        let acme = TestCompany("Acme")
        let ios = TestProject(title: "iOS App", budget: 80_000)
        let web = TestProject(title: "Web", budget: 50_000)
        acme.employees = [
            TestEmployee("E0", age: 25, projects: [ios]), TestEmployee("E1", age: 35, projects: [ios, web]),
            TestEmployee("E2", age: 45),
        ]
        let empty = TestCompany("Empty")
        #expect(NSPredicate(format: "ANY employees.age > 40").evaluate(with: acme))
        #expect(NSPredicate(format: "SOME employees.age > 40").evaluate(with: acme))
        #expect(!NSPredicate(format: "ALL employees.age > 30").evaluate(with: acme))
        #expect(NSPredicate(format: "ALL employees.age > 20").evaluate(with: acme))
        #expect(NSPredicate(format: "NONE employees.age > 50").evaluate(with: acme))
        #expect(!NSPredicate(format: "ANY employees.age > 0").evaluate(with: empty))
        #expect(NSPredicate(format: "ALL employees.age > 1000").evaluate(with: empty))
        #expect(NSPredicate(format: "NONE employees.age > 0").evaluate(with: empty))
        // To-many key paths flatten: employees.projects.title is every title of every employee.
        #expect(NSPredicate(format: "ANY employees.projects.title CONTAINS[c] 'ios'").evaluate(with: acme))
        #expect(NSPredicate(format: "employees.projects.@count == 3").evaluate(with: acme))
        #expect(NSPredicate(format: "employees.@count == 3").evaluate(with: acme))
        #expect(NSPredicate(format: "employees.@avg.age == 35").evaluate(with: acme))
        #expect(NSPredicate(format: "employees.@sum.age == 105").evaluate(with: acme))
        #expect(NSPredicate(format: "employees.@min.age == 25 AND employees.@max.age == 45").evaluate(with: acme))
        #expect(NSPredicate(format: "employees.projects.@sum.budget > 200000").evaluate(with: acme))
        #expect(
            NSPredicate(format: "employees.projects.@distinctUnionOfObjects.title.@count == 2").evaluate(with: acme))
        #expect(NSPredicate(format: "SUBQUERY(employees, $e, $e.age < 30).@count == 1").evaluate(with: acme))
        #expect(
            NSPredicate(format: "SUBQUERY(employees, $e, ANY $e.projects.budget > 60000).@count == 2").evaluate(
                with: acme))
        #expect(NSPredicate(format: "SUBQUERY(employees, $e, age > 30).@count == 2").evaluate(with: acme))
    }

    @Test func dictionariesArraysAndSelf() {
        let row: [String: Any] = ["name": "Ben", "scores": [3, 5, 8], "nested": ["city": "Oslo"]]
        #expect(NSPredicate(format: "name == 'Ben' AND nested.city BEGINSWITH 'Os'").evaluate(with: row))
        #expect(NSPredicate(format: "scores[0] == 3 AND scores[LAST] == 8 AND scores[SIZE] == 3").evaluate(with: row))
        #expect(NSPredicate(format: "scores[FIRST] == 3 AND scores.@max == 8").evaluate(with: row))
        #expect(NSPredicate(format: "missing == nil").evaluate(with: row))
        let dictionary = NSDictionary(dictionary: ["age": NSNumber(value: 42), "name": NSString(string: "Ann")])
        #expect(NSPredicate(format: "age > 40 AND name == 'Ann'").evaluate(with: dictionary))
        #expect(NSPredicate(format: "SELF > 3").evaluate(with: 5))
        #expect(NSPredicate(format: "@count == 3").evaluate(with: [1, 2, 3]))
        #expect(NSPredicate(format: "ANY SELF == 2").evaluate(with: NSArray(array: [1, 2])))
        #expect([1, 5, 10, 20].filtered(using: NSPredicate(format: "SELF BETWEEN {5, 10}")) == [5, 10])
        #expect(["apple", "Banana"].filtered(using: NSPredicate(format: "SELF BEGINSWITH[c] 'b'")) == ["Banana"])
        #expect(NSPredicate(format: "ANYKEY == 'Oslo'").evaluate(with: ["city": "Oslo"]))
    }

    @Test func datesAndBridgedValues() {
        let reference = Date(timeIntervalSinceReferenceDate: 1000)
        let person = TestPerson("A", "B", age: 1)
        person.birthday = reference
        #expect(NSPredicate(format: "birthday == %@", reference as NSDate).evaluate(with: person))
        #expect(NSPredicate(format: "birthday > %@", reference.addingTimeInterval(-1)).evaluate(with: person))
        #expect(NSPredicate(format: "birthday < CAST(1001, 'NSDate')").evaluate(with: person))
        #expect(NSPredicate(format: "birthday < now() AND birthday > now() - 1000000000").evaluate(with: person))
        #expect(
            NSPredicate(format: "(birthday = nil) OR (birthday > %@)", reference.addingTimeInterval(-5)).evaluate(
                with: person))
        let id = UUID()
        #expect(NSPredicate(format: "SELF == %@", id).evaluate(with: id))
        #expect(NSPredicate(format: "SELF == %@", Data([1, 2])).evaluate(with: Data([1, 2])))
        #expect(
            NSPredicate(format: "SELF == %@", URL(string: "https://a.example")!).evaluate(
                with: URL(string: "https://a.example")!))
        #expect(NSPredicate(format: "SELF == %@", NSString(string: "x")).evaluate(with: "x"))
        #expect(NSPredicate(format: "SELF == %@", person).evaluate(with: person))
    }

    @Test func substitutionVariables() {
        let predicate = NSPredicate(format: "age > $limit AND firstName BEGINSWITH $prefix")
        #expect(
            Fixtures.names(
                people.filter { predicate.evaluate(with: $0, substitutionVariables: ["limit": 20, "prefix": "J"]) })
                == ["John"])
        let bound = predicate.withSubstitutionVariables(["limit": 18, "prefix": "B"])
        #expect(Fixtures.names(people.filtered(using: bound)) == ["Bob"])
        #expect(bound.predicateFormat == "age > 18 AND firstName BEGINSWITH \"B\"")
        #expect(NSPredicate(format: "$limit > 3").withSubstitutionVariables(["limit": 5]).evaluate(with: nil))
        #expect(!predicate.evaluate(with: people[0]))
        #expect(throws: PredicateLanguageError.self) { try predicate.evaluateThrowing(with: people[0]) }
    }

    @Test func compoundPredicates() {
        let and = NSCompoundPredicate(andPredicateWithSubpredicates: [
            NSPredicate(format: "age > %d", 18), NSPredicate(format: "isActive == true"),
        ])
        #expect(Fixtures.names(people.filtered(using: and)) == ["John", "Bob"])
        let or = NSCompoundPredicate(orPredicateWithSubpredicates: [
            NSPredicate(format: "firstName == %@", "John"), NSPredicate(format: "firstName == %@", "Jane"),
        ])
        #expect(Fixtures.names(people.filtered(using: or)) == ["John", "Jane"])
        let not = NSCompoundPredicate(notPredicateWithSubpredicate: NSPredicate(format: "age < %d", 18))
        #expect(people.filtered(using: not).count == 3)
        #expect(NSCompoundPredicate(andPredicateWithSubpredicates: []).evaluate(with: nil))
        #expect(!NSCompoundPredicate(orPredicateWithSubpredicates: []).evaluate(with: nil))
        #expect(matching("TRUEPREDICATE").count == 4 && matching("FALSEPREDICATE").isEmpty)
        #expect(NSPredicate(value: true).evaluate(with: nil) && !NSPredicate(value: false).evaluate(with: nil))
        let block = NSPredicate { object, variables in (object as? Int) == variables?["x"] as? Int }
        #expect(block.evaluate(with: 3, substitutionVariables: ["x": 3]))
    }

    @Test func concurrentEvaluationOfOnePredicate() {
        let predicate = NSPredicate(format: "SELF.v > 10 AND SELF.s MATCHES '[a-z]+'")
        nonisolated(unsafe) let rows: [[String: Any]] = (0..<200).map { ["v": $0, "s": $0 % 2 == 0 ? "abc" : "AB1"] }
        let counts = Mutex([Int](repeating: 0, count: 8))
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            let matches = rows.filter { predicate.evaluate(with: $0) }.count
            counts.withLock { $0[worker] = matches }
        }
        #expect(counts.withLock { $0 } == Array(repeating: 94, count: 8))
    }

    @Test func arithmeticAndFunctions() {
        #expect(matching("age * 2 > 100") == ["Bob"])
        #expect(matching("age + 1 == 31") == ["John"])
        #expect(matching("-age < -60") == ["Bob"])
        #expect(matching("age ** 2 == 900") == ["John"])
        #expect(matching("(age - 5) / 5 == 5") == ["John"])
        #expect(matching("uppercase:(firstName) == 'JOHN'") == ["John"])
        #expect(matching("lowercase(firstName) == 'bob'") == ["Bob"])
        #expect(matching("TERNARY(age > 20, 'adult', 'minor') == 'minor'") == ["Jane"])
        #expect(matching("FUNCTION(firstName, 'uppercaseString') == 'JANE'") == ["Jane"])
        #expect(NSPredicate(format: "sum({1, 2, 3}) == 6 AND average({2, 4}) == 3").evaluate(with: nil))
        #expect(
            NSPredicate(format: "sqrt(16) == 4 AND abs(-3) == 3 AND floor(2.7) == 2 AND ceiling(2.1) == 3").evaluate(
                with: nil))
        #expect(
            NSPredicate(format: "max({1, 9, 3}) == 9 AND min({4, 2}) == 2 AND median({1, 3, 9}) == 3").evaluate(
                with: nil))
        #expect(
            NSPredicate(format: "0x1F == 31 AND 0o17 == 15 AND 0b101 == 5 AND 1e2 == 100 AND 2.5e-1 == 0.25").evaluate(
                with: nil))
        #expect(NSPredicate(format: "{1, 2} UNION {2, 3} == {1, 2, 3}").evaluate(with: nil))
        #expect(NSPredicate(format: "({1, 2, 3} MINUS {2}).@count == 2").evaluate(with: nil))
        #expect(NSPredicate(format: "({1, 2, 3} INTERSECT {2, 9})[FIRST] == 2").evaluate(with: nil))
        #expect(NSPredicate(format: "modulus:by:(7, 3) == 1 AND add:to:(1, 2) == 3").evaluate(with: nil))
        #expect(NSPredicate(format: "2 ** 3 ** 2 == 512").evaluate(with: nil))
    }
}
