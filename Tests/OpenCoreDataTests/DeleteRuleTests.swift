import OpenCoreData
import Testing

/// One cell of the matrix: a Source entity whose relationship `link` to Target has
/// `rule`, is to-one or to-many, and has an inverse `back` (to-many) or none.
struct DeleteRuleCase: CustomStringConvertible, Sendable {
    let rule: NSDeleteRule
    let toMany: Bool
    let inverse: Bool

    var description: String { "rule \(rule) toMany \(toMany) inverse \(inverse)" }

    static let all: [DeleteRuleCase] = NSDeleteRule.allCases.flatMap { rule in
        [false, true].flatMap { toMany in [false, true].map { DeleteRuleCase(rule: rule, toMany: toMany, inverse: $0) }
        }
    }

    func makeModel() -> NSManagedObjectModel {
        let source = NSEntityDescription()
        source.name = "Source"
        let target = NSEntityDescription()
        target.name = "Target"
        let link = TestStack.relationship("link", to: target, toMany: toMany, rule: rule)
        source.properties = [TestStack.attribute("name", .stringAttributeType), link]
        target.properties = [TestStack.attribute("name", .stringAttributeType)]
        if inverse {
            let back = TestStack.relationship("back", to: source, toMany: true, rule: .nullifyDeleteRule)
            TestStack.pair(link, back)
            target.properties.append(back)
        }
        let model = NSManagedObjectModel()
        model.entities = [source, target]
        return model
    }
}

@Suite struct DeleteRuleTests {
    @Test(arguments: DeleteRuleCase.all)
    func deletingTheSourceAppliesTheRule(_ cell: DeleteRuleCase) throws {
        let model = cell.makeModel()
        let coordinator = try TestStack.coordinator(model: model)
        let context = TestStack.context(coordinator)
        let source = NSEntityDescription.insertNewObject(forEntityName: "Source", into: context)
        let targets = (0..<(cell.toMany ? 2 : 1)).map { _ in
            NSEntityDescription.insertNewObject(forEntityName: "Target", into: context)
        }
        source.setValue(cell.toMany ? Set(targets) : targets[0], forKey: "link")
        if cell.inverse {
            for target in targets {
                #expect((target.value(forKey: "back") as? Set<NSManagedObject>) == [source], "\(cell)")
            }
        }
        try context.save()

        context.delete(source)
        context.processPendingChanges()
        switch cell.rule {
        case .nullifyDeleteRule:
            for target in targets where cell.inverse {
                #expect((target.value(forKey: "back") as? Set<NSManagedObject>)?.isEmpty == true, "\(cell)")
            }
            #expect(targets.allSatisfy { !$0.isDeleted }, "\(cell)")
        case .cascadeDeleteRule:
            #expect(targets.allSatisfy { $0.isDeleted }, "\(cell)")
        case .denyDeleteRule:
            #expect(targets.allSatisfy { !$0.isDeleted }, "\(cell)")
            #expect {
                try context.save()
            } throws: { error in
                let error = error as NSError
                return error.code == NSValidationRelationshipDeniedDeleteError
                    && error.userInfo[NSValidationKeyErrorKey] as? String == "link"
                    && error.userInfo[NSValidationObjectErrorKey] as? NSManagedObject === source
            }
            // Emptying the relationship lets the deletion through.
            context.rollback()
            #expect(!source.isDeleted, "\(cell)")
            source.setValue(nil, forKey: "link")
            context.delete(source)
        case .noActionDeleteRule:
            #expect(targets.allSatisfy { !$0.isDeleted }, "\(cell)")
            for target in targets where cell.inverse {
                // No action: the destination still points at the deleted source until you fix it.
                #expect((target.value(forKey: "back") as? Set<NSManagedObject>) == [source], "\(cell)")
            }
        }
        try context.save()

        let reader = TestStack.context(coordinator)
        #expect(try reader.count(for: NSFetchRequest<NSManagedObject>(entityName: "Source")) == 0, "\(cell)")
        let remaining = try reader.count(for: NSFetchRequest<NSManagedObject>(entityName: "Target"))
        #expect(remaining == (cell.rule == .cascadeDeleteRule ? 0 : targets.count), "\(cell)")
    }

    @Test func cascadesChainThroughSeveralLevels() throws {
        let context = try TestStack.freshContext()
        let company = TCompany(context: context)
        company.name = "Acme"
        let employee = TEmployee(context: context)
        employee.company = company
        let project = TProject(context: context)
        project.members = [employee]
        let task = TTask(context: context)
        task.project = project
        try context.save()
        context.delete(company)
        try context.save()
        #expect(employee.managedObjectContext == nil)
        #expect(project.managedObjectContext === context && project.members.isEmpty)
        #expect(task.project === project)
        context.delete(project)
        try context.save()
        #expect(try context.count(for: NSFetchRequest<TTask>(entityName: "Task")) == 0)
    }

    @Test func deletingAnInsertedObjectForgetsIt() throws {
        let context = try TestStack.freshContext()
        let company = TCompany(context: context)
        company.name = "Acme"
        let employee = TEmployee(context: context)
        employee.company = company
        context.delete(employee)
        context.processPendingChanges()
        #expect(company.employees.isEmpty)
        #expect(!context.insertedObjects.contains(employee))
        #expect(!context.deletedObjects.contains(employee))
        try context.save()
        #expect(try context.count(for: NSFetchRequest<TEmployee>(entityName: "Employee")) == 0)
    }
}
