// Staged migration and the classic migration manager, on the acceptance stage's Company
// model in three versions (built in code here: version 3 without its derived and
// transformable attributes, which stores do not hold yet): version 2 renames hireDate to
// startDate and Office to Branch, version 3 splits name into firstName and lastName.
import Foundation
import Testing

@testable import OpenCoreData

enum CompanyVersions {
    typealias F = MigrationFixtures

    static func model(_ version: Int) -> NSManagedObjectModel {
        let company = F.entity(
            "Company",
            [F.attribute("name", .stringAttributeType, optional: false), F.attribute("founded", .dateAttributeType)])
        var employeeProperties: [NSPropertyDescription] = [
            F.attribute("employeeID", .stringAttributeType, optional: false),
            F.attribute("salary", .doubleAttributeType, optional: false, defaultValue: 0.0),
        ]
        if version >= 2 {
            employeeProperties.append(F.attribute("startDate", .dateAttributeType, renamedFrom: "hireDate"))
            employeeProperties.append(
                F.attribute("department", .stringAttributeType, optional: false, defaultValue: "General"))
        } else {
            employeeProperties.append(F.attribute("hireDate", .dateAttributeType))
            employeeProperties.append(F.attribute("department", .stringAttributeType))
        }
        if version >= 3 {
            employeeProperties += [
                F.attribute("firstName", .stringAttributeType), F.attribute("lastName", .stringAttributeType),
            ]
        } else {
            employeeProperties.append(F.attribute("name", .stringAttributeType))
        }
        let employee = F.entity("Employee", employeeProperties)
        employee.uniquenessConstraints = [["employeeID"]]
        let employees = TestStack.relationship("employees", to: employee, toMany: true, rule: .cascadeDeleteRule)
        let employer = TestStack.relationship("company", to: company, toMany: false)
        TestStack.pair(employees, employer)
        company.properties.append(employees)
        employee.properties.append(employer)
        let office = F.entity(
            version >= 2 ? "Branch" : "Office", [F.attribute("city", .stringAttributeType)],
            renamedFrom: version >= 2 ? "Office" : nil)
        return F.model([company, employee, office], version: "\(version)")
    }

    static let hired = [Date(timeIntervalSince1970: 1_500_000_000), Date(timeIntervalSince1970: 1_600_000_000)]

    static func seedVersion1(_ url: URL, type: String = NSSQLiteStoreType) throws {
        try F.with(model(1), url, type: type) { context in
            let acme = F.insert("Company", ["name": "Acme"], into: context)
            for (index, name) in ["John Doe", "Jane Roe"].enumerated() {
                let employee = F.insert(
                    "Employee",
                    [
                        "employeeID": "E\(index + 1)", "name": name, "hireDate": hired[index],
                        "salary": 100.0 * Double(index + 1),
                    ],
                    into: context)
                employee.setValue(acme, forKey: "company")
            }
            _ = F.insert("Office", ["city": "Oslo"], into: context)
            try context.save()
        }
    }

    /// The names, start dates and companies of the employees of a version 3 store.
    static func version3Employees(_ context: NSManagedObjectContext) throws -> [String] {
        try F.fetch("Employee", context, sortedBy: "employeeID").map { employee in
            let company = (employee.value(forKey: "company") as? NSManagedObject)?.value(forKey: "name") as? String
            let start = (employee.value(forKey: "startDate") as? Date).map { "\(Int($0.timeIntervalSince1970))" }
            return [
                employee.value(forKey: "firstName") as? String, employee.value(forKey: "lastName") as? String, start,
                employee.value(forKey: "department") as? String, company,
            ].map { $0 ?? "-" }.joined(separator: " ")
        }
    }

    static let expectedVersion3 = ["John Doe 1500000000 General Acme", "Jane Roe 1600000000 General Acme"]
}

/// Splits version 2's name into version 3's firstName and lastName.
final class SplitNameTestPolicy: NSEntityMigrationPolicy {
    nonisolated(unsafe) static var calls = 0

    override func createDestinationInstances(
        forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
    ) throws {
        try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
        guard
            let destination = manager.destinationInstances(
                forEntityMappingName: mapping.name, sourceInstances: [sInstance]
            ).first
        else { return }
        Self.calls += 1
        let parts = ((sInstance.value(forKey: "name") as? String) ?? "").split(separator: " ", maxSplits: 1).map(
            String.init)
        destination.setValue(parts.first, forKey: "firstName")
        destination.setValue(parts.count > 1 ? parts[1] : nil, forKey: "lastName")
    }
}

@Suite(.serialized) struct StagedMigrationTests {
    typealias F = MigrationFixtures
    typealias C = CompanyVersions

