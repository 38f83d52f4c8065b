import OpenCoreData
import TestSupport
import Testing

@Suite struct InverseMaintenanceTests {
    static let shapes = [
        OracleRelationship(name: "employees", inverseName: "company", isToMany: true, inverseIsToMany: false),
        OracleRelationship(name: "ceo", inverseName: "ledCompany", isToMany: false, inverseIsToMany: false),
        OracleRelationship(name: "projects", inverseName: "members", isToMany: true, inverseIsToMany: true),
    ]

    /// Random edits through every entry point (typed properties, KVC, mutable sets,
    /// either side of each relationship) must leave both sides exactly as the plain
    /// oracle says, after every step and after saving and re-fetching.
    @Test func randomEditsMatchThePlainGraph() throws {
        var random = SeededRandom(environmentOr: 0x1A2B)
        let coordinator = try TestStack.coordinator()
        let context = TestStack.context(coordinator)
        let companies = (0..<5).map { index -> TCompany in
            let company = TCompany(context: context)
            company.name = "C\(index)"
            return company
        }
        let employees = (0..<12).map { index -> TEmployee in
            let employee = index % 4 == 0 ? TManager(context: context) : TEmployee(context: context)
            employee.name = "E\(index)"
            return employee
        }
        let projects = (0..<6).map { index -> TProject in
            let project = TProject(context: context)
            project.title = "P\(index)"
            return project
        }
        var oracle = ObjectGraphOracle(relationships: Self.shapes)

        for step in 0..<600 {
            let c = random.int(in: 0...(companies.count - 1))
            let e = random.int(in: 0...(employees.count - 1))
            let p = random.int(in: 0...(projects.count - 1))
            switch random.int(in: 0...9) {
            case 0:
                employees[e].company = companies[c]
                oracle.link("employees", c, e)
            case 1:
                if let old = employees[e].company, let index = companies.firstIndex(of: old) {
                    oracle.unlink("employees", index, e)
                }
                employees[e].company = nil
            case 2:
                companies[c].mutableSetValue(forKey: "employees").add(employees[e])
                oracle.link("employees", c, e)
            case 3:
                let chosen = Set((0..<employees.count).filter { _ in random.chance(0.2) })
                companies[c].employees = Set(chosen.map { employees[$0] })
                oracle.replace("employees", c, with: chosen)
            case 4:
                companies[c].ceo = employees[e]
                oracle.link("ceo", c, e)
            case 5:
                employees[e].setValue(companies[c], forKey: "ledCompany")
                oracle.link("ceo", c, e)
            case 6:
                employees[e].projects.insert(projects[p])
                oracle.link("projects", e, p)
            case 7:
                projects[p].mutableSetValue(forKey: "members").remove(employees[e])
                oracle.unlink("projects", e, p)
            case 8:
                let chosen = Set((0..<projects.count).filter { _ in random.chance(0.3) })
                employees[e].setValue(Set(chosen.map { projects[$0] }), forKey: "projects")
                oracle.replace("projects", e, with: chosen)
            default:
                try context.save()
            }
            try check(companies, employees, projects, oracle, "step \(step), \(random.replayHint)")
        }
        try context.save()
        // A second context reads the saved graph from the store: it must match too.
        let reader = TestStack.context(coordinator)
        let order: ([NSManagedObject]) -> [NSManagedObjectID] = { $0.map(\.objectID) }
        let fetchedCompanies = order(companies).map { reader.object(with: $0) as! TCompany }
        let fetchedEmployees = order(employees).map { reader.object(with: $0) as! TEmployee }
        let fetchedProjects = order(projects).map { reader.object(with: $0) as! TProject }
        try check(fetchedCompanies, fetchedEmployees, fetchedProjects, oracle, "after save, \(random.replayHint)")
    }

    private func check(
        _ companies: [TCompany], _ employees: [TEmployee], _ projects: [TProject], _ oracle: ObjectGraphOracle,
        _ label: String
    ) throws {
        func indexes<T: NSManagedObject>(_ objects: some Sequence<T>, in all: [T]) -> Set<Int> {
            Set(objects.compactMap { all.firstIndex(of: $0) })
        }
        for (c, company) in companies.enumerated() {
            let expected = oracle.destinations("employees", of: c)
            #expect(indexes(company.employees, in: employees) == expected, "\(label): company \(c) employees")
            let ceo = company.ceo.flatMap { employees.firstIndex(of: $0) }
            #expect(ceo.map { [$0] } ?? [] == oracle.destinations("ceo", of: c), "\(label): company \(c) ceo")
        }
        for (e, employee) in employees.enumerated() {
            let company = employee.company.flatMap { companies.firstIndex(of: $0) }
            #expect(company.map { [$0] } ?? [] == oracle.sources("employees", of: e), "\(label): employee \(e) company")
            let led = employee.ledCompany.flatMap { companies.firstIndex(of: $0) }
            #expect(led.map { [$0] } ?? [] == oracle.sources("ceo", of: e), "\(label): employee \(e) ledCompany")
            #expect(indexes(employee.projects, in: projects) == oracle.destinations("projects", of: e), "\(label)")
        }
        for (p, project) in projects.enumerated() {
            #expect(
                indexes(project.members, in: employees) == oracle.sources("projects", of: p), "\(label): project \(p)")
        }
    }
}
