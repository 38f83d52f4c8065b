import OpenCoreData
import Testing

@Suite struct ChildContextTests {
    /// root (store) <- middle <- leaf: each save moves changes exactly one level up.
    static func chain() throws -> (NSManagedObjectContext, NSManagedObjectContext, NSManagedObjectContext) {
        let root = try TestStack.freshContext()
        let middle = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        middle.parent = root
        let leaf = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        leaf.parent = middle
        return (root, middle, leaf)
    }

    @Test func savesClimbOneLevelAtATime() throws {
        let (root, middle, leaf) = try Self.chain()
        let (companyID, employeeID) = try leaf.performAndWait {
            let company = TCompany(context: leaf)
            company.name = "Acme"
            let employee = TEmployee(context: leaf)
            employee.name = "Ada"
            employee.company = company
            try leaf.save()
            return (company.objectID, employee.objectID)
        }
        let store = TestStack.context(try #require(root.persistentStoreCoordinator))
        middle.performAndWait {
            #expect(middle.hasChanges && middle.insertedObjects.count == 2)
            let employee = middle.object(with: employeeID) as? TEmployee
            #expect(employee?.company?.name == "Acme")
            #expect((middle.object(with: companyID) as? TCompany)?.employees.count == 1)
        }
        #expect(!root.hasChanges)
        #expect(try store.count(for: NSFetchRequest<TEmployee>(entityName: "Employee")) == 0)

        try middle.performAndWait { try middle.save() }
        #expect(root.hasChanges && root.insertedObjects.count == 2)
        #expect(try root.count(for: NSFetchRequest<TEmployee>(entityName: "Employee")) == 1)
        #expect(try store.count(for: NSFetchRequest<TEmployee>(entityName: "Employee")) == 0)

        try root.save()
        #expect(try store.count(for: NSFetchRequest<TEmployee>(entityName: "Employee")) == 1)
        let saved = try #require(try store.fetch(NSFetchRequest<TEmployee>(entityName: "Employee")).first)
        #expect(saved.name == "Ada" && saved.company?.name == "Acme")
    }

    @Test func childrenSeeTheirAncestorsUnsavedStateAndFetchIt() throws {
        let (root, middle, leaf) = try Self.chain()
        let company = TCompany(context: root)
        company.name = "Acme"
        try root.save()
        company.name = "Renamed in root"  // unsaved in root
        let extra = TEmployee(context: root)
        extra.name = "Root only"
        try middle.performAndWait {
            let employee = TEmployee(context: middle)
            employee.name = "Middle only"
            let all = try middle.fetch(NSFetchRequest<TEmployee>(entityName: "Employee"))
            #expect(Set(all.compactMap(\.name)) == ["Root only", "Middle only"])
        }
        try leaf.performAndWait {
            let companies = try leaf.fetch(NSFetchRequest<TCompany>(entityName: "Company"))
            #expect(companies.map(\.name) == ["Renamed in root"])
            let request = NSFetchRequest<TEmployee>(entityName: "Employee")
            request.predicate = TestStack.equals("name", "Middle only")
            #expect(try leaf.fetch(request).count == 1)
            #expect(try leaf.count(for: NSFetchRequest<TEmployee>(entityName: "Employee")) == 2)
        }
    }

    @Test func deletionsAndUpdatesPropagateUpTheChain() throws {
        let (root, middle, leaf) = try Self.chain()
        let company = TCompany(context: root)
        company.name = "Acme"
        let ada = TEmployee(context: root)
        ada.name = "Ada"
        ada.company = company
        let bob = TEmployee(context: root)
        bob.name = "Bob"
        bob.company = company
        try root.save()
        try leaf.performAndWait {
            let leafAda = leaf.object(with: ada.objectID) as! TEmployee
            leafAda.age = 41
            leaf.delete(leaf.object(with: bob.objectID))
            try leaf.save()
        }
        try middle.performAndWait { try middle.save() }
        #expect(ada.age == 41 && ada.hasChanges)
        #expect(bob.isDeleted)
        #expect(company.employees == [ada])
        root.rollback()
        #expect(ada.age == 0 && !bob.isDeleted && company.employees.count == 2)
        try middle.performAndWait {
            // The middle context already holds the saved leaf state; save it again after the root rollback.
            middle.refreshAllObjects()
            let middleAda = middle.object(with: ada.objectID) as! TEmployee
            middleAda.age = 42
            try middle.save()
        }
        try root.save()
        let store = TestStack.context(try #require(root.persistentStoreCoordinator))
        let stored = try store.fetch(NSFetchRequest<TEmployee>(entityName: "Employee"))
        #expect(stored.first { $0.name == "Ada" }?.age == 42)
    }

    @Test func childValidationFailsBeforeTouchingTheParent() throws {
        let (root, middle, _) = try Self.chain()
        middle.performAndWait {
            _ = TCompany(context: middle)  // name is required
            #expect { try middle.save() } throws: {
                ($0 as NSError).code == NSValidationMissingMandatoryPropertyError
            }
            #expect(middle.hasChanges)
        }
        #expect(!root.hasChanges)
    }
}
