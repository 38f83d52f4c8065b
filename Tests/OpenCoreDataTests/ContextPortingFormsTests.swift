import Foundation
import Testing

@testable import OpenCoreData

/// Smaller forms from the guides: the /dev/null store, NSFetchRequest.execute() in a
/// perform block, refresh into a fault, NSPersistentCloudKitContainer as a local one.
@Suite struct ContextPortingFormsTests {
    /// A container of the test model whose one store is at /dev/null, of `type`.
    static func devNullContainer(_ type: String, cloudKit: Bool = false) throws -> NSPersistentContainer {
        let container =
            cloudKit
            ? NSPersistentCloudKitContainer(name: "Test", managedObjectModel: TestStack.model)
            : NSPersistentContainer(name: "Test", managedObjectModel: TestStack.model)
        let description = container.persistentStoreDescriptions.first!
        description.type = type
        description.url = URL(fileURLWithPath: "/dev/null")
        var loadError: Error?
        container.loadPersistentStores { _, error in loadError = error }
        if let loadError { throw loadError }
        return container
    }

    @Test(arguments: [NSSQLiteStoreType, NSBinaryStoreType])
    func aStoreAtDevNullIsPrivateAndInMemory(type: String) throws {
        let first = try Self.devNullContainer(type)
        let second = try Self.devNullContainer(type)
        #expect(first.persistentStoreCoordinator.persistentStores.first?.type == type)
        let context = first.newBackgroundContext()
        try context.performAndWait {
            let company = TCompany(context: context)
            company.name = "Acme"
            try context.save()
        }
        let reader = first.newBackgroundContext()
        #expect(try reader.performAndWait { try reader.count(for: TestStack.request("Company")) } == 1)
        let other = second.newBackgroundContext()
        #expect(try other.performAndWait { try other.count(for: TestStack.request("Company")) } == 0)
        // The device itself is untouched.
        let attributes = try FileManager.default.attributesOfItem(atPath: "/dev/null")
        #expect(attributes[.type] as? FileAttributeType == .typeCharacterSpecial)
        for store in first.persistentStoreCoordinator.persistentStores {
            try first.persistentStoreCoordinator.remove(store)
        }
    }

    @Test func aFileStoreWithoutAURLIsStillAnError() throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestStack.model)
        #expect {
            try coordinator.addPersistentStore(ofType: NSBinaryStoreType, configurationName: nil, at: nil, options: nil)
        } throws: { ($0 as NSError).code == NSPersistentStoreOpenError }
    }

    @Test func executeInsideAPerformBlockUsesThatContext() throws {
        let context = try TestStack.freshContext()
        let other = TestStack.context(context.persistentStoreCoordinator!)
        let names = try context.performAndWait {
            let company = TCompany(context: context)
            company.name = "Pending"
            // Nested: execute() answers for the innermost context's block.
            let elsewhere = try other.performAndWait { try TestStack.request("Company", TCompany.self).execute() }
            #expect(elsewhere.isEmpty)
            return try TestStack.request("Company", TCompany.self).execute().map(\.name)
        }
        #expect(names == ["Pending"])
        let async = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var fetched: [String?] = []
        context.perform {
            fetched = (try? TestStack.request("Company", TCompany.self).execute().map(\.name)) ?? []
            async.signal()
        }
        async.wait()
        #expect(fetched == ["Pending"])
    }

    @Test func executeOutsideAnyPerformBlockThrows() throws {
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var caught: NSError?
        Thread.detachNewThread {
            do { _ = try TestStack.request("Company").execute() } catch { caught = error as NSError }
            done.signal()
        }
        done.wait()
        #expect(caught?.code == NSCoreDataError)
        #expect(caught?.localizedDescription.contains("perform") == true)
    }

    @Test func refreshWithoutMergingTurnsTheObjectIntoAFault() throws {
        let context = try TestStack.freshContext()
        let company = TCompany(context: context)
        company.name = "Acme"
        try context.save()
        company.name = "Changed"
        context.refresh(company, mergeChanges: false)
        #expect(company.isFault && !company.hasChanges && !context.hasChanges)
        #expect(company.name == "Acme")
    }

    @Test func theCrossContextRelationshipErrorNamesTheRelationshipAsCoreData() throws {
        let coordinator = try TestStack.coordinator()
        let first = TestStack.context(coordinator)
        let second = TestStack.context(coordinator)
        let company = TCompany(context: first)
        let employee = TEmployee(context: second)
        #expect {
            try employee.writeValue(company, forKey: "company")
        } throws: { error in
            (error as NSError).localizedDescription.contains(
                "Illegal attempt to establish a relationship 'company' between objects in different contexts")
        }
    }

    @Test func theCloudKitContainerRunsAsALocalContainer() throws {
        let container = try Self.devNullContainer(NSSQLiteStoreType, cloudKit: true)
        let cloudKit = try #require(container as? NSPersistentCloudKitContainer)
        let description = NSPersistentStoreDescription(url: URL(fileURLWithPath: "/dev/null"))
        description.cloudKitContainerOptions = NSPersistentCloudKitContainerOptions(
            containerIdentifier: "iCloud.com.example.app")
        #expect(description.cloudKitContainerOptions?.containerIdentifier == "iCloud.com.example.app")
        try cloudKit.initializeCloudKitSchema(options: [.dryRun, .printSchema])
        try cloudKit.initializeCloudKitSchema()
        let context = container.newBackgroundContext()
        try context.performAndWait {
            TCompany(context: context).name = "Local"
            try context.save()
            #expect(try context.count(for: TestStack.request("Company")) == 1)
        }
    }
}
