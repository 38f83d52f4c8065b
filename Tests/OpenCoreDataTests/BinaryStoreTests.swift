import Foundation
import StorageEngine
import TestSupport
import Testing

@testable import OpenCoreData

/// A binary store on a simulated file system at `path`.
private func binaryCoordinator(
    _ files: SimulatedFileSystem, path: String = "/sim/Store.binary", model: NSManagedObjectModel = TestStack.model,
    tracking: Bool = true
) throws -> NSPersistentStoreCoordinator {
    let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
    try coordinator.addPersistentStore(
        ofType: NSBinaryStoreType, configurationName: nil, at: URL(fileURLWithPath: path),
        options: [storeFileSystemOption: files, NSPersistentHistoryTrackingKey: tracking as NSNumber])
    return coordinator
}

/// Saves a company with `count` employees, one of them a manager, and a project with ordered tasks.
private func saveGraph(_ context: NSManagedObjectContext, name: String, count: Int) throws {
    let company = TCompany(context: context)
    company.name = name
    for index in 0..<count {
        let employee = index == 0 ? TManager(context: context) : TEmployee(context: context)
        employee.name = "\(name)-E\(index)"
        employee.age = Int16(20 + index)
        employee.salary = Double(index) * 1.5
        employee.company = company
    }
    let project = TProject(context: context)
    project.title = "\(name)-P"
    for index in 0..<3 {
        let task = TTask(context: context)
        task.title = "T\(index)"
        task.project = project
    }
    try context.save()
}

/// Every company and its employees' names, sorted: what a reopened store must show.
private func snapshot(_ context: NSManagedObjectContext) throws -> [String] {
    var lines: [String] = []
    for company in try context.fetch(NSFetchRequest<TCompany>(entityName: "Company")) {
        let names = company.employees.map { "\($0.name ?? "")/\($0.age)/\($0.salary)/\($0 is TManager)" }.sorted()
        lines.append("\(company.name ?? ""): \(names.joined(separator: ", "))")
    }
    for project in try context.fetch(NSFetchRequest<TProject>(entityName: "Project")) {
        let titles = project.tasks.array.compactMap { ($0 as? TTask)?.title }
        lines.append("\(project.title ?? ""): \(titles.joined(separator: ", "))")
    }
    return lines.sorted()
}

private func cocoaCode(_ error: any Error) -> Int { (error as NSError).code }

