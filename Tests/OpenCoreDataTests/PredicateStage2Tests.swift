// The predicates and sorts of acceptance Stage 2, run over plain objects shaped like its
// data: the language gives Stage 2's expected answers before any store is involved.
import OpenCoreData
import Testing

@Suite struct PredicateStage2Tests {
    final class Row: KeyValueReadable {
        var values: [String: Any]
        init(_ values: [String: Any]) { self.values = values }
        func readValue(forKey key: String) throws -> Any? {
            guard Self.keys.contains(key) else { throw KeyValueCodingError.unknownKey(key, in: "Row") }
            return values[key]
        }
        static let keys: Set<String> = [
            "firstName", "lastName", "age", "email", "isActive", "dateOfBirth", "name", "employees", "company",
            "projects", "title", "budget", "deadline", "employeeID",
        ]
    }

    let now = Date()
    let calendar = Calendar(identifier: .gregorian)

    func people() -> [Row] {
        let names: [(String, String, Int16, String?)] = [
            ("John", "Doe", 30, "john@gmail.com"), ("Jane", "Johnson", 17, nil),
            ("Bob", "Smith", 65, "bob@corp.example"), ("Johanna", "Anderson", 42, "jo@gmail.com"),
            ("alice", "Jackson", 18, "alice@example.com"), ("Zoë", "Émile", 29, nil),
        ]
        return names.enumerated().map { index, person in
            var values: [String: Any] = [
                "firstName": person.0, "lastName": person.1, "age": person.2, "isActive": index % 2 == 0,
            ]
            values["email"] = person.3
            values["dateOfBirth"] = calendar.date(byAdding: .day, value: -index * 3, to: now)
            return Row(values)
        }
    }

    func names(_ format: String, _ arguments: Any...) throws -> [String] {
        let predicate = NSPredicate(format: format, argumentArray: arguments)
        let matches = try people().filteredThrowing(using: predicate)
        return try matches.sortedThrowing(using: [NSSortDescriptor(key: "firstName", ascending: true)])
            .compactMap { $0.values["firstName"] as? String }
    }

