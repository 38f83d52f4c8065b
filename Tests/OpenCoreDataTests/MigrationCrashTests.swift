// A migration is all or nothing: on the simulated file system, a power loss after every
// operation of a migration (under every crash model), and an I/O error at every
// operation, leave the old store openable with the old model and every value, or the new
// store complete — and a migration that returned always left the new store.
import Foundation
import StorageEngine
import TestSupport
import Testing

@testable import OpenCoreData

enum MigrationCrashFixtures {
    typealias F = MigrationFixtures

    /// Version 1: Person (name, age, nickname) with ordered pets; Pet (name, owner).
    /// Version 2: Person becomes Member, nickname becomes alias, a new level (default 1),
    /// pets unordered, and a new uniqueness constraint on name.
    static func model(_ version: Int) -> NSManagedObjectModel {
        let person = F.entity(
            version == 1 ? "Person" : "Member",
            [
                F.attribute("name", .stringAttributeType), F.attribute("age", .integer16AttributeType),
                F.attribute(version == 1 ? "nickname" : "alias", .stringAttributeType, renamedFrom: "nickname"),
            ]
                + (version == 1
                    ? [] : [F.attribute("level", .integer32AttributeType, optional: false, defaultValue: Int32(1))]),
            renamedFrom: version == 1 ? nil : "Person")
        if version == 2 { person.uniquenessConstraints = [["name"]] }
        let pet = F.entity("Pet", [F.attribute("name", .stringAttributeType)])
        let pets = TestStack.relationship("pets", to: pet, toMany: true, ordered: version == 1)
        let owner = TestStack.relationship("owner", to: person, toMany: false)
        TestStack.pair(pets, owner)
        person.properties.append(pets)
        pet.properties.append(owner)
        return F.model([person, pet], version: "\(version)")
    }

    static func options(_ files: SimulatedFileSystem, migrate: Bool) -> [AnyHashable: Any] {
        var options: [AnyHashable: Any] = [storeFileSystemOption: files, migrationBatchRowsOption: 4]
        if migrate {
            options[NSMigratePersistentStoresAutomaticallyOption] = true
            options[NSInferMappingModelAutomaticallyOption] = true
        }
        return options
    }

    static func seed(_ files: SimulatedFileSystem, _ url: URL, type: String) throws {
        try F.with(model(1), url, type: type, options: options(files, migrate: false)) { context in
            for index in 0..<9 {
                let person = F.insert(
                    "Person",
                    ["name": "P\(index)", "age": Int16(index), "nickname": index % 3 == 0 ? nil : "n\(index)"],
                    into: context)
                let pets = (0..<(index % 3)).map { F.insert("Pet", ["name": "P\(index)-pet\($0)"], into: context) }
                person.mutableOrderedSetValue(forKey: "pets").addObjects(from: pets.reversed())
                // A save each: the old store's transaction ids run past the new file's, so a
                // log of the old store replayed onto the new file would show.
                try context.save()
            }
        }
    }

    /// The store's objects as lines, in the terms of `version`; nil when the store does not
    /// open with that model (another version).
    static func contents(_ files: SimulatedFileSystem, _ url: URL, type: String, version: Int) throws -> [String]? {
        do {
            return try F.with(model(version), url, type: type, options: options(files, migrate: false)) { context in
                let people = try F.fetch(version == 1 ? "Person" : "Member", context, sortedBy: "name")
                let lines = people.map { person -> String in
                    let pets = person.value(forKey: "pets")
                    let names =
                        (pets as? NSOrderedSet)?.array.compactMap {
                            ($0 as? NSManagedObject)?.value(forKey: "name") as? String
                        }
                        ?? (pets as? Set<NSManagedObject>)?.compactMap { $0.value(forKey: "name") as? String }.sorted()
                        ?? []
                    let extra = version == 1 ? "" : " level \(person.value(forKey: "level") as? Int32 ?? -1)"
                    return
                        "\(person.value(forKey: "name") as? String ?? "-") \(person.value(forKey: "age") as? Int16 ?? -1) "
                        + "\(person.value(forKey: version == 1 ? "nickname" : "alias") as? String ?? "-")\(extra) "
                        + names.joined(separator: ",")
                }
                let petCount = try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Pet"))
                if type == NSSQLiteStoreType,
                    let store = context.persistentStoreCoordinator?.persistentStores.first as? PageFileStore
                {
                    let report = try store.verify()
                    #expect(report.isClean, "\(report.problems)")
                }
                return lines + ["pets \(petCount)"]
            }
        } catch let error as NSError where error.code == NSPersistentStoreIncompatibleVersionHashError {
            return nil
        }
    }

