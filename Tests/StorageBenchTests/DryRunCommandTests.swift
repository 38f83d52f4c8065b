// `storage-bench dry-run PATH MODEL`: the migration a model file would cause, reported
// without changing the store.
import Foundation
import OpenCoreData
import Testing

@Suite struct DryRunCommandTests {
    /// A default store at `directory/People.store` of Person (name, age: Integer 16) with
    /// two objects.
    static func store(in directory: URL) throws -> URL {
        let url = directory.appendingPathComponent("People.store")
        let person = NSEntityDescription()
        person.name = "Person"
        let name = NSAttributeDescription()
        name.name = "name"
        name.attributeType = .stringAttributeType
        let age = NSAttributeDescription()
        age.name = "age"
        age.attributeType = .integer16AttributeType
        person.properties = [name, age]
        let model = NSManagedObjectModel()
        model.entities = [person]
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            for (index, value) in ["Ann", "Bob"].enumerated() {
                let object = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
                object.setValue(value, forKey: "name")
                object.setValue(Int16(index), forKey: "age")
            }
            try context.save()
        }
        try coordinator.remove(store)
        return url
    }

    /// A model file holding `entity` (XML in Xcode's format).
    static func modelFile(in directory: URL, _ entity: String) throws -> URL {
        let url = directory.appendingPathComponent("People.xcdatamodel")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        let contents = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" \
            lastSavedToolsVersion="22522" systemVersion="23A344" minimumToolsVersion="Automatic" \
            sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
                \(entity)
            </model>
            """
        try Data(contents.utf8).write(to: url.appendingPathComponent("contents"))
        return url
    }

    static func bytes(_ url: URL) throws -> Data { try Data(contentsOf: url) }

    /// Runs `dry-run` on a fresh store of `store(in:)` and a model file holding `entity`;
    /// also returns whether the store's bytes are as they were.
    static func dryRun(_ entity: String) throws -> (run: BenchRun, unchanged: Bool) {
        let directory = try StorageBenchProcess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try store(in: directory)
        let before = try bytes(store)
        let model = try modelFile(in: directory, entity)
        let run = try StorageBenchProcess.run(["dry-run", store.path, model.path])
        return (run, try bytes(store) == before)
    }

    @Test func aRenameIsReportedAndTheStoreIsUnchanged() throws {
        let (run, unchanged) = try Self.dryRun(
            """
            <entity name="Member" representedClassName="Member" elementID="Person" syncable="YES">
                <attribute name="fullName" optional="YES" attributeType="String" elementID="name"/>
                <attribute name="age" optional="YES" attributeType="Integer 16" usesScalarValueType="YES"/>
            </entity>
            """)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("change: renameEntity Member: "))
        #expect(run.stdout.contains("change: renameProperty Member.fullName: "))
        #expect(run.stdout.contains("objects: Member 2"))
        #expect(run.stdout.contains("would migrate; it is unchanged"))
        #expect(unchanged)
    }

    @Test func aTypeChangeIsRefusedNamingEntityAndProperty() throws {
        let (run, unchanged) = try Self.dryRun(
            """
            <entity name="Person" representedClassName="Person" syncable="YES">
                <attribute name="name" optional="YES" attributeType="String"/>
                <attribute name="age" optional="YES" attributeType="String"/>
            </entity>
            """)
        #expect(run.status == 1)
        #expect(run.stderr.contains("error 134140") && run.stderr.contains("Person.age"), "\(run.stderr)")
        #expect(unchanged)
    }

    @Test func theSameModelHasNothingToMigrateAndBadArgumentsAreRefused() throws {
        let directory = try StorageBenchProcess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Self.store(in: directory)
        let model = try Self.modelFile(
            in: directory,
            """
            <entity name="Person" representedClassName="Person" syncable="YES">
                <attribute name="name" optional="YES" attributeType="String"/>
                <attribute name="age" optional="YES" attributeType="Integer 16" usesScalarValueType="YES"/>
            </entity>
            """)
        let same = try StorageBenchProcess.run(["dry-run", store.path, model.path])
        #expect(same.status == 0, "\(same.stderr)")
        #expect(same.stdout.contains("nothing to migrate"))
        #expect(try StorageBenchProcess.run(["dry-run", store.path]).status == 2)
        let missing = try StorageBenchProcess.run(["dry-run", store.path, directory.appendingPathComponent("No").path])
        #expect(missing.status == 1 && missing.stderr.contains("dry-run:"))
    }
}