@Suite struct BinaryStoreTests {
    @Test func graphRoundTripsThroughTheFile() throws {
        let files = SimulatedFileSystem()
        let first = try binaryCoordinator(files)
        let context = TestStack.context(first)
        try saveGraph(context, name: "Acme", count: 5)
        let expected = try snapshot(context)
        let employeeID = try #require(try context.fetch(NSFetchRequest<TEmployee>(entityName: "Employee")).first)
            .objectID
        try first.remove(try #require(first.persistentStores.first))

        let second = try binaryCoordinator(files)
        let reopened = TestStack.context(second)
        #expect(try snapshot(reopened) == expected)
        #expect(try reopened.count(for: NSFetchRequest<TEmployee>(entityName: "Employee")) == 5)
        let managers = NSFetchRequest<TEmployee>(entityName: "Employee")
        managers.predicate = NSPredicate(format: "age < 21 AND company.name == 'Acme'")
        #expect(try reopened.fetch(managers).map { $0 is TManager } == [true])
        // Object ID URIs survive reopening (same store UUID, same keys).
        let uri = employeeID.uriRepresentation()
        let restoredID = try #require(second.managedObjectID(forURIRepresentation: uri))
        #expect(try reopened.existingObject(with: restoredID).value(forKey: "name") != nil)
        // New keys do not reuse old ones.
        try saveGraph(reopened, name: "Beta", count: 2)
        let keys = try reopened.fetch(NSFetchRequest<TEmployee>(entityName: "Employee")).compactMap(\.objectID.storeKey)
        #expect(Set(keys).count == 7)
        // Updates and deletes persist too.
        let acme = try #require(
            try reopened.fetch(NSFetchRequest<TCompany>(entityName: "Company")).first { $0.name == "Acme" })
        acme.name = "Acme 2"
        reopened.delete(try #require(acme.employees.first { $0.name == "Acme-E4" }))
        try reopened.save()
        let after = try snapshot(reopened)
        try second.remove(try #require(second.persistentStores.first))
        #expect(try snapshot(TestStack.context(try binaryCoordinator(files))) == after)
    }

    @Test func historyAndItsPurgeSurviveReopening() throws {
        let files = SimulatedFileSystem()
        let first = try binaryCoordinator(files)
        let context = TestStack.context(first)
        context.transactionAuthor = "writer"
        for index in 0..<3 { try saveGraph(context, name: "C\(index)", count: 1) }
        let all = try #require(
            (try context.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: nil as NSPersistentHistoryToken?))
                as? NSPersistentHistoryResult)?.result as? [NSPersistentHistoryTransaction])
        #expect(all.count == 3)
        _ = try context.execute(NSPersistentHistoryChangeRequest.deleteHistory(before: all[2].token))
        try first.remove(try #require(first.persistentStores.first))

        let second = try binaryCoordinator(files)
        let reopened = TestStack.context(second)
        let left = try #require(
            (try reopened.execute(
                NSPersistentHistoryChangeRequest.fetchHistory(after: nil as NSPersistentHistoryToken?))
                as? NSPersistentHistoryResult)?.result as? [NSPersistentHistoryTransaction])
        #expect(left.map(\.transactionNumber) == [3])
        #expect(left.allSatisfy { $0.author == "writer" && $0.storeID == all[0].storeID })
        #expect(second.currentPersistentHistoryToken(fromStores: nil) == all[2].token)
        #expect(throws: NSError.self) {
            _ = try reopened.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: all[0]))
        }
    }

    @Test func fileBytesAreGolden() throws {
        let note = NSEntityDescription()
        note.name = "N"
        note.properties = [TestStack.attribute("t", .stringAttributeType)]
        let model = NSManagedObjectModel()
        model.entities = [note]
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(
            ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
        let entity = try #require(model.entitiesByName["N"])
        let row = StoreRow(objectID: store.newObjectID(for: entity, key: 1), version: 1, values: [.string("x")])
        let bytes = try BinaryStoreFile.encode(
            metadata: ["u": "U"], nextKey: 2, rowsByEntity: [ObjectIdentifier(entity): [1: row]],
            journal: InMemoryHistoryJournal(records: [(1, [0xAB])], currentSequence: 1, purgedSequence: 0),
            model: model)
        let body: [UInt8] = [
            8, 1, 1, 0x75, 0, 1, 0x55,  // metadata: dictionary of 1: "u" = string "U"
            4,  // next key 2
            1, 1, 0x4E,  // entities: ["N"]
            1, 0, 2, 3,  // one row: entity 0, key 1, 3 bytes of row (SPEC §3.2, row format 2):
            1, 0x41, 0x78,  // version 1, one value: string "x" (a short string, length in the tag)
            1, 0, 1, 1, 0xAB,  // history: current 1, purged 0, one record [AB]
        ]
        let header: [UInt8] = [0x4F, 0x43, 0x44, 0x42, 0x49, 0x4E, 0x0D, 0x0A, 2, 0, 0, 0, 0, 0, 0, 0]
        #expect(Array(bytes[0..<16]) == header)
        #expect(Array(bytes[16..<24]) == [UInt8(body.count), 0, 0, 0, 0, 0, 0, 0])
        #expect(Array(bytes[24..<(bytes.count - 8)]) == body)
        #expect(
            Array(bytes.suffix(8))
                == withUnsafeBytes(of: StorageChecksum.xxh64(Array(bytes.dropLast(8))).littleEndian, Array.init))
        let image = try BinaryStoreFile.decode(bytes, path: "golden", store: store, model: model) { _ in }
        #expect(image.rows.map(\.values) == [[.string("x")]] && image.nextKey == 2)
        #expect(image.metadata["u"] as? String == "U" && image.journal.records.map(\.bytes) == [[0xAB]])
    }

    @Test func damagedAndForeignFilesAreClearErrors() throws {
        let files = SimulatedFileSystem()
        let path = "/sim/Store.binary"
        let coordinator = try binaryCoordinator(files, path: path)
        try saveGraph(TestStack.context(coordinator), name: "Acme", count: 3)
        try coordinator.remove(try #require(coordinator.persistentStores.first))
        let good = try #require(files.contents(ofPath: path))

        func expectRefused(_ bytes: [UInt8], _ comment: Comment) {
            files.setContents(bytes, ofPath: path)
            #expect(
                comment, performing: { _ = try binaryCoordinator(files, path: path) },
                throws: { error in
                    cocoaCode(error) == BinaryStoreFile.corruptFileError
                        && (error as NSError).localizedDescription.contains(path)
                })
        }
        expectRefused([], "empty")
        expectRefused(Array("SQLite format 3\0 and more bytes than a header".utf8), "foreign")
        var newer = good
        newer[8] = 3
        expectRefused(newer, "newer version")
        var older = good
        older[8] = 1
        expectRefused(older, "format 1 (row format 1)")
        for length in stride(from: 0, to: good.count, by: max(1, good.count / 97)) {
            expectRefused(Array(good[..<length]), "truncated to \(length)")
        }
        var random = SeededRandom(environmentOr: 0xB1A7)
        for _ in 0..<150 {
            var damaged = good
            let index = random.int(in: 0...(good.count - 1))
            damaged[index] ^= UInt8(1) << UInt8(random.int(in: 0...7))
            expectRefused(damaged, "bit flip at \(index), \(random.replayHint)")
        }
        // Damage behind a recomputed checksum reaches the decoder: an error or a store, never a trap.
        for _ in 0..<300 {
            var forged = good
            for _ in 0...random.int(in: 0...3) {
                let index = random.int(in: 24...(good.count - 9))
                forged[index] = UInt8(truncatingIfNeeded: random.next())
            }
            let sum = StorageChecksum.xxh64(Array(forged.dropLast(8)))
            forged.replaceSubrange((forged.count - 8)..., with: withUnsafeBytes(of: sum.littleEndian, Array.init))
            files.setContents(forged, ofPath: path)
            if let store = try? binaryCoordinator(files, path: path) {
                _ = try? TestStack.context(store).fetch(NSFetchRequest<TEmployee>(entityName: "Employee"))
            }
        }
        files.setContents(good, ofPath: path)
        #expect(try binaryCoordinator(files, path: path).persistentStores.count == 1)
    }

    @Test func aRealFileRoundTripsAndReportsItsMetadata() throws {
        let directory = try TestScratch.directory("binary")
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("Real.binary")
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestStack.model)
        let store = try coordinator.addPersistentStore(
            ofType: NSBinaryStoreType, configurationName: nil, at: url, options: nil)
        coordinator.setMetadata(
            (store.metadata ?? [:]).merging(["appVersion": 3, "tags": ["a", "b"]]) { $1 }, for: store)
        try saveGraph(TestStack.context(coordinator), name: "Disk", count: 2)
        try coordinator.remove(store)
        #expect(FileManager.default.fileExists(atPath: url.path + "-new") == false)
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: NSBinaryStoreType, at: url, options: nil)
        #expect(metadata[NSStoreUUIDKey] as? String == store.identifier)
        #expect(metadata["appVersion"] as? Int == 3 && metadata["tags"] as? [String] == ["a", "b"])
        #expect(TestStack.model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        let reopened = NSPersistentStoreCoordinator(managedObjectModel: TestStack.model)
        try reopened.addPersistentStore(ofType: NSBinaryStoreType, configurationName: nil, at: url, options: nil)
        #expect(try snapshot(TestStack.context(reopened)).count == 2)
        #expect(
            performing: {
                try NSPersistentStoreCoordinator.metadataForPersistentStore(
                    ofType: NSBinaryStoreType, at: directory.appendingPathComponent("missing"), options: nil)
            }, throws: { cocoaCode($0) == NSPersistentStoreOpenError })
    }

    @Test func aDifferentModelIsRefused() throws {
        let files = SimulatedFileSystem()
        let coordinator = try binaryCoordinator(files)
        try saveGraph(TestStack.context(coordinator), name: "Acme", count: 1)
        try coordinator.remove(try #require(coordinator.persistentStores.first))
        let other = NSEntityDescription()
        other.name = "Other"
        other.properties = [TestStack.attribute("x", .stringAttributeType)]
        let model = NSManagedObjectModel()
        model.entities = [other]
        #expect(
            performing: { _ = try binaryCoordinator(files, model: model) },
            throws: {
                cocoaCode($0) == NSPersistentStoreIncompatibleVersionHashError
            })
        let metadata = try #require(
            (try binaryCoordinator(files)).persistentStores.first?.metadata)
        #expect(TestStack.model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        #expect(metadata[NSStoreTypeKey] as? String == NSBinaryStoreType)
    }

    @Test func aFailedWriteLeavesMemoryAndFileAsBefore() throws {
        let files = SimulatedFileSystem()
        let coordinator = try binaryCoordinator(files)
        let context = TestStack.context(coordinator)
        try saveGraph(context, name: "Acme", count: 2)
        let before = try snapshot(context)
        files.injectFault(.ioError, at: 0, of: .sync, persistent: false)
        let extra = TCompany(context: context)
        extra.name = "Lost"
        #expect(performing: { try context.save() }, throws: { cocoaCode($0) == NSPersistentStoreSaveError })
        context.rollback()
        #expect(try snapshot(context) == before)
        #expect(try snapshot(TestStack.context(try binaryCoordinator(files))) == before)
    }

    @Test func aCrashAtEveryStepOfTheReplaceLeavesTheOldOrTheNewFile() throws {
        // Count the operations of one save of the second graph.
        let probe = SimulatedFileSystem()
        let probeContext = TestStack.context(try binaryCoordinator(probe))
        try saveGraph(probeContext, name: "Old", count: 2)
        let start = probe.operationCount
        try saveGraph(probeContext, name: "New", count: 2)
        let steps = probe.operationCount - start
        #expect(steps >= 4)

        var random = SeededRandom(environmentOr: 0xC4A5)
        var sawOld = false
        var sawNew = false
        for crashAt in 0...steps {
            for model in SimulatedFileSystem.CrashModel.allCases {
                let files = SimulatedFileSystem()
                let context = TestStack.context(try binaryCoordinator(files))
                try saveGraph(context, name: "Old", count: 2)
                let old = try snapshot(context)
                files.crashAfter(operations: crashAt)
                var expectedNew: [String]?
                do {
                    try saveGraph(context, name: "New", count: 2)
                    expectedNew = try snapshot(context)
                } catch {}
                let recovered = files.afterCrash(model: model, random: &random)
                let found = try snapshot(TestStack.context(try binaryCoordinator(recovered)))
                let isOld = found == old
                let isNew = found.contains { $0.hasPrefix("New") } && found.count == old.count * 2
                #expect(isOld || isNew, "crash after \(crashAt) operations, \(model), \(random.replayHint)")
                if expectedNew != nil { #expect(isNew, "an acknowledged save must survive, crash at \(crashAt)") }
                sawOld = sawOld || isOld
                sawNew = sawNew || isNew
            }
        }
        #expect(sawOld && sawNew)
    }
}