    @Test func basicPredicates() throws {
        #expect(try names("firstName == %@", "John") == ["John"])
        #expect(try names("firstName ==[c] %@", "JOHN") == ["John"])
        #expect(try names("firstName != %@", "John").count == 5)
        #expect(try names("age > %d", 30) == ["Bob", "Johanna"])
        #expect(try names("age >= %d AND age <= %d", 18, 65).count == 5)
        #expect(try names("age BETWEEN {18, 30}") == ["John", "Zoë", "alice"])
        #expect(try names("firstName CONTAINS[c] %@", "oh") == ["Johanna", "John"])
        #expect(try names("firstName BEGINSWITH[c] %@", "Jo") == ["Johanna", "John"])
        #expect(try names("lastName ENDSWITH[c] %@", "SON") == ["Jane", "Johanna", "alice"])
        #expect(try names("email LIKE %@", "*@gmail.com") == ["Johanna", "John"])
        #expect(try names("firstName IN %@", ["John", "Jane", "Bob"]) == ["Bob", "Jane", "John"])
        #expect(try names("email != nil").count == 4)
        #expect(try names("email == nil") == ["Jane", "Zoë"])
        #expect(try names("firstName MATCHES %@", "J[a-z]+n") == ["John"])
        #expect(try names("lastName ==[cd] %@", "emile") == ["Zoë"])
        #expect(try names("isActive == YES").count == 3)
        #expect(try names("TRUEPREDICATE").count == 6 && names("FALSEPREDICATE").isEmpty)
        #expect(try names("%K == %@", "lastName", "Smith") == ["Bob"])
        #expect(
            try names("NOT (age < 18 OR age > 60) AND (firstName BEGINSWITH 'J' || lastName == 'Jackson')")
                == ["Johanna", "John", "alice"])
    }

    @Test func compoundAndDates() throws {
        let and = NSCompoundPredicate(andPredicateWithSubpredicates: [
            NSPredicate(format: "age > %d", 18), NSPredicate(format: "isActive == true"),
        ])
        #expect(try people().filteredThrowing(using: and).count == 2)
        let not = NSCompoundPredicate(notPredicateWithSubpredicate: NSPredicate(format: "age < %d", 18))
        #expect(try people().filteredThrowing(using: not).count == 5)
        let startOfDay = calendar.startOfDay(for: now)
        let weekAgo = try #require(calendar.date(byAdding: .day, value: -7, to: now))
        #expect(try names("dateOfBirth >= %@", weekAgo as NSDate).count == 3)
        let tomorrow = try #require(calendar.date(byAdding: .day, value: 1, to: startOfDay))
        #expect(try names("dateOfBirth >= %@ AND dateOfBirth < %@", startOfDay, tomorrow).count == 1)
    }

    @Test func relationshipsAndCollections() throws {
        let tech = Row(["name": "Tech Corp"])
        let shop = Row(["name": "Shop"])
        let ios = Row(["title": "iOS App", "budget": 80_000.0, "deadline": now.addingTimeInterval(86_400 * 10)])
        let web = Row(["title": "Web", "budget": 50_000.0, "deadline": now.addingTimeInterval(-86_400)])
        let employees = [25, 35, 45, 19].enumerated().map { index, age in
            Row([
                "name": "E\(index)", "employeeID": "EMP\(index)", "age": Int16(age), "company": index < 3 ? tech : shop,
                "projects": Set<Int>(),
            ])
        }
        employees[0].values["projects"] = [ios]
        employees[1].values["projects"] = [ios, web]
        employees[2].values["projects"] = [Row]()
        employees[3].values["projects"] = [web]
        tech.values["employees"] = Array(employees[0..<3])
        shop.values["employees"] = [employees[3]]
        let companies = [tech, shop]
        func count(_ rows: [Row], _ format: String, _ arguments: Any...) throws -> Int {
            try rows.filteredThrowing(using: NSPredicate(format: format, argumentArray: arguments)).count
        }
        #expect(try count(employees, "company.name == %@", "Tech Corp") == 3)
        #expect(try count(companies, "employees.@count >= %d", 3) == 1)
        #expect(try count(employees, "ANY projects.title CONTAINS[c] %@", "ios") == 2)
        #expect(try count(companies, "ALL employees.age >= %d", 19) == 2)
        #expect(try count(employees, "NONE projects.deadline < %@", now as NSDate) == 2)
        #expect(try count(companies, "employees.@avg.age > %f", 30.0) == 1)
        #expect(try count(employees, "projects.@sum.budget > %f", 100_000.0) == 1)
        #expect(try count(companies, "SUBQUERY(employees, $e, $e.age < 30).@count == 1") == 2)
        let byCompany = try employees.sortedThrowing(using: [
            NSSortDescriptor(key: "company.name", ascending: true), NSSortDescriptor(key: "name", ascending: false),
        ])
        #expect(byCompany.compactMap { $0.values["name"] as? String } == ["E3", "E2", "E1", "E0"])
    }

    @Test func sortsAndDirectEvaluation() throws {
        let sorted = try people().sortedThrowing(using: [
            NSSortDescriptor(key: "isActive", ascending: false), NSSortDescriptor(key: "age", ascending: true),
        ])
        #expect(sorted.compactMap { $0.values["age"] as? Int16 } == [18, 30, 65, 17, 29, 42])
        let caseless = try people().sortedThrowing(using: [
            NSSortDescriptor(key: "firstName", ascending: true) { a, b in
                (a as? String ?? "").caseInsensitiveCompare(b as? String ?? "")
            }
        ])
        #expect(caseless.first?.values["firstName"] as? String == "alice")
        let byAge = try people().sortedThrowing(using: [NSSortDescriptor(key: "age", ascending: true)])
        #expect(byAge[2..<4].compactMap { $0.values["age"] as? Int16 } == [29, 30])
        let john = people().first { $0.values["firstName"] as? String == "John" }
        #expect(NSPredicate(format: "age > 18 AND firstName BEGINSWITH 'J'").evaluate(with: john))
        #expect(NSPredicate(format: "$limit > 3").withSubstitutionVariables(["limit": 5]).evaluate(with: nil))
        #expect(NSPredicate(format: "firstName == %@", "John").predicateFormat == "firstName == \"John\"")
        #expect(throws: PredicateLanguageError.self) { try NSPredicate(format: "age >> AND (").validate() }
        #expect(throws: KeyValueCodingError.self) {
            try people().filteredThrowing(using: NSPredicate(format: "shoeSize > 3"))
        }
    }
}