    /// What the seeded store reads as in version 1 and in version 2.
    static func expected(type: String) throws -> (old: [String], new: [String]) {
        let files = SimulatedFileSystem()
        let url = URL(fileURLWithPath: "/sim-\(UUID().uuidString)/Store")
        try seed(files, url, type: type)
        let old = try #require(try contents(files, url, type: type, version: 1))
        try PageFileFixtures.close(try F.open(model(2), url, type: type, options: options(files, migrate: true)))
        let new = try #require(try contents(files, url, type: type, version: 2))
        return (old, new)
    }
}

@Suite struct MigrationCrashTests {
    typealias M = MigrationCrashFixtures
    typealias F = MigrationFixtures

    /// How many counted operations one migration of the seeded store takes.
    func migrationSteps(type: String) throws -> Int {
        let files = SimulatedFileSystem()
        let url = URL(fileURLWithPath: "/sim-\(UUID().uuidString)/Store")
        try M.seed(files, url, type: type)
        let start = files.operationCount
        try PageFileFixtures.close(try F.open(M.model(2), url, type: type, options: M.options(files, migrate: true)))
        return files.operationCount - start
    }

    @Test(arguments: F.stores)
    func aCrashAtEveryOperationLeavesTheOldStoreOrTheNewOne(type: String) throws {
        let (old, new) = try M.expected(type: type)
        #expect(old != new && new.contains { $0.contains("level 1") })
        let steps = try migrationSteps(type: type)
        #expect(steps > (type == NSBinaryStoreType ? 4 : 30), "\(steps) operations")
        var random = SeededRandom(environmentOr: 0x3161_C4A5)
        var sawOld = false
        var sawNew = false
        for crashAt in 0...steps {
            for model in SimulatedFileSystem.CrashModel.allCases {
                let files = SimulatedFileSystem()
                let url = URL(fileURLWithPath: "/sim-\(UUID().uuidString)/Store")
                try M.seed(files, url, type: type)
                files.crashAfter(operations: crashAt)
                var returned = false
                do {
                    try PageFileFixtures.close(
                        try F.open(M.model(2), url, type: type, options: M.options(files, migrate: true)))
                    returned = true
                } catch {}
                let recovered = files.afterCrash(model: model, random: &random)
                let asOld = try M.contents(recovered, url, type: type, version: 1)
                let asNew = asOld == nil ? try M.contents(recovered, url, type: type, version: 2) : nil
                let where_ = "crash after \(crashAt) of \(steps) operations, \(model), \(random.replayHint)"
                #expect(asOld == old || asNew == new, "\(where_): \(String(describing: asOld ?? asNew))")
                if returned { #expect(asNew == new, "a migration that returned is durable: \(where_)") }
                sawOld = sawOld || asOld == old
                sawNew = sawNew || asNew == new
            }
        }
        #expect(sawOld && sawNew)
    }

    @Test(arguments: F.stores)
    func anIOErrorAtEveryOperationLeavesTheOldStoreOrTheNewOne(type: String) throws {
        let (old, new) = try M.expected(type: type)
        let steps = try migrationSteps(type: type)
        var failed = 0
        for failAt in 0..<steps {
            for fault in [SimulatedFileSystem.Fault.ioError, .noSpace, .shortWrite]
            where failAt % 3 == 0 || fault == .ioError {
                let files = SimulatedFileSystem()
                let url = URL(fileURLWithPath: "/sim-\(UUID().uuidString)/Store")
                try M.seed(files, url, type: type)
                files.injectFault(fault, at: failAt, persistent: fault == .noSpace)
                var returned = false
                do {
                    try PageFileFixtures.close(
                        try F.open(M.model(2), url, type: type, options: M.options(files, migrate: true)))
                    returned = true
                } catch {
                    failed += 1
                }
                files.clearFaults()
                let asOld = try M.contents(files, url, type: type, version: 1)
                let asNew = asOld == nil ? try M.contents(files, url, type: type, version: 2) : nil
                #expect(asOld == old || asNew == new, "\(fault) at operation \(failAt) of \(steps)")
                if returned { #expect(asNew == new, "\(fault) at \(failAt): the migration returned") }
            }
        }
        #expect(failed > steps / 2)
    }
}
