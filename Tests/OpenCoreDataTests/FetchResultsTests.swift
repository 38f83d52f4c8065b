import OpenCoreData
import Testing

@Suite struct FetchResultsTests {
    static func populated() throws -> NSManagedObjectContext {
        let context = try TestStack.freshContext()
        let acme = TCompany(context: context)
        acme.name = "Acme"
        for (index, age) in [30, 40, 50, 30].enumerated() {
            let employee = TEmployee(context: context)
            employee.name = "E\(index)"
            employee.age = Int16(age)
            employee.salary = Double(index + 1) * 100
            employee.company = index < 3 ? acme : nil
        }
        try context.save()
        return context
    }

    @Test func groupedAggregatesWithHavingAndDistinct() throws {
        let context = try Self.populated()
        let total = NSExpressionDescription()
        total.name = "total"
        total.expression = NSExpression(forFunction: "sum:", arguments: [NSExpression(forKeyPath: "salary")])
        total.expressionResultType = .doubleAttributeType
        let request = NSFetchRequest<NSDictionary>(entityName: "Employee")
        request.resultType = .dictionaryResultType
        request.propertiesToFetch = ["age", total]
        request.propertiesToGroupBy = ["age"]
        request.sortDescriptors = [NSSortDescriptor(key: "age", ascending: true)]
        let groups = try context.fetch(request)
        #expect(groups.map { $0["age"] as? Int16 } == [30, 40, 50])
        #expect(groups.first?["total"] as? Double == 500)
        request.havingPredicate = NSPredicate(format: "total > 250")
        #expect(try context.fetch(request).map { $0["age"] as? Int16 } == [30, 50])

        let whole = NSFetchRequest<NSDictionary>(entityName: "Employee")
        whole.resultType = .dictionaryResultType
        whole.propertiesToFetch = [total]
        #expect(try context.fetch(whole).first?["total"] as? Double == 1000)

        let distinct = NSFetchRequest<NSDictionary>(entityName: "Employee")
        distinct.resultType = .dictionaryResultType
        distinct.propertiesToFetch = ["age"]
        distinct.returnsDistinctResults = true
        #expect(try context.fetch(distinct).count == 3)
        let companies = NSFetchRequest<NSDictionary>(entityName: "Employee")
        companies.resultType = .dictionaryResultType
        companies.propertiesToFetch = ["company"]
        companies.predicate = NSPredicate(format: "company != nil")
        #expect(try context.fetch(companies).allSatisfy { $0["company"] is NSManagedObjectID })
    }

    @Test func formatPredicatesOnRowsAndPendingObjects() throws {
        let context = try Self.populated()
        let request = NSFetchRequest<TEmployee>(entityName: "Employee")
        request.predicate = NSPredicate(format: "company.name == %@ AND age >= %d", "Acme", 40)
        #expect(Set(try context.fetch(request).compactMap(\.name)) == ["E1", "E2"])
        let pending = TEmployee(context: context)
        pending.name = "Pending"
        pending.age = 60
        pending.company = try context.fetch(NSFetchRequest<TCompany>(entityName: "Company")).first
        #expect(Set(try context.fetch(request).compactMap(\.name)) == ["E1", "E2", "Pending"])
        let byObject = NSFetchRequest<TEmployee>(entityName: "Employee")
        byObject.predicate = NSPredicate(format: "company == %@", pending.company!)
        #expect(try context.count(for: byObject) == 4)
        byObject.predicate = NSPredicate(format: "company == %@", pending.company!.objectID)
        #expect(try context.count(for: byObject) == 4)
        let unknown = NSFetchRequest<TEmployee>(entityName: "Employee")
        unknown.predicate = NSPredicate(format: "shoeSize > 3")
        #expect(throws: KeyValueCodingError.unknownKey("shoeSize", in: "Employee")) { try context.fetch(unknown) }
        do {
            _ = try context.fetch(unknown)
        } catch {
            // What `print(error.localizedDescription)` shows names the key and the entity.
            #expect(error.localizedDescription.contains("unknown key 'shoeSize' for Employee"))
        }
    }
}
