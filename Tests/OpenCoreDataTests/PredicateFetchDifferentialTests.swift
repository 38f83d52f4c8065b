// Differential: random predicates, sorts, offsets and limits over a random object graph
// give the same results through the fetch path (the store evaluates compiled predicates
// on rows, the context re-evaluates pending changes, results are sorted and windowed)
// as through plain evaluate(with:) and sortedThrowing(using:) over all objects — saved,
// changed-but-unsaved and inserted-but-unsaved alike; and fail alike.
import OpenCoreData
import TestSupport
import Testing

@Suite struct PredicateFetchDifferentialTests {
    static let clauses = [
        "age > 30", "age BETWEEN {20, 40}", "salary < 500.5", "name BEGINSWITH[c] 'e1'", "name ENDSWITH '7'",
        "company.name == 'Acme'", "company.name ==[c] 'BOLT'", "company == nil", "ANY projects.title CONTAINS[c] 'web'",
        "ALL projects.budget > 1000", "NONE projects.budget > 50000", "projects.@count >= 2",
        "projects.@sum.budget > 60000",
        "SUBQUERY(projects, $p, $p.budget < 20000).@count > 0", "name IN {'E1', 'E5', 'E12'}", "name LIKE 'E?'",
        "name MATCHES 'E[0-9]*3'", "age * 2 > salary / 10", "company.employees.@count > 5", "TRUEPREDICATE",
        "name == $wanted", "age < $limit",
    ]

    /// Builds the random graph in `context`, saving part of it and leaving the rest pending.
    static func populate(_ context: NSManagedObjectContext, _ random: inout SeededRandom) throws -> [TEmployee] {
        let companies = ["Acme", "Bolt", "Crane"].map { name -> TCompany in
            let company = TCompany(context: context)
            company.name = name
            return company
        }
        let projects = (0..<6).map { index -> TProject in
            let project = TProject(context: context)
            project.title = random.pick(["Web", "iOS", "web shop", "Data"]) + " \(index)"
            project.budget = Double(random.int(in: 1...80)) * 1_000
            return project
        }
        var employees: [TEmployee] = []
        for index in 0..<30 {
            let employee = random.chance(0.2) ? TManager(context: context) : TEmployee(context: context)
            employee.name = "E\(index)"
            employee.age = Int16(random.int(in: 18...65))
            employee.salary = Double(random.int(in: 0...2_000)) / 2
            employee.company = random.chance(0.8) ? random.pick(companies) : nil
            employee.projects = Set((0..<random.int(in: 0...3)).map { _ in random.pick(projects) })
            employees.append(employee)
            if index == 19 { try context.save() }
        }
        for employee in employees.prefix(20) where random.chance(0.2) {
            employee.age = Int16(random.int(in: 18...65))
            employee.company = random.chance(0.5) ? nil : random.pick(companies)
        }
        for employee in employees where random.chance(0.05) {
            context.delete(employee)
        }
        return employees.filter { !$0.isDeleted }
    }

    @Test func fetchesAgreeWithInMemoryEvaluation() throws {
        var random = SeededRandom(environmentOr: 2_026)
        let context = try TestStack.freshContext()
        try context.performAndWait {
            let employees = try Self.populate(context, &random)
            let variables: [String: Any] = ["wanted": "E3", "limit": 40]
            for _ in 0..<120 {
                var format = random.pick(Self.clauses)
                for _ in 0..<random.int(in: 0...2) {
                    format += random.pick([" AND ", " OR ", " AND NOT "]) + random.pick(Self.clauses)
                }
                let predicate = NSPredicate(format: format).withSubstitutionVariables(variables)
                let descriptors =
                    (0..<random.int(in: 0...2)).map { _ in
                        NSSortDescriptor(
                            key: random.pick(["age", "salary", "company.name"]), ascending: random.chance(0.5))
                    } + [NSSortDescriptor(key: "name", ascending: random.chance(0.5))]
                let offset = random.chance(0.3) ? random.int(in: 0...5) : 0
                let limit = random.chance(0.3) ? random.int(in: 1...8) : 0

                let request = NSFetchRequest<TEmployee>(entityName: "Employee")
                request.predicate = predicate
                request.sortDescriptors = descriptors
                request.fetchOffset = offset
                request.fetchLimit = limit
                let fetched = Result { try context.fetch(request).compactMap(\.name) }
                let expected = Result {
                    let matching = try employees.filter { try predicate.evaluateThrowing(with: $0) }
                    let sorted = try matching.sortedThrowing(using: descriptors)
                    let window = sorted.dropFirst(offset)
                    return (limit > 0 ? Array(window.prefix(limit)) : Array(window)).compactMap(\.name)
                }
                switch (fetched, expected) {
                case (.success(let a), .success(let b)):
                    #expect(a == b, "\(format) sorted by \(descriptors) [\(offset), \(limit)]; \(random.replayHint)")
                case (.failure, .failure): break
                default:
                    Issue.record("\(format): fetch \(fetched) but evaluation \(expected); \(random.replayHint)")
                }
                let countRequest = NSFetchRequest<TEmployee>(entityName: "Employee")
                countRequest.predicate = predicate
                let counted = Result { try context.count(for: countRequest) }
                let expectedCount = Result { try employees.filter { try predicate.evaluateThrowing(with: $0) }.count }
                switch (counted, expectedCount) {
                case (.success(let a), .success(let b)): #expect(a == b, "count of \(format); \(random.replayHint)")
                case (.failure, .failure): break
                default: Issue.record("count of \(format): \(counted) vs \(expectedCount); \(random.replayHint)")
                }
            }
        }
    }

    @Test func fetchesThrowThePredicatesErrors() throws {
        let context = try TestStack.freshContext()
        try context.performAndWait {
            let employee = TEmployee(context: context)
            employee.name = "E"
            try context.save()
            let cases: [(String, (any Error) -> Bool)] = [
                ("age >> AND (", { ($0 as? PredicateLanguageError)?.position == 5 }),
                ("shoeSize > 3", { $0 is KeyValueCodingError }),
                ("company.shoeSize > 3", { $0 is KeyValueCodingError }),
                ("age BEGINSWITH 'x'", { ($0 as? PredicateLanguageError)?.kind == .typeMismatch }),
                ("name == $missing", { ($0 as? PredicateLanguageError)?.kind == .missingVariable("missing") }),
                ("name MATCHES '('", { ($0 as? PredicateLanguageError)?.kind == .invalidRegularExpression }),
            ]
            for (format, matches) in cases {
                let request = NSFetchRequest<TEmployee>(entityName: "Employee")
                request.predicate = NSPredicate(format: format)
                #expect(throws: (any Error).self, "\(format)") { _ = try context.fetch(request) }
                #expect(failure(of: { _ = try context.fetch(request) }).map(matches) == true, "\(format)")
                let pending = NSFetchRequest<TEmployee>(entityName: "Employee")
                pending.predicate = NSPredicate(format: format)
                employee.age += 1
                #expect(failure(of: { _ = try context.fetch(pending) }).map(matches) == true, "\(format), pending")
            }
            let sort = NSFetchRequest<TEmployee>(entityName: "Employee")
            sort.sortDescriptors = [NSSortDescriptor(key: "height", ascending: true)]
            #expect(throws: KeyValueCodingError.self) { _ = try context.fetch(sort) }
        }
    }
}

/// The error `body` throws, nil when it returns.
private func failure(of body: () throws -> Void) -> (any Error)? {
    do {
        try body()
        return nil
    } catch {
        return error
    }
}
