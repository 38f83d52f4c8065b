import Foundation
import Synchronization
import Testing

@testable import OpenCoreData

/// OPENCOREDATA_DEBUG / -com.apple.CoreData.SQLDebug: what each level logs.
@Suite(.serialized) struct DebugLogTests {
    @Test func theLevelComesFromTheEnvironmentOrCoreDatasLaunchArgument() {
        #expect(OpenCoreDataDebugLog.level(environment: [:], arguments: ["app"]) == 0)
        #expect(OpenCoreDataDebugLog.level(environment: ["OPENCOREDATA_DEBUG": "2"], arguments: ["app"]) == 2)
        #expect(
            OpenCoreDataDebugLog.level(environment: [:], arguments: ["app", "-com.apple.CoreData.SQLDebug", "3"]) == 3)
        #expect(OpenCoreDataDebugLog.level(environment: [:], arguments: ["app", "-OpenCoreDataDebug", "1"]) == 1)
        #expect(
            OpenCoreDataDebugLog.level(environment: [:], arguments: ["app", "-com.apple.CoreData.SQLDebug", "9"]) == 3,
            "levels above 3 log as 3")
        #expect(
            OpenCoreDataDebugLog.level(
                environment: ["OPENCOREDATA_DEBUG": "x"], arguments: ["-com.apple.CoreData.SQLDebug"])
                == 0, "a missing or unreadable value is off")
        #expect(OpenCoreDataDebugLog.launchLevel == 0, "off unless asked for (the test runner asks for nothing)")
    }

    /// The lines logged for this test's store and context only (other tests run meanwhile).
    private static func capture(level: Int, marker: String, _ body: () throws -> Void) rethrows -> [String] {
        let lines = Mutex<[String]>([])
        OpenCoreDataDebugLog.redirect { line in lines.withLock { $0.append(line) } }
        OpenCoreDataDebugLog.level = level
        defer {
            OpenCoreDataDebugLog.level = 0
            OpenCoreDataDebugLog.redirect(to: nil)
        }
        try body()
        return lines.withLock { $0 }.filter { $0.contains(marker) }
    }

    private static func populatedStore() throws -> (NSManagedObjectContext, URL) {
        let url = try PageFileFixtures.temporaryURL("DebugLog-\(UUID().uuidString).store")
        let coordinator = try PageFileFixtures.coordinator(PageFileFixtures.peopleModel, url)
        let context = PageFileFixtures.context(coordinator)
        context.name = "debug-\(url.lastPathComponent)"
        try context.performAndWait {
            for index in 0..<20 {
                let person = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
                person.setValue("P\(index)", forKey: "firstName")
                person.setValue(Int16(index), forKey: "age")
                person.setValue("p\(index)@example.com", forKey: "email")
            }
            try context.save()
        }
        return (context, url)
    }

    @Test func levelOneLogsFetchesCountsAndSaves() throws {
        let (context, url) = try Self.populatedStore()
        let marker = url.lastPathComponent
        var counts: [Int] = []
        let lines = try Self.capture(level: 1, marker: marker) {
            counts = try context.performAndWait {
                let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
                request.predicate = NSPredicate(format: "age >= 15")
                request.sortDescriptors = [NSSortDescriptor(key: "age", ascending: false)]
                request.fetchLimit = 3
                let found = try context.fetch(request)
                let counted = try context.count(for: request)
                found[0].setValue("Changed", forKey: "firstName")
                try context.save()
                return [found.count, counted]
            }
        }
        #expect(counts == [3, 3])
        #expect(lines.count == 3, "\(lines)")
        #expect(
            lines.contains {
                $0.hasPrefix("OpenCoreData: fetch Person WHERE age >= 15 ORDER BY age DESC LIMIT 3 in debug-")
                    && $0.contains(": 3 results in ") && $0.hasSuffix(" ms")
            }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("OpenCoreData: count Person WHERE age >= 15") && $0.contains(": 3 in ") })
        #expect(lines.contains { $0.contains("save debug-") && $0.contains(": 0 inserted, 1 updated, 0 deleted in ") })
        #expect(!lines.contains { $0.contains("plan:") || $0.contains("commit:") }, "level 2 lines stay off at 1")
    }

    @Test func levelTwoLogsThePlanAndTheCommit() throws {
        let (context, url) = try Self.populatedStore()
        let lines = try Self.capture(level: 2, marker: url.lastPathComponent) {
            try context.performAndWait {
                let indexed = NSFetchRequest<NSManagedObject>(entityName: "Person")
                indexed.predicate = NSPredicate(format: "age BETWEEN {5, 9}")
                _ = try context.fetch(indexed)
                let scanned = NSFetchRequest<NSManagedObject>(entityName: "Person")
                scanned.predicate = NSPredicate(format: "firstName CONTAINS 'P1'")
                _ = try context.count(for: scanned)
                let person = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
                person.setValue("new@example.com", forKey: "email")
                try context.save()
            }
        }
        #expect(
            lines.contains {
                $0.contains("plan: ") && $0.contains("index index.Person.age")
                    && $0.contains("(5 entries examined, exact")
            },
            "\(lines)")
        #expect(
            lines.contains { $0.contains("plan: ") && $0.contains("scan rows.Person (20 rows examined)") }, "\(lines)")
        #expect(lines.contains { $0.contains("commit: 1 rows inserted, 0 updated, 0 deleted") }, "\(lines)")
    }

    @Test func levelThreeListsTheObjectIDs() throws {
        let (context, url) = try Self.populatedStore()
        var found = 0
        let lines = try Self.capture(level: 3, marker: url.lastPathComponent) {
            found = try context.performAndWait {
                let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
                request.predicate = NSPredicate(format: "age == 7")
                return try context.fetch(request).count
            }
        }
        #expect(found == 1)
        let fetch = lines.first { $0.contains("fetch Person WHERE age == 7") }
        #expect(fetch?.contains("x-coredata://") == true && fetch?.contains("/Person/p") == true, "\(lines)")
    }

    @Test func offLogsNothing() throws {
        let (context, url) = try Self.populatedStore()
        let lines = try Self.capture(level: 0, marker: url.lastPathComponent) {
            try context.performAndWait {
                _ = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
            }
        }
        #expect(lines.isEmpty)
    }

    @Test func levelOneLogsALightweightMigration() throws {
        let url = try PageFileFixtures.temporaryURL("DebugLogMigration-\(UUID().uuidString).store")
        let first = try PageFileFixtures.coordinator(PageFileFixtures.peopleModel, url)
        for store in first.persistentStores { try first.remove(store) }
        let lines = try Self.capture(level: 1, marker: url.lastPathComponent) {
            let coordinator = NSPersistentStoreCoordinator(
                managedObjectModel: PageFileFixtures.makePeopleModel(extraAttribute: true))
            try coordinator.addPersistentStore(
                ofType: NSSQLiteStoreType, configurationName: nil, at: url,
                options: [
                    NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true,
                    PageFileStoreDurabilityOption: "off",
                ])
        }
        #expect(
            lines.contains { $0.contains("migrate the store at") && $0.contains("lightweight, 1 changes") }, "\(lines)")
    }
}