    @Test func aLightweightStageThenACustomStageWithHandlers() throws {
        let url = try F.scratch("Staged")
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        try C.seedVersion1(url)
        let (v1, v2, v3) = (C.model(1), C.model(2), C.model(3))
        var calls: [String] = []
        var namesByID: [String: String] = [:]
        let toVersion3 = NSCustomMigrationStage(
            migratingFrom: NSManagedObjectModelReference(model: v2, versionChecksum: v2.versionChecksum),
            to: NSManagedObjectModelReference(model: v3, versionChecksum: v3.versionChecksum))
        toVersion3.willMigrateHandler = { manager, stage in
            calls.append("will")
            let context = try #require(manager.container).newBackgroundContext()
            try context.performAndWait {
                for employee in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee")) {
                    namesByID[employee.value(forKey: "employeeID") as? String ?? ""] =
                        employee.value(forKey: "name") as? String
                }
            }
        }
        toVersion3.didMigrateHandler = { manager, stage in
            calls.append("did")
            let context = try #require(manager.container).newBackgroundContext()
            try context.performAndWait {
                for employee in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee")) {
                    let name = namesByID[employee.value(forKey: "employeeID") as? String ?? ""] ?? ""
                    let parts = name.split(separator: " ", maxSplits: 1).map(String.init)
                    employee.setValue(parts.first, forKey: "firstName")
                    employee.setValue(parts.count > 1 ? parts[1] : nil, forKey: "lastName")
                }
                try context.save()
            }
        }
        let manager = NSStagedMigrationManager([NSLightweightMigrationStage([v1.versionChecksum]), toVersion3])
        #expect(manager.stages.count == 2)
        var options = F.automatic
        options[NSPersistentStoreStagedMigrationManagerOptionKey] = manager
        let employees = try F.with(v3, url, type: NSSQLiteStoreType, options: options) { try C.version3Employees($0) }
        #expect(calls == ["will", "did"])
        #expect(namesByID == ["E1": "John Doe", "E2": "Jane Roe"])
        #expect(employees == C.expectedVersion3)
        #expect(manager.container == nil, "the container exists while a handler runs")
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: NSSQLiteStoreType, at: url, options: nil)
        #expect(v3.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
    }

    @Test func duplicateMissingAndBackwardChecksumsAreCoreDatasErrors() throws {
        let url = try F.scratch("Staged")
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        try C.seedVersion1(url)
        let (v1, v2, v3) = (C.model(1), C.model(2), C.model(3))
        func open(_ stages: [NSMigrationStage], _ model: NSManagedObjectModel) throws {
            var options = F.automatic
            options[NSPersistentStoreStagedMigrationManagerOptionKey] = NSStagedMigrationManager(stages)
            try PageFileFixtures.close(try F.open(model, url, type: NSSQLiteStoreType, options: options))
        }
        let before = try F.files(url)
        #expect {
            try open(
                [
                    NSLightweightMigrationStage([v1.versionChecksum, v2.versionChecksum]),
                    NSLightweightMigrationStage([v3.versionChecksum, v1.versionChecksum]),
                ], v3)
        } throws: {
            ($0 as NSError).code == NSMigrationError
                && ($0 as NSError).localizedDescription.contains("Duplicate version checksums across stages detected")
        }
        let missing = NSCustomMigrationStage(
            migratingFrom: NSManagedObjectModelReference(model: v1, versionChecksum: v1.versionChecksum),
            to: NSManagedObjectModelReference(name: "NoSuchModel", in: nil, versionChecksum: v2.versionChecksum))
        #expect { try open([missing], v3) } throws: {
            ($0 as NSError).code == NSManagedObjectModelReferenceNotFoundError
        }
        let wrongChecksum = NSCustomMigrationStage(
            migratingFrom: NSManagedObjectModelReference(model: v1, versionChecksum: v1.versionChecksum),
            to: NSManagedObjectModelReference(model: v3, versionChecksum: v2.versionChecksum))
        #expect { try open([wrongChecksum], v3) } throws: {
            ($0 as NSError).code == NSManagedObjectModelReferenceNotFoundError
        }
        #expect(try F.files(url) == before, "refused stages leave the store as it was")
        // The stages place version 1 after version 2: the store cannot go back.
        #expect {
            try open(
                [NSLightweightMigrationStage([v2.versionChecksum]), NSLightweightMigrationStage([v1.versionChecksum])],
                v2)
        } throws: { ($0 as NSError).code == NSStagedMigrationBackwardMigrationError }
    }

    @Test func theMigrationManagerRunsAPolicyAndTheStoreIsReplaced() throws {
        let url = try F.scratch("Manual")
        let directory = url.deletingLastPathComponent()
        defer { try? FileManager.default.removeItem(at: directory) }
        try C.seedVersion1(url)
        let (v2, v3) = (C.model(2), C.model(3))
        try PageFileFixtures.close(try F.open(v2, url, type: NSSQLiteStoreType))
        let mapping = try NSMappingModel.inferredMappingModel(forSourceModel: v2, destinationModel: v3)
        let employeeMapping = try #require(mapping.entityMappings.first { $0.destinationEntityName == "Employee" })
        #expect(
            employeeMapping.name == "EmployeeToEmployee" && employeeMapping.mappingType == .transformEntityMappingType)
        #expect(mapping.entityMappingsByName["BranchToBranch"]?.mappingType == .copyEntityMappingType)
        employeeMapping.entityMigrationPolicyClassName = NSStringFromClass(SplitNameTestPolicy.self)
        let manager = NSMigrationManager(sourceModel: v2, destinationModel: v3)
        let migrated = directory.appendingPathComponent("Manual-migrated.store")
        SplitNameTestPolicy.calls = 0
        try manager.migrateStore(
            from: url, sourceType: NSSQLiteStoreType, options: nil, with: mapping, toDestinationURL: migrated,
            destinationType: NSSQLiteStoreType, destinationOptions: nil)
        #expect(SplitNameTestPolicy.calls == 2 && manager.migrationProgress == 1)
        func metadata(_ url: URL) throws -> [String: Any] {
            try NSPersistentStoreCoordinator.metadataForPersistentStore(
                ofType: NSSQLiteStoreType, at: url, options: nil)
        }
        #expect(v2.isConfiguration(withName: nil, compatibleWithStoreMetadata: try metadata(url)), "source untouched")
        #expect(v3.isConfiguration(withName: nil, compatibleWithStoreMetadata: try metadata(migrated)))

        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: v3)
        try coordinator.replacePersistentStore(
            at: url, destinationOptions: nil, withPersistentStoreFrom: migrated, sourceOptions: nil,
            ofType: NSSQLiteStoreType)
        try coordinator.destroyPersistentStore(at: migrated, ofType: NSSQLiteStoreType, options: nil)
        #expect(!FileManager.default.fileExists(atPath: migrated.path))
        #expect(v3.isConfiguration(withName: nil, compatibleWithStoreMetadata: try metadata(url)))
        let employees = try F.with(v3, url, type: NSSQLiteStoreType, options: [:]) { try C.version3Employees($0) }
        #expect(employees == C.expectedVersion3)
    }

    @Test(arguments: [NSSQLiteStoreType, NSBinaryStoreType])
    func progressiveMigrationThroughEveryVersion(type: String) throws {
        let url = try F.scratch(type)
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        try C.seedVersion1(url, type: type)
        // The guide's progressive migration: each step a migration manager into a new file.
        var current = url
        for (index, (from, to)) in [(C.model(1), C.model(2)), (C.model(2), C.model(3))].enumerated() {
            let mapping = try NSMappingModel.inferredMappingModel(forSourceModel: from, destinationModel: to)
            if index == 1 {
                mapping.entityMappings.first { $0.destinationEntityName == "Employee" }?
                    .entityMigrationPolicyClassName =
                    NSStringFromClass(SplitNameTestPolicy.self)
            }
            let next = url.deletingLastPathComponent().appendingPathComponent("step\(index).store")
            try NSMigrationManager(sourceModel: from, destinationModel: to).migrateStore(
                from: current, sourceType: type, options: nil, with: mapping, toDestinationURL: next,
                destinationType: type, destinationOptions: nil)
            current = next
        }
        let employees = try F.with(C.model(3), current, type: type, options: [:]) { try C.version3Employees($0) }
        #expect(employees == C.expectedVersion3)
    }

    @Test func aFailingPolicyRemovesTheDestinationItCreated() throws {
        let url = try F.scratch("Failing")
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        try C.seedVersion1(url)
        let (v1, v2) = (C.model(1), C.model(2))
        let mapping = try NSMappingModel.inferredMappingModel(forSourceModel: v1, destinationModel: v2)
        mapping.entityMappings.first { $0.destinationEntityName == "Employee" }?.entityMigrationPolicyClassName =
            "NoSuchPolicy"
        let destination = url.deletingLastPathComponent().appendingPathComponent("out.store")
        #expect {
            try NSMigrationManager(sourceModel: v1, destinationModel: v2).migrateStore(
                from: url, sourceType: NSSQLiteStoreType, options: nil, with: mapping, toDestinationURL: destination,
                destinationType: NSSQLiteStoreType, destinationOptions: nil)
        } throws: { ($0 as NSError).code == NSEntityMigrationPolicyError }
        #expect(!FileManager.default.fileExists(atPath: destination.path))
    }
}
