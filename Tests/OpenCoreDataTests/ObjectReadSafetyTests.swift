// Reads that Core Data's non-throwing API cannot fail: a typed read of a value of the
// wrong type, and a read of an object whose context is gone. Neither stops the program;
// each is reported once, and the throwing form throws.
import Foundation
import Testing

@testable import OpenCoreData

@Suite struct ObjectReadSafetyTests {
    @Test func aTypedReadOfAWrongValueReadsTheDefaultAndTheSaveStillFails() throws {
        let context = try TestStack.freshContext()
        let employee = TEmployee(context: context)
        employee.name = "Ada"
        employee.setValue("nineteen", forKey: "age")
        #expect(employee.age == 0, "the wrong value reads as the attribute's default, without stopping the program")
        #expect(employee.age == 0)
        #expect(try employee.readValue(forKey: "age") as? String == "nineteen", "the value as stored")
        let reported = ObjectDiagnostics.messages.filter { $0.contains("@Managed var age: Int16 of Employee") }
        #expect(reported.count == 1, "reported once, naming the property: \(reported)")
        #expect(reported.first?.contains("String") == true)
        #expect {
            try context.save()
        } throws: { error in
            (error as NSError).code == NSManagedObjectValidationError
                && (error as NSError).userInfo[NSValidationKeyErrorKey] as? String == "age"
        }
        employee.age = 19
        try context.save()
        #expect(employee.age == 19)
    }

    @Test func aTypedOptionalReadOfAWrongValueReadsNil() throws {
        let context = try TestStack.freshContext()
        let employee = TEmployee(context: context)
        employee.setValue(42, forKey: "name")
        #expect(employee.name == nil)
        employee.setPrimitiveValue("Acme", forKey: "company")
        #expect(employee.company == nil, "a to-one holding a string reads as no object")
        #expect(ObjectDiagnostics.messages.contains { $0.contains("@Managed var name: Optional<String> of Employee") })
    }

    @Test func readsAfterResetAreReportedAndThrow() throws {
        let context = try TestStack.freshContext()
        let company = TCompany(context: context)
        company.name = "Reset Corp"
        try context.save()
        let uri = company.objectID.uriRepresentation().absoluteString
        context.reset()
        #expect(company.managedObjectContext == nil)
        #expect {
            try company.readValue(forKey: "name")
        } throws: { error in
            (error as NSError).code == NSManagedObjectReferentialIntegrityError
                && (error as NSError).localizedDescription.contains("reset or deallocated")
        }
        #expect(company.name == nil, "the non-throwing accessor reads the default value")
        #expect(company.value(forKey: "name") == nil)
        let reported = ObjectDiagnostics.messages.filter { $0.contains(uri) }
        #expect(reported.count == 1, "one diagnostic per object: \(reported)")
        #expect(reported.first?.contains("'name'") == true)
        #expect(throws: (any Error).self) { try company.readValue(forKey: "name") }

        let fetched = try #require(try context.fetch(TestStack.request("Company", TCompany.self)).first)
        #expect(try fetched.readValue(forKey: "name") as? String == "Reset Corp")
    }

    @Test func readsAfterTheContextIsDeallocatedAreReportedAndThrow() throws {
        let coordinator = try TestStack.coordinator()
        var employee: TEmployee?
        var company: TCompany?
        do {
            let context = TestStack.context(coordinator)
            let ada = TEmployee(context: context)
            ada.name = "Ada Gone"
            let acme = TCompany(context: context)
            acme.name = "Acme"
            ada.company = acme
            try context.save()
            employee = ada
            company = ada.company
        }
        let ada = try #require(employee)
        #expect(ada.managedObjectContext == nil)
        #expect(ada.name == nil && ada.company == nil)
        #expect(throws: (any Error).self) { try ada.readValue(forKey: "company") }
        let uri = ada.objectID.uriRepresentation().absoluteString
        #expect(ObjectDiagnostics.messages.contains { $0.contains(uri) && $0.contains("'name'") })
        #expect(company?.managedObjectContext == nil)
    }

    @Test func objectsNeverInsertedStillReadAndWriteFreely() throws {
        let coordinator = try TestStack.coordinator()
        let entity = try #require(coordinator.managedObjectModel.entitiesByName["Company"])
        let detached = TCompany(entity: entity, insertInto: nil)
        detached.name = "Detached"
        #expect(try detached.readValue(forKey: "name") as? String == "Detached")
        let context = TestStack.context(coordinator)
        context.insert(detached)
        try context.save()
        #expect(detached.name == "Detached")
    }
}
