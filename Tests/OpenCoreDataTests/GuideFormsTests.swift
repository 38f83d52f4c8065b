// The forms the guides write around batch requests: the untyped class fetchRequest()
// chosen by the annotation, and generic code creating objects with T(context:).
import OpenCoreData
import Testing

extension TTask {
    /// The typed form Xcode generates beside the inherited untyped one.
    @nonobjc class func fetchRequest() -> NSFetchRequest<TTask> {
        NSFetchRequest<TTask>(entityName: "Task")
    }
}

@Suite struct GuideFormsTests {
    /// The guide's generic manager, reduced to what it needs from the type parameter.
    final class Manager<T: NSManagedObject> {
        let context: NSManagedObjectContext
        init(context: NSManagedObjectContext) { self.context = context }
        func create() -> T { T(context: context) }
    }

    @Test func genericCodeCreatesObjectsOfItsTypeParameter() throws {
        let context = try TestStack.freshContext()
        let company = Manager<TCompany>(context: context).create()
        company.name = "Generic"
        #expect(company.entity.name == "Company" && company.isInserted && company.managedObjectContext === context)
        let manager = Manager<TManager>(context: context).create()
        #expect(manager.entity.name == "Manager" && manager.level == 1)
        try context.save()
        #expect(try context.count(for: NSFetchRequest<TCompany>(entityName: "Company")) == 1)
    }

    @Test func untypedFetchRequestIsChosenByTheAnnotation() throws {
        let context = try TestStack.freshContext()
        for name in ["A", "B"] { TCompany(context: context).name = name }
        try context.save()
        let untyped: NSFetchRequest<NSFetchRequestResult> = TCompany.fetchRequest()
        #expect(untyped.entityName == "Company")
        #expect(try context.fetch(untyped).count == 2)
        let employees: NSFetchRequest<NSFetchRequestResult> = TEmployee.fetchRequest()
        #expect(employees.entityName == "Employee")
    }

    @Test func aClassesOwnTypedFetchRequestWinsWithoutAnnotation() throws {
        let context = try TestStack.freshContext()
        TTask(context: context).title = "T"
        try context.save()
        let tasks = try context.fetch(TTask.fetchRequest())
        #expect(tasks.first?.title == "T")
        #expect(try context.count(for: TTask.fetchRequest()) == 1)
        let untyped: NSFetchRequest<NSFetchRequestResult> = TTask.fetchRequest()
        #expect(try context.count(for: untyped) == 1)
    }
}
