// Object-level crash test: a child process saves to a default store in full
// durability and reports each acknowledged save; it is killed with SIGKILL at random
// moments. After reopening, every acknowledged save is there and indexes agree with rows.
import Foundation
import OpenCoreData
import TestSupport
import Testing

@Suite struct PageFileStoreCrashTests {
    static var childExecutable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
            "storage-bench")
    }

    /// The child's model, rebuilt here with the same entity and version hashes.
    static let model: NSManagedObjectModel = {
        func attribute(_ name: String, _ type: NSAttributeType, indexed: Bool = false) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.isOptional = type == .stringAttributeType || type == .dateAttributeType
            attribute.isIndexed = indexed
            return attribute
        }
        let entity = NSEntityDescription()
        entity.name = "StoreRecord"
        entity.properties = [
            attribute("name", .stringAttributeType), attribute("age", .integer16AttributeType, indexed: true),
            attribute("score", .integer64AttributeType, indexed: true), attribute("weight", .doubleAttributeType),
            attribute("created", .dateAttributeType), attribute("active", .booleanAttributeType),
        ]
        let model = NSManagedObjectModel()
        model.entities = [entity]
        return model
    }()

    @Test func sigkillNeverLosesAcknowledgedSaves() throws {
        guard FileManager.default.isExecutableFile(atPath: Self.childExecutable.path) else {
            Issue.record("\(Self.childExecutable.path) is missing: run `swift build` before `swift test`")
            return
        }
        let url = try PageFileFixtures.temporaryURL("kill.store")
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        var random = SeededRandom(environmentOr: 0x0C8A_5400)
        var acknowledged = 0
        for kill in 0..<25 {
            let process = Process()
            process.executableURL = Self.childExecutable
            process.arguments = ["store-kill-child", url.path]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            var received = Data()
            if random.chance(0.85) {
                received.append(output.fileHandleForReading.availableData)
                usleep(UInt32(random.int(in: 0...20_000)))
            } else {
                usleep(UInt32(random.int(in: 0...40_000)))
            }
            Foundation.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            received.append(output.fileHandleForReading.readDataToEndOfFile())
            for line in String(decoding: received, as: UTF8.self).split(separator: "\n") {
                if line.hasPrefix("ack "), let value = Int(line.dropFirst(4)) {
                    acknowledged = max(acknowledged, value)
                }
            }
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.model)
            let store = try coordinator.addPersistentStore(
                ofType: NSSQLiteStoreType, configurationName: nil, at: url,
                options: [NSPersistentHistoryTrackingKey: true as NSNumber])
            let context = PageFileFixtures.context(coordinator)
            let all = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "StoreRecord"))
            let scores = Set(all.compactMap { $0.value(forKey: "score") as? Int64 })
            #expect(
                scores.count == all.count && scores == Set((0..<Int64(all.count))),
                "kill \(kill): saves are whole (\(random.replayHint))")
            #expect(all.count >= acknowledged, "kill \(kill): \(all.count) saved, \(acknowledged) acknowledged")
            let ranged = NSFetchRequest<NSManagedObject>(entityName: "StoreRecord")
            ranged.predicate = NSPredicate(format: "score < %lld", Int64(acknowledged))
            #expect(try context.count(for: ranged) == acknowledged, "kill \(kill): index count")
            let token: NSPersistentHistoryToken? = nil
            let history = try context.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: token))
            let result = (history as? NSPersistentHistoryResult)?.result
            let transactions: [NSPersistentHistoryTransaction] = result as? [NSPersistentHistoryTransaction] ?? []
            var inserts = 0
            for transaction in transactions {
                for change in transaction.changes ?? [] where change.changeType == .insert { inserts += 1 }
            }
            #expect(inserts == all.count, "kill \(kill): every saved insert has its history record")
            let report = try #require(store as? PageFileStore).verify()
            #expect(report.isClean, "kill \(kill): \(report.problems)")
            acknowledged = all.count
            try PageFileFixtures.close(coordinator)
        }
        #expect(acknowledged > 25)
    }
}
